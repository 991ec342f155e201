import Foundation
import GRDB
import MigrunModel

/// A migration step's edit of a store file, in the store layer's words: tables and columns created,
/// dropped and renamed, rows filled and counted, indexes, triggers and R-trees rebuilt, persistent
/// history's masks and tombstones moved, metadata and the model cache written. The SQL about Core
/// Data's layout is written here; the migration layer decides what to edit and asks for it.
///
/// One is handed to a closure on one connection (`SQLiteStore.editing`, `.inspecting`,
/// `StoreEdit.editFile`) and is valid only inside it.
package struct StoreEdit {
  let db: Database

  init(_ db: Database) { self.db = db }

  /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
  package func inTransaction<T>(_ body: () throws -> T) throws -> T {
    var result: T?
    try db.inTransaction {
      result = try body()
      return .commit
    }
    guard let result else { throw StoreError(.sqlite, reason: "the transaction did not run") }
    return result
  }

  // MARK: - Metadata

  /// Writes `metadata` into `Z_METADATA` (its first row: the store layer's one way to write it).
  package func setMetadata(_ metadata: StoreMetadata) throws {
    try db.execute(
      sql: "UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ? WHERE Z_VERSION = (SELECT min(Z_VERSION) FROM Z_METADATA)",
      arguments: [metadata.uuid, Data(metadata.plist.binaryEncoded())])
  }

  /// Makes `bytes` (a compressed model, `ObjectModel.modelCache()`) the store's `Z_MODELCACHE`. A
  /// store of an older framework (before iOS 7 / OS X 10.9) has no cache table: it gets one.
  package func setModelCache(_ bytes: [UInt8]) throws {
    try db.execute(sql: "CREATE TABLE IF NOT EXISTS Z_MODELCACHE (Z_CONTENT BLOB)")
    try db.execute(sql: "DELETE FROM Z_MODELCACHE")
    try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [Data(bytes)])
  }

  // MARK: - Tables and columns

  /// Whether the file holds a table `name`.
  package func hasTable(_ name: String) throws -> Bool { try db.tableExists(name) }

  package func createTable(_ table: StoreSchema.Table) throws { try db.execute(sql: table.createStatement) }

  package func dropTable(_ name: String) throws { try db.execute(sql: "DROP TABLE \(name)") }

  package func addColumn(_ column: StoreSchema.Column, to table: String) throws {
    try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(column.name) \(column.type)")
  }

  package func dropColumn(_ column: String, of table: String) throws {
    try db.execute(sql: "ALTER TABLE \(table) DROP COLUMN \(column)")
  }

  /// Renames tables, through temporary names where a new name is still taken by one renamed later (a swap).
  package func renameTables(_ renames: [(from: String, to: String)]) throws {
    try rename(renames.map { (nil, $0.from, $0.to) })
  }

  /// Renames columns of their tables, through temporary names where needed (a swap).
  package func renameColumns(_ renames: [(table: String, from: String, to: String)]) throws {
    try rename(renames.map { ($0.table, $0.from, $0.to) })
  }

  private func rename(_ renames: [(table: String?, from: String, to: String)]) throws {
    func statement(_ table: String?, _ from: String, _ to: String) -> String {
      if let table {
        "ALTER TABLE \(table) RENAME COLUMN \(from) TO \(to)"
      } else {
        "ALTER TABLE \(from) RENAME TO \(to)"
      }
    }
    let sources = Set(renames.map { "\($0.table ?? "")/\($0.from.uppercased())" })
    let clash = renames.contains { sources.contains("\($0.table ?? "")/\($0.to.uppercased())") }
    guard clash else {
      for (table, from, to) in renames { try db.execute(sql: statement(table, from, to)) }
      return
    }
    for (index, (table, from, _)) in renames.enumerated() {
      try db.execute(sql: statement(table, from, "Z_MIGRUN_RENAME_\(index)"))
    }
    for (index, (table, _, to)) in renames.enumerated() {
      try db.execute(sql: statement(table, "Z_MIGRUN_RENAME_\(index)", to))
    }
  }

  // MARK: - Entities and rows

  /// A new entity's row in `Z_PRIMARYKEY` (no key used yet).
  package func addEntityKey(_ layout: StoreSchema.EntityLayout) throws {
    try db.execute(
      sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
      arguments: [layout.number, layout.name, layout.superNumber])
  }

  /// Gives every row of `layout`'s table its entity's number (`Z_ENT`): for an entity alone in its
  /// table, whose rows an older app version may have left with another entity's number.
  package func claimRows(for layout: StoreSchema.EntityLayout) throws {
    try db.execute(sql: "UPDATE \(layout.table) SET Z_ENT = \(layout.number) WHERE Z_ENT IS NOT \(layout.number)")
  }

  /// Sets values in the rows of exactly `layout`'s entity (laid out by `schema`): `assignments` are
  /// `COLUMN = expression`, `arguments` bound in order. Returns the rows written.
  package func fill(
    _ layout: StoreSchema.EntityLayout, of schema: StoreSchema, assignments: [String], arguments: [StoreValue]
  ) throws -> Int {
    try db.execute(
      sql:
        "UPDATE \(layout.table) SET \(assignments.joined(separator: ", ")) WHERE \(schema.rowPredicate(layout, includingSubentities: false))",
      arguments: StatementArguments(arguments.map(StoreValueCoding.databaseValue)))
    return db.changesCount
  }

  // MARK: - Indexes, triggers, R-trees

  /// An index of the file as SQLite describes it.
  package struct StoredIndex {
    package let name: String
    package let table: String
    package let isUnique: Bool
    /// A partial index (its condition names columns too).
    package let isPartial: Bool
    /// Key columns in order: name (nil for an expression), collation, descending.
    package let columns: [(name: String?, collation: String, descending: Bool)]
  }

  /// The file's indexes made by `CREATE INDEX` (not those SQLite makes for constraints): name and table.
  package func indexNames() throws -> [(name: String, table: String)] {
    try schemaObjects().filter { $0.type == "index" && $0.sql != nil }.map { ($0.name, $0.table) }
  }

  /// How SQLite describes the index `name` of `table`.
  package func index(_ name: String, of table: String) throws -> StoredIndex {
    let flags = try Row.fetchOne(
      db, sql: "SELECT \"unique\", partial FROM pragma_index_list(?) WHERE name = ?", arguments: [table, name])
    let columns = try Row.fetchAll(
      db, sql: "SELECT name, desc, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", arguments: [name])
    return StoredIndex(
      name: name, table: table, isUnique: try flags?.value("unique", as: Int64.self) == 1,
      isPartial: try flags?.value("partial", as: Int64.self) == 1,
      columns: try columns.map { column in
        (
          try column.value("name", as: String.self), try column.value("coll", as: String.self) ?? "BINARY",
          try column.value("desc", as: Int64.self) == 1
        )
      })
  }

  package func createIndex(_ index: StoreSchema.Index) throws { try db.execute(sql: index.createStatement) }

  package func dropIndex(_ name: String) throws { try db.execute(sql: "DROP INDEX \(Self.quoted(name))") }

  /// Drops Core Data's derived-attribute triggers (`Z_DA_…`).
  package func dropDerivedAttributeTriggers() throws {
    // `Z_DA_` in any case of its ASCII letters, as SQLite's LIKE read it.
    for object in try schemaObjects() where object.type == "trigger" && object.name.uppercased().hasPrefix("Z_DA_") {
      // A name read from the file: quoted, never SQL of its own.
      try db.execute(sql: "DROP TRIGGER \(Self.quoted(object.name))")
    }
  }

  /// Drops an R-tree fetch index: its triggers and its virtual table.
  package func dropRTree(_ index: StoreSchema.RTreeIndex) throws {
    for suffix in ["INSERT", "UPDATE", "DELETE"] {
      try db.execute(sql: "DROP TRIGGER IF EXISTS \(index.name)_\(suffix)")
    }
    try db.execute(sql: "DROP TABLE IF EXISTS \(index.name)")
  }

  /// `schema`'s derived-attribute triggers (values filled first) and R-tree indexes (filled).
  package func installDerivedAttributesAndRTrees(_ schema: StoreSchema) throws {
    try DerivedAttributes.install(db, schema)
    try SQLiteStore.installRTrees(db, schema)
  }

  // MARK: - Persistent history

  /// The columns (uppercased) of persistent history's `ACHANGE` in `schema` (`main`, or an attached one).
  package func historyChangeColumns(in schema: String = "main") throws -> [String] {
    try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('ACHANGE', '\(schema)')").map { $0.uppercased() }
  }

  /// Adds `ACHANGE`'s tombstone columns `ZTOMBSTONE<index>` (`BLOB`) for `indices`.
  package func addTombstoneColumns(_ indices: Range<Int>, in schema: String = "main") throws {
    for index in indices {
      try db.execute(sql: "ALTER TABLE \(schema).ACHANGE ADD COLUMN ZTOMBSTONE\(index) BLOB")
    }
  }

  /// Rewrites the `ZCOLUMNS` mask of each update of entity `number` that has one: `rewrite` gets the
  /// mask's bytes (nil when it is no blob) and returns the new ones, or nil to keep the row as it is.
  package func rewriteUpdateMasks(
    ofEntity number: Int, in schema: String = "main", _ rewrite: ([UInt8]?) -> [UInt8]?
  ) throws {
    let table = "\(schema).ACHANGE"
    let write = try db.makeStatement(sql: "UPDATE \(table) SET ZCOLUMNS = ? WHERE Z_PK = ?")
    let rows = try Row.fetchAll(
      db, sql: "SELECT Z_PK, ZCOLUMNS FROM \(table) WHERE ZENTITY = ? AND ZCHANGETYPE = 1 AND ZCOLUMNS IS NOT NULL",
      arguments: [number])
    for row in rows {
      let key = try? row.value(at: 0, as: Int64.self)
      let mask = (try? row.value(at: 1, as: Data.self)).map { [UInt8]($0) }
      guard let written = rewrite(key == nil ? nil : mask), let key else { continue }
      try write.execute(arguments: [Data(written), key])
    }
  }

  /// Moves the tombstone values of each delete of entity `number`: slot `i` of `slots.count` gets
  /// the value of slot `slots[i]` (of the first `readable`), or NULL. Returns the deletes rewritten
  /// and the values that no slot keeps (non-NULL ones, cleared).
  package func moveTombstones(
    ofEntity number: Int, readable: Int, slots: [Int?], in schema: String = "main"
  ) throws -> (rows: Int, cleared: Int) {
    guard readable > 0, !slots.isEmpty else { return (0, 0) }
    let table = "\(schema).ACHANGE"
    let write = try db.makeStatement(
      sql: "UPDATE \(table) SET \(slots.indices.map { "ZTOMBSTONE\($0) = ?" }.joined(separator: ", ")) WHERE Z_PK = ?")
    let rows = try Row.fetchAll(
      db,
      sql:
        "SELECT Z_PK, \((0..<readable).map { "ZTOMBSTONE\($0)" }.joined(separator: ", ")) FROM \(table) WHERE ZENTITY = ? AND ZCHANGETYPE = 2",
      arguments: [number])
    let used = Set(slots.compactMap { $0 })
    var outcome = (rows: 0, cleared: 0)
    for row in rows {
      guard let key = try? row.value(at: 0, as: Int64.self) else { continue }
      let values: [DatabaseValue] = (0..<readable).map { row[$0 + 1] }
      let moved = slots.map { source in source.flatMap { $0 < readable ? values[$0] : nil } ?? .null }
      outcome.cleared += values.indices.filter { !used.contains($0) && !values[$0].isNull }.count
      try write.execute(arguments: StatementArguments(moved + [key.databaseValue]))
      outcome.rows += 1
    }
    return outcome
  }

  // MARK: - A whole-file edit

  /// Rows a DDL edit must keep as they are: no row inserted into or deleted from `untouched`
  /// tables, no `keys` column written in them (uppercased names).
  package struct KeptRows: Sendable {
    package let untouched: Set<String>
    package let keys: [String: Set<String>]

    package init(untouched: Set<String>, keys: [String: Set<String>]) {
      self.untouched = untouched
      self.keys = keys
    }
  }

  /// Thrown by ``editFile(at:keeping:_:)`` when its edit wrote rows it had to keep (rolled back):
  /// what was written (`inserted into ZA`, …) and how many rows.
  package struct KeptRowsWritten: Error {
    package let written: [String: Int]
  }

  /// Edits the file at `url` (migrun's own working copy, commits not waiting for the disk) in one
  /// transaction: `body`'s edits are committed together, or not at all when it throws or writes a
  /// row `kept` holds (``KeptRowsWritten``). Failures of SQLite are `StoreError`s naming the file.
  package static func editFile<T>(at url: URL, keeping kept: KeptRows, _ body: (StoreEdit) throws -> T) throws -> T {
    let queue: DatabaseQueue
    do {
      queue = try DatabaseQueue(
        path: url.path, configuration: SQLiteStore.configuration(readOnly: false, fastWrites: true))
    } catch {
      throw StoreError(
        .sqlite, file: url.lastPathComponent, reason: "cannot open the copy (\(error))", underlying: error)
    }
    defer { try? queue.close() }
    var result: T?
    do {
      try queue.writeWithoutTransaction { db in
        db.add(transactionObserver: KeptRowsWatch(kept), extent: .nextTransaction)
        try db.inTransaction {
          result = try body(StoreEdit(db))
          return .commit
        }
      }
    } catch let error as DatabaseError {
      throw StoreError(
        .sqlite, file: url.lastPathComponent, reason: "the DDL edit failed (\(error))", underlying: error)
    }
    guard let result else { throw StoreError(.sqlite, file: url.lastPathComponent, reason: "the edit did not run") }
    return result
  }

  /// Watches an edit's own statements on the tables it must keep as they are: a row inserted or
  /// deleted there, or a key or join column written, fails the commit. SQLite tells the observer
  /// only of the statements that could do it (GRDB asks per statement), so the fills and `Z_ENT`
  /// fixes of a large table cost nothing here.
  private final class KeptRowsWatch: TransactionObserver {
    let kept: KeptRows
    private(set) var written: [String: Int] = [:]

    init(_ kept: KeptRows) { self.kept = kept }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
      switch eventKind {
      case .insert(let table), .delete(let table): kept.untouched.contains(table.uppercased())
      case .update(let table, let columns):
        kept.untouched.contains(table.uppercased())
          && !(kept.keys[table.uppercased()] ?? []).isDisjoint(with: columns.map { $0.uppercased() })
      }
    }

    func databaseDidChange(with event: DatabaseEvent) {
      let what =
        switch event.kind {
        case .insert: "inserted into \(event.tableName)"
        case .delete: "deleted from \(event.tableName)"
        case .update: "with key or join columns written in \(event.tableName)"
        }
      written[what, default: 0] += 1
    }

    func databaseWillCommit() throws {
      guard written.isEmpty else { throw KeptRowsWritten(written: written) }
    }

    func databaseDidCommit(_ db: Database) {}
    func databaseDidRollback(_ db: Database) {}
  }
}

