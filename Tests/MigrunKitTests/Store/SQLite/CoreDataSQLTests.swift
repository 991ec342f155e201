import Foundation
import GRDB
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Core Data's own SQL, statement for statement: for every store in the fixtures (the production
/// schemas included), a store created for the store's own model — as the framework that wrote it
/// writes one (``StoreMetadata/frameworkVersion``) — has the same `sqlite_master`, whitespace
/// aside, and the same `Z_PRIMARYKEY` numbering. What Core Data wrote that `create` does not is
/// named below, each with its reason; nothing else may differ.
@Suite struct CoreDataSQLTests {
  /// Stores Core Data migrated in place: it appended the columns a later version added with
  /// `ALTER TABLE … ADD COLUMN`, after the columns of the version the table was made by. Their
  /// statement is the new store's with those columns moved to the end.
  static let migratedInPlace: [String: (table: String, appended: [String])] = [
    "production-schemas/notes-josh_ios17_ffs-NoteStore.sqlite": (
      "ZICCLOUDSYNCINGOBJECT",
      [
        "ZGENERATION", "ZLASTSYNCDATE", "ZPAPERBUNDLEGENERATION", "ZFALLBACKPDFCRYPTOTAG", "ZGENERATION1",
        "ZFALLBACKIMAGEGENERATION", "ZSUPPORTSV1NEO", "ZWIDGETSNIPPET", "ZCRYPTOPASSPHRASEVERIFIER",
        "ZFALLBACKPDFCRYPTOINITIALIZATIONVECTOR", "ZMERGEABLEPREFERREDVIEWSIZE", "ZFALLBACKPDFGENERATION",
      ]
    )
  ]

  /// `Z_PRIMARYKEY` names an entity by the name it had when the store was made: Core Data keeps a
  /// renamed entity's row (and its number) under the old name.
  static let staleNames: [String: [String: String]] = [
    "coredataplus-samplemodels/SampleModel/Fixtures/SampleModel_V2.sqlite": ["ExpensiveSportCar": "LuxuryCar"]
  ]

  @Test func createWritesCoreDatasStatementsForEveryFixtureStore() throws {
    let folder = try TemporaryDirectory()
    let stores = try Self.fixtureStores()
    #expect(stores.count >= 39, "\(stores.count) stores found under \(Fixtures.coreData.path)")
    var tables = 0
    for (index, store) in stores.enumerated() {
      let url = try copyOfFixture(store, into: folder)
      let model = try Self.model(of: url, store: store)
      let created = folder.url.appendingPathComponent("created-\(index).sqlite")
      try SQLiteStore.create(at: created, model: model, metadata: try SQLiteStore.metadata(at: url))
      var apple = try SchemaStatements(of: url)
      let ours = try SchemaStatements(of: created)
      // Core Data adds persistent history's tables (ACHANGE, ATRANSACTION, ATRANSACTIONSTRING, their
      // indexes; Z_ENT 16001–16003) to a store whose coordinator tracks history: a new store has
      // none, and a migration carries them as they are.
      apple.statements = apple.statements.filter { !Self.isHistory($0.key) }
      // Frameworks before iOS 7 wrote no model cache.
      if apple["table", "Z_MODELCACHE"] == nil { apple["table", "Z_MODELCACHE"] = ours["table", "Z_MODELCACHE"] }
      if let moved = Self.migratedInPlace[store] {
        let expected = ours["table", moved.table].map { Self.moving(moved.appended, toTheEndOf: $0) }
        #expect(
          apple["table", moved.table] == expected,
          "\(store): \(moved.table) is not the new statement with columns appended")
        apple["table", moved.table] = ours["table", moved.table]
      }
      for difference in apple.differences(from: ours, ("Core Data", "migrun")) {
        Issue.record("\(store): \(difference)")
      }
      tables += apple.statements.keys.filter { $0.type == "table" }.count
      let renamed = Self.staleNames[store] ?? [:]
      let appleNumbers = try Self.numbering(of: url).filter { $0.number < 16_000 }.map {
        Numbered(number: $0.number, name: renamed[$0.name] ?? $0.name, superNumber: $0.superNumber)
      }
      #expect(appleNumbers == (try Self.numbering(of: created)), "\(store)")
    }
    #expect(tables > 300)
  }

  @Test func entitiesAreNumberedInCaseInsensitiveNameOrder() throws {
    let model = try ObjectModel(
      entities: [
        "SMessage", "ScheduledMemberTag", "SDKSyncTask", "SContact", "SearchCacheResults", "SFile", "a_b", "a1", "aB",
      ]
      .map { Entity(name: $0) })
    let numbers = StoreSchema(model: model).entities.map(\.name)
    #expect(
      numbers == [
        "a1", "a_b", "aB", "ScheduledMemberTag", "SContact", "SDKSyncTask", "SearchCacheResults", "SFile", "SMessage",
      ])
  }

  // MARK: - Reading the fixtures

  static func isHistory(_ key: SchemaStatements.Key) -> Bool {
    ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"].contains(key.table)
  }

  struct Numbered: Equatable, CustomStringConvertible {
    let number: Int
    let name: String
    let superNumber: Int
    var description: String { "\(number) \(name) (\(superNumber))" }
  }

  /// Every SQLite store in the fixtures, as paths inside the fixtures folder.
  static func fixtureStores() throws -> [String] {
    guard let walker = FileManager.default.enumerator(at: Fixtures.coreData, includingPropertiesForKeys: nil) else {
      return []
    }
    let root = Fixtures.coreData.standardizedFileURL.path + "/"
    var found: [String] = []
    for case let url as URL in walker where url.pathExtension == "sqlite" {
      found.append(String(url.standardizedFileURL.path.dropFirst(root.count)))
    }
    return found.sorted()
  }

  /// The store's own model: its cache, or (a store written before caches) the version
  /// `expected_store_hashes.json` names.
  static func model(of url: URL, store: String) throws -> ObjectModel {
    if let cached = try SQLiteStore.cachedModel(at: url) { return cached }
    let expected = try StoreConformanceTests.expected().first { $0.store == store }
    let contents = try #require(expected?.expected.model, "\(store) has no model cache and no model named")
    let (bundle, version) = try StoreConformanceTests.bundle(for: contents)
    return try bundle.model(named: version)
  }

  static func numbering(of url: URL) throws -> [Numbered] {
    try read(url) { db in
      try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
        Numbered(number: $0["Z_ENT"], name: $0["Z_NAME"], superNumber: $0["Z_SUPER"])
      }
    }
  }

  static func read<T>(_ url: URL, _ body: (Database) throws -> T) throws -> T {
    var configuration = Configuration()
    configuration.readonly = true
    let path = "file:\(url.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? url.path)?immutable=1"
    return try DatabaseQueue(path: path, configuration: configuration).read(body)
  }

  /// `statement` (normalized) with the definitions of `columns` taken out and appended, in that order.
  static func moving(_ columns: [String], toTheEndOf statement: String) -> String {
    guard let open = statement.firstIndex(of: "("), let close = statement.lastIndex(of: ")") else { return statement }
    let parts = statement[statement.index(after: open)..<close].split(separator: ",").map(String.init)
    let named = { (part: String) in String(part.split(separator: " ").first ?? "") }
    let kept = parts.filter { !columns.contains(named($0)) }
    let moved = columns.compactMap { column in parts.first { named($0) == column } }
    return statement[...open] + (kept + moved).joined(separator: ",") + ")"
  }
}
