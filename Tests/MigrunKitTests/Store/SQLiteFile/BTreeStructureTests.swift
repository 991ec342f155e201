import Foundation
import GRDB
import TestSupport
import Testing

@testable import MigrunStore

/// The structure pass a migration's integrity watch takes first (`BTreeStructure`): sound on every
/// real store, and never "sound" where SQLite's own quick check finds damage.
@Suite struct BTreeStructureTests {
  /// Whether the watch's first pass finds the file at `url` sound (`StoreCheck.isSound`); a schema
  /// SQLite cannot read is "not sure", as there.
  static func isSound(_ url: URL) -> Bool {
    do {
      let queue = try DatabaseQueue(path: url.path)
      defer { try? queue.close() }
      let bytes = try Data(contentsOf: url)
      return try queue.read { db in try bytes.withUnsafeBytes { try StoreCheck.isSound(db, file: $0) } }
    } catch {
      return false
    }
  }

  /// What SQLite's quick check says of the file (empty: no damage).
  static func sqliteFindings(_ url: URL) -> [String] {
    do {
      let queue = try DatabaseQueue(path: url.path)
      defer { try? queue.close() }
      return try StoreCheck.sqliteProblems(queue)
    } catch {
      return ["\(error)"]
    }
  }

  /// A store with what real stores hold: several tables and indexes, rows spilling onto overflow
  /// pages, a freelist left by deletes, tall trees.
  /// `autoVacuum`: laid out as Core Data lays its stores out (`auto_vacuum = 2`: pointer-map pages).
  static func makeStore(at url: URL, autoVacuum: Bool) throws {
    let queue = try DatabaseQueue(path: url.path)
    if autoVacuum { try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA auto_vacuum = 2") } }
    try queue.write { db in
      try db.execute(
        sql: """
          CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR, ZDATA BLOB, ZN INTEGER);
          CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (ZNAME);
          CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR NOT NULL);
          CREATE TABLE ZKEYED (ZA VARCHAR PRIMARY KEY, ZB BLOB) WITHOUT ROWID;
          """)
      for key in 1...4000 {
        let spill = key % 97 == 0 ? 9000 : key % 13 == 0 ? 2000 : 20
        try db.execute(
          sql: "INSERT INTO ZITEM VALUES (?, 2, 1, ?, zeroblob(?), ?)",
          arguments: [key, "name \(key) " + String(repeating: "x", count: key % 50), spill, key * 7])
        if key % 4 == 0 {
          try db.execute(sql: "INSERT INTO ZTAG VALUES (?, 3, 1, ?)", arguments: [key, "tag \(key)"])
          try db.execute(
            sql: "INSERT INTO ZKEYED VALUES (?, randomblob(?))", arguments: ["k\(key)", key % 300 == 0 ? 3000 : 40])
        }
      }
      try db.execute(sql: "DELETE FROM ZITEM WHERE Z_PK % 5 = 0 OR Z_PK BETWEEN 1000 AND 1400")
    }
    try queue.close()
  }

  @Test func everyFixtureStoreIsSound() throws {
    let folder = try TemporaryDirectory()
    let stores = try FileManager.default.subpathsOfDirectory(atPath: Fixtures.coreData.path)
      .filter { $0.hasSuffix(".sqlite") }
    #expect(stores.count >= 20)
    for relative in stores {
      let copy = try writableCopyOfFixture(relative, into: folder)
      for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: Fixtures.url(relative).path + suffix)
      {
        try FileManager.default.copyItem(atPath: Fixtures.url(relative).path + suffix, toPath: copy.path + suffix)
      }
      // The log's transactions moved into the file (the watch reads a snapshot of such a store).
      let queue = try DatabaseQueue(path: copy.path)
      _ = try queue.writeWithoutTransaction { try $0.checkpoint(.truncate) }
      try queue.close()
      #expect(Self.sqliteFindings(copy) == [], "\(relative)")
      #expect(Self.isSound(copy), "\(relative)")
    }
  }