extension SQLiteStore {
  /// Runs `body` with an edit of this store on its connection, outside any transaction (a step's
  /// working store: ATTACH needs that; ``StoreEdit/inTransaction(_:)`` makes one).
  package func editing<T>(_ body: (StoreEdit) throws -> T) throws -> T {
    try withConnection { db in try body(StoreEdit(db)) }
  }

  /// Runs `body` with an edit of this store that sees the store `source` — the file at
  /// `sourcePath`, its URI for reading — attached read-only as schema `src` (a step's source,
  /// beside its new file), detached after. While it is attached, a lock the connection meets is
  /// the source's (this store is the step's own new file): waited for `readWait` seconds, as a read
  /// of the source is (the job's `--wait`), then said as the source in use.
  package func editing<T>(
    attaching source: URL, at sourcePath: String, readWait: Double, _ body: (StoreEdit) throws -> T
  ) throws -> T {
    try withConnection { db in
      try db.execute(sql: "PRAGMA busy_timeout = \(Self.milliseconds(readWait))")
      defer { try? db.execute(sql: "PRAGMA busy_timeout = \(Self.milliseconds(busyTimeout))") }
      do {
        try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [sourcePath])
        defer { try? db.execute(sql: "DETACH DATABASE src") }
        return try body(StoreEdit(db))
      } catch let error where StoreFailure.isInUse(error) {
        throw StoreUse.inUseError(source, cause: error, waited: readWait)
      }
    }
  }

  /// Runs `body` with this store's connection for reading (counts, the file's own objects).
  package func inspecting<T>(_ body: (StoreEdit) throws -> T) throws -> T {
    try read { db in try body(StoreEdit(db)) }
  }

  /// The names of the file's triggers and views, sorted.
  package func triggerAndViewNames() throws -> [String] {
    try inspecting { try $0.schemaObjects() }.filter { $0.type == "trigger" || $0.type == "view" }.map(\.name)
      .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }  // SQLite's BINARY order
  }

  /// Each table of the file with the `CREATE TABLE` statement SQLite keeps for it.
  package func tableStatements() throws -> [(name: String, sql: String)] {
    try inspecting { try $0.schemaObjects() }.compactMap { object in
      guard object.type == "table", let sql = object.sql else { return nil }
      return (object.name, sql)
    }
  }

  /// For each of `columns` (attributes of `entity`), how many rows of exactly `entity` have it set
  /// (not NULL), in `columns` order — every column counted in one pass over the table (a scan per
  /// column read a large table as many times).
  package func valueCounts(of entity: String, columns: [String]) throws -> [Int] {
    guard !columns.isEmpty else { return [] }
    let layout = try layout(entity)
    let own = schema.rowPredicate(layout, includingSubentities: false)
    let counts = columns.map { "count(\($0))" }.joined(separator: ", ")
    return try read { db in
      guard let row = try Row.fetchOne(db, sql: "SELECT \(counts) FROM \(layout.table) WHERE \(own)") else {
        return columns.map { _ in 0 }
      }
      return try columns.indices.map { try row.value(at: $0, as: Int.self) ?? 0 }
    }
  }
}

