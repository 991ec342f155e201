import Foundation
import GRDB
import GRDBSQLite
import MigrunModel

/// Turns rows of one store into objects, with their to-many members.
struct SQLiteObjectReader {
  let store: SQLiteStore
  let db: Database

  /// The object with that key in `layout`'s table, if it is of `layout`'s entity or a subentity.
  func object(
    _ id: ObjectID, layout: StoreSchema.EntityLayout, withToMany: Bool = true, withAttributes: Bool = true
  ) throws -> StoredObject? {
    let statement = try db.cachedStatement(sql: store.objectSQL(of: layout))
    guard let row = try Row.fetchOne(statement, arguments: [id.primaryKey]) else { return nil }
    return try object(from: row, table: layout.table, withToMany: withToMany, withAttributes: withAttributes)
  }

  /// The object a row of `SELECT * FROM <table>` holds; `withToMany: false` leaves
  /// ``StoredObject/toMany`` empty (no member queries), `withAttributes: false`
  /// ``StoredObject/attributes`` (no value decoded). Columns are read by position, through the
  /// entity's ``SQLiteStore/ReadPlan`` (worked out once per entity).
  func object(from row: Row, table: String, withToMany: Bool = true, withAttributes: Bool = true) throws
    -> StoredObject
  {
    let (plan, id, version) = try header(of: row, table: table)
    var object = StoredObject(id: id, version: version)
    object.attributes.reserveCapacity(withAttributes ? plan.attributes.count : 0)
    for attribute in plan.attributes where withAttributes {
      object.attributes[attribute.name] = try value(of: attribute, in: row, plan: plan, key: id.primaryKey)
    }
    object.toOne = try toOnes(in: row, plan: plan)
    if withToMany { try readToMany(of: &object, plan: plan) }
    return object
  }

  /// The row's attributes and to-ones as a ``StoredRow`` (values in the plan's order, no dictionary).
  func storedRow(from row: Row, table: String) throws -> StoredRow {
    let (plan, id, version) = try header(of: row, table: table)
    var values = ContiguousArray<StoreValue>()
    values.reserveCapacity(plan.attributes.count)
    for attribute in plan.attributes {
      values.append(try value(of: attribute, in: row, plan: plan, key: id.primaryKey))
    }
    return StoredRow(
      id: id, version: version, names: plan.names, values: values, toOne: try toOnes(in: row, plan: plan))
  }

  /// The row's read plan (its entity's), ID and version.
  private func header(of row: Row, table: String) throws -> (SQLiteStore.ReadPlan, ObjectID, Int64) {
    let keys = try store.keyColumns(of: table)
    let stored = try row.value(at: keys.entity, named: "Z_ENT", as: Int.self)
    let primaryKey = try row.required(at: keys.primaryKey, named: "Z_PK", as: Int64.self)
    // A table's only entity owns every row of it, whatever number the row carries.
    let number = keys.sole ?? stored ?? 0
    guard let plan = try store.readPlan(number: number), plan.layout.table == table else {
      throw StoreError(
        .badValue, primaryKey: primaryKey, reason: "row has Z_ENT \(number), which the model does not have in \(table)")
    }
    let version: Int64 = try row.value(at: keys.version, named: "Z_OPT") ?? 0
    return (plan, ObjectID(entity: plan.layout.name, primaryKey: primaryKey), version)
  }

  private func value(
    of attribute: (name: String, index: Int, type: AttributeType, external: Bool), in row: Row,
    plan: SQLiteStore.ReadPlan, key: Int64
  ) throws -> StoreValue {
    let value = StoreValueCoding.value(row[attribute.index] as DatabaseValue, type: attribute.type)
    guard attribute.external else { return value }
    do {
      return try store.externalData.resolve(value)
    } catch {
      throw StoreError(
        .badValue, file: error.file, entity: plan.layout.name, primaryKey: key,
        reason: "'\(attribute.name)': \(error.reason)", underlying: error)
    }
  }

