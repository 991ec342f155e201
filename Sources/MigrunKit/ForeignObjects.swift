import Foundation
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
  var keyRows: [StoreEdit.KeyRow] = []
  /// Triggers and views that are neither a foreign table's nor Core Data's derived-attribute triggers.
  var others: [(type: String, name: String)] = []

  /// What `store`'s schema `main` holds beyond `schema`'s tables.
  static func read(_ store: StoreEdit, schema: StoreSchema) throws -> ForeignObjects {
    var found = ForeignObjects()
    // Core Data's own R-tree tables (with SQLite's shadow tables) and their triggers are the
    // model's, rebuilt by every step.
    let rtrees = schema.rtreeIndexes.reduce(into: Set<String>()) { $0.formUnion($1.objectNames) }
    let own = Set(schema.tables.map { $0.name.uppercased() } + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
      .union(rtrees)
    let objects = try store.schemaObjects()
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
    found.keyRows = try store.keyRows().filter { row in row.number.map { !numbers.contains($0) } ?? true }
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
  func cloudKitRenumbering(_ store: StoreEdit, numbers: [Int: Int], dropped: Set<String>) throws
    -> CloudKitRenumbering
  {
    var found = CloudKitRenumbering()
    let changed = Array(numbers.filter { $0.key != $0.value }.keys)
    for table in cloudKitTables(dropped: dropped) {
      found.renumbered += try store.rowCount(of: table, naming: "ZENTITYID", anyOf: changed)
      found.removed += try store.rowCount(of: table, naming: "ZENTITYID", noEntityOf: numbers)
    }
    return found
  }

  /// Why the step cannot carry these faithfully, or nil. `numbers` maps the source's entity numbers
  /// to the destination's (entities the step removes are absent); `dropped` names what the user
  /// drops on purpose.
  /// `partialHistory`: changes of removed entities' objects are to be deleted (as Core Data's
  /// `NSPersistentHistoryAllowPartialHistoryMigration`), not refused.
  func refusal(_ store: StoreEdit, numbers: [Int: Int], dropped: Set<String>, partialHistory: Bool = false) throws
    -> String?
  {
    var lines: [String] = []
    let kept = others.filter { !dropped.contains($0.name) }
    if !kept.isEmpty {
      lines.append(
        "the store has \(kept.map { "\($0.type) \($0.name)" }.joined(separator: ", ")) on the model's tables, which a new file cannot keep faithfully"
          + " (\(OptionWords.dropping(kept.map(\.name))) to drop on purpose)")
    }
    if tables.contains(where: { $0.name.uppercased() == "ACHANGE" }), !dropped.contains("ACHANGE"), !partialHistory {
      let orphaned = try store.rowCount(of: "ACHANGE", naming: "ZENTITY", noEntityOf: numbers)
      if orphaned > 0 {
        let history = tables.map(\.name).filter { Self.historyTables.contains($0.uppercased()) }.sorted()
        lines.append(
          "persistent history (ACHANGE) holds \(orphaned) change\(orphaned == 1 ? "" : "s") of objects whose entity this step removes, which the history of the new store cannot refer to"
            + " (set StoreMigrator.Options.partialHistory to delete just those changes, as Core Data's NSPersistentHistoryAllowPartialHistoryMigration does, or \(OptionWords.dropping(history)) to drop the history on purpose)"
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
    _ store: StoreEdit, numbers: [Int: Int], dropped: Set<String>, history: HistoryRewrite? = nil,
    partialHistory: Bool = false
  ) throws -> HistoryRewritten {
    var rewritten = HistoryRewritten()
    for table in tables where !dropped.contains(table.name) {
      try store.recreate(table.sql)
      try store.copyAllRows(of: table.name)
      let written = try store.rowCount(of: table.name, in: "main")
      let read = try store.rowCount(of: table.name, in: "src")
      guard written == read else {
        throw MigrationError(
          .store, reason: "table \(table.name): \(read) rows read, \(written) written; nothing is kept")
      }
      if table.name.uppercased() == "ACHANGE" {
        var removed = 0
        if partialHistory {
          removed = try store.deleteRows(of: "ACHANGE", naming: "ZENTITY", noEntityOf: numbers)
        }
        try store.renumber("ACHANGE", column: "ZENTITY", numbers: numbers)
        rewritten = try history?.apply(store) ?? HistoryRewritten()
        rewritten.removedChanges = removed
      }
      if Self.cloudKitEntityTables.contains(table.name.uppercased()) {
        _ = try store.deleteRows(of: table.name, naming: "ZENTITYID", noEntityOf: numbers)
        try store.renumber(table.name, column: "ZENTITYID", numbers: numbers)
      }
      for dependent in table.dependents { try store.recreate(dependent) }
    }
    // History's key rows go with its tables.
    let droppedKeys = Set(dropped.compactMap(Self.historyKeyName))
    for row in keyRows {
      if droppedKeys.contains((row.name ?? "").uppercased()) { continue }
      try store.insertKeyRow(row)
    }
    return rewritten
  }

  /// The `Z_PRIMARYKEY` name persistent history keeps for its table `table` (`ACHANGE` → `CHANGE`),
  /// or nil for any other table.
  static func historyKeyName(_ table: String) -> String? {
    historyTables.contains(table.uppercased()) ? String(table.uppercased().dropFirst()) : nil
  }

  /// Drops in place what `dropped` names — tables (with their history key rows), triggers and views —
  /// for a step that edits the file where it is and keeps the rest.
  func drop(_ store: StoreEdit, _ dropped: Set<String>) throws {
    let named = tables.map { ("TABLE", $0.name) } + others.map { ($0.type.uppercased(), $0.name) }
    for (type, name) in named where dropped.contains(name) {
      try store.dropObject(type, named: name)
      if let key = Self.historyKeyName(name) { try store.deleteKeyRow(named: key) }
    }
  }
}

extension SQLiteStore {
  /// What the store holds beyond its model, one line each (for `migrun plan`): its own tables with
  /// their row counts, `Z_PRIMARYKEY` rows that are not entities, and triggers or views on the
  /// model's tables that a new file cannot keep.
  public func ownObjectsSummary() throws -> [String] {
    try inspecting { store in
      let found = try ForeignObjects.read(store, schema: schema)
      var lines = try found.tables.map { table -> String in
        let rows = try store.rowCount(of: table.name)
        return
          "table \(table.name) (\(rows) row\(rows == 1 ? "" : "s"), with \(table.dependents.count) of its indexes and triggers): carried"
      }
      if !found.keyRows.isEmpty {
        lines.append(
          "Z_PRIMARYKEY rows \(found.keyRows.map { "\($0.number.map(String.init) ?? "?") \($0.name ?? "")" }.joined(separator: ", ")): carried"
        )
      }
      lines += found.others.map {
        "\($0.type) \($0.name) on the model's tables: kept by a DDL step, refused by a step that writes a new file (\(OptionWords.dropping([$0.name])))"
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
    try inspecting { store in
      let found = try ForeignObjects.read(store, schema: schema)
      let tables = try found.tables.filter { table in try store.rowCount(of: table.name) > 0 }
      return tables.map(\.name) + found.others.map(\.name)
    }
  }
}
