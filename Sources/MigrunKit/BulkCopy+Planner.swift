import Foundation
import MigrunModel
import MigrunStore

extension BulkCopy {
  /// Works a step out as a bulk copy, one decision at a time (``BulkCopy``'s notes say what
  /// applies): which entity mappings take part, which need the object path, the transforms of
  /// scripted attributes, then per copied mapping its `INSERT … SELECT` and join statements.
  /// Each part refuses with the reason the step must run object by object.
  struct Planner {
    let mapping: MappingModel
    let source: ObjectModel
    let destination: ObjectModel
    let sourceSchema: StoreSchema
    let destinationSchema: StoreSchema
    let policies: [String: any EntityMigrationPolicy]
    let manager: MigrationManager?
    let mixed: Bool
    /// Source entity number → destination entity number.
    let entityNumbers: [Int: Int]

    /// The copy, transform and custom entity mappings, resolved.
    var active: [Resolved] = []
    /// Mappings that must run object by object, with why (without `mixed`, any of them means no copy).
    var objects: [String: String] = [:]
    /// Per mapping, the row transform computing its scripted attributes, with its inputs.
    var transforms: [String: (transform: any RowTransform, inputs: [Input])] = [:]
    /// Destination roots written as objects.
    var objectRoots: Set<String> = []
    var copies: [Copy] = []
    /// Join table → its `INSERT … SELECT`.
    var joins: [String: String] = [:]

    /// The mappings whose rows are copied.
    var copied: [Resolved] { active.filter { objects[$0.mapping.name] == nil } }