  private func toOnes(in row: Row, plan: SQLiteStore.ReadPlan) throws -> [String: ObjectID] {
    var found: [String: ObjectID] = [:]
    for toOne in plan.toOnes {
      guard let target = try row.value(at: toOne.key, named: toOne.keyName, as: Int64.self) else { continue }
      let targetEntity = try toOne.entity.flatMap { index in
        try row.value(at: index, named: toOne.entityName ?? "", as: Int.self).flatMap {
          store.schema.layout(number: $0)?.name
        }
      }
      found[toOne.name] = ObjectID(entity: targetEntity ?? toOne.destination, primaryKey: target)
    }
    return found
  }

  /// Every to-many's members of `object`, through the inverse's key or the join table.
  private func readToMany(of object: inout StoredObject, plan: SQLiteStore.ReadPlan) throws {
    let primaryKey = object.id.primaryKey
    for relationship in plan.toMany {
      switch relationship.storage {
      case .toManyThroughInverse(let destination, let inverse):
        object.toMany[relationship.name] = try membersThroughInverse(
          primaryKey, destination: destination, inverse: inverse)
      case .manyToMany(let table, let own, let other, let order):
        object.toMany[relationship.name] = try joinMembers(
          primaryKey, table: table, own: own, other: other, destination: relationship.destination, order: order)
      default:
        continue
      }
    }
  }

  /// What stage 2 reads of an object per destination object: its to-one targets, from
  /// `SELECT Z_ENT, Z_OPT, <to-one columns>` instead of the whole row (attributes left empty, no
  /// to-many members). A row of a subentity, or a column holding what a key cannot be, is read by
  /// ``object(_:layout:withToMany:withAttributes:)``, whose rules and errors stay the only ones.
  func toOnes(of id: ObjectID, layout: StoreSchema.EntityLayout) throws -> StoredObject? {
    guard let plan = try store.readPlan(number: layout.number), let connection = db.sqliteConnection else {
      return try object(id, layout: layout, withToMany: false, withAttributes: false)
    }
    let statement = try db.cachedStatement(sql: store.toOnesSQL(of: plan))
    let raw = RawStatement(handle: statement.sqliteStatement, connection: connection)
    raw.reset()
    defer { raw.reset() }
    sqlite3_bind_int64(raw.handle, 1, id.primaryKey)
    guard try raw.step() else { return nil }
    func integer(_ column: Int32) -> Int64?? {
      switch sqlite3_column_type(raw.handle, column) {
      case SQLITE_NULL: .some(nil)
      case SQLITE_INTEGER: .some(sqlite3_column_int64(raw.handle, column))
      default: nil
      }
    }
    guard let number = integer(0).flatMap({ $0 }), number == layout.number, let version = integer(1) else {
      raw.reset()
      return try object(id, layout: layout, withToMany: false, withAttributes: false)
    }
    var object = StoredObject(id: ObjectID(entity: layout.name, primaryKey: id.primaryKey), version: version ?? 0)
    var column: Int32 = 2
    for toOne in plan.toOnes {
      let keyValue = integer(column)
      let entityValue = toOne.entity == nil ? .some(nil) : integer(column + 1)
      column += toOne.entity == nil ? 1 : 2
      guard let key = keyValue, let entityNumber = entityValue else {
        raw.reset()
        return try self.object(id, layout: layout, withToMany: false, withAttributes: false)
      }
      guard let key else { continue }
      let entity = entityNumber.flatMap { store.schema.layout(number: Int($0))?.name } ?? toOne.destination
      object.toOne[toOne.name] = ObjectID(entity: entity, primaryKey: key)
    }
    return object
  }

  private func membersThroughInverse(_ primaryKey: Int64, destination: String, inverse: String) throws -> [ObjectID] {
    guard let layout = store.schema.layout(of: destination),
      case .toOne(let key, _, let order)? = layout.properties[inverse]
    else { return [] }
    let sql = """
      SELECT Z_PK, Z_ENT FROM \(layout.table) WHERE \(key.name) = ? AND \(store.schema.rowPredicate(layout))
      ORDER BY \(order.map { "\($0.name), " } ?? "")Z_PK
      """
    return try members(sql, primaryKey, table: layout.table)
  }

