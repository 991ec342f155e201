import Foundation
import GRDB
import TestSupport
import Testing

@testable import MigrunStore

/// Stores crafted to crash or hang migrun (issue 55): each command ends, with exit 1 and an error
/// naming what is wrong where the store cannot be worked on, and no signal.
@Suite struct HostileStoreTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let moodyStore = "objcio-core-data-moody/stores/Moody 2.moody.sqlite"

  /// A writable copy of Moody 2's store with `change` made to it.
  static func store(in folder: TemporaryDirectory, _ change: (Database) throws -> Void) throws -> URL {
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.write(change)
    try queue.close()
    return store
  }

  /// A row whose `Z_ENT` is text trapped `check` (SIGILL) on a typed read of the row value: it is a
  /// finding, the value shown as the store holds it.
  @Test func aTextEntityNumberIsAFindingOfCheck() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(in: folder) { db in
      try db.execute(sql: "UPDATE ZMOOD SET Z_ENT = 'abc' WHERE Z_PK = (SELECT min(Z_PK) FROM ZMOOD)")
    }
    let result = try MigrunProcess.run(["check", store.path, "--model", Self.moody])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(
      result.stdout.contains(
        "unknown-entity-number: ZMOOD: 1 row with Z_ENT \"abc\", which no entity of the table has"),
      "\(result.stdout)\(result.stderr)")
  }

  /// A NULL in an attribute the model requires is a finding of `check` (a NaN date written to SQLite
  /// became one, and `check` called the store clean).
  @Test func checkFindsANullWhereTheModelRequiresAValue() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(in: folder) { db in
      try db.execute(sql: "UPDATE ZMOOD SET ZDATE = NULL WHERE Z_PK = (SELECT min(Z_PK) FROM ZMOOD)")
    }
    let result = try MigrunProcess.run(["check", store.path, "--model", Self.moody])
    #expect(result.status == 1)
    #expect(
      result.stdout.contains("required-value-null: Mood.date (Date): 1 value NULL, where the model requires a value"),
      "\(result.stdout)")
  }

  /// A key of Int64.max overflowed `copy --type xml` while `check` called the store clean: `check`
  /// names it, and the copy is refused by name (the new store records a next key, which no number holds).
  @Test func theLargestKeyIsAFindingAndNoOverflow() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(in: folder) { db in
      try db.execute(sql: "UPDATE ZMOOD SET Z_PK = 9223372036854775807 WHERE Z_PK = (SELECT max(Z_PK) FROM ZMOOD)")
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_NAME = 'Mood'")
    }
    let check = try MigrunProcess.run(["check", store.path, "--model", Self.moody])
    #expect(check.status == 1)
    #expect(check.stdout.contains("primary-key-exhausted: Mood: a key is 9223372036854775807"), "\(check.stdout)")
    let out = folder.url.appendingPathComponent("Moody.storedata")
    let copy = try MigrunProcess.run(["copy", store.path, out.path, "--type", "xml", "--model", Self.moody])
    #expect(copy.status == 1, "\(copy.stdout)\(copy.stderr)")
    #expect(copy.stderr.contains("largest key is 9223372036854775807, the largest a key can be"), "\(copy.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out.path))
  }

  /// A 200-byte metadata property list whose arrays hold the next one twice, 45 deep (2^45 values
  /// to any walk): `inspect --json` and `copy` hung, `migrate --dry-run` and `salvage` ran out of
  /// memory. It is refused when read.
  @Test func metadataWhoseArraysShareTheirContentsIsRefused() throws {
    var objects: [[UInt8]] = [[0xD1, 1, 2], [0x5F, 0x10, 25] + Array("NSStoreModelVersionHashes".utf8)]
    for index in 2..<47 { objects.append([0xA2, UInt8(index + 1), UInt8(index + 1)]) }
    objects.append([0x10, 0x07])
    let plist = BinaryPropertyLists.file(objects)
    let folder = try TemporaryDirectory()
    let store = try Self.store(in: folder) { db in
      try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [Data(plist)])
    }
    for arguments in [
      ["inspect", store.path, "--json"],
      ["copy", store.path, folder.url.appendingPathComponent("c.storedata").path, "--type", "xml"],
      ["migrate", store.path, "--model", Self.moody, "--dry-run"],
    ] {
      let result = try MigrunProcess.run(arguments)
      #expect(result.status == 1, "\(arguments[0]): \(result.stdout)\(result.stderr)")
      #expect(result.stderr.contains("would hold more than 65536 values"), "\(arguments[0]): \(result.stderr)")
    }
    // Salvage passes over metadata it cannot read, and says so.
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let salvage = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
    #expect(salvage.status == 1, "\(salvage.stdout)\(salvage.stderr)")
    #expect(salvage.stdout.contains("Lost: the metadata"), "\(salvage.stdout)")
  }

  /// An error of SQLite's carried the whole statement (6 MB for a list of 300,000 values): its first
  /// 200 characters are kept, and how long it was.
  @Test func anErrorCarriesTheStartOfItsStatementOnly() throws {
    let queue = try DatabaseQueue()
    let long = "SELECT " + Array(repeating: "1", count: 5000).joined(separator: " OR ")
    let error = try #require(throws: DatabaseError.self) { try queue.read { try Row.fetchAll($0, sql: long) } }
    let words = StoreFailure.words(error)
    #expect(words.hasPrefix("Expression tree is too large"), "\(words)")
    #expect(words.count < 300 && words.hasSuffix("… (\(long.count) characters)`)"), "\(words)")
  }
}

