import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

/// Salvage reads only what SQLite would read as the store, and places a value only where it is
/// proven: crashed writers' leftovers and pages past the database's end are never taken for rows,
/// a row's missing values are its columns' defaults, and a row set aside is never "nothing lost".
@Suite struct SalvageProofTests {
  static let sampleStore = SalvageCommandTests.sampleStore

  /// What SQLite reads of `store` (with its `-wal` or hot `-journal`), on a copy: `sql`'s integers.
  static func sqliteReads(_ store: URL, _ sql: String, in folder: TemporaryDirectory) throws -> [Int] {
    let copy = try folder.folder(UUID().uuidString).appendingPathComponent(store.lastPathComponent)
    for suffix in ["", "-wal", "-journal"] where FileManager.default.fileExists(atPath: store.path + suffix) {
      try FileManager.default.copyItem(atPath: store.path + suffix, toPath: copy.path + suffix)
    }
    let queue = try DatabaseQueue(path: copy.path)
    defer { try? queue.close() }
    return try queue.read { db in try Int.fetchAll(db, sql: sql) }
  }

  static func salvaged(_ store: URL, in folder: TemporaryDirectory, _ more: [String] = []) throws -> (
    URL, MigrunProcess.Result
  ) {
    let out = folder.url.appendingPathComponent(UUID().uuidString + ".sqlite")
    return (out, try MigrunProcess.run(["salvage", store.path, "--out", out.path] + more))
  }

  /// A writer in WAL mode deleted most pages (secure delete off, as on a device) and vacuumed the
  /// store smaller, then was killed before a checkpoint: the last commit frame says the store is
  /// 159 pages; the main file's pages past that still hold the deleted rows. SQLite reads the
  /// 1,000 rows left; so does salvage (it took the leftover leaves for orphans: 2,779 "written",
  /// deleted objects back, "Nothing lost").
  @Test func pagesPastTheLastCommitsSizeAreNotTheStores() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    try SQLiteShell.commitIntoWAL(
      store,
      """
      PRAGMA secure_delete = OFF;
      DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE;
      DELETE FROM ZPAGE WHERE Z_PK > 1000;
      UPDATE ZBOOK SET ZPAGESCOUNT = (SELECT count(*) FROM ZPAGE WHERE ZPAGE.ZBOOK = ZBOOK.Z_PK);
      PRAGMA incremental_vacuum;
      """)
    let size = try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int ?? 0
    let sqlite = try Self.sqliteReads(
      store, "SELECT count(*) FROM ZPAGE UNION ALL SELECT * FROM pragma_page_count", in: folder)
    #expect(sqlite.count == 2 && sqlite[0] == 1000 && sqlite[1] * 4096 < size, "the premise: \(sqlite), \(size) bytes")
    let (out, result) = try Self.salvaged(store, in: folder)
    #expect(
      result.status == 0 && result.stdout.contains("Page:          1000 written"), "\(result.stdout)\(result.stderr)")
    let saved = try DatabaseQueue(path: out.path).read { db in
      try Int.fetchAll(db, sql: "SELECT count(*) FROM ZPAGE UNION ALL SELECT ifnull(max(Z_PK), 0) FROM ZPAGE")
    }
    #expect(saved == [1000, 1000], "the deleted pages' rows stay deleted: \(saved)")
    let exports = try [store, out].map { try MigrunProcess.run(["export", $0.path]).stdout }
    #expect(!exports[0].isEmpty && exports[0] == exports[1], "the salvaged store is what SQLite reads")
  }
}