  private func joinMembers(
    _ primaryKey: Int64, table: String, own: String, other: String, destination: String, order: String?
  ) throws -> [ObjectID] {
    guard let layout = store.schema.layout(of: destination) else { return [] }
    let sql = """
      SELECT d.Z_PK, d.Z_ENT FROM \(table) j JOIN \(layout.table) d ON d.Z_PK = j.\(other)
      WHERE j.\(own) = ? ORDER BY \(order.map { "j.\($0), " } ?? "")d.Z_PK
      """
    return try members(sql, primaryKey, table: layout.table)
  }

  /// The objects `sql` (selecting `Z_PK, Z_ENT` of rows of `table`) finds.
  private func members(_ sql: String, _ primaryKey: Int64, table: String) throws -> [ObjectID] {
    let statement = try db.cachedStatement(sql: sql)
    var result: [ObjectID] = []
    let rows = try Row.fetchCursor(statement, arguments: [primaryKey])
    let sole = store.schema.soleEntity(ofTable: table)?.name
    while let row = try rows.next() {
      let number = try row.value(at: 1, named: "Z_ENT", as: Int.self) ?? 0
      guard let entity = sole ?? store.schema.layout(number: number)?.name else { continue }
      result.append(ObjectID(entity: entity, primaryKey: try row.required(at: 0)))
    }
    return result
  }
}

/// Writes objects inside one transaction of a store.
final class SQLiteObjectWriter: StoreWriter {
  let store: SQLiteStore
  let db: Database
  private(set) var newMetadata: StoreMetadata?

  /// Root entity number → its `Z_PRIMARYKEY.Z_MAX` as this writer (one transaction) last saw or set it.
  private var knownMax: [Int: Int64] = [:]

  init(store: SQLiteStore, db: Database) {
    self.store = store
    self.db = db
  }

  func newPrimaryKey(for entity: String) throws -> Int64 {
    let root = try rootNumber(entity)
    // Computed here, not as SQL's `Z_MAX + 1`, which past Int64's largest turns into a REAL.
    let largest = try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [root])
    let key = try StoreError.key(after: largest ?? 0, entity: entity)
    try db.cachedStatement(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?").execute(arguments: [key, root])
    knownMax[root] = key
    return key
  }

  func insert(_ object: StoredObject) throws {
    let plan = try store.rowPlan(for: object.id.entity)
    var values: [DatabaseValue] = [
      object.id.primaryKey.databaseValue, plan.layout.number.databaseValue, object.version.databaseValue,
    ]
    try appendValues(of: object, plan, to: &values)
    try execute(plan.insertSQL, values, object.id)
    if !plan.oneToOnes.isEmpty { try keepInverses(of: object, plan.oneToOnes, previous: [:]) }
    // Z_MAX covers the key: raised only when it does not yet (a migration reserves the source's
    // keys first, so its inserts with kept keys leave it alone).
    let known: Int64
    if let cached = knownMax[plan.rootNumber] {
      known = cached
    } else {
      known =
        try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [plan.rootNumber])
        ?? 0
    }
    if object.id.primaryKey > known {
      try db.cachedStatement(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
        .execute(arguments: [object.id.primaryKey, plan.rootNumber])
    }
    knownMax[plan.rootNumber] = max(known, object.id.primaryKey)
  }

  func update(_ object: StoredObject, bumpingVersion: Bool) throws {
    let plan = try store.rowPlan(for: object.id.entity)
    var values: [DatabaseValue] = [
      (bumpingVersion ? StoredObject.version(after: object.version) : object.version).databaseValue
    ]
    try appendValues(of: object, plan, to: &values)
    values.append(object.id.primaryKey.databaseValue)
    var previous: [String: ObjectID] = [:]
    for own in plan.oneToOnes.keys { previous[own] = try currentTarget(of: object.id, own) }
    try execute(plan.updateSQL, values, object.id)
    if !plan.oneToOnes.isEmpty { try keepInverses(of: object, plan.oneToOnes, previous: previous) }
  }

