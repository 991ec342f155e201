import Foundation
import GRDB
import MigrunStore

/// What a store's file holds beyond its model's tables and Core Data's own (`Z_PRIMARYKEY`,
/// `Z_METADATA`, `Z_MODELCACHE`): tables of their own — persistent history's `ATRANSACTION`,
/// `ACHANGE`, `ATRANSACTIONSTRING` (on in every SwiftData store and every app that syncs with
/// CloudKit or shares a store with extensions), `NSPersistentCloudKitContainer`'s `ANSCK…`, an app's
/// own — with their indexes and triggers, `Z_PRIMARYKEY` rows that are not entities (history's
/// 16001…), and triggers or views on the model's tables that are not Core Data's derived-attribute
/// triggers.
///
/// A step that writes a new file carries the tables, their indexes and triggers and the key rows
/// over unchanged, with every row counted on both sides; the entity numbers persistent history
/// stores (`ACHANGE.ZENTITY`) follow the step's renumbering. What cannot be carried faithfully is
/// refused before the step runs, by name, with the option that drops it on purpose (``dropped``):
/// history of objects whose entity the step removes, and triggers or views on the model's tables.
/// A DDL step edits the file in place and keeps them as they are (it renumbers nothing).
///
/// `NSPersistentCloudKitContainer` names each synced object by entity number too: `ZENTITYID` (with
/// `ZENTITYPK`) in `ANSCKRECORDMETADATA` and `ANSCKHISTORYANALYZERSTATE`. Core Data's own migrator
/// rewrites exactly those two columns (`UPDATE … SET ZENTITYID = new WHERE ZENTITYID = old`, per
/// entity whose number changes) and then marks the store with the metadata key
/// `PFCloudKitMetadataNeedsZoneFetchAfterClientMigrationKey`, so the next sync refetches the zone —
/// as public decompilations of its `_NSSQLiteStoreMigrator` show. A step here does the same, as
/// one `CASE` (a chain of renumberings cannot collide). Rows naming objects of an entity the step
/// removes name nothing afterwards (and their number may be another entity's): they are deleted
/// and counted — our choice, not read off Core Data.
/// What a step did to `NSPersistentCloudKitContainer`'s record metadata (``ForeignObjects``): rows
/// whose entity number it changed, and rows of entities it removed (deleted).
package struct CloudKitRenumbering: Sendable, Hashable {
  package var renumbered = 0
  package var removed = 0

  package init(renumbered: Int = 0, removed: Int = 0) {
    self.renumbered = renumbered
    self.removed = removed
  }

  package var isEmpty: Bool { renumbered == 0 && removed == 0 }
}

struct ForeignObjects {
  struct Table {
    let name: String
    let sql: String
    /// `CREATE INDEX` and `CREATE TRIGGER` statements on the table.
    let dependents: [String]
  }

  static let historyTables: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
  /// `NSPersistentCloudKitContainer`'s tables whose `ZENTITYID` is an entity number.
  static let cloudKitEntityTables: Set<String> = ["ANSCKRECORDMETADATA", "ANSCKHISTORYANALYZERSTATE"]
  /// The metadata key Core Data sets when a migration renumbered CloudKit's objects.
  static let zoneFetchKey = "PFCloudKitMetadataNeedsZoneFetchAfterClientMigrationKey"

  var tables: [Table] = []
  /// `Z_PRIMARYKEY` rows whose `Z_ENT` is not one of the model's entities.
  var keyRows: [Row] = []
  /// Triggers and views that are neither a foreign table's nor Core Data's derived-attribute triggers.
  var others: [(type: String, name: String)] = []

