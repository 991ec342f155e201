import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Custom stages (`<From>-<To>.stage.lua`): SwiftData's `.custom(willMigrate:didMigrate:)` as Lua,
/// with a context on the store.
@Suite struct StageTests {
  /// Version 2 makes a trip's name unique and adds a slug; stops belong to trips.
  static let sources: [(file: String, text: String)] = [
    (
      "Trips.swift",
      "import SwiftData\n\n" + schema(1, name: "var name: String") + "\n\n"
        + schema(2, name: "@Attribute(.unique) var name: String\n    var slug: String?") + """


          enum Plan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self] }
          }
          """
    )
  ]

  static func schema(_ number: Int, name: String) -> String {
    """
    enum V\(number): VersionedSchema {
      static var versionIdentifier = Schema.Version(\(number), 0, 0)
      static var models: [any PersistentModel.Type] { [Trip.self, Stop.self] }
      @Model final class Trip {
        \(name)
        var start: Date
        @Relationship(deleteRule: .cascade) var stops: [Stop] = []
        init(name: String, start: Date) { self.name = name; self.start = start }
      }
      @Model final class Stop {
        var place: String
        var trip: Trip?
        init(place: String) { self.place = place }
      }
    }
    """
  }

  /// Paris twice (the earlier one with a stop), Rome once with two stops.
  static let objects = """
    { "format": "migrun-store/1", "entities": {
      "Trip": [
        { "pk": 1, "attributes": { "name": "Paris", "start": 100 }, "relationships": { "stops": ["Stop/p1"] } },
        { "pk": 2, "attributes": { "name": "Rome", "start": 200 }, "relationships": { "stops": ["Stop/p2", "Stop/p3"] } },
        { "pk": 3, "attributes": { "name": "Paris", "start": 300 }, "relationships": { "stops": [] } }
      ],
      "Stop": [
        { "pk": 1, "attributes": { "place": "Louvre" }, "relationships": { "trip": "Trip/p1" } },
        { "pk": 2, "attributes": { "place": "Forum" }, "relationships": { "trip": "Trip/p2" } },
        { "pk": 3, "attributes": { "place": "Pantheon" }, "relationships": { "trip": "Trip/p2" } }
      ] } }
    """

  /// A dedupe in willMigrate (the newest kept; the older one's stops go by the cascade rule), a backfill
  /// in didMigrate.
  static let stage = """
    return {
      willMigrate = function(ctx)
        assert(ctx.version == "1.0.0" and ctx.from == "1.0.0" and ctx.to == "2.0.0")
        local kept = {}
        for _, trip in ipairs(ctx:fetch("Trip", nil, { sort = { "name", "-start" } })) do
          if kept[trip.name] then ctx:delete(trip) else kept[trip.name] = trip end
        end
        ctx:save()
        ctx:log("kept", ctx:count("Trip"))
      end,
      didMigrate = function(ctx)
        for _, trip in ipairs(ctx:fetch("Trip", "slug == nil AND stops.@count >= %@", { args = { 0 } })) do
          trip.slug = string.lower(trip.name)
        end
        local rome = ctx:fetch("Trip", "name ==[c] %@", { args = { "rome" }, limit = 1 })[1]
        local stop = ctx:insert("Stop", { place = "Colosseum", trip = rome })
        assert(stop.trip == rome and #rome.stops == 3)
        ctx:save()
      end,
    }
    """

  struct Project {
    let folder: TemporaryDirectory
    let model: String
    let policies: URL
    let store: URL
  }

