import Foundation
import GRDB
import TestSupport
import Testing

@testable import MigrunStore

/// A file whose header was overwritten is read at its own page size, found from its structure
/// (issue 68): an interior page's children are pages of its tree under the true size only. Pages
/// that merely start like b-tree pages do not decide — a table of blobs, each row one leaf and one
/// overflow page, starts a leaf at every other page: at twice the size every page looks like one.
@Suite struct PageSizeTests {
  /// A store of `size`-byte pages whose blobs make each leaf hold one row beside one overflow page,
  /// the leaves on odd pages (a small table first); its header zeroed.
  static func alternating(size: Int, in folder: TemporaryDirectory) throws -> Data {
    let url = folder.url.appendingPathComponent("blobs-\(size).sqlite")
    let queue = try DatabaseQueue(path: url.path)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA page_size = \(size)")
      try db.execute(
        sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
      try db.execute(sql: "CREATE TABLE ZT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZDATA BLOB)")
      try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (1, 'T', 0, 300)")
      // A payload whose local part is about three quarters of a page, the rest one overflow page.
      let usable = size
      let minLocal = (usable - 12) * 32 / 255 - 23
      let length = minLocal + (usable * 3 / 4 - minLocal) + (usable - 4) - 20
      var generator = StoreFiller.SplitMix(seed: 5)
      try db.inTransaction {
        for key in 1...300 {
          let blob = Data((0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
          try db.execute(sql: "INSERT INTO ZT VALUES (?, 1, 1, ?)", arguments: [key, blob])
        }
        return .commit
      }
    }
    try queue.close()
    var bytes = try Data(contentsOf: url)
    bytes.replaceSubrange(0..<100, with: Data(count: 100))
    return bytes
  }

  @Test(arguments: [1024, 4096, 8192]) func aHeaderOverwrittenIsReadAtTheFilesOwnPageSize(size: Int) throws {
    let folder = try TemporaryDirectory()
    let bytes = try Self.alternating(size: size, in: folder)
    #expect(SQLiteFileImage.guessPageSize(bytes) == size)
  }

  /// Every store of `../shared`, its header zeroed, is read at its own page size.
  @Test func everyFixtureStoreWithoutItsHeaderIsReadAtItsPageSize() throws {
    let folder = try TemporaryDirectory()
    var stores = 0
    try StoreRoundTripTests.forEachFixtureStore(in: folder) { store, url, source in
      try source.close()
      var bytes = try Data(contentsOf: url)
      let declared = SQLiteFileImage.declaredPageSize(bytes)
      bytes.replaceSubrange(0..<100, with: Data(count: 100))
      #expect(SQLiteFileImage.guessPageSize(bytes) == declared, "\(store)")
      stores += 1
    }
    #expect(stores > 20)
  }
}
