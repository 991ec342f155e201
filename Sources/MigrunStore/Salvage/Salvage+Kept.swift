import Foundation
import GRDB
import GRDBSQLite
import MigrunModel

/// What salvage keeps as the store had it: the metadata, `Z_PRIMARYKEY`'s rows beyond the model's
/// entities, and the rows whose columns no proof placed (set aside whole).
extension Salvage {
  /// The store's own metadata, as it was: its UUID, hashes, identifiers, digest, checksum, framework
  /// version and every other key (the new file is laid out as that framework lays it out). Hashes
  /// that are not the version written's — the version came from its model cache, which disagrees
  /// with them as it did in the store — are kept too, and named in the report.
  static func keptMetadata(
    _ found: StoreMetadata?, model: ObjectModel, report: inout SalvageReport
  ) -> StoreMetadata? {
    guard let metadata = found else { return nil }
    if metadata.versionHashes != model.entityVersionHashes {
      report.metadataNotes.append(
        "its hashes name another version than its model cache's, as in the store: both kept as they were")
    }
    return metadata
  }

  /// The model the new file is laid out by: the store's own model cache's when it survived and is
  /// the version written (its hashes): its indexes as the store had them, beside its bytes, kept
  /// (``keepModelCache``); else the version's.
  static func layoutModel(_ read: SalvageRead, model: ObjectModel) -> ObjectModel {
    guard read.cachedModelBytes != nil, let cached = read.cachedModel,
      cached.entityVersionHashes == model.entityVersionHashes
    else { return model }
    return cached
  }

  /// The store's own model cache, as its bytes were, where it survived and is a model — beside the
  /// store's own metadata, or the version written (else the one written from the model stays). A
  /// cache kept that is not the version written is named in the report.
  static func keepModelCache(
    _ read: SalvageRead, model: ObjectModel, db: Database, report: inout SalvageReport
  ) throws {
    guard let bytes = read.cachedModelBytes,
      read.metadata != nil || read.cachedModel?.entityVersionHashes == model.entityVersionHashes
    else { return }
    try db.execute(sql: "UPDATE Z_MODELCACHE SET Z_CONTENT = ?", arguments: [Data(bytes)])
    report.modelCacheFromStore = true
    // Kept beside the store's metadata though it is another model than the version written: said.
    if read.cachedModel?.entityVersionHashes != model.entityVersionHashes {
      report.modelCacheNotes.append(
        "its hashes are not those of \(report.version), the version written: kept as the store had it")
    }
  }

  /// Rows whose columns no proof placed, each entity's in `MIGRUN_SETASIDE_<ENTITY>`, the table's
  /// name otherwise: rowid, then the values as read, `C0`, `C1`, …. A row's second value is taken for
  /// its `Z_ENT` (Core Data's tables begin `Z_PK, Z_ENT, Z_OPT`, the key stored as NULL: the rowid)
  /// only where it is the number of an entity stored in this very table — a number naming an entity
  /// of another table proves nothing, and the row stays under its table's name, never counted as
  /// that entity's.
  static func writeUnplaced(
    _ read: SalvageRead, schema: StoreSchema, db: Database, report: inout SalvageReport
  ) throws {
    for table in read.tables.values.sorted(by: { $0.name < $1.name }) where !table.setAside.isEmpty {
      let names = Dictionary(
        schema.entities.filter { $0.table == table.name }.map { (Int64($0.number), $0.name) },
        uniquingKeysWith: { a, _ in a })
      var groups: [String: [(Int64, [SQLiteFileImage.Value])]] = [:]
      for (rowid, values) in table.setAside.sorted(by: { $0.key < $1.key }) {
        let entity: String? =
          if values.count > 1, values[0] == .null, case .integer(let number) = values[1] { names[number] } else { nil }
        groups[entity ?? table.name, default: []].append((rowid, values))
      }
      for (owner, all) in groups {
        let aside = "MIGRUN_SETASIDE_\(owner.uppercased())"
        let (rows, wide) = splitWide(all, db: db, beside: 1)
        try keepValueByValue(wide.map { ($0.0, nil, $0.1) }, of: table.name, db: db, report: &report)
        guard !rows.isEmpty else { continue }
        let width = rows.map(\.1.count).max() ?? 0
        let columns = ["Z_ROWID"] + (0..<width).map { "C\($0)" }
        // The owner may be a table name read from the file: quoted, never SQL of its own.
        try db.execute(
          sql: "CREATE TABLE IF NOT EXISTS \(StoreEdit.quoted(aside)) (\(columns.joined(separator: ", ")))")
        let insert = try db.cachedStatement(
          sql: "INSERT INTO \(StoreEdit.quoted(aside)) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))")
        for (rowid, values) in rows {
          let padded = (0..<width).map { $0 < values.count ? databaseValue(values[$0]) : .null }
          try insert.execute(arguments: StatementArguments([rowid.databaseValue] + padded))
        }
        report.unplacedTables[aside, default: 0] += rows.count
        if names.values.contains(owner) { report.entities[owner, default: .init()].setAside += rows.count }
      }
    }
  }