extension SalvageProofTests {
  /// `ALTER TABLE … ADD COLUMN … DEFAULT` leaves the older rows shorter than the table: SQLite reads
  /// their missing column as the default. Salvage wrote NULL there ("Nothing lost", a value changed).
  @Test func aShortRowsMissingColumnsAreItsDefaults() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.writeWithoutTransaction { db in
      try db.execute(
        sql: """
          CREATE TABLE ZW2 (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAGE INTEGER, ZALIAS VARCHAR);
          INSERT INTO ZW2 SELECT Z_PK, Z_ENT, Z_OPT, ZAGE, ZALIAS FROM ZWRITER;
          DROP TABLE ZWRITER;
          ALTER TABLE ZW2 RENAME TO ZWRITER;
          CREATE INDEX ZWRITER_Z_ENT_INDEX ON ZWRITER (Z_ENT);
          CREATE UNIQUE INDEX Z_Author_UNIQUE_alias ON ZWRITER (ZALIAS COLLATE BINARY ASC);
          ALTER TABLE ZWRITER ADD COLUMN ZSITEURL VARCHAR DEFAULT 'https://example.org';
          """)
    }
    try queue.close()
    let expected = try Self.sqliteReads(
      store, "SELECT count(*) FROM ZWRITER WHERE ZSITEURL = 'https://example.org'", in: folder)
    #expect(expected == [2], "the premise: SQLite reads the default \(expected)")
    let (out, result) = try Self.salvaged(store, in: folder)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let urls = try DatabaseQueue(path: out.path).read { db in
      try String?.fetchAll(db, sql: "SELECT ZSITEURL FROM ZWRITER ORDER BY Z_PK")
    }
    #expect(urls == ["https://example.org", "https://example.org"], "\(urls)")
  }
}

extension SalvageProofTests {
  /// `path` with each of `pages` overwritten with bytes no page has.
  static func overwrite(_ pages: [Int], of store: URL, pageSize: Int = 4096) throws {
    let handle = try FileHandle(forWritingTo: store)
    for page in pages {
      try handle.seek(toOffset: UInt64((page - 1) * pageSize))
      try handle.write(contentsOf: Data((0..<pageSize).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
    }
    try handle.close()
  }

  /// The schema lost (every page of `sqlite_master` overwritten): persistent history's rows have no
  /// table the model names. A string row (`ATRANSACTIONSTRING`: NULL, 16003, NULL, text — four values,
  /// as `Z_PRIMARYKEY` has) was taken for a `Z_PRIMARYKEY` row by its count of values: the two whose
  /// keys a real entity's row had were dropped unsaid, a third written as an entity numbered 20000
  /// named "16003"; and "Nothing lost" with 5,469 rows kept aside. Now every history row is kept
  /// aside, `Z_PRIMARYKEY` is the store's own, and the report says what was kept aside.
  @Test func aRowOfATableTheModelDoesNotNameIsNeverPlacedByItsCountOfValues() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    let queue = try DatabaseQueue(path: store.path)
    let (schemaPages, keys, history) = try queue.write { db in
      try db.execute(sql: "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (20000, 16003, 1, 'x')")
      return (
        try Int.fetchAll(db, sql: "SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'"),
        try Row.fetchAll(db, sql: "SELECT * FROM Z_PRIMARYKEY ORDER BY Z_ENT"),
        try Int.fetchOne(
          db,
          sql: "SELECT (SELECT count(*) FROM ACHANGE) + (SELECT count(*) FROM ATRANSACTION) + "
            + "(SELECT count(*) FROM ATRANSACTIONSTRING)") ?? 0
      )
    }
    try queue.close()
    try Self.overwrite(schemaPages, of: store)
    let (out, result) = try Self.salvaged(store, in: folder)
    #expect(result.stdout.contains("schema lost"), "the premise: \(result.stdout)\(result.stderr)")
    #expect(result.status == 1 && !result.stdout.contains("Nothing lost"), "\(result.stdout)")
    #expect(
      result.stdout.contains("\(history) rows kept aside in MIGRUN_SALVAGED_ROWS: their table is not known"),
      "every history row kept aside and said: \(result.stdout)")
    let (written, aside) = try DatabaseQueue(path: out.path).read { db in
      (
        try Row.fetchAll(db, sql: "SELECT * FROM Z_PRIMARYKEY ORDER BY Z_ENT"),
        try Int.fetchOne(db, sql: "SELECT count(*) FROM MIGRUN_SALVAGED_ROWS") ?? 0
      )
    }
    #expect(written == keys, "Z_PRIMARYKEY is the store's own: \(written)")
    #expect(aside == history, "\(aside) of \(history) history rows kept aside")
    let json = try MigrunProcess.run([
      "salvage", store.path, "--out", folder.url.appendingPathComponent("json.sqlite").path, "--json",
    ]).jsonLine("salvage")
    #expect(json["lost"] as? Bool == true, "\(json)")
    #expect((json["report"] as? [String: Any])?["rowsOfNoTable"] as? Int == history, "\(json)")
  }
}

