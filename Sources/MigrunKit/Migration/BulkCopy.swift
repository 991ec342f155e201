import Foundation
import GRDB

/// A step done as a bulk copy between the two SQLite files: the source store attached to the
/// destination's connection, each entity mapping one `INSERT … SELECT` (run in key ranges, for
/// progress) — or, where a script computes attributes, one row loop calling its ``RowTransform`` —
/// join tables copied, indexes built after the rows, all in one transaction, no object loaded.
/// This is how an inferred step runs "as SQL" (SPEC §3.4), and how a scripted step whose policies
/// only compute attributes runs at the speed of a hand-written loop.
///
/// It applies when every destination row is a source row with columns kept, renamed, dropped,
/// given a default or computed from the row: keys are kept (one source hierarchy feeds each
/// destination hierarchy) and every relationship is stored the same way on both sides (a to-one
/// column stays a to-one column, a join table a join table). Otherwise — to-one ↔ to-many,
/// unordered ↔ ordered, policies with hooks — the step runs object by object, and
/// ``decide(mapping:sourceSchema:policies:manager:mixed:)`` says why.
///
/// With `mixed`, ``decide(mapping:sourceSchema:policies:manager:mixed:)`` may also give a *mixed* step:
/// it copies the entity mappings that can be copied and leaves the others — whole destination
/// hierarchies — to the object path (``objectMappings``, empty for a whole copy), which runs after it. That holds only when the rows copied
/// and the objects made by the object path can refer to each other by key: every object mapping
/// makes one destination object per source object with the source's key (no `createDestinationInstances`
/// hook, no filter, no uniqueness constraint the source lacked), each destination hierarchy is fed
/// by one source hierarchy, and no many-to-many relationship joins a copied entity to an object one.
/// The object path finds the copied objects by key (``MigrationManager/copiedMappings``).
struct BulkCopy {
  struct Copy {
    let mapping: EntityMapping
    let sourceTable: String
    /// The source entity's row predicate (``StoreSchema/rowPredicate(_:includingSubentities:alias:)``).
    let sourceRows: String
    /// `INSERT … SELECT … WHERE <source rows> AND Z_PK > ? AND Z_PK <= ?`, constants bound first.
    let insert: String
    let constants: [DatabaseValue]
    /// Set where a transform computes attributes: the copy is a row loop instead.
    let rows: RowLoop?
  }

  /// A copy through a ``RowTransform``: `select` (run on a connection of the source's own) gives
  /// the plain values (Z_PK first) then the transform's inputs; `insert` takes the plain values then
  /// the transform's outputs.
  struct RowLoop {
    let select: String
    let insert: String
    let plainCount: Int
    let inputTypes: [AttributeType]
    let transform: any RowTransform
  }

  /// Rows copied per statement, so progress moves on a large entity.
  static let chunk: Int64 = 50_000

  let copies: [Copy]
  /// `INSERT … SELECT` per join table.
  let joins: [String]
  /// Destination root entity → the source table whose keys it keeps.
  let keyTables: [String: String]
  /// In a mixed step, the entity mappings left to the object path (empty otherwise).
  let objectMappings: Set<String>

  /// One copy/transform entity mapping with its entities and their layouts.
  private struct Resolved {
    let mapping: EntityMapping
    let from: Entity
    let to: Entity
    let fromLayout: StoreSchema.EntityLayout
    let toLayout: StoreSchema.EntityLayout
  }

  /// Whether every uniqueness constraint of `to` (and its ancestors) is one `from` already had, on
  /// the attributes its values are copied from: then copied rows cannot collide.
  static func keepsConstraints(
    _ entityMapping: EntityMapping, from: Entity, in source: ObjectModel, to: Entity, in destination: ObjectModel
  ) -> Bool {
    func origin(_ name: String) -> String? { entityMapping.attributes[name]?.carriedAttribute }
    let existing = Set(([from] + source.ancestors(of: from)).flatMap(\.uniquenessConstraints).map { Set($0) })
    for constraint in ([to] + destination.ancestors(of: to)).flatMap(\.uniquenessConstraints) {
      let mapped = constraint.compactMap(origin)
      guard mapped.count == constraint.count, existing.contains(Set(mapped)) else { return false }
    }
    return true
  }

  /// Whether a step runs as a bulk copy — the copy, ready to run — or object by object, and why.
  /// `plan` and `migrate` both ask this (``StoreMigrator/method(of:mapping:store:options:)``).
  enum Decision {
    case rows(BulkCopy)
    case objects(reason: String)

