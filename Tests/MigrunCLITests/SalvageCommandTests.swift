import Foundation
import GRDB
import MigrunStore
import PropertyList
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
    // The library's check says salvage in its own words, no command of the command line's.
    let note = try StoreCheck.findings(of: store).first { $0.kind == "salvage" }
    #expect(note?.message.hasPrefix("Salvage of `\(store.lastPathComponent)` into a new store would write ") == true)
    #expect(note?.message.contains("migrun") == false, "\(note?.message ?? "")")
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
    #expect(result.status == 1, "something was lost: \(result.stdout)\(result.stderr)")
    #expect(
      result.stdout.contains("Page: \(lostRows) objects (keys "), "the lost objects are counted: \(result.stdout)")
    #expect(!result.stdout.contains("pages of tables"), "the loss is said in objects, not pages: \(result.stdout)")
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
  /// A store from before Core Data kept its model in the store (the 2011 store, framework 386) is
  /// said to have had no model cache — not to have lost one.
  @Test func aStoreFromBeforeModelCachesIsNotSaidToHaveLostOne() throws {
    let folder = try TemporaryDirectory()
    let base = "ebf-ctdatastoremanager/CTDataStoreManager/CTDataStoreManagerTests/CoreDataTests/MigrationTest"
    let store = try copyOfFixture(base + "/TestMigrationStore_version_1.sqlite", into: folder)
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run([
      "salvage", store.path, "--out", out.path, "--model", Fixtures.url(base + "/TestMigrationStore.xcdatamodeld").path,
    ])
    #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    #expect(result.stdout.contains("no model cache: the store never had one"), "\(result.stdout)")
    #expect(!result.stdout.contains("model cache lost"), "\(result.stdout)")
  }

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
    #expect(
      result.stdout.contains("1 lost (keys ") && result.stdout.contains("named by other objects"), "\(result.stdout)")
    #expect(try MigrunProcess.run(["check", cleared.path, "--model", model]).status == 0)
    let kept = folder.url.appendingPathComponent("kept.sqlite")
    let keeping = try MigrunProcess.run([
      "salvage", store.path, "--out", kept.path, "--model", model, "--keep-dangling-keys",
    ])
    #expect(keeping.stdout.contains("keys naming no object kept"), "\(keeping.stdout)")
    let check = try MigrunProcess.run(["check", kept.path, "--model", model])
    #expect(check.status == 1 && check.stdout.contains("link-to-no-object"), "\(check.stdout)")
  }

  /// `check`'s dry run gives the figures salvage then writes, in its text and in `--json`: per
  /// entity, objects written and lost with their keys — the damaged page's rows, which `missing`
  /// (objects named by others) never counted.
  @Test func checksDryRunGivesTheFiguresSalvageWrites() throws {
    let folder = try TemporaryDirectory()
    let (store, lostRows) = try Self.damaged(in: folder)
    let check = try MigrunProcess.run(["check", store.path, "--json"])
    let figures = try #require(try check.jsonLine("check")["salvage"] as? [String: Any], "\(check.stdout)")
    let salvage = try MigrunProcess.run([
      "salvage", store.path, "--out", folder.url.appendingPathComponent("saved.sqlite").path, "--json",
    ])
    let line = try salvage.jsonLine("salvage")
    let report = try #require(line["report"] as? [String: Any], "\(salvage.stdout)")
    let entities = try #require(report["entities"] as? [String: [String: Any]], "\(salvage.stdout)")
    #expect((figures["entities"] as? NSDictionary)?.isEqual(to: entities) == true, "\(check.stdout)\n\(salvage.stdout)")
    #expect(figures["summary"] as? String == line["summary"] as? String, "\(check.stdout)\n\(salvage.stdout)")
    let page = try #require(entities["Page"], "\(entities)")
    #expect(page["lost"] as? Int == lostRows, "\(page)")
    let ranges = try #require(page["lostKeys"] as? [[Int]], "\(page)")
    #expect(ranges.reduce(0) { $0 + $1[1] - $1[0] + 1 } == lostRows, "the lost keys are the lost objects': \(ranges)")
    // The text: check's note and salvage's first line carry the same figures.
    let text = try MigrunProcess.run(["check", store.path]).stdout
    let summary = try #require(line["summary"] as? String)
    #expect(text.contains("would write \(summary)"), "\(text)\n\(summary)")
    let saved = try MigrunProcess.run([
      "salvage", store.path, "--out", folder.url.appendingPathComponent("text.sqlite").path,
    ])
    #expect(saved.stdout.contains("): \(summary)\n"), "\(saved.stdout)\n\(summary)")
  }

  /// An undamaged store's metadata, model cache and `Z_PRIMARYKEY` rows come through as the store
  /// had them — every metadata key one by one, the framework version too (Moody's 637: the new file
  /// laid out as that framework lays it out, which check calls clean); persistent history's
  /// primary-key rows (SampleModel2) with their Z_MAX.
  @Test func anIntactStoresMetadataComesThroughAsItWas() throws {
    let folder = try TemporaryDirectory()
    for fixture in ["objcio-core-data-moody/stores/Moody 5.moody.sqlite", Self.sampleStore] {
      let store = try copyOfFixture(fixture, into: folder)
      let out = folder.url.appendingPathComponent(UUID().uuidString + ".sqlite")
      let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
      #expect(
        result.status == 0 && result.stdout.contains("Nothing lost"), "\(fixture): \(result.stdout)\(result.stderr)")
      #expect(result.stdout.contains("its own model cache kept as it was"), "\(result.stdout)")
      let metadata = try [store, out].map { url in
        try #require(
          try MigrunProcess.run(["inspect", url.path, "--json"]).jsonLine("inspect")["metadata"] as? [String: Any])
      }
      #expect(Set(metadata[0].keys) == Set(metadata[1].keys), "\(fixture): \(metadata)")
      for (key, value) in metadata[0] {
        #expect(
          NSDictionary(dictionary: [key: value]).isEqual(to: [key: metadata[1][key] ?? NSNull()]),
          "\(fixture): \(key) was \(value), is \(metadata[1][key] ?? "missing")")
      }
      let tables = try [store, out].map { url in
        try DatabaseQueue(path: url.path).read { db in
          (
            try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE"),
            try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
          )
        }
      }
      #expect(tables[0].0 != nil && tables[0].0 == tables[1].0, "\(fixture): the model cache's bytes")
      #expect(tables[0].1 == tables[1].1, "\(fixture): \(tables[0].1) became \(tables[1].1)")
      let check = try MigrunProcess.run(["check", out.path])
      #expect(check.status == 0, "\(fixture): \(check.stdout)")
    }
  }

  /// A store whose metadata's hashes are not its model cache's (one entity's hash changed): salvage
  /// takes the cache's version and keeps the hashes as they were — never its own in their place, which
  /// would make the store read as another model — and says so.
  @Test func hashesThatAreNotTheCachesAreKeptAndNamed() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    try DatabaseQueue(path: store.path).write { db in
      let bytes = try #require(try Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA"))
      guard case .dictionary(var entries) = try PropertyListValue(decoding: Array(bytes)),
        case .dictionary(var hashes)? = entries["NSStoreModelVersionHashes"]
      else { throw CocoaError(.propertyListReadCorrupt) }
      hashes["Mood"] = .data(Array(repeating: 7, count: 32))
      entries["NSStoreModelVersionHashes"] = .dictionary(hashes)
      try db.execute(
        sql: "UPDATE Z_METADATA SET Z_PLIST = ?",
        arguments: [Data(PropertyListValue.dictionary(entries).binaryEncoded())])
    }
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
    #expect(
      result.stdout.contains("its hashes name another version than its model cache's, as in the store: both kept"),
      "\(result.stdout)\(result.stderr)")
    let hashes = try [store, out].map { url in
      let metadata = try MigrunProcess.run(["inspect", url.path, "--json"]).jsonLine("inspect")["metadata"]
      return (metadata as? [String: Any])?["NSStoreModelVersionHashes"] as? NSDictionary
    }
    #expect(hashes[0] != nil && hashes[0] == hashes[1], "\(hashes)")
  }

  /// A store whose model cache is another version's than its metadata's (a store of A whose hashes
  /// say B, a version that differs from A only in its hash modifier): salvage writes B and keeps the
  /// cache's bytes beside the store's metadata, as the store had them — and says so, in text and JSON.
  @Test func aModelCacheOfAnotherVersionIsKeptAndSaid() throws {
    let folder = try TemporaryDirectory()
    let model = folder.url.appendingPathComponent("M.xcdatamodeld")
    for (version, modifier) in [("A", ""), ("B", #" versionHashModifier="b""#)] {
      try writeModelVersion(
        version, of: model,
        entities: #"<entity name="Note" representedClassName="Note"\#(modifier)>"#
          + #"<attribute name="title" optional="YES" attributeType="String"/></entity>"#)
    }
    let store = folder.url.appendingPathComponent("s.sqlite")
    let created = try MigrunProcess.run(["create", store.path, "--model", model.path, "--model-version", "A"])
    #expect(created.status == 0, "\(created.stderr)")
    let hash = try MigrunProcess.run(["hash", model.path, "--model-version", "B", "--json"]).jsonLine("hash")
    let note = try #require(Data(base64Encoded: (hash["entities"] as? [String: String])?["Note"] ?? ""))
    try DatabaseQueue(path: store.path).write { db in
      let bytes = try #require(try Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA"))
      guard case .dictionary(var entries) = try PropertyListValue(decoding: Array(bytes)),
        case .dictionary(var hashes)? = entries["NSStoreModelVersionHashes"]
      else { throw CocoaError(.propertyListReadCorrupt) }
      hashes["Note"] = .data(Array(note))
      entries["NSStoreModelVersionHashes"] = .dictionary(hashes)
      try db.execute(
        sql: "UPDATE Z_METADATA SET Z_PLIST = ?",
        arguments: [Data(PropertyListValue.dictionary(entries).binaryEncoded())])
    }
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let text = try MigrunProcess.run(["salvage", store.path, "--out", out.path, "--model", model.path])
    let words = "its hashes are not those of B, the version written: kept as the store had it"
    #expect(text.stdout.contains("its own model cache kept as it was (\(words))"), "\(text.stdout)\(text.stderr)")
    // What check still finds (the cache against the metadata) names the command line's flag.
    #expect(text.stdout.contains("check still finds: cache-disagrees-with-metadata"), "\(text.stdout)")
    #expect(text.stdout.contains("(--model)") && !text.stdout.contains("StoreCheck"), "\(text.stdout)")
    try FileManager.default.removeItem(at: out)
    let json = try MigrunProcess.run(["salvage", store.path, "--out", out.path, "--model", model.path, "--json"])
    let report = try json.jsonLine("salvage")["report"] as? [String: Any]
    #expect(report?["version"] as? String == "B", "\(json.stdout)")
    #expect(report?["modelCacheFromStore"] as? Bool == true, "\(json.stdout)")
    #expect(report?["modelCacheNotes"] as? [String] == [words], "\(json.stdout)")
  }

  /// A `-wal` whose last transaction was torn — its commit frame cut short, or a byte of its first
  /// frame changed (the checksum fails) — : that transaction is left out as SQLite leaves it out, and
  /// the report names it with its frames; the one before is applied.
  @Test(arguments: ["cut", "changed"]) func aTornWALTransactionIsLeftOutByName(tear: String) throws {
    let folder = try TemporaryDirectory()
    let (copy, sizes, frame) = try Self.walWithTwoTransactions(in: folder)
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: copy.path + "-wal"))
    if tear == "cut" {
      try handle.truncate(atOffset: UInt64(sizes[1] - frame / 2))
    } else {
      try handle.seek(toOffset: UInt64(sizes[0] + 24 + 100))
      let byte = try handle.read(upToCount: 1)?.first ?? 0
      try handle.seek(toOffset: UInt64(sizes[0] + 24 + 100))
      try handle.write(contentsOf: [byte ^ 0xFF])
    }
    try handle.close()
    let leftOut = (sizes[1] - sizes[0]) / frame
    #expect(leftOut > 1, "the last transaction spans several frames: \(sizes)")
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", copy.path, "--out", out.path])
    #expect(
      result.stdout.contains(
        "the -wal's last transaction was never committed: \(leftOut) frames left out, as SQLite would"),
      "\(tear): \(result.stdout)\(result.stderr)")
    let numbers = try DatabaseQueue(path: out.path).read { db in
      try Int.fetchAll(db, sql: "SELECT DISTINCT ZNUMBER FROM ZPAGE WHERE ZNUMBER < 0 ORDER BY ZNUMBER")
    }
    #expect(numbers == [-1], "\(tear): the committed update applied, the torn one left out: \(numbers)")
  }

  /// A copy of the sample store and its `-wal` holding two committed transactions (one row's
  /// ZNUMBER -1, then every row's -2), as a crash leaves them; the -wal's size after each, and a
  /// frame's size.
  static func walWithTwoTransactions(in folder: TemporaryDirectory) throws -> (URL, [Int], Int) {
    let store = try writableCopyOfFixture(Self.sampleStore, into: folder)
    let copy = try folder.folder("copy").appendingPathComponent("torn.sqlite")
    let queue = try DatabaseQueue(path: store.path)
    let (sizes, pageSize) = try queue.writeWithoutTransaction { db -> ([Int], Int) in
      try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0")
      try db.execute(sql: "UPDATE ZPAGE SET ZNUMBER = -1 WHERE Z_PK = (SELECT min(Z_PK) FROM ZPAGE)")
      let first = try Self.size(of: store.path + "-wal")
      try db.execute(sql: "UPDATE ZPAGE SET ZNUMBER = -2")
      // Copied while the connection is open: closing would checkpoint the log into the file.
      try FileManager.default.copyItem(atPath: store.path, toPath: copy.path)
      try FileManager.default.copyItem(atPath: store.path + "-wal", toPath: copy.path + "-wal")
      return ([first, try Self.size(of: copy.path + "-wal")], try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
    }
    try queue.close()
    return (copy, sizes, 24 + pageSize)
  }

  static func size(of path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
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
    let (store, modelFolder, file) = try PlantedFileTests.photoStore(in: folder)
    let name = file.lastPathComponent
    try Data((0..<300).map { UInt8($0 % 251) }).write(to: file)
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