extension SalvageProofTests {
  /// 1,001 pages deleted (secure delete off, as on a device), then the freelist's trunk page
  /// overwritten: the freed leaves, still holding the deleted rows, are named by no tree and no
  /// freelist. SQLite reads the 3,969 pages left — their keys' places are on the table's own
  /// readable leaves. Salvage took the freed leaves for orphans (4,934 "written", "Nothing lost").
  @Test func aFreedPageTheFreelistNoLongerNamesKeepsItsRowsDeleted() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    let queue = try DatabaseQueue(path: store.path)
    let trunk = try queue.writeWithoutTransaction { db in
      try db.execute(
        sql: """
          PRAGMA secure_delete = OFF;
          DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE;
          DELETE FROM ZPAGE WHERE Z_PK BETWEEN 2000 AND 3000;
          UPDATE ZBOOK SET ZPAGESCOUNT = (SELECT count(*) FROM ZPAGE WHERE ZPAGE.ZBOOK = ZBOOK.Z_PK);
          """)
      return try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE") == 3969 ? 1 : 0
    }
    try queue.close()
    #expect(trunk == 1, "the premise: 3969 pages left")
    let header = try Data(contentsOf: store).prefix(100)
    let first = header[32...35].reduce(0) { $0 << 8 | Int($1) }
    #expect(first > 1, "the premise: a freelist")
    let intact = try folder.folder("intact").appendingPathComponent("intact.sqlite")
    try FileManager.default.copyItem(at: store, to: intact)
    try Self.overwrite([first], of: store)
    let sqlite = try Self.sqliteReads(store, "SELECT count(*) FROM ZPAGE", in: folder)
    #expect(sqlite == [3969], "the premise: SQLite reads \(sqlite)")
    let (out, result) = try Self.salvaged(store, in: folder)
    #expect(result.stdout.contains("Page:          3969 written"), "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("rows on pages no table leads to left out"), "named: \(result.stdout)")
    let keys = try DatabaseQueue(path: out.path).read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE WHERE Z_PK BETWEEN 2000 AND 3000")
    }
    #expect(keys == 0, "the deleted pages stay deleted: \(String(describing: keys))")
    let exports = try [intact, out].map { try MigrunProcess.run(["export", $0.path]).stdout }
    #expect(!exports[0].isEmpty && exports[0] == exports[1], "the salvaged store is the store before the damage")
  }
}