  func reservePrimaryKeys(for entity: String, through key: Int64) throws {
    let root = try rootNumber(entity)
    try db.cachedStatement(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?").execute(arguments: [
      key, root,
    ])
    knownMax[root] = nil
  }

  func setToOne(_ id: ObjectID, _ relationship: String, _ target: ObjectID?) throws {
    let update = try store.toOneUpdate(of: id, relationship)
    let inverse = try store.rowPlan(for: id.entity).oneToOnes[relationship]
    let previous = try inverse.map { _ in try currentTarget(of: id, relationship) } ?? nil
    try writeColumn(update, of: id, target)
    if let inverse {
      try keepInverse(of: id, relationship, inverse: inverse, from: previous, to: target)
    }
  }

  // MARK: One-to-one pairs (both tables hold a key; Core Data keeps the two sides agreeing)

  /// The object `id`'s to-one `relationship` names now: its entity from the entity column, or the
  /// destination's own when it has no subentities (nil when the key is NULL or `id` has no row).
  private func currentTarget(of id: ObjectID, _ relationship: String) throws -> ObjectID? {
    let (layout, _) = try resolve(id)
    guard case .toOne(let key, let entityColumn, _)? = layout.properties[relationship],
      let owner = store.model.entity(named: id.entity),
      let declared = store.model.relationships(of: owner).first(where: { $0.name == relationship })
    else { return nil }
    let columns = [key.name] + (entityColumn.map { [$0.name] } ?? [])
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT \(columns.joined(separator: ", ")) FROM \(layout.table) WHERE Z_PK = ?"),
        arguments: [id.primaryKey]),
      let targetKey = row[0] as Int64?
    else { return nil }
    let number: Int? = entityColumn == nil ? nil : row[1]
    let entity = number.flatMap { number in store.schema.entities.first { $0.number == number }?.name }
    return ObjectID(entity: entity ?? declared.destinationEntity, primaryKey: targetKey)
  }

  private func writeColumn(_ update: (sql: String, hasEntityColumn: Bool), of id: ObjectID, _ target: ObjectID?) throws
  {
    var values: [DatabaseValue] = [target?.primaryKey.databaseValue ?? .null]
    if update.hasEntityColumn {
      values.append(target.flatMap { store.schema.layout(of: $0.entity)?.number.databaseValue } ?? .null)
    }
    values.append(id.primaryKey.databaseValue)
    try execute(update.sql, values, id)
  }

  /// After `id.own` went from `previous` to `target`: `previous` no longer names `id`, whatever
  /// `target` named before no longer names it, and `target` names `id` — as Core Data's objects do.
  /// A key naming no object is left as it is (no row to write).
  private func keepInverse(
    of id: ObjectID, _ own: String, inverse: String, from previous: ObjectID?, to target: ObjectID?
  ) throws {
    if let previous, previous != target, try currentTarget(of: previous, inverse) == id {
      try writeColumn(try store.toOneUpdate(of: previous, inverse), of: previous, nil)
    }
    guard let target else { return }
    if let prior = try currentTarget(of: target, inverse), prior != id, try currentTarget(of: prior, own) == target {
      try writeColumn(try store.toOneUpdate(of: prior, own), of: prior, nil)
    }
    try writeColumn(try store.toOneUpdate(of: target, inverse), of: target, id)
  }

  /// Inserted or updated (`previous`: what it named before): the inverse side of each one-to-one
  /// (`pairs`: relationship → inverse) follows.
  private func keepInverses(of object: StoredObject, _ pairs: [String: String], previous: [String: ObjectID]) throws {
    for (own, inverse) in pairs.sorted(by: { $0.key < $1.key }) where previous[own] != object.toOne[own] {
      try keepInverse(of: object.id, own, inverse: inverse, from: previous[own], to: object.toOne[own])
    }
  }

  func setToMany(_ id: ObjectID, _ relationship: String, _ members: [ObjectID]) throws {
    let (layout, _) = try resolve(id)
    switch layout.properties[relationship] {
    case .toManyThroughInverse(let destination, let inverse)?:
      guard let target = store.schema.layout(of: destination),
        case .toOne(let key, let entityColumn, let order)? = target.properties[inverse]
      else { return }
      var clear = ["\(key.name) = NULL"]
      if let entityColumn { clear.append("\(entityColumn.name) = NULL") }
      if let order { clear.append("\(order.name) = NULL") }
      try db.cachedStatement(sql: "UPDATE \(target.table) SET \(clear.joined(separator: ", ")) WHERE \(key.name) = ?")
        .execute(arguments: [id.primaryKey])
      for (index, member) in members.enumerated() {
        var sets = ["\(key.name) = ?"]
        var values: [DatabaseValue] = [id.primaryKey.databaseValue]
        if let entityColumn {
          sets.append("\(entityColumn.name) = ?")
          values.append(layout.number.databaseValue)
        }
        if let order {
          sets.append("\(order.name) = ?")
          values.append((index + 1).databaseValue)
        }
        values.append(member.primaryKey.databaseValue)
        try execute("UPDATE \(target.table) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ?", values, id)
      }
    case .manyToMany(let table, let own, let other, let order)?:
      try setJoinMembers(id, members, table: table, own: own, other: other, order: order)
    default:
      throw StoreError(.unknownProperty, entity: id.entity, reason: "'\(relationship)' is not a to-many relationship")
    }
  }

  /// A many-to-many's members: pairs that stay keep their row (and the inverse's order), pairs
  /// gone are deleted, new ones inserted (both ways for a self-inverse relationship).
  private func setJoinMembers(
    _ id: ObjectID, _ members: [ObjectID], table: String, own: String, other: String, order: String?
  ) throws {
    // Pairs that stay keep their row, so the inverse's order column (when it is ordered) survives.
    let reflexive = other == "REFLEXIVE"
    let kept = Set(members.map(\.primaryKey))
    let current = try Int64.fetchAll(
      db.cachedStatement(sql: "SELECT \(other) FROM \(table) WHERE \(own) = ?"), arguments: [id.primaryKey])
    let remove = try db.cachedStatement(
      sql: "DELETE FROM \(table) WHERE (\(own) = ? AND \(other) = ?) OR (\(own) = ? AND \(other) = ?)")
    for gone in current where !kept.contains(gone) {
      // A self-inverse pair is stored both ways.
      let back: [Int64] = reflexive ? [gone, id.primaryKey] : [id.primaryKey, gone]
      try remove.execute(arguments: StatementArguments([id.primaryKey, gone] + back))
    }
    // One statement a member: the pair, and its position when the relationship is ordered.
    let add = try db.cachedStatement(
      sql: order.map { order in
        "INSERT INTO \(table) (\(own), \(other), \(order)) VALUES (?, ?, ?) "
          + "ON CONFLICT (\(own), \(other)) DO UPDATE SET \(order) = excluded.\(order)"
      } ?? "INSERT OR IGNORE INTO \(table) (\(own), \(other)) VALUES (?, ?)")
    let mirror = try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(table) (\(own), \(other)) VALUES (?, ?)")
    for (index, member) in members.enumerated() {
      try add.execute(
        arguments: StatementArguments(
          [id.primaryKey, member.primaryKey] + (order == nil ? [] : [Int64(index + 1)])))
      if reflexive { try mirror.execute(arguments: [member.primaryKey, id.primaryKey]) }
    }
  }

  func delete(_ id: ObjectID) throws {
    let (layout, _) = try resolve(id)
    try db.cachedStatement(sql: "DELETE FROM \(layout.table) WHERE Z_PK = ?").execute(arguments: [id.primaryKey])
    for storage in layout.properties.values {
      switch storage {
      case .manyToMany(let table, let own, let other, _):
        // Only this object's own column (the other holds the destination's keys) — or both for a
        // self-inverse relationship, whose pairs hold this entity on each side.
        let reflexive = other == "REFLEXIVE"
        try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \(own) = ?\(reflexive ? " OR REFLEXIVE = ?" : "")")
          .execute(arguments: reflexive ? [id.primaryKey, id.primaryKey] : [id.primaryKey])
      case .toManyThroughInverse(let destination, let inverse):
        if let target = store.schema.layout(of: destination), case .toOne(let key, _, _)? = target.properties[inverse] {
          try db.cachedStatement(sql: "UPDATE \(target.table) SET \(key.name) = NULL WHERE \(key.name) = ?").execute(
            arguments: [id.primaryKey])
        }
      default: break
      }
    }
  }

  func object(_ id: ObjectID) throws -> StoredObject? {
    try SQLiteObjectReader(store: store, db: db).object(id, layout: try resolve(id).0)
  }

  func contains(_ id: ObjectID) throws -> Bool {
    let (layout, _) = try resolve(id)
    let own = store.schema.rowCondition(layout, includingSubentities: false).map { " AND \($0)" } ?? ""
    let statement = try db.cachedStatement(sql: "SELECT 1 FROM \(layout.table) WHERE Z_PK = ?\(own) LIMIT 1")
    return try Int.fetchOne(statement, arguments: [id.primaryKey]) != nil
  }

  func objectIDs(of entity: String, filter: RowFilter?, sortedBy keys: [(String, Bool)], limit: Int?) throws
    -> [ObjectID]?
  {
    try store.objectIDs(
      of: entity, includingSubentities: true, filter: filter, sortedBy: keys, limit: limit, offset: 0,
      reading: { try $0(db) })
  }

  func firstObject(of entity: String, matching values: [String: StoreValue]) throws -> ObjectID? {
    guard let layout = store.schema.layout(of: entity) else {
      throw StoreError(.unknownEntity, entity: entity, reason: "the model has no such entity")
    }
    var conditions = [store.schema.rowPredicate(layout)]
    var arguments: [DatabaseValue] = []
    var columns: [String] = []
    for (name, value) in values.sorted(by: { $0.key < $1.key }) {
      guard case .attribute(let column)? = layout.properties[name] else {
        throw StoreError(.unknownProperty, entity: entity, reason: "'\(name)' is not an attribute")
      }
      columns.append(column.name)
      if value == .null {
        conditions.append("\(column.name) IS NULL")
      } else {
        conditions.append("\(column.name) = ?")
        arguments.append(StoreValueCoding.databaseValue(value))
      }
    }
    try store.noteLookUp(db, columns: columns, in: layout.table)
    let sql =
      "SELECT Z_PK, Z_ENT FROM \(layout.table) WHERE \(conditions.joined(separator: " AND ")) ORDER BY Z_PK LIMIT 1"
    guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments)) else {
      return nil
    }
    let number = try row.value(at: 1, named: "Z_ENT", as: Int.self) ?? 0
    let primaryKey = try row.required(at: 0, as: Int64.self)
    let found = store.schema.soleEntity(ofTable: layout.table) ?? store.schema.layout(number: number)
    return found.map { ObjectID(entity: $0.name, primaryKey: primaryKey) }
  }

  func setMetadata(_ metadata: StoreMetadata) throws {
    try StoreEdit(db).setMetadata(metadata)
    newMetadata = metadata
  }

  // MARK: - Non public

  private func resolve(_ id: ObjectID) throws -> (StoreSchema.EntityLayout, Entity) {
    guard let layout = store.schema.layout(of: id.entity), let entity = store.model.entity(named: id.entity) else {
      throw StoreError(
        .unknownEntity, entity: id.entity, primaryKey: id.primaryKey, reason: "the model has no such entity")
    }
    return (layout, entity)
  }

  private func rootNumber(_ entity: String) throws -> Int {
    guard let found = store.model.entity(named: entity),
      let root = store.schema.layout(of: store.model.root(of: found).name)
    else { throw StoreError(.unknownEntity, entity: entity, reason: "the model has no such entity") }
    return root.number
  }

  /// The attribute and to-one values of `object`, in the plan's column order.
  private func appendValues(of object: StoredObject, _ plan: SQLiteStore.RowPlan, to values: inout [DatabaseValue])
    throws
  {
    for (attribute, external) in zip(plan.attributes, plan.external) {
      let value = object.attributes[attribute] ?? .null
      values.append(StoreValueCoding.databaseValue(external ? try store.externalData.stored(value) : value))
    }
    for relationship in plan.toOnes {
      let target = object.toOne[relationship.name]
      values.append(target?.primaryKey.databaseValue ?? .null)
      if relationship.hasEntityColumn {
        values.append(target.flatMap { store.schema.layout(of: $0.entity)?.number.databaseValue } ?? .null)
      }
    }
  }

  /// Runs a cached statement with `values` bound through SQLite's C API (GRDB's argument handling
  /// cost more than the insert or update itself, per object).
  private func execute(_ sql: String, _ values: [DatabaseValue], _ id: ObjectID) throws {
    let statement = try db.cachedStatement(sql: sql)
    guard let connection = db.sqliteConnection else { throw StoreError(.sqlite, reason: "the store is closed") }
    let raw = RawStatement(handle: statement.sqliteStatement, connection: connection)
    raw.reset()
    for (index, value) in values.enumerated() { try raw.bind(value, at: Int32(index + 1)) }
    let status = sqlite3_step(statement.sqliteStatement)
    defer { raw.reset() }
    guard status == SQLITE_DONE else {
      // SQLITE_CONSTRAINT_UNIQUE (2067): a uniqueness constraint; anything else is SQLite's error.
      throw StoreError(
        sqlite3_extended_errcode(connection) == 2067 ? .constraint : .sqlite, entity: id.entity,
        primaryKey: id.primaryKey, reason: String(cString: sqlite3_errmsg(connection)))
    }
  }
}