  @Test(arguments: [false, true]) func aStoreWithOverflowPagesAFreelistAndIndexesIsSound(autoVacuum: Bool) throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("items.sqlite")
    try Self.makeStore(at: store, autoVacuum: autoVacuum)
    let freelist = try DatabaseQueue(path: store.path).read { try Int.fetchOne($0, sql: "PRAGMA freelist_count") }
    #expect((freelist ?? 0) > 10)
    #expect(Self.isSound(store))
    let bytes = try Data(contentsOf: store)
    let trees = try DatabaseQueue(path: store.path).read { db in
      try Row.fetchAll(db, sql: "SELECT type, rootpage, sql FROM sqlite_master").map {
        (type: ($0[0] as String?) ?? "", rootPage: ($0[1] as Int?) ?? 0, sql: $0[2] as String?)
      }
    }
    #expect(bytes.withUnsafeBytes { BTreeStructure.check($0, trees: BTreeStructure.trees(ofSchema: trees)) } == nil)
  }

  /// A row breaking a `NOT NULL` column is SQLite's to find: the column is asked of SQLite, not read
  /// off the statement, where `NOT` and `NULL` may stand apart with a comment between them.
  @Test func aNullInANotNullColumnWrittenApartIsNotSound() throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("notnull.sqlite")
    let queue = try DatabaseQueue(path: store.path)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, ZTITLE VARCHAR)")
      try db.execute(sql: "INSERT INTO ZTAG VALUES (1, NULL)")
      try db.execute(sql: "PRAGMA writable_schema = ON")
      try db.execute(
        sql: "UPDATE sqlite_master SET sql = ? WHERE name = 'ZTAG'",
        arguments: ["CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, ZTITLE VARCHAR NOT /* apart */ NULL)"])
    }
    try queue.close()
    #expect(Self.sqliteFindings(store) != [])
    #expect(!Self.isSound(store))
  }

  /// A file past the pass's window (8,192 pages) read through a map it lets go of as it walks: the
  /// pages it reads after letting go are the file's again, and it is still sound.
  @Test func aMappedFileLetGoOfAsItIsWalkedIsStillSound() throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("large.sqlite")
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in
      try db.execute(sql: "CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZDATA BLOB)")
      for key in 1...20000 {
        try db.execute(sql: "INSERT INTO ZITEM VALUES (?, 1, randomblob(?))", arguments: [key, 1500 + key % 3000])
      }
    }
    let pages = try queue.read { try Int.fetchOne($0, sql: "PRAGMA page_count") } ?? 0
    #expect(pages > 2 * BTreeStructure.window)
    let descriptor = open(store.path, O_RDONLY)
    defer { close(descriptor) }
    let size = pages * 4096
    let mapped = try #require(mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0))
    #expect(mapped != MAP_FAILED)
    defer { munmap(mapped, size) }
    let sound = try queue.read { db in
      try StoreCheck.isSound(db, file: UnsafeRawBufferPointer(start: mapped, count: size), mapped: true)
    }
    #expect(sound)
    try queue.close()
  }

  /// Pages overwritten, zeroed, swapped or with one byte changed — in 600 damaged copies, every one
  /// SQLite's quick check finds damaged is "not sure" to the pass: it never vouches for a file
  /// SQLite would refuse.
  @Test(arguments: [false, true]) func neverSoundWhereSQLiteFindsDamage(autoVacuum: Bool) throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("items.sqlite")
    try Self.makeStore(at: store, autoVacuum: autoVacuum)
    let intact = try [UInt8](Data(contentsOf: store))
    let pageSize = 4096
    let pages = intact.count / pageSize
    var random = SeededRandom(seed: autoVacuum ? 61 : 60)
    var damagedBySQLite = 0
    var missed: [String] = []
    for round in 0..<600 {
      var bytes = intact
      let page = Int(random.next() % UInt64(pages))
      let start = page * pageSize
      let what: String
      switch round % 5 {
      case 0:
        for offset in start..<start + pageSize { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
        what = "page \(page + 1) overwritten"
      case 1:
        for offset in start..<start + pageSize { bytes[offset] = 0 }
        what = "page \(page + 1) zeroed"
      case 2:
        let offset = start + Int(random.next() % 64)
        bytes[offset] ^= UInt8(truncatingIfNeeded: random.next() | 1)
        what = "page \(page + 1) byte \(offset - start) of its head changed"
      case 3:
        let offset = start + Int(random.next() % UInt64(pageSize))
        bytes[offset] ^= UInt8(truncatingIfNeeded: random.next() | 1)
        what = "page \(page + 1) byte \(offset - start) changed"
      default:
        let other = Int(random.next() % UInt64(pages)) * pageSize
        for offset in 0..<pageSize { bytes.swapAt(start + offset, other + offset) }
        what = "pages \(page + 1) and \(other / pageSize + 1) swapped"
      }
      let copy = folder.url.appendingPathComponent("damaged\(round).sqlite")
      try Data(bytes).write(to: copy)
      if !Self.sqliteFindings(copy).isEmpty {
        damagedBySQLite += 1
        if Self.isSound(copy) { missed.append(what + ": " + Self.sqliteFindings(copy).joined(separator: "; ")) }
      }
      try FileManager.default.removeItem(at: copy)
    }
    #expect(damagedBySQLite > 200)
    #expect(missed == [])
  }
}