// MARK: - What a file holds beyond its model

extension StoreEdit {
  /// An object of the file's schema (`sqlite_master`, SQLite's own aside), read without trusting
  /// it: a damaged file's schema is outside input too.
  package struct SchemaObject: Sendable {
    package let type: String
    package let name: String
    /// The table it belongs to (a table's own name for a table).
    package let table: String
    /// The statement SQLite keeps for it (nil for SQLite's automatic indexes).
    package let sql: String?
  }

  /// A row of `Z_PRIMARYKEY`, kept as it is stored (for carrying it over unchanged).
  package struct KeyRow {
    let values: [DatabaseValue]
    /// `Z_ENT`, when it is an integer.
    package var number: Int? { Int.fromDatabaseValue(values[0]) }
    /// `Z_NAME`, when it is text.
    package var name: String? { String.fromDatabaseValue(values[1]) }
  }

  /// The objects of schema `main` (tables, indexes, triggers, views), SQLite's own aside: the one
  /// reader of the file's `sqlite_master`. A type, name or table that is not text (a schema written
  /// around SQLite) is an error naming the row and what it holds, never read as an empty name.
  package func schemaObjects() throws -> [SchemaObject] {
    try Row.fetchAll(
      db, sql: "SELECT rowid, type, name, tbl_name, sql FROM sqlite_master WHERE substr(name, 1, 7) <> 'sqlite_'"
    ).map { row in
      func text(_ column: String) throws -> String {
        let value: DatabaseValue = row[column]
        if case .string(let text) = value.storage { return text }
        throw StoreError(
          .badValue,
          reason: "the file's schema (sqlite_master, row \(row["rowid"] as DatabaseValue)) holds a \(column) "
            + "that is not text (\(value)): an object SQLite's own statements did not write; "
            + "migrun reads no object by a guess at its name")
      }
      let sql: DatabaseValue = row["sql"]
      return SchemaObject(
        type: try text("type"), name: try text("name"), table: try text("tbl_name"),
        sql: sql.isNull ? nil : try text("sql"))  // none: SQLite's automatic indexes
    }
  }

