import Foundation
import GRDB
import GRDBSQLite

/// Which destination objects were made from which source objects, per entity mapping: Core Data's
/// `associateSourceInstance(_:withDestinationInstance:for:)` record. Kept in a SQLite file beside
/// the working copy (or in memory for in-memory stores), so it never grows the process with the store.
///
/// Every object of a step is associated once and looked up a few times, so the table is driven
/// through SQLite's C API with statements prepared once, entity and mapping names stored as small
/// integers (a string compared per row, and GRDB's per-call work, cost more than the look-up).
final class AssociationTable {
  private let queue: DatabaseQueue
  let url: URL?
  private let connection: OpaquePointer
  private var statements: [String: OpaquePointer] = [:]
  /// Entity and mapping names ↔ the integers stored for them.
  private var codes: [String: Int64] = [:]
  private var names: [String] = []

  init(at url: URL?) throws {
    self.url = url
    var configuration = Configuration()
    // The table's one transaction spans every access (see below).
    configuration.allowsUnsafeTransactions = true
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA journal_mode = OFF")
      try db.execute(sql: "PRAGMA synchronous = OFF")
    }
    queue =
      try url.map { try DatabaseQueue(path: $0.path, configuration: configuration) }
      ?? DatabaseQueue(configuration: configuration)
    // One transaction for the table's whole life: it is a throwaway side file (no journal, deleted
    // at the end), so a transaction per association would only add a commit per migrated object.
    let handle = try queue.inDatabase { db -> OpaquePointer? in
      try db.beginTransaction()
      try db.execute(
        sql: """
          CREATE TABLE association (mapping INTEGER NOT NULL, source_entity INTEGER NOT NULL,
            source_pk INTEGER NOT NULL, destination_entity INTEGER NOT NULL, destination_pk INTEGER NOT NULL);
          CREATE INDEX association_source ON association (source_entity, source_pk);
          CREATE INDEX association_destination ON association (destination_entity, destination_pk);
          CREATE INDEX association_mapping ON association (mapping);
          """)
      return db.sqliteConnection
    }
    guard let handle else { throw StoreError(.sqlite, reason: "the association table has no connection") }
    connection = handle
  }

  deinit {
    for statement in statements.values { sqlite3_finalize(statement) }
  }

  private func code(_ name: String) -> Int64 {
    if let code = codes[name] { return code }
    let code = Int64(names.count)
    names.append(name)
    codes[name] = code
    return code
  }

  private func name(_ code: Int64) -> String {
    code >= 0 && code < names.count ? names[Int(code)] : ""
  }

  /// The statement for `sql`, prepared on first use and reset for the next.
  private func statement(_ sql: String) throws -> OpaquePointer {
    if let statement = statements[sql] {
      sqlite3_reset(statement)
      return statement
    }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
      throw StoreError(.sqlite, reason: "association table: \(String(cString: sqlite3_errmsg(connection)))")
    }
    statements[sql] = statement
    return statement
  }

  private func failure() -> StoreError {
    StoreError(.sqlite, reason: "association table: \(String(cString: sqlite3_errmsg(connection)))")
  }

  func add(mapping: String, source: ObjectID, destination: ObjectID) throws {
    let insert = try statement("INSERT INTO association VALUES (?, ?, ?, ?, ?)")
    sqlite3_bind_int64(insert, 1, code(mapping))
    sqlite3_bind_int64(insert, 2, code(source.entity))
    sqlite3_bind_int64(insert, 3, source.primaryKey)
    sqlite3_bind_int64(insert, 4, code(destination.entity))
    sqlite3_bind_int64(insert, 5, destination.primaryKey)
    guard sqlite3_step(insert) == SQLITE_DONE else { throw failure() }
  }

  func destinations(of source: ObjectID, mapping: String?) throws -> [ObjectID] {
    try lookUp(source, sql: mapping == nil ? Self.destinationsSQL : Self.destinationsOfMappingSQL, mapping: mapping)
  }

  func sources(of destination: ObjectID, mapping: String?) throws -> [ObjectID] {
    try lookUp(destination, sql: mapping == nil ? Self.sourcesSQL : Self.sourcesOfMappingSQL, mapping: mapping)
  }

  /// By the object's own index: the planner could pick the mapping's index, a scan of every row of
  /// the mapping per look-up.
  private static func lookUpSQL(from side: String, to other: String, mapping: Bool) -> String {
    "SELECT \(other)_entity, \(other)_pk FROM association INDEXED BY association_\(side)"
      + " WHERE \(side)_entity = ? AND \(side)_pk = ?" + (mapping ? " AND mapping = ?" : "") + " ORDER BY rowid"
  }
  private static let destinationsSQL = lookUpSQL(from: "source", to: "destination", mapping: false)
  private static let destinationsOfMappingSQL = lookUpSQL(from: "source", to: "destination", mapping: true)
  private static let sourcesSQL = lookUpSQL(from: "destination", to: "source", mapping: false)
  private static let sourcesOfMappingSQL = lookUpSQL(from: "destination", to: "source", mapping: true)

  private func lookUp(_ id: ObjectID, sql: String, mapping: String?) throws -> [ObjectID] {
    // A name never stored has no associations.
    guard let entity = codes[id.entity] else { return [] }
    let select = try statement(sql)
    sqlite3_bind_int64(select, 1, entity)
    sqlite3_bind_int64(select, 2, id.primaryKey)
    if let mapping {
      guard let mappingCode = codes[mapping] else { return [] }
      sqlite3_bind_int64(select, 3, mappingCode)
    }
    var found: [ObjectID] = []
    while true {
      switch sqlite3_step(select) {
      case SQLITE_ROW:
        found.append(
          ObjectID(entity: name(sqlite3_column_int64(select, 0)), primaryKey: sqlite3_column_int64(select, 1)))
      case SQLITE_DONE:
        return found
      default:
        throw failure()
      }
    }
  }

  func destinationsPage(mapping: String, after: Int64, limit: Int) throws -> [(row: Int64, id: ObjectID)] {
    guard let mappingCode = codes[mapping] else { return [] }
    let select = try statement(
      """
      SELECT a.rowid, a.destination_entity, a.destination_pk FROM association a INDEXED BY association_mapping
      WHERE a.mapping = ? AND a.rowid > ? AND NOT EXISTS (
        SELECT 1 FROM association b INDEXED BY association_destination WHERE b.destination_entity = a.destination_entity
          AND b.destination_pk = a.destination_pk AND b.mapping = a.mapping AND b.rowid < a.rowid)
      ORDER BY a.rowid LIMIT ?
      """)
    sqlite3_bind_int64(select, 1, mappingCode)
    sqlite3_bind_int64(select, 2, after)
    sqlite3_bind_int64(select, 3, Int64(limit))
    var page: [(row: Int64, id: ObjectID)] = []
    while true {
      switch sqlite3_step(select) {
      case SQLITE_ROW:
        page.append(
          (
            sqlite3_column_int64(select, 0),
            ObjectID(entity: name(sqlite3_column_int64(select, 1)), primaryKey: sqlite3_column_int64(select, 2))
          ))
      case SQLITE_DONE:
        return page
      default:
        throw failure()
      }
    }
  }

  func close() throws {
    for statement in statements.values { sqlite3_finalize(statement) }
    statements = [:]
    try queue.close()
    if let url { StoreFiles.remove(url) }
  }
}