  /// `Z_PRIMARYKEY`'s rows for entities the model does not number (persistent history's
  /// `CHANGE`, `TRANSACTION`, `TRANSACTIONSTRING`, 16001–16003), with their `Z_MAX`, as they were;
  /// and a name Core Data left on an entity's number after a rename (SampleModel's
  /// `ExpensiveSportCar` for `LuxuryCar`), kept as the store has it: no entity of the model has that
  /// name, and the number is the one the model's entity has in this store.
  static func carryPrimaryKeys(
    _ read: SalvageRead, model: ObjectModel, db: Database, report: inout SalvageReport
  ) throws {
    guard let table = read.tables["Z_PRIMARYKEY"] else { return }
    let column = { (name: String) in table.columns.firstIndex(of: name) }
    for (rowid, values) in read.rows(of: table) {
      func value(_ name: String) -> DatabaseValue {
        guard let index = column(name), index < values.count else { return .null }
        return databaseValue(values[index])
      }
      let number = value("Z_ENT").isNull ? rowid.databaseValue : value("Z_ENT")
      try db.execute(
        sql: "INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
        arguments: [number, value("Z_NAME"), value("Z_SUPER"), value("Z_MAX")])
      report.primaryKeysCarried += db.changesCount
      if let stale = String.fromDatabaseValue(value("Z_NAME")), model.entity(named: stale) == nil {
        try db.execute(
          sql: "UPDATE Z_PRIMARYKEY SET Z_NAME = ? WHERE Z_ENT = ? AND Z_NAME != ?",
          arguments: [stale, number, stale])
      }
    }
  }

  /// `rows` told apart by width: those a table of their own columns can hold (`beside` columns of
  /// salvage's own before them), and those with more values than this SQLite lets a table or a
  /// statement have (a record of 2,100 values on a page no tree leads to failed the whole salvage).
  static func splitWide(_ rows: [(Int64, [SQLiteFileImage.Value])], db: Database, beside: Int)
    -> (fitting: [(Int64, [SQLiteFileImage.Value])], wide: [(Int64, [SQLiteFileImage.Value])])
  {
    let most = widestRow(db, beside: beside)
    return (rows.filter { $0.1.count <= most }, rows.filter { $0.1.count > most })
  }

  /// The most values a row kept aside in columns of its own may have: SQLite's limits on a table's
  /// columns and a statement's parameters, as this connection has them, less `beside` columns.
  static func widestRow(_ db: Database, beside: Int) -> Int {
    guard let connection = db.sqliteConnection else { return 0 }
    let columns = Int(sqlite3_limit(connection, SQLITE_LIMIT_COLUMN, -1))
    let parameters = Int(sqlite3_limit(connection, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    return max(0, min(columns, parameters) - beside)
  }

  /// Rows no table of their own columns can hold — more values than SQLite lets a table have, or a
  /// table of the store's own that cannot be made again — kept value by value in
  /// `MIGRUN_SALVAGED_VALUES` (the table they were read as, rowid, page, the value's place, the
  /// value), counted by `table` in the report. A row is set aside, never the salvage failed.
  static func keepValueByValue(
    _ rows: [(rowid: Int64, page: Int?, values: [SQLiteFileImage.Value])], of table: String, db: Database,
    report: inout SalvageReport
  ) throws {
    guard !rows.isEmpty else { return }
    try writeValueByValue(rows, of: table, db: db)
    report.rowsKeptByValue[table, default: 0] += rows.count
  }

  /// `rows` written value by value in `MIGRUN_SALVAGED_VALUES` (see ``keepValueByValue``).
  static func writeValueByValue(
    _ rows: [(rowid: Int64, page: Int?, values: [SQLiteFileImage.Value])], of table: String, db: Database
  ) throws {
    guard !rows.isEmpty else { return }
    try db.execute(
      sql: "CREATE TABLE IF NOT EXISTS MIGRUN_SALVAGED_VALUES (Z_TABLE VARCHAR, Z_ROWID INTEGER, Z_PAGE INTEGER, "
        + "Z_INDEX INTEGER, Z_VALUE)")
    let insert = try db.cachedStatement(sql: "INSERT INTO MIGRUN_SALVAGED_VALUES VALUES (?, ?, ?, ?, ?)")
    for row in rows {
      for (index, value) in row.values.enumerated() {
        try insert.execute(arguments: [table, row.rowid, row.page, index, databaseValue(value)])
      }
    }
  }
}
