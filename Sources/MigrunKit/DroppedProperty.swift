import MigrunModel
import MigrunStore

/// A property — or a whole entity's objects — that a step's mapping does not carry: its values are
/// left behind in the original. Core Data drops them without a word; migrun reports each (`plan`,
/// `migrate`, `diff`), with the values the step's source holds, and `migrate --no-drops` refuses a
/// step that would drop values.
///
/// ```swift
/// for drop in report.steps.flatMap(\.drops) where drop.isCertain { print(drop) }
/// ```
public struct DroppedProperty: Sendable, Hashable, CustomStringConvertible {
  /// The source entity (its own objects, not its subentities').
  public let entity: String
  /// The attribute or relationship, nil when the entity's objects are not migrated at all.
  public let property: String?
  /// False when the entity mapping has a script (a policy, a computed attribute) that may read the
  /// property and carry its value some other way: reported, not refused.
  public let isCertain: Bool
  /// Non-NULL values (links for a relationship, objects for an entity) in the step's source; nil
  /// when no store was looked at.
  public package(set) var values: Int?
  /// For an attribute the destination keeps under its name with another type (`Integer 64 → String`):
  /// the change. No inferred mapping converts such a value; a step with a script writes the new one.
  public package(set) var typeChange: String? = nil
  /// The mapping's script computes the destination attribute of this name (it is the script's to
  /// read the old value): said instead of a bare "unless the script reads it".
  public package(set) var computedByScript = false

  public var description: String {
    let name = property.map { "\(entity).\($0)" } ?? "\(entity) (the entity)"
    let count = values.map { " — \($0) \(property == nil ? "object" : "value")\($0 == 1 ? "" : "s")" } ?? ""
    if let typeChange {
      return name + count
        + (isCertain
          ? " (its type changes, \(typeChange), and nothing converts it)"
          : " (its type changes, \(typeChange): the mapping's script writes the new value from it)")
    }
    if computedByScript, let property {
      return name + count + " (the mapping's script computes \(property) in its place and may read it)"
    }
    return name + count + (isCertain ? "" : " (unless the mapping's script reads it)")
  }
}

extension MappingModel {
  /// What this mapping leaves behind, source entity by source entity: entities no entity mapping
  /// carries, and for the carried ones every stored attribute no destination attribute is read from
  /// and every relationship whose links neither it nor its inverse carries. `scripted`: entity
  /// mappings with a policy of their own (their drops are not certain).
  package func drops(scripted: Set<String> = []) -> [DroppedProperty] {
    var drops: [DroppedProperty] = []
    let carriedEntities = Set(entityMappings.filter { $0.destinationEntity != nil }.compactMap(\.sourceEntity))
    // Relationships some mapping carries, as "Entity.relationship" of the source.
    var carriedRelationships = Set<String>()
    for entityMapping in entityMappings where entityMapping.destinationEntity != nil {
      guard let entity = entityMapping.sourceEntity else { continue }
      for old in entityMapping.relationships.values { carriedRelationships.insert("\(entity).\(old)") }
    }
    for entity in source.entities.sorted(by: { $0.name < $1.name }) where !entity.isAbstract {
      guard carriedEntities.contains(entity.name) else {
        drops.append(DroppedProperty(entity: entity.name, property: nil, isCertain: true))
        continue
      }
      let mappings = entityMappings.filter { $0.sourceEntity == entity.name && $0.destinationEntity != nil }
      let certain = !mappings.contains { mapping in
        scripted.contains(mapping.name) || mapping.kind == .custom
          || mapping.attributes.values.contains { $0 == .computed }
      }
      let read = Set(mappings.flatMap { $0.attributes.values.compactMap(\.sourceAttribute) })
      // The destination's attributes the mappings write, by the source name they continue.
      let continued = Dictionary(
        mappings.compactMap { $0.destinationEntity.flatMap(destination.entity(named:)) }
          .flatMap { destination.attributes(of: $0) }.map { ($0.renamingIdentifier ?? $0.name, $0) },
        uniquingKeysWith: { first, _ in first })
      for attribute in source.attributes(of: entity)
      where !attribute.isTransient && attribute.derivation == nil && !read.contains(attribute.name) {
        var drop = DroppedProperty(entity: entity.name, property: attribute.name, isCertain: certain)
        if let kept = continued[attribute.name] {
          if kept.type != attribute.type { drop.typeChange = "\(attribute.type.xmlName) → \(kept.type.xmlName)" }
          drop.computedByScript = mappings.contains { $0.attributes[kept.name] == .computed }
        }
        drops.append(drop)
      }
      for relationship in source.relationships(of: entity) where !relationship.isTransient {
        guard !carriedRelationships.contains("\(entity.name).\(relationship.name)") else { continue }
        // Links kept from the other side (the inverse carried by the target's mapping) are kept.
        let targets = source.entities.filter { source.entity($0, isKindOf: relationship.destinationEntity) }
        let keptByInverse =
          relationship.inverseName.map { inverse in
            targets.contains { carriedRelationships.contains("\($0.name).\(inverse)") }
          } ?? false
        // Links to objects the step removes go with them: the entity's drop says so.
        let targetsCarried = targets.contains { carriedEntities.contains($0.name) }
        guard !keptByInverse, targetsCarried else { continue }
        drops.append(DroppedProperty(entity: entity.name, property: relationship.name, isCertain: certain))
      }
    }
    return drops
  }
}

extension SQLiteStore {
  /// `drops` with the values this store (a step's source) holds for each. An entity's attributes
  /// are counted together, in one pass over its table.
  package func counting(_ drops: [DroppedProperty]) throws -> [DroppedProperty] {
    var attributeColumns: [String: [String]] = [:]
    for drop in drops {
      guard let property = drop.property,
        case .attribute(let column)? = schema.layout(of: drop.entity)?.properties[property]
      else { continue }
      attributeColumns[drop.entity, default: []].append(column.name)
    }
    var valueCounts: [String: [String: Int]] = [:]
    for (entity, columns) in attributeColumns {
      valueCounts[entity] = Dictionary(
        zip(columns, try self.valueCounts(of: entity, columns: columns)), uniquingKeysWith: { first, _ in first })
    }
    return try drops.map { drop in
      var counted = drop
      guard let layout = schema.layout(of: drop.entity) else { return counted }
      switch drop.property.flatMap({ layout.properties[$0] }) {
      case nil where drop.property == nil:
        counted.values = try count(of: drop.entity, includingSubentities: false)
      case .attribute(let column)?:
        counted.values = valueCounts[drop.entity]?[column.name] ?? 0
      default:
        counted.values = try drop.property.map { try edgeCount(of: drop.entity, $0) }
      }
      return counted
    }
  }
}
