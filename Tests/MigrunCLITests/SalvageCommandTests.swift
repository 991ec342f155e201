import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

/// `migrun salvage` (issue 46) as a user runs it: a damaged store back to a clean one, the report
/// saying what was saved and what was lost, the exit status saying whether anything was; `check`
/// pointing at it for a damaged file.
@Suite struct SalvageCommandTests {
  static let sampleStore = "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite"

  /// The store with one leaf page of its biggest table (ZPAGE) overwritten with garbage; the rows
  /// that page held.
  static func damaged(in folder: TemporaryDirectory) throws -> (store: URL, lostRows: Int) {
    let store = try copyOfFixture(Self.sampleStore, into: folder)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.path)
    let (page, rows, size) = try DatabaseQueue(path: store.path).read { db -> (Int, Int, Int) in
      let leaves = try Row.fetchAll(
        db, sql: "SELECT pageno, ncell FROM dbstat WHERE name = 'ZPAGE' AND pagetype = 'leaf' ORDER BY pageno")
      let middle = leaves[leaves.count / 2]
      return (middle[0], middle[1], try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
    }
    let handle = try FileHandle(forWritingTo: store)
    try handle.seek(toOffset: UInt64((page - 1) * size))
    try handle.write(contentsOf: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
    try handle.close()
    return (store, rows)
  }

  @Test func aDamagedStoreIsSalvagedAndTheReportSaysWhatWasLost() throws {
    let folder = try TemporaryDirectory()
    let (store, lostRows) = try Self.damaged(in: folder)
    let before = try Data(contentsOf: store)
    let check = try MigrunProcess.run(["check", store.path])
    #expect(check.status == 1 && check.stdout.contains("sqlite-integrity"), "\(check.stdout)")
    #expect(check.stdout.contains("note: salvage: `migrun salvage"), "check points at salvage: \(check.stdout)")
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
    #expect(result.status == 1, "something was lost: \(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("\(lostRows) in ZPAGE"), "the lost rows are counted: \(result.stdout)")
    #expect(result.stdout.contains("check calls saved.sqlite clean"), "\(result.stdout)")
    #expect(try Data(contentsOf: store) == before, "the original is only read")
    #expect(!FileManager.default.fileExists(atPath: store.path + "-wal"))
    #expect(!FileManager.default.fileExists(atPath: store.path + "-shm"))
    let recheck = try MigrunProcess.run(["check", out.path])
    #expect(recheck.status == 0 && recheck.stdout.contains("clean"), "\(recheck.stdout)")
    let counts = try DatabaseQueue(path: out.path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE")
    }
    let original = try DatabaseQueue(path: StoreFiles.immutableURI(Fixtures.url(Self.sampleStore))).read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE")
    }
    #expect(counts.map { $0 + lostRows } == original)
    // The same as one JSON line; a second salvage onto the result is refused.
    let json = try MigrunProcess.run([
      "salvage", store.path, "--out", folder.url.appendingPathComponent("again.sqlite").path, "--json",
    ])
    let line = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
    #expect(line["event"] as? String == "salvage" && line["lost"] as? Bool == true, "\(json.stdout)")
    let again = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
    #expect(again.status != 0 && again.stderr.contains("a file is already there"), "\(again.stderr)")
  }

