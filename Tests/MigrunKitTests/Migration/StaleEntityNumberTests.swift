import Foundation
import GRDB
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// A row that an older app version left with another entity's `Z_ENT` in the table of an entity
/// that is alone in it (a root without subentities): Core Data fetches such an entity with no
/// `Z_ENT` condition, so the row is one of its objects — counted, exported, migrated on every path,
/// and written with the right number.
@Suite struct StaleEntityNumberTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")

  /// A Moody store whose first mood (Mood is 4, alone in ZMOOD) carries Country's number, 3.
  static func staleStore(in folder: TemporaryDirectory) throws -> URL {
    let url = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try makeDatabase(url, ["UPDATE ZMOOD SET Z_ENT = 3 WHERE Z_PK = 38"])
    return url
  }

  @Test func theStaleRowIsAnObjectOfItsTablesEntity() throws {
    let folder = try TemporaryDirectory()
    let url = try Self.staleStore(in: folder)
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    let store = try SQLiteStore(url: url, model: try bundle.model(named: "Moody"))
    defer { try? store.close() }
    #expect(try store.count(of: "Mood", includingSubentities: true) == 4)
    var keys: [Int64] = []
    try store.forEachObject(of: "Mood", includingSubentities: false) { keys.append($0.id.primaryKey) }
    #expect(keys == [38, 39, 84, 100])
    #expect(try store.object(ObjectID(entity: "Mood", primaryKey: 38)) != nil)
    let country = try #require(try store.object(ObjectID(entity: "Country", primaryKey: 30)))
    #expect(country.toMany["moods"]?.contains(ObjectID(entity: "Mood", primaryKey: 38)) == true)
    #expect(try StoreJSON.export(store).contains(#""pk": 38"#))
    #expect(try store.ruleViolations(limit: 10).isEmpty)
  }

  @Test func everyPathCarriesItWithTheRightNumber() throws {
    let folder = try TemporaryDirectory()
    let url = try Self.staleStore(in: folder)
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    let (v1, v2) = (try bundle.model(named: "Moody"), try bundle.model(named: "Moody 2"))
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    #expect(results.count == 3)
    for (method, migrated) in results {
      let rows = try DatabaseQueue(path: migrated.path).read { db in
        try Row.fetchAll(db, sql: "SELECT Z_PK, Z_ENT FROM ZMOOD ORDER BY Z_PK").map {
          [try $0.required(at: 0, as: Int64.self), try $0.required(at: 1, as: Int64.self)]
        }
      }
      let mood = Int64(try #require(StoreSchema(model: v2).layout(of: "Mood")).number)
      #expect(rows == [[38, mood], [39, mood], [84, mood], [100, mood]], "\(method)")
    }
  }

  /// A store of a framework before iOS 7 / OS X 10.9 has no Z_MODELCACHE table: every path
  /// migrates it, and it comes out in today's layout.
  @Test func aStoreWithoutAModelCacheTableMigratesOnEveryPath() throws {
    let folder = try TemporaryDirectory()
    let url = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try makeDatabase(url, ["DROP TABLE Z_MODELCACHE"])
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    let (v1, v2) = (try bundle.model(named: "Moody"), try bundle.model(named: "Moody 2"))
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    for (method, migrated) in results {
      let tables = try DatabaseQueue(path: migrated.path).read { db in
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'Z_MODELCACHE'")
      }
      #expect(tables == ["Z_MODELCACHE"], "\(method)")
    }
  }
}

