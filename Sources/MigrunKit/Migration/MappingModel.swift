/// How one model version's objects become the next one's: Core Data's `NSMappingModel`, a list of
/// entity mappings.
public struct MappingModel: Sendable {
  public let source: ObjectModel
  public let destination: ObjectModel
  public var entityMappings: [EntityMapping]

  public init(source: ObjectModel, destination: ObjectModel, entityMappings: [EntityMapping]) {
    self.source = source
    self.destination = destination
    self.entityMappings = entityMappings
  }

  /// The entity mapping named `name` (`SourceToDestination`).
  public func mapping(named name: String) -> EntityMapping? {
    entityMappings.first { $0.name == name }
  }
}

/// One entity mapping: Core Data's `NSEntityMapping`. Objects whose entity is exactly
/// ``sourceEntity`` become objects of ``destinationEntity``.
public struct EntityMapping: Sendable, Hashable {
  public enum Kind: String, Sendable, Hashable {
    /// A new destination entity: no source objects.
    case add
    /// A source entity that is dropped.
    case remove
    /// Same shape: every property copied.
    case copy
    /// Property mappings compute the destination values.
    case transform
    /// A policy does everything.
    case custom
  }

  /// `SourceToDestination`, as Xcode names entity mappings (`AddDestination`, `RemoveSource` for the others).
  public var name: String
  public var kind: Kind
  public var sourceEntity: String?
  public var destinationEntity: String?
  /// Destination attribute → where its value comes from.
  public var attributes: [String: AttributeSource]
  /// Destination relationship → the source relationship whose targets (through the associations) it gets.
  public var relationships: [String: String]

  public init(
    name: String, kind: Kind, sourceEntity: String?, destinationEntity: String?,
    attributes: [String: AttributeSource] = [:], relationships: [String: String] = [:]
  ) {
    self.name = name
    self.kind = kind
    self.sourceEntity = sourceEntity
    self.destinationEntity = destinationEntity
    self.attributes = attributes
    self.relationships = relationships
  }

  /// Xcode's name for a mapping between these entities.
  public static func name(source: String?, destination: String?) -> String {
    switch (source, destination) {
    case (let source?, let destination?): "\(source)To\(destination)"
    case (nil, let destination?): "Add\(destination)"
    case (let source?, nil): "Remove\(source)"
    default: "Empty"
    }
  }
}

/// Where a destination attribute's value comes from.
public enum AttributeSource: Sendable, Hashable, CustomStringConvertible {
  /// The source object's attribute with that name.
  case property(String)
  /// The source attribute, or the value when it is NULL (an optional attribute made required).
  case propertyOrDefault(String, StoreValue)
  /// A constant: the attribute's default value, or NULL.
  case constant(StoreValue)
  /// Computed by the entity mapping's policy (a script's function).
  case computed

  public var description: String {
    switch self {
    case .property(let name): name
    case .propertyOrDefault(let name, let value): "\(name) (NULL → \(value))"
    case .constant(let value): value == .null ? "NULL" : "default \(value)"
    case .computed: "computed by the script"
    }
  }
}

extension Attribute {
  /// The default value as a stored value (`defaultValueString` read by type), or NULL.
  public var defaultValue: StoreValue {
    guard let text = defaultValueString else { return .null }
    switch type {
    case .integer16, .integer32, .integer64: return Int64(text).map(StoreValue.integer) ?? .null
    case .boolean: return .boolean(text == "YES" || text == "1" || text.lowercased() == "true")
    case .double, .float, .decimal: return Double(text).map(StoreValue.double) ?? .null
    case .date: return Double(text).map(StoreValue.date) ?? .null
    case .string, .uri: return .string(text)
    default: return .null
    }
  }
}