    /// The entity mappings that take part, and which of them need the object path.
    mutating func resolve() throws {
      let kinds: [EntityMapping.Kind] =
        mixed ? [.copy, .transform, .custom, .add, .remove] : [.copy, .transform, .add, .remove]
      if let other = mapping.entityMappings.first(where: { !kinds.contains($0.kind) }) {
        throw Refusal("entity mapping \(other.name) is \(other.kind.rawValue)")
      }
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
        } else if !BulkCopy.keepsConstraints(entityMapping, from: from, in: source, to: to, in: destination) {
          objects[entityMapping.name] = "\(to.name) gets a uniqueness constraint its rows may break"
        } else if let attribute = ExternalData.rewrittenAttribute(
          entityMapping, from: from, in: source, to: to, in: destination)
        {
          objects[entityMapping.name] =
            "\(to.name).\(attribute) changes how its values are kept (external binary storage)"
        }
        active.append(
          Resolved(mapping: entityMapping, from: from, to: to, fromLayout: fromLayout, toLayout: toLayout))
      }
      // A policy anywhere else (an added entity's hooks, say) needs the object path.
      if let name = policies.keys.sorted().first(where: { name in !active.contains { $0.mapping.name == name } }) {
        throw Refusal("the policy of entity mapping \(name) runs on objects")
      }
    }

    /// The row transforms of the policies that compute attributes; a mapping that computes values
    /// any other way goes to the object path.
    mutating func findRowTransforms() throws {
      for entry in copied {
        let computed = Set(entry.mapping.attributes.filter { $0.value == .computed }.keys)
        guard let policy = policies[entry.mapping.name] else {
          if !computed.isEmpty {
            objects[entry.mapping.name] = "entity mapping \(entry.mapping.name) computes values with no policy"
          }
          continue
        }
        let inputs = BulkCopy.inputs(of: entry.from, in: source, layout: entry.fromLayout)
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
    }

    /// Whole destination hierarchies go one way (their rows share a table and a key sequence); a
    /// mixed step is worth it only with rows to copy, and its object mappings must give each
    /// source object one destination object with its key (copied rows refer to them by key).
    mutating func settleObjectMappings() throws {
      if !mixed, let first = objects.keys.sorted().first, let why = objects[first] { throw Refusal(why) }
      objectRoots = Set(active.filter { objects[$0.mapping.name] != nil }.map { destination.root(of: $0.to).name })
      for entry in active
      where objectRoots.contains(destination.root(of: entry.to).name) && objects[entry.mapping.name] == nil {
        objects[entry.mapping.name] =
          "its destination hierarchy (\(destination.root(of: entry.to).name)) is written as objects"
      }
      guard let first = objects.keys.sorted().first, let why = objects[first] else { return }
      guard objects.count < active.count else { throw Refusal(why) }
      for entry in active where objects[entry.mapping.name] != nil {
        if let policy = policies[entry.mapping.name], !policy.makesDefaultDestinations {
          throw Refusal(
            "the policy of entity mapping \(entry.mapping.name) makes its own destination objects, which copied rows cannot refer to by key"
          )
        }
        guard BulkCopy.keepsConstraints(entry.mapping, from: entry.from, in: source, to: entry.to, in: destination)
        else {
          throw Refusal(
            "\(entry.to.name) gets a uniqueness constraint: its objects may be merged, and copied rows cannot refer to them by key"
          )
        }
      }
    }

    /// Destination root → the source table whose keys it keeps: one source hierarchy per
    /// destination one, or keys may collide.
    func keyTables() throws -> [String: String] {
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
      return keyTables
    }

    /// One destination row's columns and the SQL giving each from its source row.
    struct Columns {
      var names = ["Z_PK", "Z_ENT", "Z_OPT"]
      var values: [String]
      var constants: [StoreValue] = []
      /// Columns a transform computes: (column, attribute).
      var computed: [(column: String, attribute: String)] = []

      init(entityNumber: Int) { values = ["Z_PK", "\(entityNumber)", "Z_OPT"] }

      mutating func add(_ name: String, _ value: String) {
        names.append(name)
        values.append(value)
      }
    }

    /// The copy of one entity mapping: its attributes' and relationships' columns, its joins, and
    /// the row loop when a transform computes attributes.
    mutating func addCopy(of entry: Resolved) throws {
      var columns = Columns(entityNumber: entry.toLayout.number)
      try addAttributes(of: entry, to: &columns)
      for relationship in destination.relationships(of: entry.to) {
        try addRelationship(relationship, of: entry, to: &columns)
      }
      // The source entity's own rows, as Core Data fetches them (every row of a table it is alone in).
      let sourceRows = sourceSchema.rowPredicate(entry.fromLayout, includingSubentities: false)
      copies.append(
        Copy(
          mapping: entry.mapping, sourceTable: entry.fromLayout.table, sourceRows: sourceRows,
          insert: StoreEdit.copyStatement(
            into: entry.toLayout.table, columns: columns.names, values: columns.values, from: entry.fromLayout.table,
            where: sourceRows),
          constants: columns.constants, rows: rowLoop(for: entry, columns, sourceRows: sourceRows)))
    }

    func addAttributes(of entry: Resolved, to columns: inout Columns) throws {
      for attribute in destination.attributes(of: entry.to) {
        guard case .attribute(let column)? = entry.toLayout.properties[attribute.name] else { continue }
        switch entry.mapping.attributes[attribute.name] {
        case .computed?:
          columns.computed.append((column.name, attribute.name))
        case let origin?:
          var old: String?
          if let name = origin.sourceAttribute {
            guard case .attribute(let oldColumn)? = entry.fromLayout.properties[name] else {
              throw Refusal(
                "\(entry.to.name).\(attribute.name) comes from \(entry.from.name).\(name), which is not a stored attribute"
              )
            }
            old = oldColumn.name
          }
          guard let made = origin.sql(column: old) else {
            throw Refusal("\(entry.to.name).\(attribute.name) is \(origin): each value is checked as it is converted")
          }
          columns.add(column.name, made.expression)
          columns.constants += made.constants
        case nil:
          columns.add(column.name, "NULL")
        }
      }
    }

    mutating func addRelationship(_ relationship: Relationship, of entry: Resolved, to columns: inout Columns) throws {
      let named = "\(entry.to.name).\(relationship.name)"
      let sourceName = entry.mapping.relationships[relationship.name]
      let oldRelationship = sourceName.flatMap { name in source.relationships(of: entry.from).first { $0.name == name }
      }
      let oldStorage = sourceName.flatMap { entry.fromLayout.properties[$0] }
      switch entry.toLayout.properties[relationship.name] {
      case .toOne(let key, let entityColumn, let order)?:
        guard let oldRelationship, case .toOne(let oldKey, let oldEntityColumn, let oldOrder)? = oldStorage else {
          if let sourceName { throw Refusal("\(named) was \(sourceName), stored another way (not a to-one column)") }
          return  // a new relationship: NULL
        }
        guard order == nil || oldOrder != nil else {
          throw Refusal("\(named) keeps an order its source relationship does not have")
        }
        try addToOne(
          relationship, from: oldRelationship, key: key, entityColumn: entityColumn, oldKey: oldKey,
          oldEntityColumn: oldEntityColumn, named: named, to: &columns)
        if let order, let oldOrder { columns.add(order.name, oldOrder.name) }
      case .toManyThroughInverse(let target, let inverse)?:
        // Written by the inverse's column, which the target's mapping copies.
        guard sourceName != nil else { return }
        guard case .toManyThroughInverse(_, let oldInverse)? = oldStorage,
          oldRelationship?.isOrdered == relationship.isOrdered,
          active.contains(where: { other in
            destination.entity(other.to, isKindOf: target) && other.mapping.relationships[inverse] == oldInverse
          })
        else { throw Refusal("\(named) is not written by its inverse's copied column as in the source") }
      case .manyToMany(let table, let own, let other, let order)?:
        guard sourceName != nil else { return }
        guard !joinsCopiedLater(relationship) else {
          // A join to objects the object path makes later: their rows are not there when joins run.
          throw Refusal("\(named) joins objects the object path writes after the rows")
        }
        guard case .manyToMany(let oldTable, let oldOwn, let oldOther, let oldOrder)? = oldStorage,
          let oldRelationship, (order == nil) == (oldOrder == nil)
        else { throw Refusal("\(named) is a join table, stored another way (or ordered otherwise) in the source") }
        guard joins[table] == nil else { return }
        joins[table] = try joinStatement(
          relationship, of: entry, from: oldRelationship, table: table, columns: [own, other, order],
          oldTable: oldTable, oldColumns: [oldOwn, oldOther, oldOrder], named: named)
      default:
        if let sourceName { throw Refusal("\(named) was \(sourceName), stored another way (to-one ↔ to-many)") }
      }
    }

    /// Whether `relationship` reaches an entity the object path writes (after the rows are copied).
    func joinsCopiedLater(_ relationship: Relationship) -> Bool {
      let objectEntities = Set(active.filter { objects[$0.mapping.name] != nil }.map(\.to.name))
      return destination.entities.contains {
        objectEntities.contains($0.name) && destination.entity($0, isKindOf: relationship.destinationEntity)
      }
    }

    /// A to-one's key and entity columns: the target's destination entity number, NULL when its
    /// entity is not migrated (or no longer fits the relationship) — the key is dropped with it.
    func addToOne(
      _ relationship: Relationship, from oldRelationship: Relationship, key: StoreSchema.Column,
      entityColumn: StoreSchema.Column?, oldKey: StoreSchema.Column, oldEntityColumn: StoreSchema.Column?,
      named: String, to columns: inout Columns
    ) throws {
      guard let targetEntity = source.entity(named: oldRelationship.destinationEntity),
        let targetLayout = sourceSchema.layout(of: targetEntity.name)
      else { throw Refusal("\(named) keeps an order its source relationship does not have") }
      let fitting = targetLayout.kindNumbers.compactMap { number -> (Int, Int)? in
        guard let mapped = entityNumbers[number], let name = destinationSchema.layout(number: mapped)?.name,
          let mappedEntity = destination.entity(named: name),
          destination.entity(mappedEntity, isKindOf: relationship.destinationEntity)
        else { return nil }
        return (number, mapped)
      }
      let isIdentity = fitting.count == targetLayout.kindNumbers.count && fitting.allSatisfy { $0.0 == $0.1 }
      let made = StoreEdit.toOneCopy(
        key: oldKey.name, entity: oldEntityColumn?.name, soleNumber: targetLayout.number, numbers: fitting,
        unchanged: isIdentity)
      columns.add(key.name, made.key)
      if let entityColumn { columns.add(entityColumn.name, made.entity) }
    }

    /// A join table's `INSERT … SELECT`: pairs whose both ends were migrated (the rows are in place
    /// when joins run) — ends of every entity that has the relationship, not only this mapping's
    /// (one join serves all) — with the order columns of either side that is ordered.
    func joinStatement(
      _ relationship: Relationship, of entry: Resolved, from oldRelationship: Relationship, table: String,
      columns: [String?], oldTable: String, oldColumns: [String?], named: String
    ) throws -> String {
      guard let targetLayout = destinationSchema.layout(of: relationship.destinationEntity),
        case let (own?, other?, oldOwn?, oldOther?) = (columns[0], columns[1], oldColumns[0], oldColumns[1])
      else { throw Refusal("\(named) is a join table, stored another way (or ordered otherwise) in the source") }
      var joinColumns = [own, other]
      var joinValues = [oldOwn, oldOther]
      if let order = columns[2], let oldOrder = oldColumns[2] {
        joinColumns.append(order)
        joinValues.append(oldOrder)
      }
      // The inverse's positions, when it is ordered: the same in the source, or no bulk copy.
      let inverseOrder = destination.inverse(of: relationship).flatMap { inverse in
        BulkCopy.joinOrder(of: inverse.name, destinationOf: relationship, in: destinationSchema)
      }
      let oldInverseOrder = source.inverse(of: oldRelationship).flatMap { inverse in
        BulkCopy.joinOrder(of: inverse.name, destinationOf: oldRelationship, in: sourceSchema)
      }
      if other != "REFLEXIVE", inverseOrder != nil || oldInverseOrder != nil {
        guard let inverseOrder, let oldInverseOrder else {
          throw Refusal("\(named)'s inverse is ordered on one side only")
        }
        joinColumns.append(inverseOrder)
        joinValues.append(oldInverseOrder)
      }
      let ownerLayout =
        destination.declaringEntity(ofRelationship: relationship.name, in: entry.to).flatMap {
          destinationSchema.layout(of: $0.name)
        } ?? entry.toLayout
      return StoreEdit.joinCopyStatement(
        into: table, columns: joinColumns, values: joinValues, from: oldTable, own: oldOwn, in: ownerLayout,
        other: oldOther, in: targetLayout, of: destinationSchema)
    }

    /// The row loop of a mapping whose transform computes attributes: the transform's outputs in
    /// its own order, its inputs every stored source attribute.
    func rowLoop(for entry: Resolved, _ columns: Columns, sourceRows: String) -> RowLoop? {
      guard let (transform, inputs) = transforms[entry.mapping.name], !columns.computed.isEmpty else { return nil }
      let outputColumns = transform.outputs.compactMap { name in
        columns.computed.first { $0.attribute == name }?.column
      }
      let allColumns = columns.names + outputColumns
      return RowLoop(
        select: StoreEdit.rowLoopSelect(
          values: columns.values + inputs.map(\.column), from: entry.fromLayout.table, where: sourceRows),
        insert: StoreEdit.rowLoopInsert(into: entry.toLayout.table, columns: allColumns),
        plainCount: columns.values.count, inputTypes: inputs.map(\.type), transform: transform)
    }

    /// The object path writes its objects' relationships itself; a many-to-many it writes must not
    /// reach copied entities either (the join would be written from both sides).
    func refuseJoinsWrittenTwice() throws {
      for entry in active where objects[entry.mapping.name] != nil {
        for relationship in destination.relationships(of: entry.to)
        where entry.mapping.relationships[relationship.name] != nil {
          guard case .manyToMany? = destinationSchema.layout(of: entry.to.name)?.properties[relationship.name] else {
            continue
          }
          if active.contains(where: { other in
            objects[other.mapping.name] == nil && destination.entity(other.to, isKindOf: relationship.destinationEntity)
          }) {
            throw Refusal(
              "\(entry.to.name).\(relationship.name), written as objects, joins copied rows (the join would be written twice)"
            )
          }
        }
      }
    }
  }
}