/// Conservation: every path's output is checked against what the step read; damaging it on purpose
/// fails the step, naming the mapping and both counts, with the original untouched.
@Suite struct ConservationTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")

  @Test(arguments: [StepMethod.ddl, .copyRows, .objects])
  func aLostObjectOrLinkFailsTheStepOnEveryPath(_ method: StepMethod) throws {
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    let (v1, v2) = (try bundle.model(named: "Moody"), try bundle.model(named: "Moody 2"))
    let damages = [
      // An object too many (no links): the object count catches it.
      (
        "INSERT INTO ZMOOD (Z_PK, Z_ENT, Z_OPT) VALUES (500, \(try #require(StoreSchema(model: v2).layout(of: "Mood")).number), 1)",
        "entity mapping MoodToMood read 4 objects and wrote 5"
      ),
      // A mood lost, and a link lost: the links of the first mapping that holds them catch it.
      ("DELETE FROM ZMOOD WHERE Z_PK = 38", "entity mapping CountryToCountry read 4 'moods' links and wrote 3"),
      (
        "UPDATE ZMOOD SET ZCOUNTRY = NULL WHERE Z_PK = 39",
        "entity mapping CountryToCountry read 4 'moods' links and wrote 3"
      ),
    ]
    // A DDL step's edit keeps the tables it does not rewrite as they were by construction: they are
    // not counted again; its own statements are watched instead (StoreEdit.KeptRows, watched by the DDL edit) — damaged here.
    let editDamages = [
      "1 row inserted into ZMOOD", "1 row deleted from ZMOOD", "1 row with key or join columns written in ZMOOD",
    ]
    for ((damage, counted), watched) in zip(damages, editDamages) {
      let expected = method == .ddl ? watched : counted
      let folder = try TemporaryDirectory()
      let url = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
      let bytes = try Data(contentsOf: url)
      var options = StoreMigrator.Options(bulkCopy: method != .objects, ddl: method == .ddl)
      options.probe = Damage(sql: damage, method: method, inEdit: true)
      let migrator = StoreMigrator(store: url, plan: try Migrations.plan(v1, v2), options: options)
      let error = try #require(throws: MigrationError.self) { try migrator.run() }
      #expect(error.code == .validation)
      #expect(error.description.contains(expected), "\(method): \(error)")
      #expect(try Data(contentsOf: url) == bytes)
    }
  }

  /// A table the DDL edit rewrites (a column dropped: SQLite copies its rows) is counted again: an
  /// item lost there fails the step.
  @Test func aTableTheDDLEditRewritesIsCountedAgain() throws {
    let folder = try TemporaryDirectory()
    let attribute = { (name: String) in #"<attribute name="\#(name)" optional="YES" attributeType="String"/>"# }
    let v1 = try XcdatamodelReader.parse(
      Data("<model><entity name=\"Item\">\(attribute("name"))\(attribute("old"))</entity></model>".utf8), file: "V1",
      versionName: "V1")
    let v2 = try XcdatamodelReader.parse(
      Data("<model><entity name=\"Item\">\(attribute("name"))</entity></model>".utf8), file: "V2", versionName: "V2")
    let url = folder.url.appendingPathComponent("items.sqlite")
    let store = try SQLiteStore.create(at: url, model: v1)
    try store.write { writer in
      for key in 1...3 {
        try writer.insert(
          StoredObject(id: ObjectID(entity: "Item", primaryKey: Int64(key)), attributes: ["name": .string("item")]))
      }
    }
    try store.close()
    let bytes = try Data(contentsOf: url)
    var options = StoreMigrator.Options()
    options.probe = Damage(sql: "DELETE FROM ZITEM WHERE Z_PK = 2", method: .ddl, inEdit: false)
    let migrator = StoreMigrator(store: url, plan: try Migrations.plan(v1, v2), options: options)
    let error = try #require(throws: MigrationError.self) { try migrator.run() }
    #expect(error.description.contains("entity mapping ItemToItem read 3 objects and wrote 2"), "\(error)")
    #expect(try Data(contentsOf: url) == bytes)
  }

  @Test func migrateReportsWhatEachMappingReadAndWrote() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("MoodToMood                       4 → 4; links: country 4 → 4"), "\(result.stdout)")
    let json = try MigrunProcess.run([
      "migrate", try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder).path, "--model",
      Self.moody.path, "--json",
    ])
    #expect(json.stdout.contains(#""mapping":"MoodToMood""#) || json.stdout.contains(#""mapping" : "MoodToMood""#))
  }
}

/// Damage done on purpose to a step's work (`MigrationProbe`), to see the checks after it catch it:
/// `sql` run on the written file of a step that ran by `method` — inside the edit itself, for a DDL
/// step, when `inEdit` (its written file is then left alone).
private struct Damage: MigrationProbe {
  let sql: String
  let method: StepMethod
  let inEdit: Bool

  func stepWritten(_ destination: SQLiteStore, by ran: StepMethod) throws {
    #expect(ran == method)
    if ran != .ddl || !inEdit { try destination.withConnection { db in try db.execute(sql: sql) } }
  }

  func stepEditing(_ edit: StoreEdit) throws {
    if inEdit { try edit.db.execute(sql: sql) }
  }
}