/// Salvage of stores with something planted (issue 55): each ends.
extension HostileStoreTests {
  /// A 4 KB `-wal` whose one valid frame names page 4294967280: salvage walked ~4e9 pages. Only the
  /// pages the file and its `-wal` hold are looked at.
  @Test func aWALFrameOfAFarPageIsNotWalkedTo() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    let pageSize = try DatabaseQueue(path: store.path).read { try Int.fetchOne($0, sql: "PRAGMA page_size") } ?? 4096
    var page = [UInt8](repeating: 0, count: pageSize)
    page[0] = 0x0D  // an empty table leaf
    let wal = Self.writeAheadLog(pageSize: pageSize, frames: [(4_294_967_280, page)])
    try Data(wal).write(to: URL(fileURLWithPath: store.path + "-wal"))
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path, "--model", Self.moody])
    #expect(result.status == 0 || result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("migrun check calls saved.sqlite clean"), "\(result.stdout)\(result.stderr)")
  }

  /// A trigger of the store's own on `Z_PRIMARYKEY` that never ends: salvage made it again, then
  /// raised `Z_MAX` through it. It is made last, after salvage's own writes.
  @Test func aTriggerOfTheStoresOwnIsMadeAfterSalvagesWrites() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(in: folder) { db in
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1")
      try db.execute(
        sql: """
          CREATE TRIGGER forever AFTER UPDATE ON Z_PRIMARYKEY BEGIN
            SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c);
          END
          """)
    }
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path, "--model", Self.moody])
    #expect(result.status == 0 || result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("Z_MAX raised"), "\(result.stdout)")
    #expect(result.stdout.contains("made again: trigger forever"), "\(result.stdout)")
  }

  /// A write-ahead log of `frames` (page number, bytes), the last a commit, with SQLite's checksums
  /// (little-endian words, magic 0x377f0682).
  static func writeAheadLog(pageSize: Int, frames: [(page: UInt32, bytes: [UInt8])]) -> [UInt8] {
    func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    func checksum(_ data: [UInt8], _ start: (UInt32, UInt32)) -> (UInt32, UInt32) {
      SQLiteFileImage.checksum(data[...], bigEndian: false, start: start)
    }
    let salts: (UInt32, UInt32) = (0x1234_5678, 0x9ABC_DEF0)
    var header = bigEndian(0x377f_0682) + bigEndian(3_007_000) + bigEndian(UInt32(pageSize)) + bigEndian(0)
    header += bigEndian(salts.0) + bigEndian(salts.1)
    var sums = checksum(header, (0, 0))
    var wal = header + bigEndian(sums.0) + bigEndian(sums.1)
    for (index, frame) in frames.enumerated() {
      let commit = index == frames.count - 1 ? frame.page : 0
      let first = bigEndian(frame.page) + bigEndian(commit)
      sums = checksum(first, sums)
      sums = checksum(frame.bytes, sums)
      wal += first + bigEndian(salts.0) + bigEndian(salts.1) + bigEndian(sums.0) + bigEndian(sums.1) + frame.bytes
    }
    return wal
  }
}