  static func project() throws -> Project {
    let folder = try TemporaryDirectory()
    let sources = folder.url.appendingPathComponent("Sources")
    try SwiftDataSamples.write(Self.sources, into: sources)
    let policies = folder.url.appendingPathComponent("policies")
    try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
    let json = folder.url.appendingPathComponent("trips.json")
    try Self.objects.write(to: json, atomically: true, encoding: .utf8)
    let store = folder.url.appendingPathComponent("trips.sqlite")
    let imported = try MigrunProcess.run([
      "import", json.path, "--model", sources.path, "--model-version", "1.0.0", "--out", store.path,
    ])
    #expect(imported.status == 0, "\(imported.stderr)")
    return Project(folder: folder, model: sources.path, policies: policies, store: store)
  }

  static func rows(_ store: URL, _ sql: String) throws -> [Row] {
    try DatabaseQueue(path: store.path).read { try Row.fetchAll($0, sql: sql) }
  }

  @Test func aStageDedupesBeforeAUniquenessConstraintAndBackfillsAfter() throws {
    let project = try Self.project()
    let original = try Data(contentsOf: project.store)
    // Without the stage the duplicates are refused by name, and the store is untouched.
    let refused = try MigrunProcess.run(["migrate", project.store.path, "--model", project.model])
    #expect(refused.status == 1)
    #expect(
      refused.stderr.contains("Trip/p1 and Trip/p3 both become the Trip with name = \"Paris\""), "\(refused.stderr)")
    #expect(try Data(contentsOf: project.store) == original)
    try Self.stage.write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    let plan = try MigrunProcess.run([
      "plan", project.store.path, "--model", project.model, "--policies", project.policies.path,
    ])
    #expect(plan.stdout.contains("custom stage"), "\(plan.stdout)")
    #expect(plan.stdout.contains("1.0.0-2.0.0.stage.lua: willMigrate, didMigrate"), "\(plan.stdout)")
    let migrated = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path, "--json",
    ])
    #expect(migrated.status == 0, "\(migrated.stderr)")
    let step = try #require((try migrated.jsonLine("result")["steps"] as? [[String: Any]])?.first)
    let stage = try #require(step["stage"] as? [String: [String: Int]])
    // The older Paris, and its stop by the cascade rule.
    #expect(stage["willMigrate"] == ["inserted": 0, "updated": 0, "deleted": 2])
    #expect(stage["didMigrate"]?["inserted"] == 1)
    let trips = try Self.rows(project.store, "SELECT Z_PK, ZNAME, ZSLUG FROM ZTRIP ORDER BY Z_PK")
    #expect(trips.map { $0["Z_PK"] as Int64 } == [2, 3], "the newest Paris kept")
    #expect(trips.map { $0["ZSLUG"] as String? } == ["rome", "paris"])
    let stops = try Self.rows(project.store, "SELECT ZPLACE FROM ZSTOP ORDER BY ZPLACE").map { $0["ZPLACE"] as String }
    #expect(stops == ["Colosseum", "Forum", "Pantheon"])
    // The original, before the stage ran, is the backup.
    let backup = project.store.deletingLastPathComponent().appendingPathComponent("trips~.sqlite")
    #expect(try Data(contentsOf: backup) == original)
  }

  /// Empty persistent-history tables as Core Data makes them (SampleModel2's: tables, indexes and
  /// `Z_PRIMARYKEY` rows), added to `store`.
  static func addHistoryTables(to store: URL) throws {
    let fixture = Fixtures.url("coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
    try DatabaseQueue(path: store.path).writeWithoutTransaction { db in
      try db.execute(sql: "ATTACH DATABASE ? AS fx", arguments: [StoreFiles.immutableURI(fixture)])
      for sql in try String.fetchAll(
        db,
        sql:
          "SELECT sql FROM fx.sqlite_master WHERE tbl_name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING') AND sql IS NOT NULL ORDER BY type DESC"
      ) {
        try db.execute(sql: sql)
      }
      try db.execute(
        sql: "INSERT INTO main.Z_PRIMARYKEY SELECT Z_ENT, Z_NAME, Z_SUPER, 0 FROM fx.Z_PRIMARYKEY WHERE Z_ENT > 16000")
      try db.execute(sql: "DETACH DATABASE fx")
    }
  }

  @Test func aStagesSavesAreRecordedInTheStoresHistory() throws {
    let project = try Self.project()
    try Self.addHistoryTables(to: project.store)
    try Self.stage.write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    let migrated = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path,
    ])
    #expect(migrated.status == 0, "\(migrated.stderr)")
    // willMigrate deleted the older Paris and its stop (one transaction); didMigrate backfilled
    // slugs and inserted (another), each named after its step and handler.
    let transactions = try Self.rows(
      project.store,
      """
      SELECT t.Z_PK, s.ZNAME AS context, (SELECT group_concat(ZCHANGETYPE) FROM ACHANGE WHERE ZTRANSACTIONID = t.Z_PK) AS types
      FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZCONTEXTNAMETS ORDER BY t.Z_PK
      """)
    #expect(transactions.map { $0["context"] as String } == ["1.0.0 → 2.0.0 willMigrate", "1.0.0 → 2.0.0 didMigrate"])
    #expect(transactions.first?["types"] as String? == "2,2")
    #expect((transactions.last?["types"] as String?)?.contains("0") == true)
  }

  /// What a handler does wrong stops the migration, names the stage file and line, and leaves the
  /// store as it was.
  @Test func aFailingStageNamesItsFileAndLeavesTheStoreAlone() throws {
    let cases: [(String, String)] = [
      ("return { willMigrate = function(ctx)\n  ctx:fetch(\"Trip\", \"name ==\")\nend }", "at character 8"),
      (
        "return { willMigrate = function(ctx)\n  local t = ctx:fetch(\"Trip\")[1]\n  t.name = 'x'\nend }",
        "left changes unsaved"
      ),
      ("return { willMigrate = function(ctx)\n  error('no way')\nend }", "1.0.0-2.0.0.stage.lua:2: no way"),
      (
        "return { willMigrate = function(ctx)\n  local t = ctx:fetch(\"Trip\")[1]\n  t.nickname = 'x'\nend }",
        "has no property 'nickname'"
      ),
      ("return { whenever = function(ctx) end }", "'whenever' is no stage handler"),
      (
        "return { willMigrate = function(ctx)\n  ctx:fetch(\"Trip\", nil, { sorted = { \"name\" } })\nend }",
        "no option 'sorted'"
      ),
    ]
    for (text, expected) in cases {
      let project = try Self.project()
      let original = try Data(contentsOf: project.store)
      try text.write(
        to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
      let result = try MigrunProcess.run([
        "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path,
      ])
      #expect(result.status != 0)
      #expect(result.stderr.contains(expected), "\(expected): \(result.stderr)")
      #expect(try Data(contentsOf: project.store) == original)
    }
  }

  /// Issue 55: a NaN written to a required Date from a stage was saved as NULL, exit 0, and `check`
  /// called the store clean; invalid UTF-8 written to a String became U+FFFD without a word. Both
  /// are refused by name, the store untouched.
  @Test func aNaNDateAndTextThatIsNotUTF8AreRefused() throws {
    for (assignment, expected) in [
      ("t.start = 0/0", "Trip.start is a Date: NaN (0/0) is no date"),
      ("t.name = '\\xff\\xfeParis'", "Trip.name is String: the text given is not UTF-8"),
    ] {
      let project = try Self.project()
      let original = try Data(contentsOf: project.store)
      try
        "return { willMigrate = function(ctx)\n  local t = ctx:fetch(\"Trip\")[1]\n  \(assignment)\n  ctx:save()\nend }"
        .write(to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
      let result = try MigrunProcess.run([
        "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path,
      ])
      #expect(result.status == 1, "\(result.stderr)")
      #expect(result.stderr.contains(expected), "\(expected): \(result.stderr)")
      #expect(try Data(contentsOf: project.store) == original)
    }
  }

  /// Issue 55: `IN %@` with more than ~1,000 values failed with SQLite's "Expression tree is too
  /// large", the whole SQL (megabytes) in the message. A bound list now, any length.
  @Test func inWithAHundredThousandValuesCounts() throws {
    let project = try Self.project()
    try """
    return { willMigrate = function(ctx)
      ctx:delete(ctx:fetch("Trip", "name == 'Paris'", { sort = { "start" }, limit = 1 })[1])
      ctx:save()
      local names = {}
      for i = 1, 100000 do names[i] = "town " .. i end
      names[#names + 1] = "Rome"
      ctx:log("in list", ctx:count("Trip", "name IN %@", { args = { names } }))
      ctx:log("not in list", #ctx:fetch("Trip", "NOT (name IN %@)", { args = { names } }))
    end }
    """.write(to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path, "--dry-run",
    ])
    #expect(result.status == 0, "\(result.stderr.prefix(2000))")
    #expect(result.stderr.contains("willMigrate: in list 1"), "\(result.stderr.prefix(2000))")
    #expect(result.stderr.contains("willMigrate: not in list 1"), "\(result.stderr.prefix(2000))")
  }

  /// ctx:log and a mapping file's m:log reach standard error, naming the file (they were kept where
  /// nothing read them).
  @Test func logLinesNameTheirFile() throws {
    let project = try Self.project()
    try Self.stage.write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    try "return { Trip = { finish = function(m) m:log('trips mapped') end } }".write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.0.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("policies/1.0.0-2.0.0.stage.lua: willMigrate: kept 2"), "\(result.stderr)")
    #expect(result.stderr.contains("policies/1.0.0-2.0.0.lua: trips mapped"), "\(result.stderr)")
  }

  /// A log line (`ctx:log`, `m:log`, `print`) reaches the terminal with its control characters escaped: a script's text never
  /// recolours the screen or moves the cursor (issue 55).
  @Test func logLinesReachTheTerminalEscaped() throws {
    let project = try Self.project()
    let stage = Self.stage.replacingOccurrences(of: #"ctx:log("kept""#, with: #"ctx:log("\27[31mred\0""#)
    #expect(stage != Self.stage)
    try stage.write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    try "return { Trip = { finish = function(m) m:log('\\27[2Jgone\\nDone: forged') print('\\27[1mbold', 2) end } }"
      .write(
        to: project.policies.appendingPathComponent("1.0.0-2.0.0.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("willMigrate: \\u{1B}[31mred\\u{0}"), "\(result.stderr)")
    #expect(result.stderr.contains("1.0.0-2.0.0.lua: \\u{1B}[2Jgone\\u{A}Done: forged"), "\(result.stderr)")
    #expect(result.stderr.contains("\\u{1B}[1mbold\t2"), "print: \(result.stderr)")
    #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0 })
  }

  /// verify runs a step's stage as migrate does.
  @Test func verifyRunsTheStage() throws {
    let project = try Self.project()
    let file = project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua")
    try "return { didMigrate = function(ctx) error('stage ran on ' .. ctx:count('Trip') .. ' trips') end }".write(
      to: file, atomically: true, encoding: .utf8)
    let failing = try MigrunProcess.run([
      "verify", project.model, "--policies", project.policies.path, "--objects", "3",
    ])
    #expect(failing.status == 1)
    #expect(
      failing.stdout.contains("didMigrate: policies/1.0.0-2.0.0.stage.lua:1: stage ran on 3 trips"), "\(failing.stdout)"
    )
    try """
    return { didMigrate = function(ctx)
      for _, trip in ipairs(ctx:fetch("Trip")) do trip.slug = string.lower(trip.name) end
      ctx:save()
    end }
    """.write(to: file, atomically: true, encoding: .utf8)
    let passing = try MigrunProcess.run([
      "verify", project.model, "--policies", project.policies.path, "--objects", "3",
    ])
    #expect(passing.status == 0, "\(passing.stdout)\(passing.stderr)")
  }

  /// A policy test migrates a store to SwiftData sources' model, running the stage (migrate{}).
  @Test func aPolicyTestRunsTheStageOnSwiftDataSources() throws {
    let project = try Self.project()
    try Self.stage.write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    try """
    test("duplicates go before the constraint", function()
      local out = migrate { store = "../trips.sqlite", model = "../Sources" }
      expect(#out.Trip):equals(2)
      expect(#out.Stop):equals(3)
    end)
    """.write(to: project.policies.appendingPathComponent("trips_test.lua"), atomically: true, encoding: .utf8)
    let original = try Data(contentsOf: project.store)
    // The project's folder holds the store and the sources: a fixture folder the test may read.
    let projectFolder = project.policies.deletingLastPathComponent().path
    let refused = try MigrunProcess.run(["test", project.policies.path])
    #expect(refused.status == 1)
    #expect(refused.stdout.contains("../trips.sqlite is outside the library"), "\(refused.stdout)")
    let result = try MigrunProcess.run(["test", project.policies.path, "--fixtures", projectFolder])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("1 passed, 0 failed"), "\(result.stdout)")
    #expect(try Data(contentsOf: project.store) == original, "a test migrates a copy")
  }

  /// A stage file whose name fits no step is refused before anything runs (a typo would skip it).
  @Test func aStageFileForNoStepIsRefused() throws {
    let project = try Self.project()
    try Self.stage.write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.1.stage.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path,
    ])
    #expect(result.status != 0)
    #expect(result.stderr.contains("1.0.0-2.0.1.stage.lua is no step"), "\(result.stderr)")
  }
}