extension SalvageProofTests {
  /// A `-wal` holding a committed transaction whose header's checksum fails: SQLite reads none of
  /// its frames, and neither does salvage — which said nothing of them ("Nothing lost", exit 0).
  /// Now the frames are named, and what they committed is said lost.
  @Test func aWALWhoseHeaderDoesNotCheckIsNamedUnread() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    try SQLiteShell.commitIntoWAL(store, "UPDATE ZPAGE SET ZNUMBER = -7 WHERE Z_PK < 100;")
    let wal = URL(fileURLWithPath: store.path + "-wal")
    var bytes = try Data(contentsOf: wal)
    #expect(bytes.count > 32 + 4120, "the premise: frames in the -wal")
    bytes[25] ^= 0xFF
    try bytes.write(to: wal)
    let frames = (bytes.count - 32) / (24 + 4096)
    let sqlite = try Self.sqliteReads(store, "SELECT count(*) FROM ZPAGE WHERE ZNUMBER = -7", in: folder)
    #expect(sqlite == [0], "the premise: SQLite reads none of the log: \(sqlite)")
    let (out, result) = try Self.salvaged(store, in: folder, ["--json"])
    let line = try result.jsonLine("salvage")
    #expect(line["lost"] as? Bool == true, "\(result.stdout)\(result.stderr)")
    #expect((line["report"] as? [String: Any])?["walFramesUnread"] as? Int == frames, "\(result.stdout)")
    let saved = try DatabaseQueue(path: out.path).read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE WHERE ZNUMBER = -7")
    }
    #expect(saved == 0, "as SQLite reads it: \(String(describing: saved))")
    let (_, text) = try Self.salvaged(store, in: folder)
    #expect(
      text.status == 1 && text.stdout.contains("the -wal's header does not check: its \(frames) frames not read"),
      "\(text.stdout)")
    #expect(!text.stdout.contains("Nothing lost"), "\(text.stdout)")
  }
}

extension SalvageProofTests {
  /// A table's defaults are read by running the file's own `CREATE TABLE` in a database in memory:
  /// only that one statement (SQL after it never runs — an `ATTACH` would make a file), no query
  /// (`AS SELECT` may never end), no default past a megabyte (the others still read).
  @Test func aSchemaStatementRunsAloneAndItsDefaultsAreBounded() {
    let attached = FileManager.default.temporaryDirectory.appendingPathComponent("migrun-\(UUID().uuidString)").path
    let columns = ["Z_PK", "ZY", "ZZ", "ZW"]
    let plain = "CREATE TABLE ZX (Z_PK INTEGER PRIMARY KEY, ZY VARCHAR DEFAULT 'a', ZZ INTEGER DEFAULT -3, ZW)"
    #expect(SalvageRead.defaults(of: plain, columns: columns) == [nil, .text("a"), .integer(-3), nil])
    let after = "CREATE TABLE ZX (Z_PK INTEGER PRIMARY KEY, ZY DEFAULT 7); ATTACH DATABASE '\(attached)' AS y"
    #expect(SalvageRead.defaults(of: after, columns: columns) == [nil, nil, nil, nil])
    #expect(!FileManager.default.fileExists(atPath: attached), "nothing after the statement ran")
    let query = "CREATE TABLE ZX AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c"
    #expect(SalvageRead.defaults(of: query, columns: ["n"]) == [nil])
    let big = "CREATE TABLE ZX (Z_PK INTEGER PRIMARY KEY, ZY DEFAULT (zeroblob(100000000)), ZZ DEFAULT 'z', ZW)"
    #expect(SalvageRead.defaults(of: big, columns: columns) == [nil, nil, .text("z"), nil])
  }
}

extension SalvageProofTests {
  /// A page's content spilling onto an overflow page that is then overwritten: the row's record
  /// cannot be read, its key can. The report said "1 damaged rows … (keys unreadable)" and Page lost
  /// nothing; now Page 17 is lost by its key, in the text and the JSON.
  @Test func aRowWhoseOverflowChainIsBrokenIsLostByItsKey() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    let queue = try DatabaseQueue(path: store.path)
    let overflow = try queue.write { db in
      try db.execute(sql: "UPDATE ZPAGE SET ZCONTENT = randomblob(10000) WHERE Z_PK = 17")
      return try Int.fetchAll(
        db, sql: "SELECT pageno FROM dbstat WHERE name = 'ZPAGE' AND pagetype = 'overflow' ORDER BY pageno")
    }
    try queue.close()
    #expect(overflow.count == 2, "the premise: the row spills onto two pages \(overflow)")
    try Self.overwrite(Array(overflow.prefix(1)), of: store)
    let (_, result) = try Self.salvaged(store, in: folder)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("Page:          4969 written, 1 lost (keys 17)"), "\(result.stdout)")
    let (_, json) = try Self.salvaged(store, in: folder, ["--json"])
    let report = try #require(try json.jsonLine("salvage")["report"] as? [String: Any], "\(json.stdout)")
    let page = (report["entities"] as? [String: [String: Any]])?["Page"]
    #expect(page?["lost"] as? Int == 1 && page?["lostKeys"] as? [[Int]] == [[17, 17]], "\(json.stdout)")
  }
}