    var copy: BulkCopy? { if case .rows(let copy) = self { copy } else { nil } }
  }

  /// Why a step cannot be a bulk copy, named where it is found.
  private struct Refusal: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  /// The step as a bulk copy, or the reason it must run object by object. An entity mapping with a
  /// policy takes part only when the policy offers a ``RowTransform`` computing exactly its
  /// `.computed` attributes from the source row. Without `manager` it only decides (for
  /// `migrun plan`), taking a policy's word that it computes attributes only.
  static func decide(
    mapping: MappingModel, sourceSchema: StoreSchema? = nil, policies: [String: any EntityMigrationPolicy] = [:],
    manager: MigrationManager? = nil, mixed: Bool = false
  ) throws -> Decision {
    do {
      return .rows(
        try BulkCopy(mapping: mapping, sourceSchema: sourceSchema, policies: policies, manager: manager, mixed: mixed))
    } catch let refusal as Refusal {
      return .objects(reason: refusal.reason)
    }
  }

  private init(
    mapping: MappingModel, sourceSchema: StoreSchema?, policies: [String: any EntityMigrationPolicy],
    manager: MigrationManager?, mixed: Bool
  ) throws {
    let source = mapping.source
    let destination = mapping.destination
    // The source store's own names (a join table named from the other side, say) when it is known.
    let sourceSchema = sourceSchema ?? StoreSchema(model: source)
    let destinationSchema = StoreSchema(model: destination)
    let kinds: [EntityMapping.Kind] =
      mixed ? [.copy, .transform, .custom, .add, .remove] : [.copy, .transform, .add, .remove]
    if let other = mapping.entityMappings.first(where: { !kinds.contains($0.kind) }) {
      throw Refusal("entity mapping \(other.name) is \(other.kind.rawValue)")
    }
    var active: [Resolved] = []
    // Mappings that must run object by object, with why: without `mixed`, any of them means no bulk copy.
    var objects: [String: String] = [:]
    for entityMapping in mapping.entityMappings where [.copy, .transform, .custom].contains(entityMapping.kind) {
      guard let from = entityMapping.sourceEntity.flatMap(source.entity(named:)),
        let to = entityMapping.destinationEntity.flatMap(destination.entity(named:)),
        let fromLayout = sourceSchema.layout(of: from.name), let toLayout = destinationSchema.layout(of: to.name)
      else { throw Refusal("entity mapping \(entityMapping.name) names an entity the models do not lay out") }
      // A uniqueness constraint the source did not have may see collisions: those are resolved
      // (or reported with both source objects) object by object.
      // Values kept in another form (external binary storage) are read and written as objects.
      if entityMapping.kind == .custom {
        objects[entityMapping.name] = "entity mapping \(entityMapping.name) is custom"
      } else if !Self.keepsConstraints(entityMapping, from: from, in: source, to: to, in: destination) {
        objects[entityMapping.name] = "\(to.name) gets a uniqueness constraint its rows may break"
      } else if let attribute = ExternalData.rewrittenAttribute(
        entityMapping, from: from, in: source, to: to, in: destination)
      {
        objects[entityMapping.name] =
          "\(to.name).\(attribute) changes how its values are kept (external binary storage)"
      }
      active.append(Resolved(mapping: entityMapping, from: from, to: to, fromLayout: fromLayout, toLayout: toLayout))
    }
    // A policy anywhere else (an added entity's hooks, say) needs the object path.
    if let name = policies.keys.sorted().first(where: { name in !active.contains { $0.mapping.name == name } }) {
      throw Refusal("the policy of entity mapping \(name) runs on objects")
    }

    var transforms: [String: (transform: any RowTransform, inputs: [Input])] = [:]
    for entry in active where objects[entry.mapping.name] == nil {
      let computed = Set(entry.mapping.attributes.filter { $0.value == .computed }.keys)
      guard let policy = policies[entry.mapping.name] else {
        if !computed.isEmpty {
          objects[entry.mapping.name] = "entity mapping \(entry.mapping.name) computes values with no policy"
        }
        continue
      }
      let inputs = Self.inputs(of: entry.from, in: source, layout: entry.fromLayout)
      // Without a manager (planning): what the policy says it is; no copy of this is ever run.
      if manager == nil, policy.computesAttributesOnly { continue }
      guard let manager,
        let transform = try policy.rowTransform(for: entry.mapping, inputs: inputs.map(\.name), manager),
        Set(transform.outputs) == computed
      else {
        objects[entry.mapping.name] = "the policy of entity mapping \(entry.mapping.name) runs on objects"
        continue
      }
      transforms[entry.mapping.name] = (transform, inputs)
    }
    if !mixed, let first = objects.keys.sorted().first, let why = objects[first] { throw Refusal(why) }
    // Whole destination hierarchies go one way (their rows share a table and a key sequence).
    let objectRoots = Set(
      active.filter { objects[$0.mapping.name] != nil }.map { destination.root(of: $0.to).name })
    for entry in active
    where objectRoots.contains(destination.root(of: entry.to).name) && objects[entry.mapping.name] == nil {
      objects[entry.mapping.name] =
        "its destination hierarchy (\(destination.root(of: entry.to).name)) is written as objects"
    }
    if let first = objects.keys.sorted().first, let why = objects[first] {
      // Worth it only with rows to copy; the object mappings must give each source object one
      // destination object with its key (copied rows refer to them by key).
      guard objects.count < active.count else { throw Refusal(why) }
      for entry in active where objects[entry.mapping.name] != nil {
        if let policy = policies[entry.mapping.name], !policy.makesDefaultDestinations {
          throw Refusal(
            "the policy of entity mapping \(entry.mapping.name) makes its own destination objects, which copied rows cannot refer to by key"
          )
        }
        guard Self.keepsConstraints(entry.mapping, from: entry.from, in: source, to: entry.to, in: destination) else {
          throw Refusal(
            "\(entry.to.name) gets a uniqueness constraint: its objects may be merged, and copied rows cannot refer to them by key"
          )
        }
      }
    }
    objectMappings = Set(objects.keys)

    // Source entity number → destination entity number; one source hierarchy per destination one.
    let entityNumbers = mapping.entityNumbers(from: sourceSchema)
    var keyRoots: [String: String] = [:]
    var keyTables: [String: String] = [:]
    for entry in active {
      let sourceRoot = source.root(of: entry.from).name
      let destinationRoot = destination.root(of: entry.to).name
      if let other = keyRoots[destinationRoot], other != sourceRoot {
        throw Refusal(
          "\(destinationRoot)'s rows come from two source hierarchies (\(other), \(sourceRoot)): their keys may collide"
        )
      }
      keyRoots[destinationRoot] = sourceRoot
      keyTables[destinationRoot] = entry.fromLayout.table
    }

    var copies: [Copy] = []
    var joins: [String: String] = [:]
    let objectEntities = Set(active.filter { objects[$0.mapping.name] != nil }.map(\.to.name))
    for entry in active where objects[entry.mapping.name] == nil {
      let (entityMapping, from, to, fromLayout, toLayout) = (
        entry.mapping, entry.from, entry.to, entry.fromLayout, entry.toLayout
      )
      // The source entity's own rows, as Core Data fetches them (every row of a table it is alone in).
      let sourceRows = sourceSchema.rowPredicate(fromLayout, includingSubentities: false)
      var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
      var values = ["Z_PK", "\(toLayout.number)", "Z_OPT"]
      var constants: [DatabaseValue] = []
      var computed: [(column: String, attribute: String)] = []

      for attribute in destination.attributes(of: to) {
        guard case .attribute(let column)? = toLayout.properties[attribute.name] else { continue }
        let value: String
        switch entityMapping.attributes[attribute.name] {
        case .computed?:
          computed.append((column.name, attribute.name))
          continue
        case let source?:
          var old: String?
          if let name = source.sourceAttribute {
            guard case .attribute(let oldColumn)? = fromLayout.properties[name] else {
              throw Refusal(
                "\(to.name).\(attribute.name) comes from \(from.name).\(name), which is not a stored attribute")
            }
            old = oldColumn.name
          }
          guard let made = source.sql(column: old) else {
            throw Refusal("\(to.name).\(attribute.name) is \(source): each value is checked as it is converted")
          }
          value = made.expression
          constants += made.constants
        case nil:
          value = "NULL"
        }
        columns.append(column.name)
        values.append(value)
      }

      for relationship in destination.relationships(of: to) {
        let named = "\(to.name).\(relationship.name)"
        let storage = toLayout.properties[relationship.name]
        let sourceName = entityMapping.relationships[relationship.name]
        let oldRelationship = sourceName.flatMap { name in source.relationships(of: from).first { $0.name == name } }
        let oldStorage = sourceName.flatMap { fromLayout.properties[$0] }
        switch storage {
        case .toOne(let key, let entityColumn, let order)?:
          guard let oldRelationship, case .toOne(let oldKey, let oldEntityColumn, let oldOrder)? = oldStorage else {
            if let sourceName { throw Refusal("\(named) was \(sourceName), stored another way (not a to-one column)") }
            continue  // a new relationship: NULL
          }
          guard order == nil || oldOrder != nil,
            let targetEntity = source.entity(named: oldRelationship.destinationEntity),
            let targetLayout = sourceSchema.layout(of: targetEntity.name)
          else { throw Refusal("\(named) keeps an order its source relationship does not have") }
          // The target's destination entity number, NULL when its entity is not migrated (or no
          // longer fits the relationship): the key is dropped with it.
          let fitting = targetLayout.kindNumbers.compactMap { number -> (Int, Int)? in
            guard let mapped = entityNumbers[number], let name = destinationSchema.layout(number: mapped)?.name,
              let mappedEntity = destination.entity(named: name),
              destination.entity(mappedEntity, isKindOf: relationship.destinationEntity)
            else { return nil }
            return (number, mapped)
          }
          let oldEntity = oldEntityColumn?.name ?? "\(targetLayout.number)"
          let whens = fitting.map { "WHEN \($0.0) THEN \($0.1)" }.joined(separator: " ")
          let mappedEntity = fitting.isEmpty ? "NULL" : "CASE \(oldEntity) \(whens) END"
          let isIdentity = fitting.count == targetLayout.kindNumbers.count && fitting.allSatisfy { $0.0 == $0.1 }
          columns.append(key.name)
          values.append(
            isIdentity ? oldKey.name : "CASE WHEN \(mappedEntity) IS NULL THEN NULL ELSE \(oldKey.name) END")
          if let entityColumn {
            columns.append(entityColumn.name)
            values.append(isIdentity && oldEntityColumn != nil ? oldEntity : mappedEntity)
          }
          if let order, let oldOrder {
            columns.append(order.name)
            values.append(oldOrder.name)
          }
        case .toManyThroughInverse(let target, let inverse)?:
          // Written by the inverse's column, which the target's mapping copies.
          guard sourceName != nil else { continue }
          guard case .toManyThroughInverse(_, let oldInverse)? = oldStorage,
            oldRelationship?.isOrdered == relationship.isOrdered,
            active.contains(where: { other in
              destination.entity(other.to, isKindOf: target) && other.mapping.relationships[inverse] == oldInverse
            })
          else { throw Refusal("\(named) is not written by its inverse's copied column as in the source") }
        case .manyToMany(let table, let own, let other, let order)?:
          guard sourceName != nil else { continue }
          // A join to objects the object path makes later: their rows are not there when joins run.
          if destination.entities.contains(where: {
            objectEntities.contains($0.name) && destination.entity($0, isKindOf: relationship.destinationEntity)
          }) {
            throw Refusal("\(named) joins objects the object path writes after the rows")
          }
          guard case .manyToMany(let oldTable, let oldOwn, let oldOther, let oldOrder)? = oldStorage,
            let oldRelationship, (order == nil) == (oldOrder == nil),
            let targetLayout = destinationSchema.layout(of: relationship.destinationEntity)
          else { throw Refusal("\(named) is a join table, stored another way (or ordered otherwise) in the source") }
          guard joins[table] == nil else { continue }
          var joinColumns = [own, other]
          var joinValues = [oldOwn, oldOther]
          if let order, let oldOrder {
            joinColumns.append(order)
            joinValues.append(oldOrder)
          }
          // The inverse's positions, when it is ordered: the same in the source, or no bulk copy.
          let inverseOrder = destination.inverse(of: relationship).flatMap { inverse in
            Self.joinOrder(of: inverse.name, destinationOf: relationship, in: destinationSchema)
          }
          let oldInverseOrder = source.inverse(of: oldRelationship).flatMap { inverse in
            Self.joinOrder(of: inverse.name, destinationOf: oldRelationship, in: sourceSchema)
          }
          if other != "REFLEXIVE", inverseOrder != nil || oldInverseOrder != nil {
            guard let inverseOrder, let oldInverseOrder else {
              throw Refusal("\(named)'s inverse is ordered on one side only")
            }
            joinColumns.append(inverseOrder)
            joinValues.append(oldInverseOrder)
          }
          // Only pairs whose both ends were migrated (the rows are in place when joins run): ends of
          // every entity that has the relationship, not only this mapping's (one join serves all).
          let ownerLayout =
            destination.declaringEntity(ofRelationship: relationship.name, in: to).flatMap {
              destinationSchema.layout(of: $0.name)
            } ?? toLayout
          joins[table] = """
            INSERT OR IGNORE INTO main.\(table) (\(joinColumns.joined(separator: ", ")))
            SELECT \(joinValues.joined(separator: ", ")) FROM src.\(oldTable)
            WHERE \(oldOwn) IN (SELECT Z_PK FROM main.\(ownerLayout.table) WHERE \(destinationSchema.rowPredicate(ownerLayout)))
            AND \(oldOther) IN (SELECT Z_PK FROM main.\(targetLayout.table) WHERE \(destinationSchema.rowPredicate(targetLayout)))
            """
        default:
          if let sourceName { throw Refusal("\(named) was \(sourceName), stored another way (to-one ↔ to-many)") }
        }
      }
      var rows: RowLoop?
      if let (transform, inputs) = transforms[entityMapping.name], !computed.isEmpty {
        // The transform's outputs in its own order, its inputs every stored source attribute.
        let outputColumns = transform.outputs.compactMap { name in computed.first { $0.attribute == name }?.column }
        let allColumns = columns + outputColumns
        rows = RowLoop(
          select: """
            SELECT \((values + inputs.map(\.column)).joined(separator: ", ")) FROM \(fromLayout.table)
            WHERE \(sourceRows) ORDER BY Z_PK
            """,
          insert: """
            INSERT INTO main.\(toLayout.table) (\(allColumns.joined(separator: ", ")))
            VALUES (\(allColumns.map { _ in "?" }.joined(separator: ", ")))
            """,
          plainCount: values.count, inputTypes: inputs.map(\.type), transform: transform)
      }
      copies.append(
        Copy(
          mapping: entityMapping, sourceTable: fromLayout.table, sourceRows: sourceRows,
          insert: """
            INSERT INTO main.\(toLayout.table) (\(columns.joined(separator: ", ")))
            SELECT \(values.joined(separator: ", ")) FROM src.\(fromLayout.table)
            WHERE \(sourceRows) AND Z_PK > ? AND Z_PK <= ?
            """,
          constants: constants, rows: rows))
    }
    // The object path writes its objects' relationships itself; a many-to-many it writes must not
    // reach copied entities either (the join would be written from both sides).
    for entry in active where objects[entry.mapping.name] != nil {
      for relationship in destination.relationships(of: entry.to)
      where entry.mapping.relationships[relationship.name] != nil {
        guard case .manyToMany? = destinationSchema.layout(of: entry.to.name)?.properties[relationship.name] else {
          continue
        }
        if active.contains(where: { other in
          objects[other.mapping.name] == nil
            && destination.entity(other.to, isKindOf: relationship.destinationEntity)
        }) {
          throw Refusal(
            "\(entry.to.name).\(relationship.name), written as objects, joins copied rows (the join would be written twice)"
          )
        }
      }
    }
    self.copies = copies
    self.joins = joins.keys.sorted().compactMap { joins[$0] }
    self.keyTables = keyTables.filter { root, _ in !objectRoots.contains(root) }
  }

  /// A source attribute a transform receives: its name, column and type.
  typealias Input = (name: String, column: String, type: AttributeType)

  /// The stored attributes of a source entity a transform receives, in model order.
  static func inputs(of entity: Entity, in model: ObjectModel, layout: StoreSchema.EntityLayout) -> [Input] {
    model.attributes(of: entity).compactMap { attribute in
      guard case .attribute(let column)? = layout.properties[attribute.name] else { return nil }
      return (attribute.name, column.name, attribute.type)
    }
  }

  /// A join table's order column for one of its key columns (`Z_3TAGS` → `Z_FOK_3TAGS`).
  /// The order column of the many-to-many `name` of `relationship`'s destination, if it is ordered.
  static func joinOrder(of name: String, destinationOf relationship: Relationship, in schema: StoreSchema) -> String? {
    guard case .manyToMany(_, _, _, let order?)? = schema.layout(of: relationship.destinationEntity)?.properties[name]
    else { return nil }
    return order
  }
}
