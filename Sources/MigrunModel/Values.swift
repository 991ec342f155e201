/// An object's identity in a store: its entity and primary key (`Z_PK`), as Core Data's
/// `NSManagedObjectID` (whose URI form is `x-coredata://STORE-UUID/Entity/pN`).
public struct ObjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
  public let entity: String
  public let primaryKey: Int64

  public init(entity: String, primaryKey: Int64) {
    self.entity = entity
    self.primaryKey = primaryKey
  }

  /// The ID ``description`` writes, `"Entity/pN"`; nil for any other text.
  public init?(_ text: Substring) {
    guard let slash = text.lastIndex(of: "/"), text[text.index(after: slash)...].first == "p",
      let key = Int64(text[text.index(slash, offsetBy: 2)...]), slash > text.startIndex
    else { return nil }
    self.init(entity: String(text[..<slash]), primaryKey: key)
  }

  /// Core Data's URI form for a store with `storeUUID`.
  public func uri(storeUUID: String) -> String { "x-coredata://\(storeUUID)/\(entity)/p\(primaryKey)" }

  public var description: String { "\(entity)/p\(primaryKey)" }

  public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
    (lhs.entity, lhs.primaryKey) < (rhs.entity, rhs.primaryKey)
  }
}

/// An attribute's value as the store holds it, typed by the attribute's type.
///
/// | attribute type | value |
/// |---|---|
/// | Integer 16/32/64 | `integer` |
/// | Boolean | `boolean` |
/// | Double, Float, Decimal | `double` (Core Data stores decimals as REAL) |
/// | String, URI | `string` |
/// | Date | `date`, seconds since 2001-01-01 00:00:00 UTC |
/// | Binary, Transformable | `data` |
/// | UUID | `uuid`, 16 bytes |
///
/// SQLite cannot store a NaN: it becomes NULL (in every store kind, as in Core Data's SQLite store).
public enum StoreValue: Sendable, Hashable {
  case null
  case integer(Int64)
  case boolean(Bool)
  case double(Double)
  case string(String)
  case date(Double)
  case data([UInt8])
  case uuid([UInt8])

  public var isNull: Bool { self == .null }

  /// Why a NaN is refused for the Date attribute `place`. Core Data binds a date as its seconds,
  /// a REAL, and SQLite keeps a NaN REAL as NULL: the date would read back as nil, even where the
  /// model requires one (read off SQLite's documented behaviour; what Core Data's validation says of
  /// an NSDate of NaN is a guess — it checks for nil only). A NaN Double, Float or Decimal is kept,
  /// as the text `NaN` Core Data writes for one; infinities are REALs SQLite keeps.
  package static func nanDateRefusal(_ place: String) -> String {
    "\(place) is a Date: NaN (0/0) is no date, and the store would keep it as NULL; "
      + "give seconds since 2001-01-01, or nil where the attribute is optional"
  }
}

extension StoreValue: CustomStringConvertible {
  public var description: String {
    switch self {
    case .null: "NULL"
    case .integer(let number): String(number)
    case .boolean(let flag): flag ? "YES" : "NO"
    case .double(let number): String(number)
    case .string(let text): "\"\(text)\""
    case .date(let seconds): "date \(seconds)"
    case .data(let bytes): "\(bytes.count) bytes"
    case .uuid(let bytes): "UUID (\(bytes.count) bytes)"
    }
  }
}

extension StoreValue {
  /// The value as a number, for integers, Booleans, doubles and dates.
  public var number: Double? {
    switch self {
    case .integer(let n): Double(n)
    case .boolean(let flag): flag ? 1 : 0
    case .double(let n), .date(let n): n
    default: nil
    }
  }
}
