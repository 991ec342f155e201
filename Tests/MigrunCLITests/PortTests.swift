import Foundation
import GRDB
import PropertyList
import TestSupport
import Testing

/// `migrun port` (issue 73): custom migration code in Swift — policy classes and stages written for
/// these tests in `Tests/PortExamples` — ported to a policy folder, run as it was written on a real
/// store with `migrun migrate`, and the store's data checked.
@Suite struct PortTests {
  static let examples = Fixtures.repositoryRoot.appendingPathComponent("Tests/PortExamples")

  /// An example ported: its store (version 1.0.0, from `objects.json`), the folder written and what
  /// `port` said.
  struct Ported {
    let folder: TemporaryDirectory
    let model: String
    let store: URL
    let policies: URL
    let port: MigrunProcess.Result

    func migrate() throws -> MigrunProcess.Result {
      try MigrunProcess.run(["migrate", store.path, "--model", model, "--policies", policies.path])
    }

    func rows(_ sql: String) throws -> [Row] {
      try DatabaseQueue(path: store.path).read { try Row.fetchAll($0, sql: sql) }
    }

    func file(_ name: String) throws -> String {
      try String(contentsOf: policies.appendingPathComponent(name), encoding: .utf8)
    }
  }

  static func port(_ example: String) throws -> Ported {
    let folder = try TemporaryDirectory()
    let source = examples.appendingPathComponent(example)
    let model = source.appendingPathComponent("Model.swift").path
    let store = folder.url.appendingPathComponent("app.sqlite")
    let imported = try MigrunProcess.run([
      "import", source.appendingPathComponent("objects.json").path, "--model", model, "--model-version", "1.0.0",
      "--out", store.path,
    ])
    #expect(imported.status == 0, "\(imported.stderr)")
    let policies = folder.url.appendingPathComponent("policies")
    let port = try MigrunProcess.run(["port", source.path, "--model", model, "--out", policies.path])
    #expect(port.status == 0, "\(port.stdout)\(port.stderr)")
    return Ported(folder: folder, model: model, store: store, policies: policies, port: port)
  }

  /// Runs the ported folder as it was written: the migration succeeds.
  static func migrated(_ example: String) throws -> Ported {
    let ported = try port(example)
    let result = try ported.migrate()
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    return ported
  }

  @Test func aLookupDictionaryKeptAcrossObjectsFindsOrCreatesEachAuthorOnce() throws {
    let ported = try Self.migrated("FindOrCreate")
    let books = try ported.rows(
      "SELECT b.ZTITLE AS title, a.ZNAME AS author FROM ZBOOK b LEFT JOIN ZAUTHOR a ON a.Z_PK = b.ZAUTHOR ORDER BY 1")
    #expect(books.map { $0["title"] as String } == ["Beowulf", "Emma", "Middlemarch", "Persuasion"])
    #expect(books.map { $0["author"] as String? } == [nil, "Jane Austen", "George Eliot", "Jane Austen"])
    #expect(try ported.rows("SELECT COUNT(*) AS n FROM ZAUTHOR").first?["n"] as Int? == 2)
    // The step file takes the class's hook; the module keeps the Swift lines.
    let module = try ported.file("BookToBookPolicy.lua")
    #expect(module.contains("BookToBookPolicy.authorsByName = {}  -- Policy.swift:7"), "\(module)")
    #expect(try ported.file("1.0.0-2.0.0.lua").contains("createDestinationInstances = BookToBookPolicy"))
  }

  @Test func aFullNameIsSplitIntoTwoAttributesByAPolicyThatAssociatesItsOwnObject() throws {
    let ported = try Self.migrated("SplitName")
    let people = try ported.rows(
      "SELECT ZFIRSTNAME AS first, ZLASTNAME AS last, ZEMAIL AS email FROM ZPERSON ORDER BY Z_PK")
    #expect(people.map { $0["first"] as String } == ["Ada", "Plato", "Grace"])
    #expect(people.map { $0["last"] as String? } == ["King Lovelace", nil, "Hopper"])
    #expect(people.map { $0["email"] as String? } == ["ada@example.org", nil, "grace@example.org"])
  }

