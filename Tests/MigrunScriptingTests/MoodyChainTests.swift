import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// objc.io's Moody: five real Apple stores, one inferred and four scripted steps, to Moody 6.
@Suite struct MoodyChainTests {
  static let bundleURL = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
  static let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")

  @discardableResult
  static func migrate(_ store: URL, to destination: String? = nil) throws -> StoreMigrator.Report {
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: [policies], override: nil)
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try SQLiteStore.metadata(at: store).versionHashes, destination: destination,
      order: order,
      script: { from, to in
        let file = policies.appendingPathComponent("\(from)-\(to).lua")
        return FileManager.default.fileExists(atPath: file.path) ? [file] : nil
      })
    let migrator = StoreMigrator(store: store, plan: plan)
    migrator.scripts = LuaScripts(policyFolders: [policies])
    return try migrator.run()
  }

  /// Country code → its continent's code, as the store holds it (v1–v4 through the relationship, v5 as isoContinent).
  static func continentOfCountry(_ store: SQLiteStore) throws -> [Int64: Int64] {
    var result: [Int64: Int64] = [:]
    try store.forEachObject(of: "Country", includingSubentities: false) { country in
      guard case .integer(let code)? = country.attributes["numericISO3166Code"] else { return }
      if case .integer(let iso)? = country.attributes["isoContinent"] {
        result[code] = iso
      } else if let continent = country.toOne["continent"], let object = try store.object(continent),
        case .integer(let continentCode)? = object.attributes["numericISO3166Code"]
      {
        result[code] = continentCode
      }
    }
    return result
  }

  /// Mood key → (country code, remote identifier).
  static func moods(_ store: SQLiteStore) throws -> [Int64: (country: Int64?, remote: StoreValue)] {
    var result: [Int64: (country: Int64?, remote: StoreValue)] = [:]
    try store.forEachObject(of: "Mood", includingSubentities: false) { mood in
      var country: Int64?
      if let id = mood.toOne["country"],
        case .integer(let code)? = try store.object(id)?.attributes["numericISO3166Code"]
      {
        country = code
      }
      result[mood.id.primaryKey] = (
        country, mood.attributes["remoteID"] ?? mood.attributes["remoteIdentifier"] ?? .null
      )
    }
    return result
  }

  @Test(arguments: ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"])
  func everyMoodyStoreReachesMoody6InOneRun(version: String) throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/\(version).moody.sqlite", into: folder)
    let bundle = try ModelBundle(modelOrStoreAt: Self.bundleURL)
    let before = try SQLiteStore(url: store, model: try bundle.model(named: version))
    let continents = try Self.continentOfCountry(before)
    let moods = try Self.moods(before)
    try before.close()

    let report = try Self.migrate(store)
    #expect(report.steps.last?.name.hasSuffix("Moody 6") == true)
    let v6 = try bundle.model(named: "Moody 6")
    #expect(try SQLiteStore.metadata(at: store).isCompatible(with: v6))
    let after = try SQLiteStore(url: store, model: v6)
    #expect(try Self.continentOfCountry(after) == continents, "every country is linked to the continent with its code")
    var continentCodes: [Int64] = []
    try after.forEachObject(of: "Continent", includingSubentities: false) { continent in
      if case .integer(let code)? = continent.attributes["numericISO3166Code"] { continentCodes.append(code) }
      #expect(!(continent.toMany["countries"] ?? []).isEmpty)
    }
    #expect(continentCodes.sorted() == Set(continents.values).sorted(), "one continent per code (find or create)")
    let migratedMoods = try Self.moods(after)
    #expect(migratedMoods.count == moods.count)
    for (key, mood) in moods {
      #expect(migratedMoods[key]?.country == mood.country, "Mood/p\(key) keeps its country")
      #expect(migratedMoods[key]?.remote == mood.remote, "Mood/p\(key) keeps its remote identifier")
    }
  }

  @Test func step2To3GivesEachMoodItsCountrysContinent() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    try Self.migrate(store, to: "Moody 3")
    let v3 = try ModelBundle(modelOrStoreAt: Self.bundleURL).model(named: "Moody 3")
    let after = try SQLiteStore(url: store, model: v3)
    var checked = 0
    try after.forEachObject(of: "Mood", includingSubentities: false) { mood in
      let country = try mood.toOne["country"].flatMap { try after.object($0) }
      #expect(mood.toOne["continent"] == country?.toOne["continent"], "\(mood.id)")
      checked += 1
    }
    #expect(checked > 0)
    try after.forEachObject(of: "Continent", includingSubentities: false) { continent in
      var union: Set<ObjectID> = []
      for country in continent.toMany["countries"] ?? [] {
        union.formUnion(try after.object(country)?.toMany["moods"] ?? [])
      }
      #expect(Set(continent.toMany["moods"] ?? []) == union, "a continent's moods are its countries' moods")
    }
  }
}
