import Foundation
import MigrunKit
import TestSupport
import Testing

@Suite struct StoreRoundTripTests {
  struct Expected: Decodable {
    let model: String?
  }

  /// Export → import into a new store → export gives identical JSON, for every real store.
  @Test func everyFixtureStoreSurvivesExportAndImport() throws {
    let folder = try TemporaryDirectory()
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    let stores = try JSONDecoder().decode([String: Expected].self, from: data)
    var objects = 0
    for (store, expected) in stores.sorted(by: { $0.key < $1.key }) {
      let url = try copyOfFixture(store, into: folder)
      var model: ObjectModel?
      if let contents = expected.model {
        let version = Fixtures.url(contents).deletingLastPathComponent()
        model = try ModelBundle(contentsOf: version.deletingLastPathComponent())
          .model(named: version.deletingPathExtension().lastPathComponent)
      }
      let source = try SQLiteStore(url: url, model: model)
      let first = try StoreJSON.export(source)
      let copy = try folder.folder(UUID().uuidString).appendingPathComponent("imported.sqlite")
      let target = try SQLiteStore.create(at: copy, model: source.model)
      try StoreJSON.importObjects(Data(first.utf8), into: target)
      let second = try StoreJSON.export(target)
      let differing = zip(first.split(separator: "\n"), second.split(separator: "\n")).filter { $0 != $1 }.prefix(2)
      #expect(second == first, "\(store): \(differing)")
      #expect(try target.metadata.uuid == SQLiteStore.metadata(at: url).uuid)
      objects += first.components(separatedBy: "{\"pk\": ").count - 1
    }
    #expect(objects > 200, "the fixtures hold real objects: \(objects)")
  }

  @Test func anExportIsNotImportedIntoAnotherModelVersion() throws {
    let folder = try TemporaryDirectory()
    let bundle = try ModelBundle(contentsOf: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
    let url = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let json = try StoreJSON.export(try SQLiteStore(url: url, model: try bundle.model(named: "Moody 2")))
    let other = try SQLiteStore.create(
      at: folder.url.appendingPathComponent("v3.sqlite"), model: try bundle.model(named: "Moody 3"))
    let error = try #require(throws: StoreError.self) { try StoreJSON.importObjects(Data(json.utf8), into: other) }
    #expect(error.code == .incompatibleModel)
    #expect(try other.count(of: "Mood", includingSubentities: true) == 0)
  }
}

/// Bad stores: one clear error, and the file's bytes are unchanged afterwards.
@Suite struct DamagedStoreTests {
  static func expectUnchanged(_ url: URL, code: StoreError.Code, _ open: (URL) throws -> Void) throws {
    let before = try Data(contentsOf: url)
    let error = try #require(throws: StoreError.self) { try open(url) }
    #expect(error.code == code, "\(error)")
    #expect(!error.description.contains("\n"), "one line: \(error)")
    #expect(try Data(contentsOf: url) == before, "the file is unchanged")
    let siblings = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
    #expect(siblings == [url.lastPathComponent], "no side files: \(siblings)")
  }

  @Test func truncatedStoreFailsAndChangesNothing() throws {
    let folder = try TemporaryDirectory()
    let source = try Data(contentsOf: Fixtures.url("objcio-core-data-moody/stores/Moody 5.moody.sqlite"))
    let url = try folder.folder("t").appendingPathComponent("cut.sqlite")
    try source.prefix(source.count / 3).write(to: url)
    try Self.expectUnchanged(url, code: .notSQLite) { _ = try SQLiteStore.metadata(at: $0) }
  }

  @Test func aFileThatIsNotSQLiteFails() throws {
    let folder = try TemporaryDirectory()
    let url = try folder.write(String(repeating: "not a database ", count: 500), to: "n/text.sqlite")
    try Self.expectUnchanged(url, code: .notSQLite) { _ = try SQLiteStore(url: $0) }
  }

  @Test func aSQLiteFileWithoutCoreDataTablesFails() throws {
    let folder = try TemporaryDirectory()
    let url = try folder.folder("p").appendingPathComponent("plain.sqlite")
    try makeDatabase(url, ["CREATE TABLE t (x INTEGER)"])
    try Self.expectUnchanged(url, code: .notACoreDataStore) { _ = try SQLiteStore.metadata(at: $0) }
  }

  @Test func metadataThatIsNotAPlistFails() throws {
    let folder = try TemporaryDirectory()
    let url = try folder.folder("m").appendingPathComponent("bad.sqlite")
    try makeDatabase(
      url,
      [
        "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        "INSERT INTO Z_METADATA VALUES (1, 'X', x'00010203')",
      ])
    try Self.expectUnchanged(url, code: .badMetadata) { _ = try SQLiteStore.metadata(at: $0) }
  }

  @Test func anIncompatibleModelIsRefusedEntityByEntity() throws {
    let folder = try TemporaryDirectory()
    let url = try copyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder)
    let bundle = try ModelBundle(contentsOf: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
    let before = try Data(contentsOf: url)
    let error = try #require(throws: StoreError.self) {
      _ = try SQLiteStore(url: url, model: try bundle.model(named: "Moody 5"))
    }
    #expect(error.code == .incompatibleModel)
    #expect(error.description.contains("Continent: in the store, not in the model"))
    #expect(error.description.contains("GeographicRegion: in the store, not in the model"))
    #expect(error.description.contains("Mood: store hash "))
    #expect(try Data(contentsOf: url) == before)
  }

  @Test func aMissingFileIsNotFound() {
    let error = try? #require(throws: StoreError.self) {
      _ = try SQLiteStore.metadata(at: URL(fileURLWithPath: "/nonexistent/x.sqlite"))
    }
    #expect(error?.code == .notFound)
  }
}