  /// The rows of `Z_PRIMARYKEY`, by entity number.
  package func keyRows() throws -> [KeyRow] {
    try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { row in
      KeyRow(values: (0..<4).map { row[$0] })
    }
  }

  /// Writes `row` into `main`'s `Z_PRIMARYKEY` as it was read (replacing a row of its number).
  package func insertKeyRow(_ row: KeyRow) throws {
    try db.execute(
      sql: "INSERT OR REPLACE INTO main.Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
      arguments: StatementArguments(row.values))
  }

  /// Removes the `Z_PRIMARYKEY` row named `name` (any case): persistent history's key of a dropped table.
  package func deleteKeyRow(named name: String) throws {
    try db.execute(sql: "DELETE FROM Z_PRIMARYKEY WHERE upper(Z_NAME) = ?", arguments: [name])
  }

  /// Runs a statement the file itself holds for one of its objects (``SchemaObject/sql``, read from
  /// the source): the file's own table, index or trigger made again in another file.
  package func recreate(_ storedStatement: String) throws { try db.execute(sql: storedStatement) }

  /// Drops the table, trigger or view `name` (`type` as `sqlite_master` names it), if there.
  package func dropObject(_ type: String, named name: String) throws {
    try db.execute(sql: "DROP \(type.uppercased()) IF EXISTS \(Self.quoted(name))")
  }