/// A stage's objects count against its memory limit on the host's side too (issue 49): a handler
/// holds at most the limit's worth at once, and saves and resets in batches to go further.
extension StageTests {
  static func insertingStage(batched: Bool) -> String {
    """
    return {
      willMigrate = function(ctx)
        local kept = {}
        for _, trip in ipairs(ctx:fetch("Trip", nil, { sort = { "name", "-start" } })) do
          if kept[trip.name] then ctx:delete(trip) else kept[trip.name] = trip end
        end
        ctx:save()
      end,
      didMigrate = function(ctx)
        local rome = ctx:fetch("Trip", "name ==[c] 'rome'", { limit = 1 })[1]
        for i = 1, 5000 do
          ctx:insert("Stop", { place = "stop " .. i, trip = rome })
          if \(batched ? "true" : "false") and i % 1000 == 0 then
            ctx:save()
            ctx:reset()
            local ok, message = pcall(function() return rome.name end)
            assert(not ok and message:find("let go of"), message)
            rome = ctx:fetch("Trip", "name ==[c] 'rome'", { limit = 1 })[1]
          end
        end
        ctx:save()
      end,
    }
    """
  }

  @Test func aStageHoldsAtMostItsLimitsWorthOfObjects() throws {
    let project = try Self.project()
    let stage = project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua")
    try Self.insertingStage(batched: false).write(to: stage, atomically: true, encoding: .utf8)
    let original = try Data(contentsOf: project.store)
    let arguments = ["migrate", project.store.path, "--model", project.model, "--policies", project.policies.path]
    let refused = try MigrunProcess.run(arguments + ["--lua-memory", "1"])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("the stage holds 4096 objects"), "\(refused.stderr)")
    #expect(try Data(contentsOf: project.store) == original)
    try Self.insertingStage(batched: true).write(to: stage, atomically: true, encoding: .utf8)
    let batched = try MigrunProcess.run(arguments + ["--lua-memory", "1"])
    #expect(batched.status == 0, "\(batched.stderr)")
    let stops: Int = try Self.rows(project.store, "SELECT count(*) FROM ZSTOP").first?[0] ?? 0
    #expect(stops > 5000, "every stop inserted is there: \(stops)")
  }
}