  /// What `db`'s schema `main` holds beyond `schema`'s tables.
  static func read(_ db: Database, schema: StoreSchema) throws -> ForeignObjects {
    var found = ForeignObjects()
    // Core Data's own R-tree tables (with SQLite's shadow tables) and their triggers are the
    // model's, rebuilt by every step.
    let rtrees = schema.rtreeIndexes.reduce(into: Set<String>()) { $0.formUnion($1.objectNames) }
    let own = Set(schema.tables.map { $0.name.uppercased() } + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
      .union(rtrees)
    // The schema of a damaged file is outside input too: every column is read without trusting it.
    let objects = try Row.fetchAll(
      db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE substr(name, 1, 7) <> 'sqlite_'"
    ).map { row in
      (
        type: (try? row.value(at: 0, as: String.self)) ?? nil ?? "",
        name: (try? row.value(at: 1, as: String.self)) ?? nil ?? "",
        table: (try? row.value(at: 2, as: String.self)) ?? nil ?? "",
        sql: (try? row.value(at: 3, as: String.self)) ?? nil
      )
    }
    for object in objects where object.type == "table" {
      guard !own.contains(object.name.uppercased()), let sql = object.sql else { continue }
      let dependents = objects.filter {
        $0.type != "table" && $0.table.uppercased() == object.name.uppercased() && $0.sql != nil
      }.compactMap(\.sql)
      found.tables.append(Table(name: object.name, sql: sql, dependents: dependents))
    }
    let foreign = Set(found.tables.map { $0.name.uppercased() })
    for object in objects where ["trigger", "view"].contains(object.type) {
      guard !foreign.contains(object.table.uppercased()), !(object.type == "trigger" && object.name.hasPrefix("Z_DA_")),
        !rtrees.contains(object.name.uppercased())
      else { continue }
      found.others.append((object.type, object.name))
    }
    let numbers = Set(schema.entities.map(\.number))
    found.keyRows = try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
      .filter { row in ((try? row.value(at: 0, as: Int.self)) ?? nil).map { !numbers.contains($0) } ?? true }
    return found
  }

  var isEmpty: Bool { tables.isEmpty && keyRows.isEmpty && others.isEmpty }

  /// Whether the store syncs through `NSPersistentCloudKitContainer` (it has its `ANSCK…` tables).
  var syncsWithCloudKit: Bool { tables.contains { $0.name.uppercased().hasPrefix("ANSCK") } }

  /// CloudKit's tables with entity numbers that this store has (and that `dropped` does not drop).
  func cloudKitTables(dropped: Set<String>) -> [String] {
    tables.map(\.name).filter { Self.cloudKitEntityTables.contains($0.uppercased()) && !dropped.contains($0) }
  }

  /// How many rows of CloudKit's tables in `schema` (the source: `main`, or `src` when attached) a
  /// step renumbering by `numbers` changes or removes.
  func cloudKitRenumbering(_ db: Database, numbers: [Int: Int], dropped: Set<String>) throws -> CloudKitRenumbering {
    var found = CloudKitRenumbering()
    let changed = numbers.filter { $0.key != $0.value }.keys.map(String.init).joined(separator: ", ")
    for table in cloudKitTables(dropped: dropped) {
      if !changed.isEmpty {
        found.renumbered +=
          try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoted(table)) WHERE ZENTITYID IN (\(changed))") ?? 0
      }
      found.removed +=
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoted(table)) WHERE \(Self.removed("ZENTITYID", numbers))")
        ?? 0
    }
    return found
  }

  /// The condition that `column` names an entity the step removes (`numbers` has only the kept ones).
  static func removed(_ column: String, _ numbers: [Int: Int]) -> String {
    let kept = numbers.keys.sorted().map(String.init).joined(separator: ", ")
    return "\(column) IS NOT NULL AND \(column) NOT IN (\(kept.isEmpty ? "-1" : kept))"
  }

  /// Why the step cannot carry these faithfully, or nil. `numbers` maps the source's entity numbers
  /// to the destination's (entities the step removes are absent); `dropped` names what the user
  /// drops on purpose.
  /// `partialHistory`: changes of removed entities' objects are to be deleted (as Core Data's
  /// `NSPersistentHistoryAllowPartialHistoryMigration`), not refused.
  func refusal(_ db: Database, numbers: [Int: Int], dropped: Set<String>, partialHistory: Bool = false) throws
    -> String?
  {
    var lines: [String] = []
    let kept = others.filter { !dropped.contains($0.name) }
    if !kept.isEmpty {
      lines.append(
        "the store has \(kept.map { "\($0.type) \($0.name)" }.joined(separator: ", ")) on the model's tables, which a new file cannot keep faithfully"
          + " (give \(kept.map { "--drop \($0.name)" }.joined(separator: " ")) to drop on purpose)")
    }
    if tables.contains(where: { $0.name.uppercased() == "ACHANGE" }), !dropped.contains("ACHANGE"), !partialHistory {
      let orphaned =
        try Int.fetchOne(db, sql: "SELECT count(*) FROM ACHANGE WHERE \(Self.removed("ZENTITY", numbers))") ?? 0
      if orphaned > 0 {
        let history = tables.map(\.name).filter { Self.historyTables.contains($0.uppercased()) }.sorted()
        lines.append(
          "persistent history (ACHANGE) holds \(orphaned) change\(orphaned == 1 ? "" : "s") of objects whose entity this step removes, which the history of the new store cannot refer to"
            + " (give --partial-history to delete just those changes, as Core Data's NSPersistentHistoryAllowPartialHistoryMigration does, or \(history.map { "--drop \($0)" }.joined(separator: " ")) to drop the history on purpose)"
        )
      }
    }
    return lines.isEmpty ? nil : lines.joined(separator: "; ")
  }

  /// Copies the tables (with their rows, indexes and triggers) and key rows from the attached
  /// schema `src` into `main`, skipping `dropped`, and keeps persistent history true: changes of
  /// removed entities deleted (`partialHistory`), `ACHANGE.ZENTITY` remapped by `numbers`, then
  /// `history`'s positions rewritten. Every table's rows are checked against the source's count.
  @discardableResult
  func carry(
    _ db: Database, numbers: [Int: Int], dropped: Set<String>, history: HistoryRewrite? = nil,
    partialHistory: Bool = false
  ) throws -> HistoryRewritten {
    var rewritten = HistoryRewritten()
    for table in tables where !dropped.contains(table.name) {
      try db.execute(sql: table.sql)
      try db.execute(sql: "INSERT INTO main.\(quoted(table.name)) SELECT * FROM src.\(quoted(table.name))")
      let written = try Int.fetchOne(db, sql: "SELECT count(*) FROM main.\(quoted(table.name))") ?? 0
      let read = try Int.fetchOne(db, sql: "SELECT count(*) FROM src.\(quoted(table.name))") ?? 0
      guard written == read else {
        throw MigrationError(
          .store, reason: "table \(table.name): \(read) rows read, \(written) written; nothing is kept")
      }
      if table.name.uppercased() == "ACHANGE" {
        var removed = 0
        if partialHistory {
          try db.execute(sql: "DELETE FROM main.ACHANGE WHERE \(Self.removed("ZENTITY", numbers))")
          removed = db.changesCount
        }
        try renumber(db, table: "ACHANGE", column: "ZENTITY", numbers: numbers)
        rewritten = try history?.apply(db) ?? HistoryRewritten()
        rewritten.removedChanges = removed
      }
      if Self.cloudKitEntityTables.contains(table.name.uppercased()) {
        try db.execute(sql: "DELETE FROM main.\(quoted(table.name)) WHERE \(Self.removed("ZENTITYID", numbers))")
        try renumber(db, table: table.name, column: "ZENTITYID", numbers: numbers)
      }
      for dependent in table.dependents { try db.execute(sql: dependent) }
    }
    // History's key rows go with its tables.
    let droppedKeys = Set(dropped.compactMap(Self.historyKeyName))
    for row in keyRows {
      let name = (try? row.value(at: 1, as: String.self)) ?? nil ?? ""
      if droppedKeys.contains(name.uppercased()) { continue }
      try db.execute(
        sql: "INSERT OR REPLACE INTO main.Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
        arguments: [row[0], row[1], row[2], row[3]])
    }
    return rewritten
  }

  /// Rewrites `column` of `table` (in `main`) from source entity numbers to destination ones.
  private func renumber(_ db: Database, table: String, column: String, numbers: [Int: Int]) throws {
    let changes = numbers.filter { $0.key != $0.value }
    guard !changes.isEmpty else { return }
    let cases = changes.sorted { $0.key < $1.key }.map { "WHEN \($0.key) THEN \($0.value)" }.joined(separator: " ")
    try db.execute(
      sql: "UPDATE main.\(quoted(table)) SET \(column) = CASE \(column) \(cases) ELSE \(column) END")
  }

  /// The `Z_PRIMARYKEY` name persistent history keeps for its table `table` (`ACHANGE` → `CHANGE`),
  /// or nil for any other table.
  static func historyKeyName(_ table: String) -> String? {
    historyTables.contains(table.uppercased()) ? String(table.uppercased().dropFirst()) : nil
  }

  /// Drops in place what `dropped` names — tables (with their history key rows), triggers and views —
  /// for a step that edits the file where it is and keeps the rest.
  func drop(_ db: Database, _ dropped: Set<String>) throws {
    let named = tables.map { ("TABLE", $0.name) } + others.map { ($0.type.uppercased(), $0.name) }
    for (type, name) in named where dropped.contains(name) {
      try db.execute(sql: "DROP \(type) IF EXISTS \(quoted(name))")
      if let key = Self.historyKeyName(name) {
        try db.execute(sql: "DELETE FROM Z_PRIMARYKEY WHERE upper(Z_NAME) = ?", arguments: [key])
      }
    }
  }

  private func quoted(_ name: String) -> String { "\"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"" }
}