/// Store values ↔ SQLite values, by attribute type.
package enum StoreValueCoding {
  package static func value(_ stored: DatabaseValue, type: AttributeType) -> StoreValue {
    switch stored.storage {
    case .null: .null
    case .int64(let number): value(integer: number, type: type)
    case .double(let number): value(double: number, type: type)
    case .string(let text): value(text: text, type: type)
    case .blob(let data): value(bytes: Array(data), type: type)
    }
  }

  package static func value(integer number: Int64, type: AttributeType) -> StoreValue {
    switch type {
    case .boolean: .boolean(number != 0)
    case .double, .float, .decimal: .double(Double(number))
    case .date: .date(Double(number))
    default: .integer(number)
    }
  }

  package static func value(double number: Double, type: AttributeType) -> StoreValue {
    switch type {
    case .date: return .date(number)
    case .integer16, .integer32, .integer64, .boolean:
      return number.rounded() == number && abs(number) < 9.2e18 ? .integer(Int64(number)) : .double(number)
    default: return .double(number)
    }
  }

  package static func value(text: String, type: AttributeType) -> StoreValue {
    switch type {
    case .binary, .transformable, .uuid: .data(Array(text.utf8))
    // An NSDecimalNumber NaN is stored as the text `NaN` (SQLite has no NaN REAL).
    case .decimal where text == "NaN", .double where text == "NaN", .float where text == "NaN": .double(.nan)
    default: .string(text)
    }
  }

  package static func value(bytes: [UInt8], type: AttributeType) -> StoreValue {
    switch type {
    case .uuid where bytes.count == 16: .uuid(bytes)
    case .string, .uri: .string(String(decoding: bytes, as: UTF8.self))
    default: .data(bytes)
    }
  }

  package static func databaseValue(_ value: StoreValue) -> DatabaseValue {
    switch value {
    case .null: .null
    case .integer(let number): number.databaseValue
    case .boolean(let flag): (flag ? 1 : 0).databaseValue
    // SQLite turns a NaN REAL into NULL; Core Data writes a decimal NaN as the text `NaN`.
    case .double(let number) where number.isNaN: "NaN".databaseValue
    case .double(let number), .date(let number): number.databaseValue
    case .string(let text): text.databaseValue
    case .data(let bytes), .uuid(let bytes): Data(bytes).databaseValue
    }
  }
}
