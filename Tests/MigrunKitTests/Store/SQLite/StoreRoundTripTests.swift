import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

@Suite struct StoreRoundTripTests {
  struct Expected: Decodable {
    let model: String?
  }

  /// Every real store (a copy in `folder`), opened with its model, by name.
  static func forEachFixtureStore(in folder: TemporaryDirectory, _ body: (String, URL, SQLiteStore) throws -> Void)
    throws
  {
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    let stores = try JSONDecoder().decode([String: Expected].self, from: data)
    for (store, expected) in stores.sorted(by: { $0.key < $1.key }) {
      let url = try copyOfFixture(store, into: folder)
      var model: ObjectModel?
      if let contents = expected.model {
        let version = Fixtures.url(contents).deletingLastPathComponent()
        model = try ModelBundle(modelOrStoreAt: version.deletingLastPathComponent())
          .model(named: version.deletingPathExtension().lastPathComponent)
      }
      try body(store, url, try SQLiteStore(url: url, model: model))
    }
  }

  /// Export → import into a new store → export gives identical JSON, for every real store.
  @Test func everyFixtureStoreSurvivesExportAndImport() throws {
    let folder = try TemporaryDirectory()
    var objects = 0
    try Self.forEachFixtureStore(in: folder) { store, url, source in
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

  /// What stage 2 reads per object (`relationships(of:)`: to-one columns only) is what the whole
  /// read gives for relationships, object by object, on every real store.
  @Test func theRelationshipsOnlyReadMatchesTheWholeRead() throws {
    let folder = try TemporaryDirectory()
    var toOnes = 0
    try Self.forEachFixtureStore(in: folder) { store, _, source in
      for entity in source.model.entities {
        try source.forEachObject(of: entity.name, includingSubentities: false, withToMany: true) { whole in
          let lean = try #require(try source.relationships(of: whole.id, withToMany: false), "\(store): \(whole.id)")
          #expect(lean.id == whole.id && lean.version == whole.version, "\(store): \(whole.id)")
          #expect(lean.toOne == whole.toOne, "\(store): \(whole.id)")
          #expect(lean.attributes.isEmpty && lean.toMany.isEmpty)
          let withMembers = try #require(try source.relationships(of: whole.id, withToMany: true))
          #expect(withMembers.toOne == whole.toOne && withMembers.toMany == whole.toMany, "\(store): \(whole.id)")
          toOnes += whole.toOne.count
        }
      }
      let missing = ObjectID(entity: try #require(source.model.entities.first).name, primaryKey: 1 << 40)
      #expect(try source.relationships(of: missing, withToMany: false) == nil)
    }
    #expect(toOnes > 50, "the fixtures hold to-ones: \(toOnes)")
  }

  @Test func anExportIsNotImportedIntoAnotherModelVersion() throws {
    let folder = try TemporaryDirectory()
    let bundle = try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
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
    let bundle = try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
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

/// Values Apple's stores hold that a naive reading loses: an NSDecimalNumber NaN stored as text,
/// ±infinity, integers in REAL columns and reals in INTEGER ones, text in numeric columns, text as a
/// BLOB, and an empty BLOB (not NULL). Each survives export → import byte for byte in SQL terms.
@Suite struct ValueFidelityTests {
  static let rows = [
    "INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZSALARY, ZBORN, ZAGE, ZPHOTO, ZBIG, ZEMAIL) VALUES (1, ?, 1, 'NaN', 9e999, 'abc', X'', 5.5, 'a@b')",
    "INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZSALARY, ZBORN, ZAGE, ZPHOTO, ZACTIVE, ZEMAIL) VALUES (2, ?, 1, -9e999, -9e999, 7.0, NULL, 1, X'6869')",
    "INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZSALARY, ZBORN, ZSETTINGS, ZHOMEPAGE) VALUES (3, ?, 1, 12, 3, '', 'x')",
    "INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZSALARY) VALUES (4, ?, 1, 'n/a')",
    "INSERT INTO ZSHAPE (Z_PK, Z_ENT, Z_OPT, ZZ, ZRADIUS) VALUES (1, ?, 1, 3, 5)",
  ]

  /// Every column's value: numbers compared as numbers (an integer in a FLOAT column may come back
  /// as the same real), text and BLOBs as bytes — NULL, an empty BLOB and the text `NaN` all distinct.
  static func values(_ url: URL) throws -> [String] {
    let queue = try DatabaseQueue(path: url.path)
    return try queue.read { db in
      var result: [String] = []
      for table in ["ZPERSON", "ZSHAPE"] {
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String }
        let expressions = columns.map { column in
          "'\(column)=' || quote(CASE WHEN typeof(\(column)) IN ('integer', 'real') THEN CAST(\(column) AS REAL) "
            + "WHEN typeof(\(column)) IN ('text', 'blob') THEN CAST(\(column) AS BLOB) END)"
        }
        let sql = "SELECT \(expressions.joined(separator: " || ' ' || ")) FROM \(table) ORDER BY Z_PK"
        result += try String.fetchAll(db, sql: sql)
      }
      return result
    }
  }

  @Test func awkwardValuesSurviveExportAndImport() throws {
    let folder = try TemporaryDirectory()
    let model = try SampleModels.galleryModel()
    let url = folder.url.appendingPathComponent("awkward.sqlite")
    let store = try SQLiteStore.create(at: url, model: model)
    let person = try #require(store.schema.layout(of: "Person")).number
    let circle = try #require(store.schema.layout(of: "Circle")).number
    try store.close()
    let queue = try DatabaseQueue(path: url.path)
    try queue.write { db in
      for (index, sql) in Self.rows.enumerated() {
        try db.execute(sql: sql, arguments: [index < 4 ? person : circle])
      }
    }
    try queue.close()
    let source = try SQLiteStore(url: url, model: model)
    let json = try StoreJSON.export(source)
    let copyURL = folder.url.appendingPathComponent("copy.sqlite")
    let copy = try SQLiteStore.create(at: copyURL, model: model)
    try StoreJSON.importObjects(Data(json.utf8), into: copy)
    #expect(try StoreJSON.export(copy) == json)
    try copy.close()
    let before = try Self.values(url)
    let after = try Self.values(copyURL)
    #expect(before.count == 5)
    for (old, new) in zip(before, after) { #expect(new == old) }
    // The decimal NaN is still the text NaN, not NULL.
    #expect(before[0].contains("ZSALARY=X'4E614E'"), "\(before[0])")
    // Other text in a decimal column is not a NaN: it stays the text it was.
    #expect(after[3].contains("ZSALARY=X'6E2F61'"), "\(after[3])")
  }
}
