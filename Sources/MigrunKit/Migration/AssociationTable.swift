import Foundation
import GRDB

/// Which destination objects were made from which source objects, per entity mapping: Core Data's
/// `associateSourceInstance(_:withDestinationInstance:for:)` record. Kept in a SQLite file beside
/// the working copy (or in memory for in-memory stores), so it never grows the process with the store.
final class AssociationTable {
  private let queue: DatabaseQueue
  let url: URL?

  init(at url: URL?) throws {
    self.url = url
    var configuration = Configuration()
    // The table's one transaction spans every access (see init).
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
    try queue.inDatabase { db in
      try db.beginTransaction()
      try db.execute(
        sql: """
          CREATE TABLE association (mapping TEXT NOT NULL, source_entity TEXT NOT NULL, source_pk INTEGER NOT NULL,
            destination_entity TEXT NOT NULL, destination_pk INTEGER NOT NULL);
          CREATE INDEX association_source ON association (source_entity, source_pk);
          CREATE INDEX association_destination ON association (destination_entity, destination_pk);
          CREATE INDEX association_mapping ON association (mapping);
          """)
    }
  }

  func add(mapping: String, source: ObjectID, destination: ObjectID) throws {
    try queue.inDatabase { db in
      try db.cachedStatement(sql: "INSERT INTO association VALUES (?, ?, ?, ?, ?)")
        .execute(arguments: [mapping, source.entity, source.primaryKey, destination.entity, destination.primaryKey])
    }
  }

  /// Destination objects made from `source` (by any mapping when `mapping` is nil).
  func destinations(of source: ObjectID, mapping: String?) throws -> [ObjectID] {
    try lookUp(source, from: "source", to: "destination", mapping: mapping)
  }

  /// Source objects `destination` was made from (by any mapping when `mapping` is nil).
  func sources(of destination: ObjectID, mapping: String?) throws -> [ObjectID] {
    try lookUp(destination, from: "destination", to: "source", mapping: mapping)
  }

  /// The look-up statements' SQL, by direction and whether a mapping is named (made once).
  private static let lookUpSQL: [String: String] = {
    var sql: [String: String] = [:]
    for (side, other) in [("source", "destination"), ("destination", "source")] {
      for named in [false, true] {
        sql["\(side)\(named)"] =
          "SELECT \(other)_entity, \(other)_pk FROM association WHERE \(side)_entity = ? AND \(side)_pk = ?"
          + (named ? " AND mapping = ?" : "") + " ORDER BY rowid"
      }
    }
    return sql
  }()

  private func lookUp(_ id: ObjectID, from side: String, to other: String, mapping: String?) throws -> [ObjectID] {
    try queue.inDatabase { db in
      let sql = Self.lookUpSQL["\(side)\(mapping != nil)"] ?? ""
      var arguments: StatementArguments = [id.entity, id.primaryKey]
      if let mapping { arguments += [mapping] }
      return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map {
        ObjectID(entity: $0[0], primaryKey: $0[1])
      }
    }
  }

  /// The destination objects of `mapping`, each once (the first association counts), a page at a
  /// time after row `after`.
  func destinationsPage(mapping: String, after: Int64, limit: Int) throws -> [(row: Int64, id: ObjectID)] {
    try queue.inDatabase { db in
      try Row.fetchAll(
        db.cachedStatement(
          sql: """
            SELECT a.rowid, a.destination_entity, a.destination_pk FROM association a
            WHERE a.mapping = ? AND a.rowid > ? AND NOT EXISTS (
              SELECT 1 FROM association b WHERE b.destination_entity = a.destination_entity
                AND b.destination_pk = a.destination_pk AND b.mapping = a.mapping AND b.rowid < a.rowid)
            ORDER BY a.rowid LIMIT ?
            """), arguments: [mapping, after, limit]
      ).map { (row: $0[0], id: ObjectID(entity: $0[1], primaryKey: $0[2])) }
    }
  }

  func close() throws {
    try queue.close()
    if let url { StoreFiles.remove(url) }
  }
}