  /// An intact store salvages to the same objects, values and metadata: nothing lost, exit 0.
  @Test func anIntactStoreComesThroughWhole() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(Self.sampleStore, into: folder)
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
    #expect(result.status == 0 && result.stdout.contains("Nothing lost"), "\(result.stdout)\(result.stderr)")
    let exports = try [store, out].map { try MigrunProcess.run(["export", $0.path]).stdout }
    #expect(!exports[0].isEmpty && exports[0] == exports[1])
    // No bigger than the store it saves: its rows written in key order fill the pages (written
    // leaf by leaf in reverse, a 52 MB store came out as 96 MB).
    let sizes = try [store, out].map { try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int ?? 0 }
    #expect(sizes[1] <= sizes[0], "salvaged \(sizes[1]) bytes from a store of \(sizes[0])")
  }

  /// A to-one key naming no object (a row deleted behind Core Data's back): cleared and counted, or
  /// kept with --keep-dangling-keys (and then still found by check).
  @Test func keysNamingNoObjectAreClearedOrKept() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.path)
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in
      try db.execute(sql: "DELETE FROM ZGEOGRAPHICREGION WHERE Z_PK = (SELECT min(ZCOUNTRY) FROM ZMOOD)")
    }
    try queue.close()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let cleared = folder.url.appendingPathComponent("cleared.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", cleared.path, "--model", model])
    #expect(result.stdout.contains("keys naming no object cleared"), "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("named by other objects but not recovered"), "\(result.stdout)")
    #expect(try MigrunProcess.run(["check", cleared.path, "--model", model]).status == 0)
    let kept = folder.url.appendingPathComponent("kept.sqlite")
    let keeping = try MigrunProcess.run([
      "salvage", store.path, "--out", kept.path, "--model", model, "--keep-dangling-keys",
    ])
    #expect(keeping.stdout.contains("keys naming no object kept"), "\(keeping.stdout)")
    let check = try MigrunProcess.run(["check", kept.path, "--model", model])
    #expect(check.status == 1 && check.stdout.contains("link-to-no-object"), "\(check.stdout)")
  }

  @Test func otherStoreTypesAndMissingFilesAreRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let missing = try MigrunProcess.run([
      "salvage", folder.url.appendingPathComponent("none.sqlite").path, "--out", "x",
    ])
    #expect(missing.status != 0 && missing.stderr.contains("no such file"), "\(missing.stderr)")
    let store = try copyOfFixture(Self.sampleStore, into: folder)
    let binary = folder.url.appendingPathComponent("s.binary")
    // Its persistent history has no place in a binary store: left out on purpose.
    let history = ["--drop", "ACHANGE", "--drop", "ATRANSACTION", "--drop", "ATRANSACTIONSTRING"]
    #expect(try MigrunProcess.run(["copy", store.path, binary.path, "--type", "binary"] + history).status == 0)
    let refused = try MigrunProcess.run(["salvage", binary.path, "--out", folder.url.appendingPathComponent("y").path])
    #expect(refused.status != 0 && refused.stderr.contains("salvage reads SQLite stores"), "\(refused.stderr)")
  }

  /// External binary data: the support folder's files are linked for the new store, the references
  /// kept as they were; the new store exports the same values.
  @Test func externalDataTravelsWithTheSalvagedStore() throws {
    let folder = try TemporaryDirectory()
    let modelFolder = folder.url.appendingPathComponent("Photos.xcdatamodel")
    try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
    try """
    <model><entity name="Photo"><attribute name="name" optional="YES" attributeType="String"/>\
    <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/></entity></model>
    """.write(to: modelFolder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    let store = folder.url.appendingPathComponent("photos.sqlite")
    #expect(try MigrunProcess.run(["create", store.path, "--model", modelFolder.path]).status == 0)
    let name = "0C7E2A59-5B8B-4E8C-9B5F-7A2D3F1E9C11"
    let external = folder.url.appendingPathComponent(".photos_SUPPORT/_EXTERNAL_DATA")
    try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
    try Data((0..<300).map { UInt8($0 % 251) }).write(to: external.appendingPathComponent(name))
    try DatabaseQueue(path: store.path).write { db in
      let number = try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Photo'") ?? 0
      try db.execute(
        sql: "INSERT INTO ZPHOTO (Z_PK, Z_ENT, Z_OPT, ZNAME, ZIMAGE) VALUES (1, ?, 1, 'big', ?)",
        arguments: [number, Data([2] + Array(name.utf8))])
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = ?", arguments: [number])
    }
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path, "--model", modelFolder.path])
    #expect(
      result.status == 0 && result.stdout.contains("check calls saved.sqlite clean"), "\(result.stdout)\(result.stderr)"
    )
    #expect(
      FileManager.default.fileExists(
        atPath: folder.url.appendingPathComponent(".saved_SUPPORT/_EXTERNAL_DATA/\(name)").path))
    let exports = try [store, out].map {
      try MigrunProcess.run(["export", $0.path, "--model", modelFolder.path]).stdout
    }
    #expect(exports[0].contains("\"big\"") && exports[0] == exports[1])
  }
}