  /// The rows of table `table` in schema `schema` (`main`, or an attached `src`).
  package func rowCount(of table: String, in schema: String? = nil) throws -> Int {
    try Int.fetchOne(db, sql: "SELECT count(*) FROM \(Self.qualified(table, schema))") ?? 0
  }

  /// The rows of `table` whose entity number `column` names an entity `numbers` does not have
  /// (`numbers`: the step's kept entities, source number → destination number).
  package func rowCount(of table: String, naming column: String, noEntityOf numbers: [Int: Int]) throws -> Int {
    try Int.fetchOne(
      db, sql: "SELECT count(*) FROM \(Self.quoted(table)) WHERE \(Self.removed(column, numbers))") ?? 0
  }

  /// The rows of `table` whose entity number `column` is one of `changed`.
  package func rowCount(of table: String, naming column: String, anyOf changed: [Int]) throws -> Int {
    guard !changed.isEmpty else { return 0 }
    return try Int.fetchOne(
      db,
      sql:
        "SELECT count(*) FROM \(Self.quoted(table)) WHERE \(column) IN (\(changed.map(String.init).joined(separator: ", ")))"
    ) ?? 0
  }

  /// Copies every row of `table` from the attached source (`src`) into the same table of `main`.
  package func copyAllRows(of table: String) throws {
    try db.execute(sql: "INSERT INTO main.\(Self.quoted(table)) SELECT * FROM src.\(Self.quoted(table))")
  }

