import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

@Suite struct InferredMigrationTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
  static let sampleModel = Fixtures.url("coredataplus-samplemodels/SampleModel/SampleModel.xcdatamodeld")

  /// Migrates a copy of `store` to `destination` with inferred steps only; returns the copy, the
  /// plan and a copy of the original (to compare against).
  /// `method`: how the steps are to run — DDL (where `ddlApplies`, else rows copied), rows copied
  /// by SQL (they must be able to), or object by object.
  static func migrate(
    _ store: String, bundle bundleURL: URL, to destination: String, in folder: TemporaryDirectory,
    method: StepMethod, ddlApplies: Bool
  ) throws -> (migrated: URL, original: URL, plan: MigrationPlan) {
    let url = try copyOfFixture(store, into: folder)
    let original = try copyOfFixture(store, into: folder)
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: [], override: nil)
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try SQLiteStore.metadata(at: url).versionHashes, destination: destination,
      order: order)
    let report = try StoreMigrator(
      store: url, plan: plan, options: .init(bulkCopy: method != .objects, ddl: method == .ddl)
    ).run()
    let expected = method == .ddl && !ddlApplies ? StepMethod.copyRows : method
    #expect(report.steps.map(\.method) == plan.steps.map { _ in expected }, "every step ran as \(expected)")
    return (url, original, plan)
  }

  /// Every source object has a destination object with the same key, its attributes taken as the
  /// mapping says and its relationships pointing at the same keys.
  static func expectObjectsSurvived(_ mapping: MappingModel, source: SQLiteStore, destination: SQLiteStore) throws
    -> Int
  {
    var checked = 0
    for entityMapping in mapping.entityMappings {
      guard let from = entityMapping.sourceEntity, let to = entityMapping.destinationEntity else { continue }
      try source.forEachObject(of: from, includingSubentities: false) { old in
        let migrated = try destination.object(ObjectID(entity: to, primaryKey: old.id.primaryKey))
        guard let new = migrated else {
          Issue.record("\(old.id) has no \(to) in the migrated store")
          return
        }
        for (name, attributeSource) in entityMapping.attributes {
          switch attributeSource {
          case .property(let origin):
            #expect(new.attributes[name] == old.attributes[origin], "\(old.id).\(origin) → \(name)")
          case .propertyOrDefault(let origin, let fallback):
            let value = old.attributes[origin] ?? .null
            #expect(new.attributes[name] == (value == .null ? fallback : value))
          case .converted(let origin, let conversion, let fallback):
            let value = try conversion.apply(old.attributes[origin] ?? .null)
            #expect(new.attributes[name] == (value == .null ? fallback : value), "\(old.id).\(origin) → \(name)")
          case .constant(let value): #expect(new.attributes[name] == value, "\(new.id).\(name)")
          case .computed: Issue.record("an inferred mapping computes nothing: \(name)")
          }
        }
        for (name, origin) in entityMapping.relationships {
          let oldTargets = (old.toMany[origin] ?? old.toOne[origin].map { [$0] } ?? []).map(\.primaryKey).sorted()
          let newTargets = (new.toMany[name] ?? new.toOne[name].map { [$0] } ?? []).map(\.primaryKey).sorted()
          #expect(newTargets == oldTargets, "\(old.id).\(origin) → \(name)")
        }
        checked += 1
      }
    }
    return checked
  }

  @Test(arguments: [StepMethod.ddl, .copyRows, .objects])
  func moody1To2RenamesThroughTheRenamingIdentifierAndAddsRatingWithItsDefault(method: StepMethod) throws {
    let folder = try TemporaryDirectory()
    let (migrated, original, plan) = try Self.migrate(
      "objcio-core-data-moody/stores/Moody.moody.sqlite", bundle: Self.moody, to: "Moody 2", in: folder,
      method: method, ddlApplies: true)
    #expect(plan.steps.map(\.name) == ["Moody → Moody 2"])
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    let v2 = try bundle.model(named: "Moody 2")
    let metadata = try SQLiteStore.metadata(at: migrated)
    #expect(metadata.isCompatible(with: v2))
    #expect(metadata.uuid == (try SQLiteStore.metadata(at: original)).uuid)
    #expect(metadata.otherKeys["io.objc.Moody.CloudKitUserID"] != nil, "user metadata survives")
    let apple = try SchemaSnapshot(of: Fixtures.url("objcio-core-data-moody/stores/Moody 2.moody.sqlite"))
    let ours = try SchemaSnapshot(of: migrated)
    #expect(ours.tables == apple.tables)
    // Apple's Moody stores spell uniqueness the old way (CONSTRAINT … UNIQUE, no named index); a
    // migrated store gets the modern unique index: compare uniqueness by columns, other indexes by name.
    // Apple's store (framework 637) has the legacy indexes in the old form, the migrated store
    // today's; the DDL edit leaves GeographicRegion's table alone, which keeps its old compound
    // index beside today's, as Core Data's migration in place does.
    let era = FrameworkEra(
      try SQLiteStore.metadata(at: Fixtures.url("objcio-core-data-moody/stores/Moody 2.moody.sqlite")))
    #expect(era.written(v2).filter { !$0.contains("_UNIQUE_") } == apple.indexes)
    var expected = Set(StoreSchema(model: v2).indexes.map(\.name))
    if method == .ddl { expected.insert("ZGEOGRAPHICREGION_ZMARKEDFORDELETIONDATE_ZUPDATEDAT") }
    #expect(ours.indexes == expected)
    #expect(ours.uniqueness == apple.uniqueness)
    let mapping = try #require(plan.steps.first?.inferredMapping)
    #expect(mapping.mapping(named: "MoodToMood")?.attributes["remoteID"] == .property("remoteIdentifier"))
    #expect(mapping.mapping(named: "MoodToMood")?.attributes["rating"] == .constant(.integer(0)))
    let checked = try Self.expectObjectsSurvived(
      mapping, source: SQLiteStore(url: original, model: try bundle.model(named: "Moody")),
      destination: SQLiteStore(url: migrated, model: v2))
    #expect(checked == 9, "2 continents, 3 countries, 4 moods")
    let backup = StoreFiles.backupURL(for: migrated)
    #expect(try Data(contentsOf: backup) == (try Data(contentsOf: original)), "the original is kept as NAME~.EXT")
  }

  /// An entity renamed: its rows move to another table, so even the DDL path copies rows.
  @Test(arguments: [StepMethod.ddl, .copyRows, .objects]) func sampleModelV1ToV2RenamesAnEntityAndDropsAttributes(
    method: StepMethod
  )
    throws
  {
    let folder = try TemporaryDirectory()
    let (migrated, original, plan) = try Self.migrate(
      "coredataplus-samplemodels/SampleModel/Fixtures/SampleModel_V1.sqlite", bundle: Self.sampleModel,
      to: "SampleModel2", in: folder, method: method, ddlApplies: false)
    let bundle = try ModelBundle(modelOrStoreAt: Self.sampleModel)
    let v2 = try bundle.model(named: "SampleModel2")
    #expect(try SQLiteStore.metadata(at: migrated).isCompatible(with: v2))
    let apple = try SchemaSnapshot(
      of: Fixtures.url("coredataplus-samplemodels/SampleModel/Fixtures/SampleModel_V2.sqlite"))
    let ours = try SchemaSnapshot(of: migrated)
    #expect(ours.tables == apple.tables)
    #expect(ours.indexes == apple.indexes)
    #expect(ours.uniqueness == apple.uniqueness)
    let mapping = try #require(plan.steps.first?.inferredMapping)
    #expect(mapping.mapping(named: "ExpensiveSportCarToLuxuryCar") != nil)
    let checked = try Self.expectObjectsSurvived(
      mapping, source: SQLiteStore(url: original, model: try bundle.model(named: "SampleModel")),
      destination: SQLiteStore(url: migrated, model: v2))
    #expect(checked > 0)
  }

  /// Apple's TestModel store is empty: the step is checked on its layout and hashes.
  /// A new entity numbered after the others: created by DDL, with Book's new column.
  @Test(arguments: [StepMethod.ddl, .copyRows, .objects]) func bigNerdRanchAddsAnEntity(method: StepMethod) throws {
    let folder = try TemporaryDirectory()
    let bundleURL = Fixtures.url("bignerdranch-coredatastack/Sample Model/Deprecated/Sample.xcdatamodeld")
    let (migrated, original, plan) = try Self.migrate(
      "bignerdranch-coredatastack/Sample Model/Deprecated/TestModel.sqlite", bundle: bundleURL, to: "TestModel 2",
      in: folder, method: method, ddlApplies: true)
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let mapping = try #require(plan.steps.first?.inferredMapping)
    #expect(mapping.mapping(named: "AddPublisher")?.kind == .add)
    _ = original
    let v2 = try bundle.model(named: "TestModel 2")
    #expect(try SQLiteStore.metadata(at: migrated).isCompatible(with: v2))
    let ours = try SchemaSnapshot(of: migrated)
    #expect(ours.tables["ZPUBLISHER"] == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
    #expect(ours.tables["ZBOOK"]?.contains("ZPUBLISHER") == true)
    #expect(ours.tables["Z_1BOOKS"] == ["Z_1AUTHORS", "Z_2BOOKS"])
  }

  @Test func whatCannotBeInferredIsRefusedWithTheReasonBeforeAnythingRuns() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      #"<model><entity name="E"><attribute name="a" optional="YES" attributeType="Integer 16"/></entity></model>"#,
      to: "M.xcdatamodeld/M.xcdatamodel/contents")
    try folder.write(
      #"<model><entity name="E"><attribute name="a" optional="YES" attributeType="String"/></entity></model>"#,
      to: "M.xcdatamodeld/M 2.xcdatamodel/contents")
    let bundle = try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("M.xcdatamodeld"))
    let hashes = try bundle.model(named: "M").entityVersionHashes
    let error = try #require(throws: MigrationError.self) {
      try MigrationPlanner.plan(bundle: bundle, storeHashes: hashes)
    }
    #expect(error.code == .notInferable)
    #expect(error.step == "M → M 2", "the step that cannot be inferred is named")
    #expect(error.entity == "E" && error.property == "a")
    #expect(error.description.contains("changes type from Integer 16 to String"))
    #expect(
      error.description.contains(
        "no mapping file M-M 2.lua (or mapping model M-M 2.xcmappingmodel or .cdm) in the policy folders"))
    // A mapping file for the step makes it scripted.
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: hashes, destination: "M 2",
      script: { from, to in [folder.url.appendingPathComponent("\(from)-\(to).lua")] })
    #expect(plan.steps.map(\.kind) == [.scripted([folder.url.appendingPathComponent("M-M 2.lua")])])
    #expect(plan.rule == .directMapping)
  }

  /// A model whose version names sort in no useful order (the current one is neither first nor last
  /// by name): `Zeta` (oldest), `alpha` and `Beta` (current).
  static func unorderedModel(in folder: TemporaryDirectory) throws -> ModelBundle {
    try folder.write(
      #"<model><entity name="E"><attribute name="a" optional="YES" attributeType="String"/></entity></model>"#,
      to: "U.xcdatamodeld/Zeta.xcdatamodel/contents")
    try folder.write(
      #"<model><entity name="E"><attribute name="a" optional="YES" attributeType="String"/><attribute name="x" attributeType="Integer 32"/></entity></model>"#,
      to: "U.xcdatamodeld/alpha.xcdatamodel/contents")
    try folder.write(
      #"<model><entity name="E"><attribute name="a" optional="YES" attributeType="String"/><attribute name="x" attributeType="Integer 64"/><attribute name="n" optional="YES" attributeType="Date"/></entity></model>"#,
      to: "U.xcdatamodeld/Beta.xcdatamodel/contents")
    try folder.write(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Beta.xcdatamodel</string></dict></plist>
      """, to: "U.xcdatamodeld/.xccurrentversion")
    return try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("U.xcdatamodeld"))
  }

  @Test func theDefaultPathIsCoreDatasDirectStepWhateverTheNames() throws {
    let folder = try TemporaryDirectory()
    let bundle = try Self.unorderedModel(in: folder)
    #expect(bundle.currentVersionName == "Beta")
    // alpha → Beta is inferable: one direct step, although 'Beta' sorts before 'alpha' and 'Zeta'.
    let direct = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try bundle.model(named: "alpha").entityVersionHashes)
    #expect(direct.steps.map(\.name) == ["alpha → Beta"])
    #expect(direct.rule == .directInferred)
    // Zeta → Beta adds a required attribute without a default: not inferable. A mapping file for the
    // pair is taken directly…
    let zeta = try bundle.model(named: "Zeta").entityVersionHashes
    let scripted = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: zeta,
      script: { from, to in from == "Zeta" ? [folder.url.appendingPathComponent("\(from)-\(to).lua")] : nil })
    #expect(scripted.steps.map(\.name) == ["Zeta → Beta"] && scripted.rule == .directMapping)
    // …and without one, the shortest path through mapping files and inferable steps.
    let staged = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: zeta,
      script: { from, to in
        from == "Zeta" && to == "alpha" ? [folder.url.appendingPathComponent("Zeta-alpha.lua")] : nil
      })
    #expect(staged.steps.map(\.name) == ["Zeta → alpha", "alpha → Beta"])
    #expect(staged.steps.map(\.kind) == [.scripted([folder.url.appendingPathComponent("Zeta-alpha.lua")]), .inferred])
    #expect(staged.rule == .shortestPath)
    // No way at all: refused, naming the direct step and why.
    let none = try #require(throws: MigrationError.self) {
      try MigrationPlanner.plan(bundle: bundle, storeHashes: zeta)
    }
    #expect(none.code == .notInferable && none.step == "Zeta → Beta" && none.property == "x")
    #expect(none.description.contains("no path through other versions"))
    // A store at the destination needs nothing, and says so.
    let current = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try bundle.model(named: "Beta").entityVersionHashes)
    #expect(!current.needsMigration && current.rule == .current)
  }

  @Test func anExplicitOrderWalksEveryVersion() throws {
    let folder = try TemporaryDirectory()
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    try folder.write("# oldest first\nMoody\nMoody 2\n\nMoody 3\n", to: "policies/chain")
    let fromFile = try #require(
      try MigrationPlanner.explicitOrder(
        bundle, policyFolders: [folder.url.appendingPathComponent("policies")], override: nil))
    #expect(fromFile.names == ["Moody", "Moody 2", "Moody 3"])
    #expect(try MigrationPlanner.explicitOrder(bundle, policyFolders: [], override: nil) == nil)
    let error = try #require(throws: MigrationError.self) {
      try MigrationPlanner.explicitOrder(bundle, policyFolders: [], override: ["Moody", "Moody 7"])
    }
    #expect(error.description.contains("--chain names version 'Moody 7'"))
    let moody = try bundle.model(named: "Moody").entityVersionHashes
    let walked = try MigrationPlanner.plan(bundle: bundle, storeHashes: moody, destination: "Moody 3", order: fromFile)
    #expect(walked.steps.map(\.name) == ["Moody → Moody 2", "Moody 2 → Moody 3"])
    #expect(walked.rule == .chain(fromFile.origin))
    let backwards = try #require(throws: MigrationError.self) {
      try MigrationPlanner.plan(
        bundle: bundle, storeHashes: try bundle.model(named: "Moody 3").entityVersionHashes, destination: "Moody 2",
        order: fromFile)
    }
    #expect(backwards.code == .backwards)
    // A chain file is outside input: a million lines 'Moody' then 'Moody 3' were a million steps
    // Moody → Moody. A version named twice is refused by name.
    try folder.write(String(repeating: "Moody\n", count: 100_000) + "Moody 3\n", to: "twice/chain")
    let twice = try #require(throws: MigrationError.self) {
      try MigrationPlanner.explicitOrder(
        bundle, policyFolders: [folder.url.appendingPathComponent("twice")], override: nil)
    }
    #expect(twice.code == .backwards)
    #expect(twice.description.contains("chain names version 'Moody' twice"), "\(twice)")
    let back = try #require(throws: MigrationError.self) {
      try MigrationPlanner.explicitOrder(bundle, policyFolders: [], override: ["Moody", "Moody 2", "Moody"])
    }
    #expect(back.description.contains("--chain names version 'Moody' twice"), "\(back)")
  }

  @Test func inferenceRulesRefuseTypeChangesAndRequiredValuesWithoutDefaults() throws {
    func model(_ attribute: String) throws -> ObjectModel {
      try XcdatamodelReader.parse(Data("<model><entity name=\"E\">\(attribute)</entity></model>".utf8), file: "m")
    }
    let optionalInt = try model(#"<attribute name="a" optional="YES" attributeType="Integer 16"/>"#)
    let cases: [(String, String)] = [
      (#"<attribute name="a" optional="YES" attributeType="String"/>"#, "changes type from Integer 16 to String"),
      (#"<attribute name="a" attributeType="Integer 16"/>"#, "becomes required without a default value"),
      (
        #"<attribute name="a" optional="YES" attributeType="Integer 16"/><attribute name="b" attributeType="Date"/>"#,
        "is new and required without a default value"
      ),
    ]
    for (destination, reason) in cases {
      let error = try #require(throws: MigrationError.self) {
        try MappingModel.inferred(from: optionalInt, to: try model(destination))
      }
      #expect(error.description.contains(reason), "\(error)")
    }
    let withDefault = try MappingModel.inferred(
      from: optionalInt, to: try model(#"<attribute name="a" attributeType="Integer 16" defaultValueString="5"/>"#))
    #expect(withDefault.entityMappings.first?.attributes["a"] == .propertyOrDefault("a", .integer(5)))
  }

  /// `optional="YES" minCount="1" maxCount="1"` (as Xcode often writes) is an optional to-one: a new
  /// one is inferable; a new non-optional one is refused, naming the relationship.
  @Test func anOptionalRelationshipWithAMinimumIsInferableWhenNew() throws {
    func model(_ relationship: String) throws -> ObjectModel {
      let xml = "<model><entity name=\"T\"/><entity name=\"E\">\(relationship)</entity></model>"
      return try XcdatamodelReader.parse(Data(xml.utf8), file: "m")
    }
    let before = try model("")
    let optional = try MappingModel.inferred(
      from: before,
      to: try model(
        #"<relationship name="owner" optional="YES" minCount="1" maxCount="1" deletionRule="Nullify" destinationEntity="T"/>"#
      ))
    #expect(optional.entityMappings.contains { $0.destinationEntity == "E" })
    let error = try #require(throws: MigrationError.self) {
      try MappingModel.inferred(
        from: before,
        to: try model(#"<relationship name="owner" maxCount="1" deletionRule="Nullify" destinationEntity="T"/>"#))
    }
    #expect(error.description.contains("the new relationship 'owner' is required"), "\(error)")
  }

  @Test func validationFailureLeavesTheOriginalByteIdenticalAndNoStrayFiles() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let before = try Data(contentsOf: store)
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    // A hand-made mapping that leaves a required attribute NULL: stage 3 must refuse it.
    var mapping = try MappingModel.inferred(
      from: try bundle.model(named: "Moody"), to: try bundle.model(named: "Moody 2"))
    if let index = mapping.entityMappings.firstIndex(where: { $0.name == "MoodToMood" }) {
      mapping.entityMappings[index].attributes["date"] = .constant(.null)
    }
    let step = MigrationStep(
      from: "Moody", to: "Moody 2", kind: .inferred, inferredMapping: mapping, source: try bundle.model(named: "Moody"),
      destination: try bundle.model(named: "Moody 2"))
    let plan = MigrationPlan(
      sourceVersion: "Moody", destinationVersion: "Moody 2", steps: [step], rule: .directInferred)
    let error = try #require(throws: MigrationError.self) { try StoreMigrator(store: store, plan: plan).run() }
    #expect(error.code == .validation)
    #expect(error.description.contains("'date' is required but NULL"))
    #expect(try Data(contentsOf: store) == before)
    let left = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path)
    #expect(left == [store.lastPathComponent], "\(left)")
  }
}

/// A value Core Data's direct inferred step loses and a walk through the versions keeps: a model
/// that renames one attribute at every version, each renaming identifier naming only the version
/// before (`name` → `v2_name` → `v3_name` → `v4_name`). migrun walks and says why.
@Suite struct RenamingChainTests {
  static func bundle(in folder: TemporaryDirectory) throws -> ModelBundle {
    let names = ["name", "v2_name", "v3_name", "v4_name"]
    for (index, name) in names.enumerated() {
      let renaming = index == 0 ? "" : #" elementID="\#(names[index - 1])""#
      try folder.write(
        #"<model><entity name="Item"><attribute name="\#(name)" optional="YES" attributeType="String"\#(renaming)/><attribute name="size" optional="YES" attributeType="Integer 32"/></entity></model>"#,
        to: "R.xcdatamodeld/R\(index + 1).xcdatamodel/contents")
    }
    try folder.write(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>R4.xcdatamodel</string></dict></plist>
      """, to: "R.xcdatamodeld/.xccurrentversion")
    return try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("R.xcdatamodeld"))
  }

  @Test(arguments: ["R1", "R2", "R3"]) func everyVersionKeepsTheRenamedValue(_ version: String) throws {
    let folder = try TemporaryDirectory()
    let bundle = try Self.bundle(in: folder)
    let model = try bundle.model(named: version)
    let url = folder.url.appendingPathComponent("\(version).sqlite")
    let store = try SQLiteStore.create(at: url, model: model)
    let attribute = try #require(
      model.entity(named: "Item").map { model.attributes(of: $0) }?.first { $0.name != "size" })
    try store.write { writer in
      for key in 1...3 {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Item", primaryKey: Int64(key)),
            attributes: [attribute.name: .string("item \(key)"), "size": .integer(Int64(key))]))
      }
    }
    try store.close()
    let plan = try MigrationPlanner.plan(bundle: bundle, storeHashes: try SQLiteStore.metadata(at: url).versionHashes)
    if version == "R3" {
      // One step apart: the direct step is the walk.
      #expect(plan.rule == .directInferred)
    } else {
      #expect(plan.rule == .keepingValues(lostDirectly: ["Item.v4_name"]))
      #expect(plan.rule.description.contains("would lose Item.v4_name"))
      #expect(plan.steps.count == 4 - (Int(version.dropFirst()) ?? 0))
    }
    _ = try StoreMigrator(store: url, plan: plan).run()
    let migrated = try SQLiteStore(url: url, model: try bundle.model(named: "R4"))
    var names: [String] = []
    try migrated.forEachObject(of: "Item", includingSubentities: false) { object in
      if case .string(let text)? = object.attributes["v4_name"] { names.append(text) }
    }
    #expect(names.sorted() == ["item 1", "item 2", "item 3"])
  }
}
