import Foundation
import GRDB
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// What a store holds beyond its model — persistent history, an app's own tables, derived-attribute
/// triggers, other triggers — comes through every path, or is refused by name with the option that
/// drops it on purpose. SampleModel2's stores are real ones with history (5,468 changes) and
/// Core Data's `Z_DA_` triggers.
@Suite struct ForeignObjectsTests {
  static let fixtures = "coredataplus-samplemodels/SampleModel2/Fixtures/"

  static func query<T: DatabaseValueConvertible>(_ url: URL, _ sql: String) throws -> [T] {
    try DatabaseQueue(path: StoreFiles.immutableURI(url), configuration: SQLiteStore.configuration(readOnly: true)).read
    { db in
      try T.fetchAll(db, sql: sql)
    }
  }

  static func history(_ url: URL) throws -> [String] {
    try query(url, "SELECT Z_ENT || '|' || Z_NAME || '|' || Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT")
      + query(url, "SELECT 'changes ' || count(*) FROM ACHANGE")
      + query(url, "SELECT 'transactions ' || count(*) FROM ATRANSACTION")
      + query(url, "SELECT 'strings ' || count(*) FROM ATRANSACTIONSTRING")
      + query(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'A%' ORDER BY name")
  }

  /// The store's own model → `destination`, one inferred step, run each of the three ways.
  static func migrateEachWay(_ store: String, to destination: ObjectModel, drop: Set<String> = [])
    throws -> [(StepMethod, URL, TemporaryDirectory)]
  {
    var results: [(StepMethod, URL, TemporaryDirectory)] = []
    for method in [StepMethod.ddl, .copyRows, .objects] {
      let folder = try TemporaryDirectory()
      let url = try writableCopyOfFixture(store, into: folder)
      let source = try #require(try SQLiteStore.cachedModel(at: url)).named("Source")
      let step = MigrationStep(
        from: "Source", to: "Destination", kind: .inferred,
        inferredMapping: try MappingModel.inferred(from: source, to: destination), source: source,
        destination: destination)
      var options = StoreMigrator.Options(keepBackup: false, bulkCopy: method != .objects, ddl: method == .ddl)
      options.drop = drop
      let plan = MigrationPlan(
        sourceVersion: "Source", destinationVersion: "Destination", steps: [step], rule: .storeModel)
      _ = try StoreMigrator(store: url, plan: plan, options: options).run()
      results.append((method, url, folder))
    }
    return results
  }

  @Test func historyAndDerivedAttributeTriggersComeThroughEveryPathAsApplesStoreHasThem() throws {
    let original = Fixtures.url(Self.fixtures + "SampleModel2_V1.sqlite")
    let target = Fixtures.url(Self.fixtures + "SampleModel2_V2.sqlite")
    let destination = try #require(try SQLiteStore.cachedModel(at: target)).named("Destination")
    let appleTriggers: [String] = try Self.query(
      target, "SELECT sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
    #expect(appleTriggers.count == 5)
    let before = try Self.history(original)
    #expect(before.contains("changes 5468"))
    for (method, url, _) in try Self.migrateEachWay(Self.fixtures + "SampleModel2_V1.sqlite", to: destination) {
      #expect(try Self.history(url) == before, "\(method): every history row, key row and index")
      let triggers: [String] = try Self.query(url, "SELECT sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
      #expect(triggers == appleTriggers, "\(method): Core Data's Z_DA_ triggers, as Apple's V2 store has them")
      let counts: [Int64] = try Self.query(
        url,
        "SELECT count(*) FROM ZBOOK b WHERE ZPAGESCOUNT IS NOT (SELECT count(*) FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK)")
      #expect(counts == [0], "\(method): every derived count is current")
    }
  }

  @Test func historyDroppedOnPurposeGoesOnEveryPathWithItsKeyRows() throws {
    let target = Fixtures.url(Self.fixtures + "SampleModel2_V2.sqlite")
    let destination = try #require(try SQLiteStore.cachedModel(at: target)).named("Destination")
    let history: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
    for (method, url, _) in try Self.migrateEachWay(
      Self.fixtures + "SampleModel2_V1.sqlite", to: destination, drop: history)
    {
      let tables: [String] = try Self.query(
        url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'A%'")
      #expect(tables.isEmpty, "\(method)")
      let keys: [Int64] = try Self.query(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT > 16000")
      #expect(keys.isEmpty, "\(method)")
      let pages: [Int64] = try Self.query(url, "SELECT count(*) FROM ZPAGE")
      #expect(pages == [4970], "\(method)")
    }
  }

  @Test func historyFollowsTheStepsRenumbering() throws {
    let original = Fixtures.url(Self.fixtures + "SampleModel2_V1.sqlite")
    let source = try #require(try SQLiteStore.cachedModel(at: original))
    // A new entity that sorts first moves every other entity's number up by one.
    let destination = try ObjectModel(entities: source.entities + [Entity(name: "Aardvark")], versionName: "D")
    let byEntity: [String] = try Self.query(
      original, "SELECT ZENTITY || ':' || count(*) FROM ACHANGE GROUP BY ZENTITY ORDER BY ZENTITY")
    let shifted = byEntity.map { line -> String in
      let parts = line.split(separator: ":")
      return "\((Int(parts[0]) ?? 0) + 1):\(parts[1])"
    }
    for (method, url, _) in try Self.migrateEachWay(Self.fixtures + "SampleModel2_V1.sqlite", to: destination) {
      #expect(method != .ddl || true)
      let after: [String] = try Self.query(
        url, "SELECT ZENTITY || ':' || count(*) FROM ACHANGE GROUP BY ZENTITY ORDER BY ZENTITY")
      #expect(after == shifted, "\(method)")
    }
  }

  @Test func historyOfARemovedEntityIsRefusedUnlessDroppedOnPurpose() throws {
    let original = Fixtures.url(Self.fixtures + "SampleModel2_V1.sqlite")
    let source = try #require(try SQLiteStore.cachedModel(at: original))
    let destination = try ObjectModel(
      entities: source.entities.filter { $0.name != "Feedback" }, versionName: "D")
    let folder = try TemporaryDirectory()
    let url = try writableCopyOfFixture(Self.fixtures + "SampleModel2_V1.sqlite", into: folder)
    let bytes = try Data(contentsOf: url)
    let step = MigrationStep(
      from: "Source", to: "D", kind: .inferred,
      inferredMapping: try MappingModel.inferred(from: source.named("Source"), to: destination),
      source: try source.named("Source"), destination: destination)
    let plan = MigrationPlan(sourceVersion: "Source", destinationVersion: "D", steps: [step], rule: .storeModel)
    let error = try #require(throws: MigrationError.self) { try StoreMigrator(store: url, plan: plan).run() }
    #expect(error.code == .wouldDrop)
    #expect(
      error.description.contains(
        "persistent history (ACHANGE) holds 444 changes of objects whose entity this step removes"))
    #expect(error.description.contains("add ACHANGE, ATRANSACTION, ATRANSACTIONSTRING to StoreMigrator.Options.drop"))
    #expect(try Data(contentsOf: url) == bytes)
    var options = StoreMigrator.Options()
    options.drop = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
    _ = try StoreMigrator(store: url, plan: plan, options: options).run()
    let tables: [String] = try Self.query(url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'A%'")
    #expect(tables.isEmpty)
    let keys: [Int64] = try Self.query(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT > 16000")
    #expect(keys.isEmpty)
  }

  @Test func anAppsOwnTablesAreKeptAndItsTriggersRefusedByName() throws {
    let moody = try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
    let (v1, v2) = (try moody.model(named: "Moody"), try moody.model(named: "Moody 2"))
    let folder = try TemporaryDirectory()
    let url = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try makeDatabase(
      url,
      [
        "CREATE TABLE app_settings (key TEXT PRIMARY KEY, value BLOB)",
        "INSERT INTO app_settings VALUES ('theme', x'01'), ('sync', x'02')",
        "CREATE INDEX app_settings_value ON app_settings (value)",
      ])
    // Kept on every path.
    for method in [StepMethod.ddl, .copyRows, .objects] {
      let migrated = try folder.folder(UUID().uuidString).appendingPathComponent("Moody.sqlite")
      try FileManager.default.copyItem(at: url, to: migrated)
      let report = try StoreMigrator(
        store: migrated, plan: try Migrations.plan(v1, v2),
        options: .init(keepBackup: false, bulkCopy: method != .objects, ddl: method == .ddl)
      ).run()
      #expect(report.steps.map(\.method) == [method])
      let rows: [String] = try Self.query(migrated, "SELECT key FROM app_settings ORDER BY key")
      #expect(rows == ["sync", "theme"], "\(method)")
      let indexes: [String] = try Self.query(
        migrated, "SELECT name FROM sqlite_master WHERE name = 'app_settings_value'")
      #expect(indexes == ["app_settings_value"], "\(method)")
    }
    // A trigger on the model's tables cannot be carried into a new file: refused by name.
    try makeDatabase(url, ["CREATE TRIGGER app_audit AFTER INSERT ON ZMOOD BEGIN SELECT 1; END"])
    let bytes = try Data(contentsOf: url)
    let error = try #require(throws: MigrationError.self) {
      try StoreMigrator(store: url, plan: try Migrations.plan(v1, v2)).run()
    }
    #expect(error.code == .wouldDrop)
    #expect(error.description.contains("trigger app_audit"))
    #expect(error.description.contains("add app_audit to StoreMigrator.Options.drop"))
    #expect(try Data(contentsOf: url) == bytes)
    var options = StoreMigrator.Options()
    options.drop = ["app_audit"]
    _ = try StoreMigrator(store: url, plan: try Migrations.plan(v1, v2), options: options).run()
    let triggers: [String] = try Self.query(url, "SELECT name FROM sqlite_master WHERE type = 'trigger'")
    #expect(triggers.isEmpty)
    let settings: [String] = try Self.query(url, "SELECT key FROM app_settings ORDER BY key")
    #expect(settings == ["sync", "theme"])
  }

  @Test func aDerivationMigrunCannotKeepCurrentIsRefusedByName() throws {
    let xml = """
      <model><entity name="Book"><attribute name="total" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="pages.@avg.words"/>
      <relationship name="pages" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Page" inverseName="book" inverseEntity="Page"/></entity>
      <entity name="Page"><attribute name="words" optional="YES" attributeType="Integer 64"/>
      <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book"/></entity></model>
      """
    let model = try XcdatamodelReader.parse(Data(xml.utf8), file: "B.xcdatamodel/contents", versionName: "B")
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("books.sqlite")
    let error = try #require(throws: StoreError.self) { try SQLiteStore.create(at: url, model: model) }
    #expect(error.code == .unsupportedDerivation)
    #expect(error.description.contains("attribute 'total' is derived as 'pages.@avg.words'"))
    #expect(error.description.contains("Core Data does not keep an average current in SQL either"))
    #expect(!FileManager.default.fileExists(atPath: url.path), "nothing half-done")
  }
}