  /// Deletes the rows of `main`'s `table` whose entity number `column` names no entity of
  /// `numbers` (entities a step removes); returns how many.
  package func deleteRows(of table: String, naming column: String, noEntityOf numbers: [Int: Int]) throws -> Int {
    try db.execute(sql: "DELETE FROM main.\(Self.quoted(table)) WHERE \(Self.removed(column, numbers))")
    return db.changesCount
  }

  /// Rewrites entity numbers `column` of `main`'s `table` from source to destination ones (one
  /// `CASE`: a chain of renumberings cannot collide).
  package func renumber(_ table: String, column: String, numbers: [Int: Int]) throws {
    let changes = numbers.filter { $0.key != $0.value }
    guard !changes.isEmpty else { return }
    let cases = changes.sorted { $0.key < $1.key }.map { "WHEN \($0.key) THEN \($0.value)" }.joined(separator: " ")
    try db.execute(
      sql: "UPDATE main.\(Self.quoted(table)) SET \(column) = CASE \(column) \(cases) ELSE \(column) END")
  }

  /// The condition that `column` names an entity the step removes (`numbers` has only the kept ones).
  static func removed(_ column: String, _ numbers: [Int: Int]) -> String {
    let kept = numbers.keys.sorted().map(String.init).joined(separator: ", ")
    return "\(column) IS NOT NULL AND \(column) NOT IN (\(kept.isEmpty ? "-1" : kept))"
  }

