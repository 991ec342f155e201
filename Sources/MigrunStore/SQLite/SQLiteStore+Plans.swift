import Foundation
import GRDB
import MigrunModel

/// How an entity's rows are read and written: the plans and SQL worked out once per entity or table,
/// kept by the store for the next object.
extension SQLiteStore {
  /// How one entity's rows are written: its columns and SQL, worked out once per entity.
  struct RowPlan {
    let layout: StoreSchema.EntityLayout
    let rootNumber: Int
    /// Stored attributes (derived ones included), in column order.
    let attributes: [String]
    /// For each of ``attributes``, whether Core Data may keep its values outside the store (written
    /// tagged): an array beside them, so the write loop looks nothing up.
    let external: [Bool]
    let toOnes: [(name: String, hasEntityColumn: Bool)]
    /// The entity's to-ones whose inverse is to-one too (relationship → inverse): both tables hold
    /// a key, and a write keeps the two sides agreeing.
    let oneToOnes: [String: String]
    let insertSQL: String
    let updateSQL: String
  }

  /// How one entity's objects are read from a row of `SELECT * FROM <table>`: each stored property's
  /// column by position in the table as the file has it (Z_PK, Z_ENT, Z_OPT first, as Core Data and
  /// migrun lay tables out), worked out once per entity.
  struct ReadPlan {
    let layout: StoreSchema.EntityLayout
    let attributes: [(name: String, index: Int, type: AttributeType, external: Bool)]
    let toOnes: [(name: String, key: Int, keyName: String, entity: Int?, entityName: String?, destination: String)]
    let toMany: [(name: String, storage: StoreSchema.PropertyStorage, destination: String)]
    /// The attributes' names, in their order: shared by every row read as a ``StoredRow``.
    let names: [String]
  }

  /// Column name (uppercased) → position in a row of `SELECT * FROM table`, as the file has it.
  private func positions(in table: String) -> [String: Int] {
    if let known = tablePositions[table] { return known }
    let columns = storedTables.first { $0.key.uppercased() == table.uppercased() }?.value ?? []
    var positions: [String: Int] = [:]
    for (index, name) in columns.enumerated() where positions[name.uppercased()] == nil {
      positions[name.uppercased()] = index
    }
    tablePositions[table] = positions
    return positions
  }

  /// Where Z_PK, Z_ENT and Z_OPT are in a row of `SELECT * FROM table`, and the number of the entity
  /// that owns every row when it is alone in the table (``StoreSchema/soleEntity(ofTable:)``) — asked
  /// once per object read: worked out once per table.
  func keyColumns(of table: String) throws -> (primaryKey: Int, entity: Int, version: Int, sole: Int?) {
    if let known = keyPositions[table] { return known }
    let positions = positions(in: table)
    guard let primaryKey = positions["Z_PK"], let entity = positions["Z_ENT"], let version = positions["Z_OPT"] else {
      throw StoreError(.layoutMismatch, reason: "table \(table) lacks Z_PK, Z_ENT or Z_OPT")
    }
    let found = (primaryKey, entity, version, schema.soleEntity(ofTable: table)?.number)
    keyPositions[table] = found
    return found
  }

  /// `SELECT Z_ENT, Z_OPT, <each to-one's key column [, entity column]>` of one object by key, in
  /// the read plan's order (built once per entity).
  func toOnesSQL(of plan: ReadPlan) -> String {
    if let known = toOnesSQL[plan.layout.number] { return known }
    let columns = ["Z_ENT", "Z_OPT"] + plan.toOnes.flatMap { [$0.keyName] + ($0.entityName.map { [$0] } ?? []) }
    let sql =
      "SELECT \(columns.joined(separator: ", ")) FROM \(plan.layout.table) WHERE Z_PK = ?"
      + " AND \(schema.rowPredicate(plan.layout))"
    toOnesSQL[plan.layout.number] = sql
    return sql
  }

  struct PropertyKey: Hashable {
    let entity: String
    let property: String
  }

  /// `UPDATE` of one to-one's columns of `id`'s entity by key (built once per relationship).
  func toOneUpdate(of id: ObjectID, _ relationship: String) throws -> (sql: String, hasEntityColumn: Bool) {
    let entity = id.entity
    let key = PropertyKey(entity: entity, property: relationship)
    if let known = toOneUpdates[key] { return known }
    guard let layout = schema.layout(of: entity), model.entity(named: entity) != nil else {
      throw StoreError(
        .unknownEntity, entity: entity, primaryKey: id.primaryKey, reason: "the model has no such entity")
    }
    guard case .toOne(let column, let entityColumn, _)? = layout.properties[relationship] else {
      throw StoreError(.unknownProperty, entity: entity, reason: "'\(relationship)' is not a to-one relationship")
    }
    let sets = [column.name] + (entityColumn.map { [$0.name] } ?? [])
    let update = (
      sql: "UPDATE \(layout.table) SET \(sets.map { "\($0) = ?" }.joined(separator: ", ")) WHERE Z_PK = ?",
      hasEntityColumn: entityColumn != nil
    )
    toOneUpdates[key] = update
    return update
  }

