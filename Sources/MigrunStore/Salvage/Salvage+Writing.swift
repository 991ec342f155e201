import Foundation
import GRDB
import GRDBSQLite
import MigrunModel

/// Salvage: a damaged store's readable rows written into a new store of the same model version, laid
/// out as Core Data lays it out (``SalvageRead`` reads; this writes and repairs).
package enum Salvage {
  package struct Options: Sendable {
    /// Keep to-one keys naming no object as they are (else set to NULL, counted).
    package var keepDanglingKeys = false
    package init() {}
  }

  /// Writes `read`'s rows as a new store of `model` at `target` (which must not exist): Core Data's
  /// tables from the model (the model cache rebuilt from it), the store's metadata where it survived,
  /// every row into its table, then the repairs — rows of no entity of their table set aside, keys
  /// naming no object cleared, join rows whose ends are gone removed, `Z_MAX` raised to the largest key
  /// — and only then the store's own triggers and views.
  package static func write(
    _ read: SalvageRead, model: ObjectModel, to target: URL, options: Options = Options(),
    externalDataOf original: URL? = nil
  ) throws -> SalvageReport {
    var report = SalvageReport(read, version: model.versionName ?? SalvageReport.ownModel)
    let metadata = keptMetadata(read.metadata, model: model, report: &report)
    report.metadataFromStore = metadata != nil
    let written = metadata ?? StoreMetadata(model: model)
    let layout = layoutModel(read, model: model)
    // The store's own entity numbers where its Z_PRIMARYKEY names them: its rows keep their Z_ENT.
    let numbers = read.storeNumbers
    try SQLiteStore.create(at: target, model: layout, metadata: written, fastWrites: false, numbers: numbers).close()
    let schema = StoreSchema(model: layout, framework: written.frameworkVersion, numbers: numbers)
    let queue = try DatabaseQueue(path: target.path, configuration: SQLiteStore.configuration(readOnly: false))
    report.storeHadNoModelCache = read.schemaFound && read.tables["Z_MODELCACHE"] == nil
    try queue.write { db in
      try keepModelCache(read, model: model, db: db, report: &report)
      try insertRows(read, schema: schema, db: db, report: &report)
      for (table, placement) in read.placements {
        for layout in schema.entities where layout.table == table {
          report.entities[layout.name, default: .init()].placement = placement
        }
      }
      try setAside(read.unassigned, db: db, report: &report)
      report.rowsOfNoTable = read.unassigned.count
      try writeUnplaced(read, schema: schema, db: db, report: &report)
      try carryPrimaryKeys(read, model: layout, db: db, report: &report)
      try repair(schema, read: read, db: db, options: options, report: &report)
      // Last: the store's own triggers are the store's, not salvage's — none fires on its repairs
      // (one on Z_PRIMARYKEY that never ends would hold salvage forever).
      try makeOthers(read, db: db, report: &report)
    }
    try queue.close()
    // External binary data: the original's files linked for the new store (references kept), before
    // the check that says what remains.
    if let original { try StoreFiles.keepSupportFolder(of: original, as: target) }
    report.remaining = try StoreCheck.findings(of: target).filter { !$0.isNote }.map(\.description)
    return report
  }

  /// The store's own triggers and views the new store lacks, made again from their statements
  /// (Core Data's — derived attributes', R-trees' — the new store has already); a virtual table of
  /// the store's own (its content in shadow tables this salvage does not rebuild) and a statement
  /// that no longer runs are named in the report as not carried.
  private static func makeOthers(_ read: SalvageRead, db: Database, report: inout SalvageReport) throws {
    for (type, name, sql) in read.others {
      let exists = try Bool.fetchOne(
        db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE name = ?", arguments: [name])
      guard exists != true else { continue }
      guard type != "table" else {
        report.notCarried[name] = "a virtual table of the store's own"
        continue
      }
      // One statement, prepared alone: more SQL after it fails to prepare, never runs.
      do {
        try db.makeStatement(sql: sql).execute()
        report.othersMade.append("\(type) \(name)")
      } catch {
        report.notCarried[name] = "its statement no longer runs (\((error as? DatabaseError)?.message ?? "\(error)"))"
      }
    }
  }

  /// Rows that fit no table, kept as they were read: rowid, page, and their values in columns
  /// `C0`, `C1`, ….
  private static func setAside(_ all: [SQLiteFileImage.Row], db: Database, report: inout SalvageReport) throws {
    let most = widestRow(db, beside: 2)
    try keepValueByValue(
      all.filter { $0.values.count > most }.map { ($0.rowid, $0.page, $0.values) }, of: "(no table)", db: db,
      report: &report)
    let rows = all.filter { $0.values.count <= most }
    guard let width = rows.map(\.values.count).max() else { return }
    let columns = ["Z_ROWID", "Z_PAGE"] + (0..<width).map { "C\($0)" }
    try db.execute(sql: "CREATE TABLE MIGRUN_SALVAGED_ROWS (\(columns.joined(separator: ", ")))")
    let statement = try db.makeStatement(
      sql: "INSERT INTO MIGRUN_SALVAGED_ROWS VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))")
    for row in rows {
      let values = (0..<width).map { $0 < row.values.count ? databaseValue(row.values[$0]) : .null }
      try statement.execute(arguments: StatementArguments([row.rowid.databaseValue, row.page.databaseValue] + values))
    }
  }

  static func databaseValue(_ value: SQLiteFileImage.Value) -> DatabaseValue {
    switch value {
    case .null: .null
    case .integer(let number): number.databaseValue
    case .real(let number): number.databaseValue
    case .text(let text): text.databaseValue
    case .blob(let bytes): Data(bytes).databaseValue
    }
  }

  /// Every recovered row into its table: the model's tables by column name (an entity table's row
  /// whose `Z_ENT` is none of the table's set aside), other tables of the store as they were.
  private static func insertRows(
    _ read: SalvageRead, schema: StoreSchema, db: Database, report: inout SalvageReport
  ) throws {
    var kinds: [String: Set<Int64>] = [:]
    var entityNames: [Int64: String] = [:]
    for layout in schema.entities {
      kinds[layout.table, default: []].insert(Int64(layout.number))
      entityNames[Int64(layout.number)] = layout.name
      report.entities[layout.name] = SalvageReport.EntityCounts()
    }
    let modelTables = Dictionary(
      schema.tables.map { ($0.name.uppercased(), $0) }, uniquingKeysWith: { first, _ in first })
    for table in read.tables.values.sorted(by: { $0.name < $1.name }) {
      let name = table.name.uppercased()
      if SalvageRead.coreDataTables[name] != nil { continue }
      if let target = modelTables[name] {
        var wanted = Set(target.columns.map(\.name))
        for added in try keepColumns(of: table, beyond: wanted, in: target.name, db: db) {
          wanted.insert(added)
          report.columnsKept.append("\(target.name).\(added)")
        }
        try insert(table, of: read, into: target.name, columns: wanted, db: db) { entity in
          guard let kindsOfTable = kinds[target.name] else { return true }
          guard let entity, case .integer(let number) = entity, kindsOfTable.contains(number) else {
            return false
          }
          report.entities[entityNames[number] ?? "", default: .init()].read += 1
          return true
        } setAside: { count in
          report.setAside[target.name] = count
        } valuesLeft: { place, count in
          report.valuesLeft[place, default: 0] += count
        } keptByValue: { count in
          report.rowsKeptByValue[table.name, default: 0] += count
        }
      } else if let sql = table.sql, !name.hasPrefix("SQLITE_"), try !db.tableExists(table.name) {
        try copyOwnTable(table, sql: sql, of: read, db: db, report: &report)
      }
    }
  }

  /// A table of the store's own (history, an app's): made as it was, its rows as they were — one
  /// statement, prepared alone (more SQL after it fails to prepare, never runs) — with its indexes.
  /// One the new store already has (an R-tree's shadow tables) is derived from the rows. A statement
  /// this SQLite will not run (more columns than it allows) sets its rows aside, value by value.
  private static func copyOwnTable(
    _ table: SalvageRead.Table, sql: String, of read: SalvageRead, db: Database, report: inout SalvageReport
  ) throws {
    do {
      try db.makeStatement(sql: sql).execute()
    } catch {
      report.notCarried[table.name] =
        "its statement does not run (\(Self.message(error))): its rows kept value by value in MIGRUN_SALVAGED_VALUES"
      var rows: [(Int64, Int?, [SQLiteFileImage.Value])] = []
      read.forEachRow(of: table) { rows.append(($0, nil, $1)) }
      try keepValueByValue(rows, of: table.name, db: db, report: &report)
      return
    }
    let existing = Set(try db.columns(in: table.name).map(\.name))
    report.otherTables[table.name] =
      try insert(
        table, of: read, into: table.name, columns: existing, db: db, accept: { _ in true }, setAside: { _ in },
        valuesLeft: { place, count in report.valuesLeft[place, default: 0] += count },
        keptByValue: { count in report.rowsKeptByValue[table.name, default: 0] += count })
    for index in read.indexes where index.table == table.name {
      do {
        try db.makeStatement(
          sql: index.sql.replacingOccurrences(of: "CREATE INDEX ", with: "CREATE INDEX IF NOT EXISTS ")
        ).execute()
      } catch {
        report.notCarried[index.name] = "its statement no longer runs (\(Self.message(error)))"
      }
    }
  }

  /// SQLite's words for a failure (the error itself otherwise).
  static func message(_ error: any Error) -> String { (error as? DatabaseError)?.message ?? "\(error)" }

  /// The columns the store's own statement gives `table` beyond `columns` (the model's), added to
  /// `target` in the new store as the store declared them (`ALTER TABLE … ADD COLUMN`), so their
  /// values are kept; a definition SQLite will not add (a key, a constraint) is left out, and its
  /// values are said lost. Returns the columns added.
  private static func keepColumns(
    of table: SalvageRead.Table, beyond columns: Set<String>, in target: String, db: Database
  ) throws -> [String] {
    guard let definition = table.definition else { return [] }
    let known = Set(columns.map { $0.uppercased() })
    var added: [String] = []
    for column in definition.columns {
      guard !known.contains(column.name.uppercased()), column.name != table.rowidColumn else { continue }
      // One statement, prepared alone: a definition read from a damaged file that is not one
      // column's (a `;` and more SQL after it) fails to prepare and is left out, never run.
      do {
        try db.makeStatement(sql: "ALTER TABLE \(StoreEdit.quoted(target)) ADD COLUMN \(column.definition)").execute()
        added.append(column.name)
      } catch {
        continue
      }
    }
    return added
  }

  /// Inserts `table`'s rows into `target`'s `columns`; rows `accept` refuses (given the row's
  /// `Z_ENT`, nil where the table has none) go to `MIGRUN_SALVAGED_<TARGET>` (told to `setAside` by
  /// count). Returns the rows inserted.
  ///
  /// Each row's values are bound by position straight into the prepared statement (each column's
  /// place in the row worked out once per table): at a million rows, naming every value of every
  /// row and building GRDB's arguments cost more than SQLite's inserts.
  @discardableResult
  private static func insert(
    _ table: SalvageRead.Table, of read: SalvageRead, into target: String, columns: Set<String>, db: Database,
    accept: (SQLiteFileImage.Value?) -> Bool, setAside: (Int) -> Void,
    valuesLeft: (String, Int) -> Void, keptByValue: (Int) -> Void
  ) throws -> Int {
    let rowidColumn = table.rowidColumn
    let kept = table.columns.filter { columns.contains($0) }
    let left = table.columns.enumerated().filter { !columns.contains($0.element) && $0.element != rowidColumn }
    guard !kept.isEmpty else {
      valuesLeft("\(table.name) (no column the table has)", table.rowids.count)
      return 0
    }
    // Where each value comes from: the rowid (nil), or its place in the row as read. A name the
    // table declares twice takes the last place, as naming the row's values did.
    let place = Dictionary(table.columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { _, last in last })
    let sources = kept.map { $0 == rowidColumn ? nil : place[$0] }
    let entity = table.columns.contains("Z_ENT") ? ("Z_ENT" == rowidColumn ? nil : place["Z_ENT"]) : -1
    let statement = try db.cachedStatement(
      sql:
        "INSERT OR IGNORE INTO \(StoreEdit.quoted(target)) (\(kept.map(StoreEdit.quoted).joined(separator: ", "))) VALUES (\(kept.map { _ in "?" }.joined(separator: ", ")))"
    )
    guard let connection = db.sqliteConnection else { throw StoreError(.sqlite, reason: "the new store is closed") }
    let raw = RawStatement(handle: statement.sqliteStatement, connection: connection)
    var inserted = 0
    var refused: [(Int64, [SQLiteFileImage.Value])] = []
    try read.forEachRow(of: table) { rowid, values in
      func value(_ source: Int?) -> SQLiteFileImage.Value {
        guard let source else { return .integer(rowid) }
        return source < values.count ? values[source] : .null
      }
      guard accept(entity == -1 ? nil : value(entity)) else {
        refused.append((rowid, values))
        return
      }
      for (index, column) in left where index < values.count && values[index] != .null {
        valuesLeft("\(table.name).\(column)", 1)
      }
      for (index, source) in sources.enumerated() {
        try raw.bind(databaseValue(value(source)), at: Int32(index + 1))
      }
      try raw.run()
      // A row a uniqueness constraint refuses (two rows claiming one value) is set aside too.
      if sqlite3_changes(connection) == 0 { refused.append((rowid, values)) } else { inserted += 1 }
    }
    try keepRefused(refused, of: table, target: target, db: db, setAside: setAside, keptByValue: keptByValue)
    return inserted
  }

  /// Rows `insert` refused, in `MIGRUN_SALVAGED_<TARGET>` (`Z_ROWID`, then `C_<column>` for each of
  /// the table's columns), or value by value where the table has more columns than a table may.
  private static func keepRefused(
    _ refused: [(Int64, [SQLiteFileImage.Value])], of table: SalvageRead.Table, target: String, db: Database,
    setAside: (Int) -> Void, keptByValue: (Int) -> Void
  ) throws {
    guard !refused.isEmpty else { return }
    guard table.columns.count <= widestRow(db, beside: 1) else {
      // Its statement declares more columns than this SQLite allows a table: kept value by value.
      try writeValueByValue(refused.map { ($0.0, nil, $0.1) }, of: table.name, db: db)
      keptByValue(refused.count)
      return
    }
    let aside = StoreEdit.quoted("MIGRUN_SALVAGED_\(target)")
    let names = ["Z_ROWID"] + table.columns.map { StoreEdit.quoted("C_\($0)") }
    try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(aside) (\(names.joined(separator: ", ")))")
    let insertAside = try db.cachedStatement(
      sql: "INSERT INTO \(aside) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))")
    for (rowid, values) in refused {
      let padded = (0..<table.columns.count).map { $0 < values.count ? databaseValue(values[$0]) : .null }
      try insertAside.execute(arguments: StatementArguments([rowid.databaseValue] + padded))
    }
    setAside(refused.count)
  }
}

extension SalvageRead.Table {
  /// The column that is the table's rowid (`Z_PK INTEGER PRIMARY KEY`): from the statement, else
  /// Core Data's (`Z_PK`, `Z_PRIMARYKEY`'s `Z_ENT`) when the schema was lost.
  var rowidColumn: String? {
    if sql != nil { return definition?.rowidColumn }
    if columns.contains("Z_PK") { return "Z_PK" }
    return name == "Z_PRIMARYKEY" ? "Z_ENT" : nil
  }
}

extension Salvage {
  /// The repairs, each counted: to-one keys naming no object cleared (or kept, with
  /// ``Options/keepDanglingKeys``), join rows whose ends are gone removed, `Z_MAX` raised to the
  /// largest key; the objects named but not recovered counted per entity as missing, and with the
  /// keys the unreadable pages held, as lost.
  static func repair(
    _ schema: StoreSchema, read: SalvageRead, db: Database, options: Options, report: inout SalvageReport
  ) throws {
    var named: [String: Set<Int64>] = [:]
    var done = Set<String>()
    try noteSetAsideKeys(read, db: db)
    for layout in schema.entities {
      for (name, storage) in layout.properties.sorted(by: { $0.key < $1.key }) {
        guard let destination = destination(of: name, in: layout, schema: schema) else { continue }
        switch storage {
        case .toOne(let key, let entity, let order):
          guard done.insert("\(layout.table).\(key.name)").inserted else { continue }
          let keys = try clearDangling(
            layout, name, columns: [key] + [entity, order].compactMap { $0 }, destination: destination,
            schema: schema, db: db, options: options, report: &report)
          named[destination, default: []].formUnion(keys)
        case .manyToMany(let table, let own, let other, _):
          guard done.insert(table).inserted else { continue }
          let (owners, targets) = try removeJoinRows(
            layout, name, join: (table, own, other), destination: destination, schema: schema, db: db,
            report: &report)
          named[layout.name, default: []].formUnion(owners)
          named[destination, default: []].formUnion(targets)
        default: continue
        }
      }
    }
    try raiseMaxKeys(schema, recorded: read.maxKeys, db: db, report: &report)
    countLost(schema, read: read, named: named, report: &report)
  }

  /// The keys of the rows set aside (their columns not proven), by table, in `temp.migrun_aside`:
  /// a link to one of them is kept aside with it, never called lost.
  private static func noteSetAsideKeys(_ read: SalvageRead, db: Database) throws {
    try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS migrun_aside (tbl TEXT, key INTEGER, PRIMARY KEY (tbl, key))")
    let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO temp.migrun_aside (tbl, key) VALUES (?, ?)")
    for table in read.tables.values where !table.setAside.isEmpty {
      for key in table.setAside.keys { try insert.execute(arguments: [table.name.uppercased(), key]) }
    }
    // The table links to them go to: a name free in the new store now (made on first use).
    try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS migrun_links_table (name TEXT)")
    try db.execute(
      sql: "INSERT INTO temp.migrun_links_table (name) VALUES (?)",
      arguments: [try freeTableName("MIGRUN_SETASIDE_LINKS", db: db)])
  }

  /// SQL true where `column` holds the key of a row of `table` set aside.
  private static func setAside(_ column: String, of table: String) -> String {
    let literal = table.uppercased().replacingOccurrences(of: "'", with: "''")
    return "\(column) IN (SELECT key FROM temp.migrun_aside WHERE tbl = '\(literal)')"
  }

  /// A name for a table of rows kept aside that the new store does not have yet: `base`, else
  /// `base_2`, `base_3`, … — a table of the store's own by that name (a store salvaged before) is
  /// its own, never added to or dropped.
  private static func freeTableName(_ base: String, db: Database) throws -> String {
    var name = base
    var suffix = 1
    while try db.tableExists(name) {
      suffix += 1
      name = "\(base)_\(suffix)"
    }
    return name
  }

  /// The links (`columns` of `table`'s rows where `condition` holds) kept aside, as they were, in
  /// `MIGRUN_SETASIDE_LINKS` (table, the row's key, column, value) before the row's own are cleared.
  private static func keepLinksAside(
    _ table: String, columns: [StoreSchema.Column], where condition: String, db: Database
  ) throws -> Int {
    guard let name = try String.fetchOne(db, sql: "SELECT name FROM temp.migrun_links_table") else { return 0 }
    let links = StoreEdit.quoted(name)
    try db.execute(
      sql: "CREATE TABLE IF NOT EXISTS \(links) (Z_TABLE VARCHAR, Z_PK INTEGER, Z_COLUMN VARCHAR, Z_VALUE)")
    var rows = 0
    for (index, column) in columns.enumerated() {
      try db.execute(
        sql: "INSERT INTO \(links) SELECT ?, Z_PK, ?, \(column.name) FROM \(table) WHERE \(condition)",
        arguments: [table, column.name])
      if index == 0 { rows = db.changesCount }
    }
    return rows
  }

  /// The rows of the entity its table's key named: the query of the keys that exist.
  private static func existing(_ entity: String, _ schema: StoreSchema) -> String? {
    schema.layout(of: entity).map { "SELECT Z_PK FROM \($0.table) WHERE \(schema.rowPredicate($0))" }
  }

  /// A to-one's keys naming no object of `destination`: cleared (with the columns that go with the
  /// key) or kept, each counted. Returns the keys named.
  private static func clearDangling(
    _ layout: StoreSchema.EntityLayout, _ name: String, columns: [StoreSchema.Column], destination: String,
    schema: StoreSchema, db: Database, options: Options, report: inout SalvageReport
  ) throws -> [Int64] {
    guard let key = columns.first, let targets = existing(destination, schema),
      let targetTable = schema.layout(of: destination)?.table
    else { return [] }
    let condition = "\(key.name) IS NOT NULL AND \(key.name) NOT IN (\(targets))"
    let keys = try Int64.fetchAll(
      db,
      sql:
        "SELECT DISTINCT \(key.name) FROM \(layout.table) WHERE \(condition) AND NOT \(setAside(key.name, of: targetTable))"
    )
    let toSetAside = "\(condition) AND \(setAside(key.name, of: targetTable))"
    let asideCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(layout.table) WHERE \(toSetAside)") ?? 0
    guard !keys.isEmpty || asideCount > 0 else { return [] }
    report.entities[destination, default: .init()].missing += keys.count
    if options.keepDanglingKeys {
      report.danglingKeysKept +=
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(layout.table) WHERE \(condition)") ?? 0
      return keys
    }
    // A link to a row set aside goes aside with it (as it was), not lost; then the row's is cleared.
    if asideCount > 0 {
      report.linksSetAside += try keepLinksAside(layout.table, columns: columns, where: toSetAside, db: db)
    }
    let cleared = columns.map { "\($0.name) = NULL" }.joined(separator: ", ")
    try db.execute(sql: "UPDATE \(layout.table) SET \(cleared) WHERE \(condition)")
    report.danglingKeysCleared += db.changesCount
    let lostLinks = db.changesCount - asideCount
    if lostLinks > 0 { report.entities[layout.name, default: .init()].linksLost[name, default: 0] += lostLinks }
    return keys
  }

  /// A many-to-many's join rows whose owner or destination is gone, removed and counted. Returns the
  /// owners' and destinations' keys named.
  private static func removeJoinRows(
    _ layout: StoreSchema.EntityLayout, _ name: String, join: (table: String, own: String, other: String),
    destination: String, schema: StoreSchema, db: Database, report: inout SalvageReport
  ) throws -> ([Int64], [Int64]) {
    guard let owners = existing(layout.name, schema), let targets = existing(destination, schema) else {
      return ([], [])
    }
    let (table, own, other) = join
    let ownerAside = schema.layout(of: layout.name).map { setAside(own, of: $0.table) } ?? "0"
    let targetAside = schema.layout(of: destination).map { setAside(other, of: $0.table) } ?? "0"
    let missingOwners = try Int64.fetchAll(
      db, sql: "SELECT DISTINCT \(own) FROM \(table) WHERE \(own) NOT IN (\(owners)) AND NOT \(ownerAside)")
    let missingTargets = try Int64.fetchAll(
      db, sql: "SELECT DISTINCT \(other) FROM \(table) WHERE \(other) NOT IN (\(targets)) AND NOT \(targetAside)")
    report.entities[layout.name, default: .init()].missing += missingOwners.count
    report.entities[destination, default: .init()].missing += missingTargets.count
    let removed = "\(own) NOT IN (\(owners)) OR \(other) NOT IN (\(targets))"
    // A join row one of whose ends is set aside goes aside with it, as it was (its order too), in a
    // table made only when there is one to keep.
    let asideRows = "FROM \(table) WHERE (\(removed)) AND (\(ownerAside) OR \(targetAside))"
    let keptAside = try Int.fetchOne(db, sql: "SELECT count(*) \(asideRows)") ?? 0
    if keptAside > 0 {
      let aside = StoreEdit.quoted(try freeTableName("MIGRUN_SETASIDE_\(table.uppercased())", db: db))
      try db.execute(sql: "CREATE TABLE \(aside) AS SELECT * \(asideRows)")
      report.linksSetAside += keptAside
    }
    try db.execute(sql: "DELETE FROM \(table) WHERE \(removed)")
    report.joinRowsRemoved += db.changesCount
    if db.changesCount > keptAside {
      report.entities[layout.name, default: .init()].linksLost[name, default: 0] += db.changesCount - keptAside
    }
    return (missingOwners, missingTargets)
  }

  /// Each entity's objects lost, each once, with their keys: those other rows name (`named`, by
  /// entity) and those the unreadable pages' ranges held (under the table's root entity unless a
  /// link names them); rows set aside are not lost. Tables of no entity: their rows lost by table.
  private static func countLost(
    _ schema: StoreSchema, read: SalvageRead, named: [String: Set<Int64>], report: inout SalvageReport
  ) {
    var lost = named
    // Set-aside rows per entity table: a key set aside in one table says nothing of another's.
    var aside: [String: Set<Int64>] = [:]
    for table in read.tables.values {
      let layouts = schema.entities.filter { $0.table.uppercased() == table.name.uppercased() }
      let losses = table.losses
      if !losses.keys.isEmpty { report.keysLost[table.name] = losses.keys.count }
      guard let root = layouts.first(where: { $0.superNumber == 0 }) ?? layouts.first else {
        if !losses.keys.isEmpty { report.otherRowsLost[table.name] = losses.keys.count }
        if losses.uncountedRanges > 0 { report.otherPagesLostUncounted[table.name] = losses.uncountedRanges }
        continue
      }
      let claimed = layouts.reduce(into: Set<Int64>()) { $0.formUnion(named[$1.name] ?? []) }
      lost[root.name, default: []].formUnion(losses.keys.filter { !claimed.contains($0) })
      report.entities[root.name, default: .init()].pagesLostUncounted += losses.uncountedRanges
      for layout in layouts { aside[layout.name] = Set(table.setAside.keys) }
      if losses.uncountedRanges > 0 || read.pagesCutOff > 0, let max = read.maxKeys[root.number], max > 0 {
        let known = Set(losses.keys).union(claimed)
        let top = Swift.min(max, 1_000_000)
        report.entities[root.name, default: .init()].keysUnaccounted =
          (1...top).lazy.filter { !table.rowids.contains($0) && table.setAside[$0] == nil && !known.contains($0) }
          .count
      }
    }
    for (entity, keys) in lost where !keys.isEmpty {
      let kept = keys.filter { !(aside[entity]?.contains($0) ?? false) }
      report.entities[entity, default: .init()].lost = kept.count
      report.entities[entity, default: .init()].lostKeys = SalvageReport.ranges(Array(kept))
    }
  }

  /// Each entity's `Z_PRIMARYKEY.Z_MAX`: the recorded one, raised for a hierarchy's root to its
  /// table's largest key; the rows written per entity counted.
  private static func raiseMaxKeys(
    _ schema: StoreSchema, recorded: [Int: Int64], db: Database, report: inout SalvageReport
  ) throws {
    for layout in schema.entities {
      let largest =
        try Int64.fetchOne(
          db, sql: "SELECT max(Z_PK) FROM \(layout.table) WHERE \(schema.rowPredicate(layout))") ?? 0
      let kept = recorded[layout.number] ?? 0
      let max = layout.superNumber == 0 ? Swift.max(kept, largest) : kept
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", arguments: [max, layout.number])
      if max > kept { report.maxKeysRaised += 1 }
      report.entities[layout.name, default: .init()].written =
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(layout.table) WHERE Z_ENT = ?", arguments: [layout.number])
        ?? 0
    }
  }

  /// The entity a to-one or many-to-many of `layout` leads to: the model's relationship's
  /// destination, or for the hidden to-one of a to-many without inverse (`<ent><NAME>`) the entity
  /// numbered `<ent>`, which owns the to-many.
  private static func destination(of property: String, in layout: StoreSchema.EntityLayout, schema: StoreSchema)
    -> String?
  {
    if StoreSchema.isHiddenToOne(property) {
      let number = Int(property.prefix { $0.isNumber })
      return schema.entities.first { $0.number == number }?.name
    }
    guard let entity = schema.model.entity(named: layout.name) else { return nil }
    return schema.model.relationships(of: entity).first { $0.name == property }?.destinationEntity
  }
}

extension Salvage {
  /// The version and what the file holds, as salvage and `check`'s dry run both read it: a first
  /// look without a model finds the version; the file is read again with it only when that look
  /// left rows it could not place (the version's entity numbers or, the schema lost, its tables
  /// place them).
  package static func read(_ url: URL, bundle: ModelBundle?) throws -> (ObjectModel, SalvageRead) {
    let first = try SalvageRead(url: url, model: nil)
    let version = try version(of: url, first: first, bundle: bundle)
    if first.schemaFound && first.unassigned.isEmpty { return (version, first) }
    return (version, try SalvageRead(url: url, model: version))
  }

  /// The model version the damaged store was written with: the one its surviving metadata's hashes
  /// name (in `bundle`, else its surviving model cache); without metadata, the cache; without
  /// either, the version of `bundle` whose tables and columns the surviving schema has, or — the
  /// schema lost too — under which the most rows find their tables (a guess, said in the report).
  package static func version(of url: URL, first read: SalvageRead, bundle: ModelBundle?) throws -> ObjectModel {
    if let metadata = read.metadata {
      if let version = bundle?.version(matching: metadata.versionHashes) { return version }
      if let cached = read.cachedModel, metadata.isCompatible(with: cached) { return cached }
      // The store's own model, cached beside its metadata, is the version it was written with.
      if let cached = read.cachedModel { return cached }
      // The store says which version it is: another one is never taken for it by its rows.
      throw StoreError(
        .noModel, file: url.path,
        reason: "its metadata names a model version by hashes that "
          + (bundle == nil ? "no model cache found has" : "no version of the model given has")
          + ": give the model (--model) with the version the store was written with")
    }
    if bundle == nil, let cached = read.cachedModel { return cached }
    guard let bundle else {
      throw StoreError(
        .noModel, file: url.path,
        reason:
          "its metadata and model cache were not found anywhere in the file: give the model (--model) to salvage it")
    }
    return try guessedVersion(of: url, read: read, bundle: bundle)
  }

  /// Without metadata: the version of `bundle` whose tables and columns the surviving schema has,
  /// or — the schema lost too — under which the most rows find their tables; two versions alike are
  /// never chosen between (the user names one).
  private static func guessedVersion(of url: URL, read: SalvageRead, bundle: ModelBundle) throws -> ObjectModel {
    var scores: [(model: ObjectModel, score: Int)] = []
    for name in bundle.versionNames {
      let model = try bundle.model(named: name)
      let score: Int
      if read.schemaFound {
        score =
          StoreSchema(model: model).tables.filter { table in
            Set(read.tables[table.name]?.columns ?? []) == Set(table.columns.map(\.name))
          }.count
      } else {
        score = try SalvageRead(url: url, model: model).rowCount
      }
      scores.append((model, score))
    }
    guard let best = scores.max(by: { $0.score < $1.score }) else {
      throw StoreError(.noModel, file: url.path, reason: "the model has no version")
    }
    let alike = scores.filter { $0.score == best.score }.compactMap(\.model.versionName)
    guard alike.count <= 1 else {
      throw StoreError(
        .noModel, file: url.path,
        reason: "its metadata is lost and versions \(alike.joined(separator: ", ")) fit what is left alike: "
          + "give the one version the store was written with (--model path/to/VERSION.xcdatamodel)")
    }
    return best.model
  }
}