  @Test func aTimestampInMillisecondsBecomesADate() throws {
    let ported = try Self.migrated("Timestamp")
    let events = try ported.rows("SELECT ZSTARTSAT AS at, ZISALLDAY AS day FROM ZEVENT ORDER BY Z_PK")
    // 1,700,000,000 s and 2024-01-01 00:00 UTC since 1970, as seconds since 2001 (Core Data's dates).
    #expect(events.map { $0["at"] as Double? } == [1_700_000_000 - 978_307_200, 1_704_067_200 - 978_307_200, nil])
    #expect(events.map { $0["day"] as Int } == [0, 1, 0])
    #expect(
      try ported.file("port.md").contains("→ `EventToEventPolicy.dateFromMilliseconds`: 1 of 1 statements"))
  }

  @Test func aToOneBecomesAToManyInCreateRelationships() throws {
    let ported = try Self.migrated("ToOneToMany")
    let addresses = try ported.rows(
      "SELECT c.ZNAME AS name, a.ZSTREET AS street, a.ZLABEL AS label FROM ZADDRESS a JOIN ZCONTACT c ON c.Z_PK = a.ZCONTACT ORDER BY 1"
    )
    #expect(addresses.map { $0["name"] as String } == ["Ada", "Grace"])
    #expect(addresses.map { $0["label"] as String? } == ["home", "home"])
    #expect(try ported.rows("SELECT COUNT(*) AS n FROM ZCONTACT").first?["n"] as Int? == 3)
  }

  @Test func anEntityIsSplitInTwo() throws {
    let ported = try Self.migrated("EntitySplit")
    let customers = try ported.rows(
      "SELECT c.ZNAME AS name, a.ZSTREET AS street, a.ZCITY AS city FROM ZCUSTOMER c LEFT JOIN ZADDRESS a ON a.Z_PK = c.ZADDRESS ORDER BY c.Z_PK"
    )
    #expect(customers.map { $0["name"] as String } == ["Ada", "Grace", "Alan"])
    #expect(customers.map { $0["street"] as String? } == ["12 St James's Square", nil, nil])
    #expect(customers.map { $0["city"] as String? } == ["London", "Arlington", nil])
    #expect(try ported.rows("SELECT COUNT(*) AS n FROM ZADDRESS").first?["n"] as Int? == 2)
  }

  @Test func aJSONBlobIsDecodedIntoAttributes() throws {
    let ported = try Self.migrated("JSONBlob")
    let profiles = try ported.rows(
      "SELECT ZTHEME AS theme, ZFONTSIZE AS size, ZNOTIFICATIONS AS notify FROM ZPROFILE ORDER BY Z_PK")
    #expect(profiles.map { $0["theme"] as String } == ["dark", "light", "light", "light"])
    #expect(profiles.map { $0["size"] as Int } == [32, 14, 12, 12])
    #expect(profiles.map { $0["notify"] as Int } == [0, 1, 1, 1])
  }

  @Test func aSwiftDataCustomStageDedupesBeforeTheStepAndFillsAfter() throws {
    let ported = try Self.migrated("Stage")
    let trips = try ported.rows("SELECT ZNAME AS name, ZSLUG AS slug, ZSTART AS start FROM ZTRIP ORDER BY 1")
    #expect(trips.map { $0["name"] as String } == ["Paris in Spring", "Rome"])
    #expect(trips.map { $0["slug"] as String? } == ["paris-in-spring", "rome"])
    #expect(trips.map { $0["start"] as Double } == [300, 200], "the newest Paris kept")
  }

  /// The objc.io book's Country5ToCountry6Policy (its Swift as the book writes it, a fetch request
  /// and all), ported with the mapping model that names it, runs on Core Data's own Moody 5 store:
  /// the converted step file requires the ported module, and each country finds or makes its continent.
  @Test func aMappingModelRunsThePortedClassOnCoreDatasOwnStore() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let mapping = Fixtures.url("objcio-core-data-moody/mappings/Moody 5-Moody 6.xcmappingmodel").path
    let policies = folder.url.appendingPathComponent("policies")
    let port = try MigrunProcess.run([
      "port", Self.examples.appendingPathComponent("Moody").path, mapping, "--model", model, "--out", policies.path,
    ])
    #expect(port.status == 0, "\(port.stderr)")
    #expect(port.stdout.contains("statements translated: 19 of 19 (100%)"), "\(port.stdout)")
    let step = try String(contentsOf: policies.appendingPathComponent("Moody 5-Moody 6.lua"), encoding: .utf8)
    #expect(step.contains("local Country5ToCountry6Policy = require \"Country5ToCountry6Policy\""), "\(step)")
    let module = try String(
      contentsOf: policies.appendingPathComponent("Country5ToCountry6Policy.lua"), encoding: .utf8)
    #expect(
      module.contains("context:fetch(\"Continent\", \"%K == %@\", { args = { \"numericISO3166Code\""), "\(module)")
    let migrated = try MigrunProcess.run([
      "migrate", store.path, "--model", model, "--to", "Moody 6", "--policies", policies.path,
    ])
    #expect(migrated.status == 0, "\(migrated.stdout)\(migrated.stderr)")
    let countries = try DatabaseQueue(path: store.path).read { db in
      try Row.fetchAll(
        db,
        sql: "SELECT c.ZNUMERICISO3166CODE AS country, k.ZNUMERICISO3166CODE AS continent FROM ZCOUNTRY c "
          + "JOIN ZCONTINENT k ON k.Z_PK = c.ZCONTINENT ORDER BY 1")
    }
    #expect(countries.map { $0["country"] as Int } == [231, 704, 710])
    #expect(countries.map { $0["continent"] as Int } == [10004, 10005, 10004])
  }

  /// A mapping model's value expression `FUNCTION($entityPolicy, "touched:", $source.updatedAt)` (the
  /// fixture's Moody 5 → 6 mapping model with it set on Country's updatedAt) calls the ported class's
  /// `@objc func touched(_:)` by its selector's name.
  @Test func aMappingModelsEntityPolicyFunctionCallsThePortedMethod() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let mapping = folder.url.appendingPathComponent("Moody 5-Moody 6.xcmappingmodel")
    try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
    let original = Fixtures.url("objcio-core-data-moody/mappings/Moody 5-Moody 6.xcmappingmodel/xcmapping.xml")
    let updatedAt = """
      <object type="XDDEVATTRIBUTEMAPPING" id="z103">
              <attribute name="name" type="string">updatedAt</attribute>
      """
    var xml = try String(contentsOf: original, encoding: .utf8)
    #expect(xml.contains(updatedAt))
    xml = xml.replacingOccurrences(
      of: updatedAt,
      with: updatedAt + "\n        <attribute name=\"valueexpressiondata\" type=\"binary\">"
        + Data(Self.touchedExpression()).base64EncodedString() + "</attribute>")
    try xml.write(to: mapping.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
    let before = try DatabaseQueue(path: store.path).read { db in
      try Double.fetchAll(db, sql: "SELECT ZUPDATEDAT FROM ZCOUNTRY ORDER BY ZNUMERICISO3166CODE")
    }
    let policies = folder.url.appendingPathComponent("policies")
    let port = try MigrunProcess.run([
      "port", Self.examples.appendingPathComponent("Moody").path, mapping.path, "--model", model, "--out",
      policies.path,
    ])
    #expect(port.status == 0, "\(port.stderr)")
    let step = try String(contentsOf: policies.appendingPathComponent("Moody 5-Moody 6.lua"), encoding: .utf8)
    #expect(step.contains("return Country5ToCountry6Policy.touched(src.updatedAt)"), "\(step)")
    let migrated = try MigrunProcess.run([
      "migrate", store.path, "--model", model, "--to", "Moody 6", "--policies", policies.path,
    ])
    #expect(migrated.status == 0, "\(migrated.stdout)\(migrated.stderr)")
    let after = try DatabaseQueue(path: store.path).read { db in
      try Double.fetchAll(db, sql: "SELECT ZUPDATEDAT FROM ZCOUNTRY ORDER BY ZNUMERICISO3166CODE")
    }
    #expect(after == before.map { $0 + 86_400 }, "\(before) → \(after)")
  }

  /// `FUNCTION($entityPolicy, "touched:", $source.updatedAt)` archived as Xcode's mapping editor keeps
  /// a value expression.
  static func touchedExpression() -> [UInt8] {
    var archiver = KeyedArchiver()
    func variable(_ name: String) -> PropertyListValue {
      archiver.object(
        ["NSVariableExpression", "NSExpression", "NSObject"],
        ["NSVariable": archiver.string(name), "NSExpressionType": .integer(2)])
    }
    let source = variable("source")
    let key = archiver.object(
      ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"],
      ["NSKeyPath": archiver.string("updatedAt"), "NSExpressionType": .integer(10)])
    let keyPath = archiver.object(
      ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
      [
        "NSOperand": source, "NSSelectorName": archiver.string("valueForKeyPath:"),
        "NSArguments": archiver.array([key]), "NSExpressionType": .integer(3),
      ])
    let policy = variable("entityPolicy")
    let function = archiver.object(
      ["NSFunctionExpression", "NSExpression", "NSObject"],
      [
        "NSOperand": policy, "NSSelectorName": archiver.string("touched:"), "NSArguments": archiver.array([keyPath]),
        "NSExpressionType": .integer(4),
      ])
    return archiver.archive(root: function).binaryEncoded()
  }

  /// CoreDataPlus's V2to3MakerPolicy finds or makes each car's maker through an extension of the
  /// context (declared outside the class, calling another of its methods): the module gets both, and
  /// the V2toV3 mapping model runs with it on CoreDataPlus's own SampleModel 2 store.
  @Test func anExtensionTheClassCallsIsPortedWithIt() throws {
    let folder = try TemporaryDirectory()
    let sample = "coredataplus-samplemodels/SampleModel"
    let store = try writableCopyOfFixture("\(sample)/Fixtures/SampleModel_V2.sqlite", into: folder)
    let model = Fixtures.url("\(sample)/SampleModel.xcdatamodeld").path
    let policies = folder.url.appendingPathComponent("policies")
    let port = try MigrunProcess.run([
      "port", Self.examples.appendingPathComponent("SampleModel").path,
      Fixtures.url("\(sample)/MappingModels/V2toV3.xcmappingmodel").path, "--model", model, "--out", policies.path,
    ])
    #expect(port.stdout.contains("statements translated: 25 of 25 (100%)"), "\(port.stdout)\(port.stderr)")
    let summary = try String(contentsOf: policies.appendingPathComponent("port.md"), encoding: .utf8)
    #expect(summary.contains("`NSManagedObjectContext.findMaker(withName:in:)`"), "\(summary)")
    let migrated = try MigrunProcess.run([
      "migrate", store.path, "--model", model, "--to", "SampleModel3", "--policies", policies.path,
    ])
    #expect(migrated.status == 0, "\(migrated.stdout)\(migrated.stderr)")
    let (makers, cars) = try DatabaseQueue(path: store.path).read { db in
      (
        try String.fetchAll(db, sql: "SELECT ZNAME FROM ZMAKER ORDER BY 1"),
        try Row.fetchOne(db, sql: "SELECT COUNT(*) AS n, COUNT(ZCREATEDBY) AS made FROM ZCAR")
      )
    }
    #expect(makers.count == 10 && Set(makers).count == 10, "one Maker per name: \(makers)")
    #expect(cars?["n"] as Int? == 125 && cars?["made"] as Int? == 125)
  }

  /// Core Data's `NSCustomMigrationStage` (its versions named by `NSManagedObjectModelReference`s,
  /// its handlers on a background context's `performAndWait`) becomes the step's `.stage.lua`: on a
  /// Moody 4 store with a mood marked for deletion and the counts wrong, the mood is gone before the
  /// step and every country's count right after it.
  @Test func aCoreDataCustomStageRunsAroundItsStep() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    try DatabaseQueue(path: store.path).write { db in
      try db.execute(sql: "UPDATE ZMOOD SET ZMARKEDFORDELETIONDATE = 100 WHERE Z_PK = 1")
      try db.execute(sql: "UPDATE ZCOUNTRY SET ZNUMBEROFMOODS = 9")
    }
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let policies = folder.url.appendingPathComponent("policies")
    let port = try MigrunProcess.run([
      "port", Self.examples.appendingPathComponent("StagedMoody").path, "--model", model, "--out", policies.path,
    ])
    #expect(port.stdout.contains("1 stage, 0 placeholders"), "\(port.stdout)\(port.stderr)")
    let migrated = try MigrunProcess.run([
      "migrate", store.path, "--model", model, "--to", "Moody 5", "--policies", policies.path,
    ])
    #expect(migrated.status == 0, "\(migrated.stdout)\(migrated.stderr)")
    #expect(migrated.stdout.contains("stage willMigrate: 0 inserted, 0 changed, 1 deleted"), "\(migrated.stdout)")
    let counts = try DatabaseQueue(path: store.path).read { db in
      try Row.fetchAll(db, sql: "SELECT ZNUMERICISO3166CODE AS code, ZNUMBEROFMOODS AS moods FROM ZCOUNTRY ORDER BY 1")
    }
    #expect(counts.map { $0["moods"] as Int } == [1, 1, 1])
  }

  /// What the port cannot translate fails the migration where it stands, naming the Swift line,
  /// and leaves the store as it was; written by hand, the step runs.
  @Test func aPlaceholderFailsTheStepNamingItsSwiftLineUntilItIsWritten() throws {
    let ported = try Self.port("DateText")
    #expect(ported.port.stdout.contains("2 placeholders left"), "\(ported.port.stdout)")
    let summary = try ported.file("port.md")
    #expect(summary.contains("- Policy.swift:6: a closure called where it is written"), "\(summary)")
    #expect(summary.contains("- Policy.swift:21: calls .date(from:)"), "\(summary)")
    let before = try Data(contentsOf: ported.store)
    let refused = try ported.migrate()
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("migrun port: Policy.swift:21: not translated"), "\(refused.stderr)")
    #expect(try Data(contentsOf: ported.store) == before)
    var module = try ported.file("OrderToOrderPolicy.lua").components(separatedBy: "\n")
    for (index, line) in module.enumerated() where line.contains("\"migrun port: Policy.swift:6") {
      module[index] = "OrderToOrderPolicy.formatter = nil"
    }
    for (index, line) in module.enumerated() where line.contains("\"migrun port: Policy.swift:21") {
      module[index] = "  order.placedAt = date.parse(text .. \"T00:00:00Z\")"
    }
    try module.joined(separator: "\n").write(
      to: ported.policies.appendingPathComponent("OrderToOrderPolicy.lua"), atomically: true, encoding: .utf8)
    let migrated = try ported.migrate()
    #expect(migrated.status == 0, "\(migrated.stderr)")
    let orders = try ported.rows("SELECT ZPLACEDAT AS at FROM ZORDER ORDER BY Z_PK")
    #expect(orders.map { $0["at"] as Double? } == [1_709_251_200 - 978_307_200, nil])
  }

  /// `review` names the ported step and what the port left to write in it (the HTML page and its
  /// JSON twin); the module still loads, its untranslated property failing only where it is used.
  @Test func reviewNamesThePortedStepAndItsPlaceholders() throws {
    let ported = try Self.port("DateText")
    let review = try MigrunProcess.run([
      "review", ported.store.path, "--model", ported.model, "--policies", ported.policies.path, "--json",
    ])
    let step = try #require((try review.jsonLine("review")["steps"] as? [[String: Any]])?.first, "\(review.stderr)")
    #expect((step["script"] as? String)?.hasSuffix("/1.0.0-2.0.0.lua") == true, "\(step)")
    let placeholders = try #require(step["placeholders"] as? [String])
    #expect(placeholders.count == 2, "\(placeholders)")
    #expect(
      placeholders.last?.hasPrefix("Policy.swift:21: not translated (calls .date(from:)") == true, "\(placeholders)")
    let page = try MigrunProcess.run([
      "review", ported.store.path, "--model", ported.model, "--policies", ported.policies.path,
    ])
    #expect(page.stdout.contains("left to write (<code>migrun port</code>): <code>Policy.swift:6:"), "\(page.stderr)")
  }

  /// A folder already holding the files is refused before anything is written (a file the user
  /// wrote in place of a placeholder is never lost), unless `--force`.
  @Test func portingAgainIntoTheFolderIsRefusedWithoutForce() throws {
    let ported = try Self.port("SplitName")
    let module = ported.policies.appendingPathComponent("PersonToPersonPolicy.lua")
    try "-- written by hand\n".write(to: module, atomically: true, encoding: .utf8)
    let source = Self.examples.appendingPathComponent("SplitName").path
    let again = try MigrunProcess.run(["port", source, "--model", ported.model, "--out", ported.policies.path])
    #expect(again.status == 1)
    #expect(again.stderr.contains("PersonToPersonPolicy.lua: a file is already there; give --force"), "\(again.stderr)")
    #expect(try String(contentsOf: module, encoding: .utf8) == "-- written by hand\n")
    let forced = try MigrunProcess.run([
      "port", source, "--model", ported.model, "--out", ported.policies.path, "--force",
    ])
    #expect(forced.status == 0, "\(forced.stderr)")
    #expect(try String(contentsOf: module, encoding: .utf8).contains("function PersonToPersonPolicy."))
  }

  /// `migrun test` and `migrun lint` take the folder as it is written.
  @Test func testAndLintAcceptThePortedFolder() throws {
    let ported = try Self.port("FindOrCreate")
    let tested = try MigrunProcess.run(["test", ported.policies.path])
    #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")
    #expect(tested.stdout.contains("2 passed, 0 failed"), "\(tested.stdout)")
    let linted = try MigrunProcess.run(["lint", ported.model, "--policies", ported.policies.path])
    #expect(linted.status == 0, "\(linted.stdout)\(linted.stderr)")
  }

  /// The figure of issue 73, over every example: statements translated of statements, and the
  /// classes and stages that ran as written (every example but DateText, whose two placeholders
  /// are written by hand in the test above). Printed; docs/porting.md quotes it.
  @Test func theFigure() throws {
    let moody = Fixtures.url("objcio-core-data-moody")
    var runs: [[String]] = [
      "FindOrCreate", "SplitName", "Timestamp", "ToOneToMany", "EntitySplit", "JSONBlob", "Stage", "DateText",
    ].map { example in
      let source = Self.examples.appendingPathComponent(example)
      return [source.path, "--model", source.appendingPathComponent("Model.swift").path]
    }
    let sample = Fixtures.url("coredataplus-samplemodels/SampleModel")
    runs.append([
      Self.examples.appendingPathComponent("SampleModel").path,
      sample.appendingPathComponent("MappingModels/V2toV3.xcmappingmodel").path, "--model",
      sample.appendingPathComponent("SampleModel.xcdatamodeld").path,
    ])
    runs.append([
      Self.examples.appendingPathComponent("StagedMoody").path, "--model",
      moody.appendingPathComponent("models/Moody.xcdatamodeld").path,
    ])
    runs.append([
      Self.examples.appendingPathComponent("Moody").path,
      moody.appendingPathComponent("mappings/Moody 5-Moody 6.xcmappingmodel").path, "--model",
      moody.appendingPathComponent("models/Moody.xcdatamodeld").path,
    ])
    var (translated, statements) = (0, 0)
    for arguments in runs {
      let folder = try TemporaryDirectory()
      let port = try MigrunProcess.run(["port"] + arguments + ["--out", folder.url.path])
      let line = try #require(port.stdout.split(separator: "\n").first { $0.hasPrefix("statements translated") })
      let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
      translated += numbers[0]
      statements += numbers[1]
    }
    print("port figure: \(translated) of \(statements) statements translated; 10 of 11 examples ran unedited")
    #expect(translated == 143 && statements == 148)
  }
}
