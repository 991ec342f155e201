/// The type of an attribute, with the numeric code Core Data uses for it.
///
/// The raw value is `NSAttributeType`'s value; it is also the number hashed into an attribute's
/// version hash (see ``VersionHash``). The ``xmlName`` is the spelling in an `.xcdatamodel` file.
///
/// ```swift
/// AttributeType(xmlName: "Integer 16")  // .integer16
/// AttributeType.string.rawValue         // 700
/// ```
public enum AttributeType: UInt32, Sendable, Hashable, CaseIterable, Codable {
  case undefined = 0
  case integer16 = 100
  case integer32 = 200
  case integer64 = 300
  case decimal = 400
  case double = 500
  case float = 600
  case string = 700
  case boolean = 800
  case date = 900
  case binary = 1000
  case uuid = 1100
  case uri = 1200
  case transformable = 1800
  case objectID = 2000
  case composite = 2100

  /// The name Xcode writes in `attributeType="…"`.
  public var xmlName: String {
    switch self {
    case .undefined: "Undefined"
    case .integer16: "Integer 16"
    case .integer32: "Integer 32"
    case .integer64: "Integer 64"
    case .decimal: "Decimal"
    case .double: "Double"
    case .float: "Float"
    case .string: "String"
    case .boolean: "Boolean"
    case .date: "Date"
    case .binary: "Binary"
    case .uuid: "UUID"
    case .uri: "URI"
    case .transformable: "Transformable"
    case .objectID: "ObjectID"
    case .composite: "Composite"
    }
  }

  /// The type Xcode spells `name` in a model file, or `nil` for a name no Core Data version knows.
  public init?(xmlName name: String) {
    guard let type = Self.allCases.first(where: { $0.xmlName == name }) else { return nil }
    self = type
  }

  /// Whether values are integers (Integer 16/32/64 and Boolean are stored as SQLite INTEGER).
  public var isInteger: Bool {
    switch self {
    case .integer16, .integer32, .integer64, .boolean: true
    default: false
    }
  }

  /// The values an attribute of an integer type holds — Integer 16, 32 and 64 are Core Data's
  /// 16-, 32- and 64-bit numbers — or nil for any other type. `check` names a value outside it,
  /// and `import` refuses one.
  package var integerRange: ClosedRange<Int64>? {
    switch self {
    case .integer16: Int64(Int16.min)...Int64(Int16.max)
    case .integer32: Int64(Int32.min)...Int64(Int32.max)
    case .integer64: Int64.min...Int64.max
    default: nil
    }
  }
}