  static func quoted(_ name: String) -> String { "\"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"" }

  static func qualified(_ table: String, _ schema: String?) -> String {
    schema.map { "\($0).\(quoted(table))" } ?? quoted(table)
  }
}

// MARK: - Copying rows between layouts

extension StoreEdit {
  /// A statement of a bulk copy's plan (its `INSERT … SELECT` over the attached source, built from
  /// `StoreSchema`'s names by the migration layer's planner, which `migrun plan` shows), prepared
  /// once and run per key range.
  package struct KeyRangeCopy {
    let statement: Statement
    let db: Database

    /// Runs the copy for the source rows with `low < Z_PK <= high`, `constants` bound first.
    /// Returns the rows written.
    package func run(_ constants: [StoreValue], keysAbove low: Int64, upTo high: Int64) throws -> Int {
      try statement.execute(
        arguments: StatementArguments(
          constants.map(StoreValueCoding.databaseValue) + [low.databaseValue, high.databaseValue]))
      return db.changesCount
    }
  }

  /// Prepares a bulk copy's statement `sql` (see ``KeyRangeCopy``).
  package func prepareCopy(_ sql: String) throws -> KeyRangeCopy {
    KeyRangeCopy(statement: try db.makeStatement(sql: sql), db: db)
  }

  /// Runs a bulk copy's join-table statement (`INSERT … SELECT` over the attached source, from the plan).
  package func copyJoins(_ sql: String) throws { try db.execute(sql: sql) }

  /// The rows of `table` in `schema` that `condition` (a `StoreSchema` row predicate) holds for.
  package func rowCount(of table: String, in schema: String, where condition: String) throws -> Int {
    try Int.fetchOne(db, sql: "SELECT count(*) FROM \(schema).\(table) WHERE \(condition)") ?? 0
  }

  /// The largest `Z_PK` of `table` in `schema` (0 when empty).
  package func largestKey(of table: String, in schema: String) throws -> Int64 {
    try Int64.fetchOne(db, sql: "SELECT max(Z_PK) FROM \(schema).\(table)") ?? 0
  }

  /// The `rows`-th `Z_PK` of `table` in `schema` above `low`, in key order; nil when fewer rows
  /// follow `low`. A range of keys up to it holds `rows` rows however sparse the keys are.
  package func key(after low: Int64, rows: Int64, of table: String, in schema: String) throws -> Int64? {
    try Int64.fetchOne(
      db, sql: "SELECT Z_PK FROM \(schema).\(table) WHERE Z_PK > ? ORDER BY Z_PK LIMIT 1 OFFSET ?",
      arguments: [low, max(0, rows - 1)])
  }

  /// Raises `layout`'s `Z_PRIMARYKEY.Z_MAX` to the largest key of `table` in the attached source,
  /// so no key the source used is handed out again.
  package func keepKeys(of layout: StoreSchema.EntityLayout, usedBy table: String) throws {
    try db.execute(
      sql:
        "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, (SELECT coalesce(max(Z_PK), 0) FROM src.\(table))) WHERE Z_ENT = ?",
      arguments: [layout.number])
  }

  /// Creates `schema`'s indexes (after the rows are in).
  package func createIndexes(of schema: StoreSchema) throws { try SQLiteStore.createIndexes(db, schema) }