extension SalvageProofTests {
  /// A crashed writer's uncommitted rows in pages SQLite never journals — freelist leaves it reused
  /// (their content is free space) and pages it added past the store's end — beside a hot journal:
  /// rolled back, those pages are free again or past the end, and salvage reads what SQLite reads
  /// after its rollback: the 3,969 committed pages, none of the 3,969 uncommitted copies.
  @Test func aCrashedWritersRowsInFreedAndAddedPagesAreNotTheStores() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    try DatabaseQueue(path: store.path).writeWithoutTransaction { db in
      try db.execute(
        sql: """
          DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE;
          DELETE FROM ZPAGE WHERE Z_PK BETWEEN 2000 AND 3000;
          UPDATE ZBOOK SET ZPAGESCOUNT = (SELECT count(*) FROM ZPAGE WHERE ZPAGE.ZBOOK = ZBOOK.Z_PK);
          """)
    }
    let intact = try folder.folder("intact").appendingPathComponent("intact.sqlite")
    try FileManager.default.copyItem(at: store, to: intact)
    try SQLiteShell.crashMidTransaction(
      store,
      "DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_INSERT;\n"
        + "INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZCONTENT) "
        + "SELECT Z_PK + 10000, Z_ENT, Z_OPT, -5, ZCONTENT FROM ZPAGE;")
    try HotJournalTests.expectHot(store, intact: intact)
    let sqlite = try Self.sqliteReads(store, "SELECT count(*) FROM ZPAGE", in: folder)
    #expect(sqlite == [3969], "the premise: SQLite reads \(sqlite) after its rollback")
    let (out, result) = try Self.salvaged(store, in: folder)
    #expect(result.status == 0 && result.stdout.contains("Page:          3969 written"), "\(result.stdout)")
    let exports = try [intact, out].map { try MigrunProcess.run(["export", $0.path]).stdout }
    #expect(!exports[0].isEmpty && exports[0] == exports[1], "the salvaged store is the committed one")
  }
}

extension SalvageProofTests {
  /// A log checkpointed and restarted: its header's new salts, one new transaction's frame, then the
  /// frames of the transaction before (older salts, already in the main file) — killed before a
  /// checkpoint. SQLite reads the new frame and none of the older ones; so does salvage.
  @Test func framesOfAnOlderLogAreNotRead() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    try SQLiteShell.commitIntoWAL(
      store,
      """
      UPDATE ZPAGE SET ZNUMBER = -1 WHERE Z_PK % 3 = 0;
      PRAGMA wal_checkpoint(PASSIVE);
      UPDATE ZPAGE SET ZNUMBER = -2 WHERE Z_PK = 5;
      """)
    let sql = "SELECT count(*) FROM ZPAGE WHERE ZNUMBER = -1 UNION ALL SELECT ZNUMBER FROM ZPAGE WHERE Z_PK IN (5, 6)"
    let sqlite = try Self.sqliteReads(store, sql, in: folder)
    #expect(sqlite == [1656, -2, -1], "the premise: \(sqlite)")
    let (out, result) = try Self.salvaged(store, in: folder)
    #expect(
      result.status == 0 && result.stdout.contains("1 committed frames of the -wal applied"),
      "\(result.stdout)\(result.stderr)")
    let saved = try DatabaseQueue(path: out.path).read { db in try Int.fetchAll(db, sql: sql) }
    #expect(saved == sqlite, "\(saved)")
  }
}
