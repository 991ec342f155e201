import Foundation
import GRDB
import GRDBSQLite
import MigrunModel

/// Which destination objects were made from which source objects, per entity mapping: Core Data's
/// `associateSourceInstance(_:withDestinationInstance:for:)` record. Kept in a SQLite file beside
/// the working copy (or in memory for in-memory stores), so it never grows the process with the store.
///
/// Every object of a step is associated once and looked up a few times, so the table is driven
/// through SQLite's C API with statements prepared once, entity and mapping names stored as small
/// integers (a string compared per row, and GRDB's per-call work, cost more than the look-up).
package final class AssociationTable {
  private let queue: DatabaseQueue
  package let url: URL?
  private let connection: OpaquePointer
  /// Prepared statements by query: an array slot, not a dictionary keyed by the SQL text (hashing
  /// the text was a measurable part of every look-up).
  private var statements = [OpaquePointer?](repeating: nil, count: Query.allCases.count)
  /// Entity and mapping names ↔ the integers stored for them.
  private var codes: [String: Int64] = [:]
  private var names: [String] = []

  package init(at url: URL?) throws {
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
    for statement in statements { sqlite3_finalize(statement) }
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

  /// The table's queries.
  private enum Query: Int, CaseIterable {
    case insert, destinations, destinationsOfMapping, sources, sourcesOfMapping, destinationsPage

    var sql: String {
      switch self {
      case .insert: "INSERT INTO association VALUES (?, ?, ?, ?, ?)"
      case .destinations: Self.lookUpSQL(from: "source", to: "destination", mapping: false)
      case .destinationsOfMapping: Self.lookUpSQL(from: "source", to: "destination", mapping: true)
      case .sources: Self.lookUpSQL(from: "destination", to: "source", mapping: false)
      case .sourcesOfMapping: Self.lookUpSQL(from: "destination", to: "source", mapping: true)
      case .destinationsPage:
        """
        SELECT a.rowid, a.destination_entity, a.destination_pk FROM association a INDEXED BY association_mapping
        WHERE a.mapping = ? AND a.rowid > ? AND NOT EXISTS (
          SELECT 1 FROM association b INDEXED BY association_destination WHERE b.destination_entity = a.destination_entity
            AND b.destination_pk = a.destination_pk AND b.mapping = a.mapping AND b.rowid < a.rowid)
        ORDER BY a.rowid LIMIT ?
        """
      }
    }

    /// By the object's own index: the planner could pick the mapping's index, a scan of every row of
    /// the mapping per look-up.
    private static func lookUpSQL(from side: String, to other: String, mapping: Bool) -> String {
      "SELECT \(other)_entity, \(other)_pk FROM association INDEXED BY association_\(side)"
        + " WHERE \(side)_entity = ? AND \(side)_pk = ?" + (mapping ? " AND mapping = ?" : "") + " ORDER BY rowid"
    }
  }

  /// The statement for `query`, prepared on first use and reset for the next.
  private func statement(_ query: Query) throws -> OpaquePointer {
    if let statement = statements[query.rawValue] {
      sqlite3_reset(statement)
      return statement
    }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(connection, query.sql, -1, &statement, nil) == SQLITE_OK, let statement else {
      throw StoreError(.sqlite, reason: "association table: \(String(cString: sqlite3_errmsg(connection)))")
    }
    statements[query.rawValue] = statement
    return statement
  }

  private func failure() -> StoreError {
    StoreError(.sqlite, reason: "association table: \(String(cString: sqlite3_errmsg(connection)))")
  }

  package func add(mapping: String, source: ObjectID, destination: ObjectID) throws {
    let insert = try statement(.insert)
    sqlite3_bind_int64(insert, 1, code(mapping))
    sqlite3_bind_int64(insert, 2, code(source.entity))
    sqlite3_bind_int64(insert, 3, source.primaryKey)
    sqlite3_bind_int64(insert, 4, code(destination.entity))
    sqlite3_bind_int64(insert, 5, destination.primaryKey)
    guard sqlite3_step(insert) == SQLITE_DONE else { throw failure() }
  }

  package func destinations(of source: ObjectID, mapping: String?) throws -> [ObjectID] {
    try lookUp(source, query: mapping == nil ? .destinations : .destinationsOfMapping, mapping: mapping)
  }

  package func sources(of destination: ObjectID, mapping: String?) throws -> [ObjectID] {
    try lookUp(destination, query: mapping == nil ? .sources : .sourcesOfMapping, mapping: mapping)
  }

  private func lookUp(_ id: ObjectID, query: Query, mapping: String?) throws -> [ObjectID] {
    // A name never stored has no associations.
    guard let entity = codes[id.entity] else { return [] }
    let select = try statement(query)
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

  package func destinationsPage(mapping: String, after: Int64, limit: Int) throws -> [(row: Int64, id: ObjectID)] {
    guard let mappingCode = codes[mapping] else { return [] }
    let select = try statement(.destinationsPage)
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

  /// Forgets every association (a step's next mapping model starts with none: Core Data's `reset()`).
  package func removeAll() throws {
    guard sqlite3_exec(connection, "DELETE FROM association", nil, nil, nil) == SQLITE_OK else { throw failure() }
  }

  package func close() throws {
    for statement in statements { sqlite3_finalize(statement) }
    statements = statements.map { _ in nil }
    try queue.close()
    if let url { StoreFiles.remove(url) }
  }
}