  /// Runs `body` with a row loop's two statements: `select` prepared on a read-only connection of
  /// its own to the file at `sourcePath` (`constants` bound), `insert` on this edit's connection —
  /// driven through SQLite's C API by the caller (or by C, `RawStatement.handle`). `readWait`: how
  /// long a read of a store another process holds waits, as the attached source's does.
  package func rowLoop<T>(
    readingFrom sourcePath: String, readWait: Double, select: String, constants: [StoreValue], insert: String,
    _ body: (_ select: RawStatement, _ insert: RawStatement) throws -> T
  ) throws -> T {
    let sourceQueue = try DatabaseQueue(
      path: sourcePath, configuration: SQLiteStore.configuration(readOnly: true, readWait: readWait))
    defer { try? sourceQueue.close() }
    return try sourceQueue.read { source in
      let selectStatement = try source.makeStatement(sql: select)
      try selectStatement.setArguments(StatementArguments(constants.map(StoreValueCoding.databaseValue)))
      let insertStatement = try db.makeStatement(sql: insert)
      guard let sourceConnection = source.sqliteConnection, let connection = db.sqliteConnection else {
        throw StoreError(.sqlite, reason: "the store is closed")
      }
      return try body(
        RawStatement(handle: selectStatement.sqliteStatement, connection: sourceConnection),
        RawStatement(handle: insertStatement.sqliteStatement, connection: connection))
    }
  }
}

// MARK: - A bulk copy's statements

extension StoreEdit {
  /// The statement copying the rows of `sourceTable` (attached as `src`) that `sourceRows` holds
  /// for, in a key range (`Z_PK > ? AND Z_PK <= ?`, bound after any constants of `values`), into
  /// `columns` of `main`'s `table`, each given by the SQL expression over the source row in `values`.
  package static func copyStatement(
    into table: String, columns: [String], values: [String], from sourceTable: String, where sourceRows: String
  ) -> String {
    """
    INSERT INTO main.\(table) (\(columns.joined(separator: ", ")))
    SELECT \(values.joined(separator: ", ")) FROM src.\(sourceTable)
    WHERE \(sourceRows) AND Z_PK > ? AND Z_PK <= ?
    """
  }

  /// The statement copying the join rows of `sourceTable` (attached as `src`) into `main`'s join
  /// table `table` (`columns` from `values`): pairs whose both ends are already in the destination —
  /// `sourceOwn` a row of `owner`, `sourceOther` one of `target` (laid out by `schema`).
  package static func joinCopyStatement(
    into table: String, columns: [String], values: [String], from sourceTable: String,
    own sourceOwn: String, in owner: StoreSchema.EntityLayout, other sourceOther: String,
    in target: StoreSchema.EntityLayout, of schema: StoreSchema
  ) -> String {
    """
    INSERT OR IGNORE INTO main.\(table) (\(columns.joined(separator: ", ")))
    SELECT \(values.joined(separator: ", ")) FROM src.\(sourceTable)
    WHERE \(sourceOwn) IN (SELECT Z_PK FROM main.\(owner.table) WHERE \(schema.rowPredicate(owner)))
    AND \(sourceOther) IN (SELECT Z_PK FROM main.\(target.table) WHERE \(schema.rowPredicate(target)))
    """
  }

  /// A row loop's read of the source (its own connection): `values` of the rows of `sourceTable`
  /// that `sourceRows` holds for, by key.
  package static func rowLoopSelect(values: [String], from sourceTable: String, where sourceRows: String) -> String {
    """
    SELECT \(values.joined(separator: ", ")) FROM \(sourceTable)
    WHERE \(sourceRows) ORDER BY Z_PK
    """
  }

  /// A row loop's insert of one row into `columns` of `main`'s `table`, every value bound.
  package static func rowLoopInsert(into table: String, columns: [String]) -> String {
    """
    INSERT INTO main.\(table) (\(columns.joined(separator: ", ")))
    VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))
    """
  }
}

extension StoreEdit {
  /// A to-one's key and entity columns in a bulk copy, as SQL over the source row: `key` and
  /// `entity` are the source's columns (`entity` nil: its target is one entity, numbered
  /// `soleNumber`). `numbers` maps the target's source entity numbers to destination ones; any
  /// other becomes NULL, and the key with it. `unchanged`: `numbers` maps every kind to itself.
  package static func toOneCopy(
    key: String, entity: String?, soleNumber: Int, numbers: [(Int, Int)], unchanged: Bool
  ) -> (key: String, entity: String) {
    let oldEntity = entity ?? "\(soleNumber)"
    let mappedEntity = mapped(oldEntity, numbers)
    return (
      unchanged ? key : "CASE WHEN \(mappedEntity) IS NULL THEN NULL ELSE \(key) END",
      unchanged && entity != nil ? oldEntity : mappedEntity
    )
  }

  private static func mapped(_ entity: String, _ numbers: [(Int, Int)]) -> String {
    numbers.isEmpty
      ? "NULL" : "CASE \(entity) \(numbers.map { "WHEN \($0.0) THEN \($0.1)" }.joined(separator: " ")) END"
  }
}
