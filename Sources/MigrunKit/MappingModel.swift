import MigrunModel
import MigrunStore

extension MappingModel {
  /// The source's entity numbers → the destination's, entity by entity through the mapping (entities
  /// the step removes are absent): the one renumbering every path (row copy, foreign tables'
  /// entity columns such as `ACHANGE.ZENTITY`) follows.
  func entityNumbers(from source: StoreSchema) -> [Int: Int] {
    let destination = StoreSchema(model: self.destination)
    var numbers: [Int: Int] = [:]
    for entityMapping in entityMappings {
      guard let from = entityMapping.sourceEntity.flatMap(source.layout(of:)),
        let to = entityMapping.destinationEntity.flatMap(destination.layout(of:))
      else { continue }
      numbers[from.number] = to.number
    }
    return numbers
  }
}

/// How one model version's objects become the next one's: Core Data's `NSMappingModel`, a list of
/// entity mappings.
public struct MappingModel: Sendable {
  public let source: ObjectModel
  public let destination: ObjectModel
  public var entityMappings: [EntityMapping]
  /// The mapping models a step runs one after another, by their entity mappings (``MappingPass``);
  /// empty: one mapping model, one pass.
  package var passes: [MappingPass] = []

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
  package enum Kind: String, Sendable, Hashable {
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
  package var kind: Kind
  public var sourceEntity: String?
  public var destinationEntity: String?
  /// Destination attribute → where its value comes from.
  package var attributes: [String: AttributeSource]
  /// Destination relationship → the source relationship whose targets (through the associations) it gets.
  public var relationships: [String: String]

  package init(
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
package enum AttributeSource: Sendable, Hashable, CustomStringConvertible {
  /// The source object's attribute with that name.
  case property(String)
  /// The source attribute, or the value when it is NULL (an optional attribute made required).
  case propertyOrDefault(String, StoreValue)
  /// The source attribute converted to another numeric type (``AttributeConversion``); when it is
  /// NULL, the value (NULL when the attribute may be NULL).
  case converted(String, AttributeConversion, orDefault: StoreValue)
  /// A constant: the attribute's default value, or NULL.
  case constant(StoreValue)
  /// Computed by the entity mapping's policy (a script's function).
  case computed

  /// The source attribute the value is read from, when there is one.
  package var sourceAttribute: String? {
    switch self {
    case .property(let name), .propertyOrDefault(let name, _), .converted(let name, _, _): name
    case .constant, .computed: nil
    }
  }

  /// The source attribute whose values are carried unchanged (a NULL aside), when there is one: what
  /// a uniqueness constraint or a column kept in place can rely on.
  package var carriedAttribute: String? {
    switch self {
    case .property(let name), .propertyOrDefault(let name, _): name
    case .converted, .constant, .computed: nil
    }
  }

  // The one decision of how a destination attribute gets its value, in SQL (row copy, DDL fills)
  // and object by object (the object path): each path asks here, none decides on its own.

  /// The value as an SQL expression over the source attribute's column (`column`, as the statement
  /// names it) and the constants it binds in order; nil where SQL cannot make it — a script computes
  /// it, or a conversion that can fail, whose values are checked object by object.
  func sql(column: String?) -> (expression: String, constants: [StoreValue])? {
    switch self {
    case .property:
      column.map { ($0, []) }
    case .propertyOrDefault(_, let fallback):
      column.map { ("coalesce(\($0), ?)", [fallback]) }
    case .converted(_, let conversion, let fallback):
      column.flatMap(conversion.sql).map { converted in
        fallback == .null
          ? (converted, []) : ("coalesce(\(converted), ?)", [fallback])
      }
    case .constant(let value):
      ("?", [value])
    case .computed:
      nil
    }
  }

  /// The value for one source object (its attributes), nil where a script computes it. A conversion
  /// that fails throws its reason.
  func value(from attributes: [String: StoreValue]) throws(AttributeConversion.Failure) -> StoreValue? {
    switch self {
    case .property(let from): return attributes[from] ?? .null
    case .propertyOrDefault(let from, let fallback):
      let value = attributes[from] ?? .null
      return value == .null ? fallback : value
    case .converted(let from, let conversion, let fallback):
      let value = try conversion.apply(attributes[from] ?? .null)
      return value == .null ? fallback : value
    case .constant(let value): return value
    case .computed: return nil
    }
  }

  package var description: String {
    switch self {
    case .property(let name): name
    case .propertyOrDefault(let name, let value): "\(name) (NULL → \(value))"
    case .converted(let name, let conversion, let value):
      "\(name) (\(conversion)\(value == .null ? "" : "; NULL → \(value)"))"
    case .constant(let value): value == .null ? "NULL" : "default \(value)"
    case .computed: "computed by the script"
    }
  }
}
