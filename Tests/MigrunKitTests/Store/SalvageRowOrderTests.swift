import Foundation
import GRDB
import MigrunModel
import TestSupport
import Testing

@testable import MigrunStore

/// Salvage gives each row of a table once, in the order its tree's leaves hold them. In a sound tree
/// the keys only rise and none is remembered; a damaged tree whose keys fall — its leaves swapped, or
/// one leaf's bytes copied over another so that the same keys come twice — still gives every key it
/// holds, each once, and the new store has each row once.
@Suite struct SalvageRowOrderTests {
  static let model = """
    <entity name="Note">
      <attribute name="title" optional="YES" attributeType="String"/>
    </entity>
    """

  /// A store of 2,000 notes over many leaves; its ZNOTE leaves in the tree's order, with their keys.
  static func store(in folder: TemporaryDirectory) throws -> (url: URL, model: ObjectModel, leaves: [(Int, [Int64])]) {
    let bundle = folder.url.appendingPathComponent("Notes.xcdatamodeld")
    try writeModelVersion("Notes", of: bundle, entities: model)
    let model = try ModelBundle(modelOrStoreAt: bundle).model(named: "Notes")
    let url = folder.url.appendingPathComponent("notes.sqlite")
    try SQLiteStore.create(at: url, model: model).close()
    let number = try #require(StoreSchema(model: model).layout(of: "Note")).number
    let queue = try DatabaseQueue(path: url.path)
    let pages = try queue.write { db -> [Int] in
      try db.execute(sql: "PRAGMA journal_mode = DELETE")
      for key in 1...2000 {
        try db.execute(
          sql: "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (?, ?, 1, ?)",
          arguments: [key, number, "note \(key) " + String(repeating: "x", count: 60)])
      }
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 2000 WHERE Z_ENT = ?", arguments: [number])
      return try Int.fetchAll(
        db, sql: "SELECT pageno FROM dbstat WHERE name = 'ZNOTE' AND pagetype = 'leaf' ORDER BY path")
    }
    try queue.close()
    let image = try SQLiteFileImage(url: url)
    var ignored = Set<Int>()
    let leaves = pages.map { page in (page, image.leafRows(page, overflow: &ignored)?.rows.map(\.rowid) ?? []) }
    return (url, model, leaves)
  }

  /// The keys `forEachRow` gives for ZNOTE of the file `bytes`, and the rows salvage writes.
  static func salvaged(_ bytes: [UInt8], model: ObjectModel, in folder: TemporaryDirectory, name: String) throws
    -> (given: [Int64], written: [Int64])
  {
    let damaged = folder.url.appendingPathComponent("\(name).sqlite")
    try Data(bytes).write(to: damaged)
    let read = try SalvageRead(url: damaged, model: model)
    let table = try #require(read.tables["ZNOTE"])
    var given: [Int64] = []
    read.forEachRow(of: table) { rowid, _ in given.append(rowid) }
    let out = folder.url.appendingPathComponent("\(name)-salvaged.sqlite")
    _ = try Salvage.write(read, model: model, to: out)
    let written = try DatabaseQueue(path: out.path).read { db in
      try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZNOTE ORDER BY Z_PK")
    }
    return (given, written)
  }

  @Test func aSoundTreeGivesEveryKeyOnceInOrder() throws {
    let folder = try TemporaryDirectory()
    let (url, model, leaves) = try Self.store(in: folder)
    #expect(leaves.count > 10, "the notes span many leaves")
    let (given, written) = try Self.salvaged(
      Array(try Data(contentsOf: url)), model: model, in: folder, name: "sound")
    #expect(given == Array(1...2000))
    #expect(written == Array(1...2000))
  }

  @Test func leavesSwappedGiveEveryKeyOnce() throws {
    let folder = try TemporaryDirectory()
    let (url, model, leaves) = try Self.store(in: folder)
    var bytes = Array(try Data(contentsOf: url))
    let size = SQLiteFileImage(bytes: bytes).pageSize
    let (first, second) = (leaves[3].0, leaves[7].0)
    let firstPage = Array(bytes[(first - 1) * size..<first * size])
    bytes.replaceSubrange((first - 1) * size..<first * size, with: bytes[(second - 1) * size..<second * size])
    bytes.replaceSubrange((second - 1) * size..<second * size, with: firstPage)
    let (given, written) = try Self.salvaged(bytes, model: model, in: folder, name: "swapped")
    // The keys fall where the tree reaches the swapped leaves; none is lost, none given twice.
    #expect(given != given.sorted(), "the tree gives the swapped leaves' keys out of order")
    #expect(given.sorted() == Array(1...2000))
    #expect(written == Array(1...2000))
  }

  @Test func aLeafCopiedOverAnotherGivesItsKeysOnce() throws {
    let folder = try TemporaryDirectory()
    let (url, model, leaves) = try Self.store(in: folder)
    var bytes = Array(try Data(contentsOf: url))
    let size = SQLiteFileImage(bytes: bytes).pageSize
    let (source, target) = (leaves[2], leaves[5])
    bytes.replaceSubrange((target.0 - 1) * size..<target.0 * size, with: bytes[(source.0 - 1) * size..<source.0 * size])
    let (given, written) = try Self.salvaged(bytes, model: model, in: folder, name: "copied")
    // The tree reaches leaf 2's keys twice (once in its own place, once in leaf 5's): given once;
    // leaf 5's own keys are gone with its bytes.
    let expected = Array(1...2000).filter { !target.1.contains($0) }
    #expect(Set(given).count == given.count, "no key given twice")
    #expect(given.sorted() == expected)
    #expect(written == expected)
  }
}
