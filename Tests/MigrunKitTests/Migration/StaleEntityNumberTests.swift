import Foundation
import GRDB
import Testing

@testable import MigrunKit
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
    let bundle = try ModelBundle(contentsOf: Self.moody)
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
    let bundle = try ModelBundle(contentsOf: Self.moody)
    let (v1, v2) = (try bundle.model(named: "Moody"), try bundle.model(named: "Moody 2"))
    let results = try DDLStepTests.migrateEveryWay(
      url, plan: try DDLStepTests.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
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
    let bundle = try ModelBundle(contentsOf: Self.moody)
    let (v1, v2) = (try bundle.model(named: "Moody"), try bundle.model(named: "Moody 2"))
    let results = try DDLStepTests.migrateEveryWay(
      url, plan: try DDLStepTests.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    for (method, migrated) in results {
      let tables = try DatabaseQueue(path: migrated.path).read { db in
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'Z_MODELCACHE'")
      }
      #expect(tables == ["Z_MODELCACHE"], "\(method)")
    }
  }
}