extension SQLiteStore {
  /// What the store holds beyond its model, one line each (for `migrun plan`): its own tables with
  /// their row counts, `Z_PRIMARYKEY` rows that are not entities, and triggers or views on the
  /// model's tables that a new file cannot keep.
  public func ownObjectsSummary() throws -> [String] {
    try read { db in
      let found = try ForeignObjects.read(db, schema: schema)
      var lines = try found.tables.map { table -> String in
        let rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \"\(table.name)\"") ?? 0
        return
          "table \(table.name) (\(rows) row\(rows == 1 ? "" : "s"), with \(table.dependents.count) of its indexes and triggers): carried"
      }
      if !found.keyRows.isEmpty {
        lines.append(
          "Z_PRIMARYKEY rows \(found.keyRows.map { "\(((try? $0.value(at: 0, as: Int.self)) ?? nil).map(String.init) ?? "?") \(((try? $0.value(at: 1, as: String.self)) ?? nil) ?? "")" }.joined(separator: ", ")): carried"
        )
      }
      lines += found.others.map {
        "\($0.type) \($0.name) on the model's tables: kept by a DDL step, refused by a step that writes a new file (--drop \($0.name))"
      }
      return lines
    }
  }
}

extension SQLiteStore {
  /// What the store holds beyond its model, by name — its own tables (history, CloudKit's, an
  /// app's) with rows, and triggers and views on the model's tables: what a store of another type
  /// (XML, binary) has no place for.
  package func foreignObjectNames() throws -> [String] {
    try read { db in
      let found = try ForeignObjects.read(db, schema: schema)
      let tables = try found.tables.filter { table in
        try (Int.fetchOne(db, sql: "SELECT count(*) FROM \"\(table.name)\"") ?? 0) > 0
      }
      return tables.map(\.name) + found.others.map(\.name)
    }
  }
}