  /// `SELECT *` of one object of `layout`'s entity or a subentity by key (built once per entity).
  func objectSQL(of layout: StoreSchema.EntityLayout) -> String {
    if let known = objectSQL[layout.number] { return known }
    let sql = "SELECT * FROM \(layout.table) WHERE Z_PK = ? AND \(schema.rowPredicate(layout))"
    objectSQL[layout.number] = sql
    return sql
  }

  /// The read plan of entity number `number`, or nil when the model has no such entity.
  func readPlan(number: Int) throws -> ReadPlan? {
    if let plan = readPlans[number] { return plan }
    guard let layout = schema.layout(number: number), let entity = model.entity(named: layout.name) else {
      readPlans[number] = .some(nil)
      return nil
    }
    let positions = positions(in: layout.table)
    func position(_ column: StoreSchema.Column) throws -> Int {
      guard let index = positions[column.name.uppercased()] else {
        throw StoreError(
          .layoutMismatch, entity: layout.name, reason: "table \(layout.table) has no column \(column.name)")
      }
      return index
    }
    var attributes: [(name: String, index: Int, type: AttributeType, external: Bool)] = []
    for attribute in model.attributes(of: entity) {
      guard case .attribute(let column)? = layout.properties[attribute.name] else { continue }
      attributes.append((attribute.name, try position(column), attribute.type, attribute.storesExternally))
    }
    var toOnes: [(name: String, key: Int, keyName: String, entity: Int?, entityName: String?, destination: String)] =
      []
    var toMany: [(name: String, storage: StoreSchema.PropertyStorage, destination: String)] = []
    for relationship in model.relationships(of: entity) {
      switch layout.properties[relationship.name] {
      case .toOne(let key, let entityColumn, _)?:
        toOnes.append(
          (
            relationship.name, try position(key), key.name, try entityColumn.map(position), entityColumn?.name,
            relationship.destinationEntity
          ))
      case let storage? where relationship.isToMany:
        toMany.append((relationship.name, storage, relationship.destinationEntity))
      default:
        continue
      }
    }
    let plan = ReadPlan(
      layout: layout, attributes: attributes, toOnes: toOnes, toMany: toMany, names: attributes.map(\.name))
    readPlans[number] = plan
    return plan
  }

  func rowPlan(for entityName: String) throws -> RowPlan {
    if let plan = rowPlans[entityName] { return plan }
    guard let layout = schema.layout(of: entityName), let entity = model.entity(named: entityName),
      let root = schema.layout(of: model.root(of: entity).name)
    else { throw StoreError(.unknownEntity, entity: entityName, reason: "the model has no such entity") }
    var columns: [String] = []
    var attributes: [String] = []
    var external: [Bool] = []
    for attribute in model.attributes(of: entity) {
      guard case .attribute(let column)? = layout.properties[attribute.name] else { continue }
      columns.append(column.name)
      attributes.append(attribute.name)
      external.append(attribute.storesExternally)
    }
    var toOnes: [(name: String, hasEntityColumn: Bool)] = []
    var oneToOnes: [String: String] = [:]
    for relationship in model.relationships(of: entity) {
      guard case .toOne(let key, let entityColumn, _)? = layout.properties[relationship.name] else { continue }
      columns.append(key.name)
      if let entityColumn { columns.append(entityColumn.name) }
      toOnes.append((relationship.name, entityColumn != nil))
      if let inverse = model.inverse(of: relationship), !inverse.isToMany {
        oneToOnes[relationship.name] = inverse.name
      }
    }
    let inserted = ["Z_PK", "Z_ENT", "Z_OPT"] + columns
    let placeholders = inserted.map { _ in "?" }.joined(separator: ", ")
    let assignments = (["Z_OPT"] + columns).map { "\($0) = ?" }.joined(separator: ", ")
    let plan = RowPlan(
      layout: layout, rootNumber: root.number, attributes: attributes, external: external, toOnes: toOnes,
      oneToOnes: oneToOnes,
      insertSQL: "INSERT INTO \(layout.table) (\(inserted.joined(separator: ", "))) VALUES (\(placeholders))",
      updateSQL: "UPDATE \(layout.table) SET \(assignments) WHERE Z_PK = ?")
    rowPlans[entityName] = plan
    return plan
  }
}
