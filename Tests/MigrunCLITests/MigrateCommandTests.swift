import Foundation
import TestSupport
import Testing

@Suite struct MigrateCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  @Test func statusExitsTenWhenAStoreNeedsMigratingAndZeroWhenNot() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let needs = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(needs.status == 10)
    #expect(needs.stdout.contains("needs migrating: Moody → Moody 2 (1 step)"))
    let current = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--to", "Moody"])
    #expect(current.status == 0)
  }

  @Test func planShowsStepsAndMappingsAndRunsNothing() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let before = try Data(contentsOf: store)
    let result = try MigrunProcess.run(["plan", store.path, "--model", Self.moody, "--to", "Moody 2", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let plan = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(plan["source"] as? String == "Moody")
    let steps = try #require(plan["steps"] as? [[String: Any]])
    #expect(steps.count == 1)
    #expect(steps.first?["kind"] as? String == "inferred")
    let mappings = try #require(steps.first?["mappings"] as? [[String: Any]])
    let mood = try #require(mappings.first { $0["name"] as? String == "MoodToMood" })
    #expect((mood["attributes"] as? [String: String])?["remoteID"] == "remoteIdentifier")
    #expect(try Data(contentsOf: store) == before)
  }

  /// Every step's mappings show the objects they take: the store's for the first step, then what
  /// the step before hands on (marked as estimates).
  @Test func planShowsObjectCountsForEveryStepIncludingScriptedOnes() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path
    let text = try MigrunProcess.run(["plan", store.path, "--model", Self.moody, "--policies", policies])
    #expect(text.status == 0, "\(text.stderr)")
    let lines = text.stdout.split(separator: "\n").map(String.init)
    let moods = lines.filter { $0.contains("MoodToMood") }
    #expect(moods.count == 4)
    #expect(moods.first?.hasSuffix(" 4 objects") == true, "\(moods)")
    #expect(moods.dropFirst().allSatisfy { $0.hasSuffix("~4 objects") }, "\(moods)")
    #expect(lines.contains { $0.contains("RemoveContinent") && $0.hasSuffix("~2 objects") }, "\(text.stdout)")
    let json = try MigrunProcess.run(["plan", store.path, "--model", Self.moody, "--policies", policies, "--json"])
    let plan = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let steps = try #require(plan["steps"] as? [[String: Any]])
    #expect(steps.map { $0["objectsEstimated"] as? Bool } == [false, true, true, true])
    for step in steps {
      let mappings = try #require(step["mappings"] as? [[String: Any]])
      let mood = try #require(mappings.first { $0["name"] as? String == "MoodToMood" })
      #expect(mood["objects"] as? Int == 4)
    }
  }

  /// What `plan` says of each step's method is what `migrate` then does (DDL, rows, mixed, objects).
  @Test func planPredictsTheMethodEachStepRunsWith() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path
    let planned = try MigrunProcess.run(["plan", store.path, "--model", Self.moody, "--policies", policies, "--json"])
    let plan = try #require(try JSONSerialization.jsonObject(with: Data(planned.stdout.utf8)) as? [String: Any])
    let predicted = try #require(plan["steps"] as? [[String: Any]]).map { $0["method"] as? String ?? "" }
    let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--policies", policies, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let last = try result.jsonLine("result")
    let ran = try #require(last["steps"] as? [[String: Any]]).map { $0["method"] as? String ?? "" }
    #expect(predicted == ran)
    #expect(ran == ["DDL", "rows, then objects", "copy rows", "copy rows", "rows, then objects"])
  }

  /// `--objects-only`: every step object by object, the same store as with the fast paths.
  @Test func objectsOnlyRunsEveryStepObjectByObjectToTheSameStore() throws {
    let folder = try TemporaryDirectory()
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path
    var exports: [String] = []
    for flags in [[], ["--objects-only"]] {
      let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
      let result = try MigrunProcess.run(
        ["migrate", store.path, "--model", Self.moody, "--policies", policies, "--json"] + flags)
      #expect(result.status == 0, "\(result.stderr)")
      let last = try result.jsonLine("result")
      let methods = try #require(last["steps"] as? [[String: Any]]).map { $0["method"] as? String ?? "" }
      if !flags.isEmpty { #expect(methods == Array(repeating: "object by object", count: 5), "\(methods)") }
      exports.append(try MigrunProcess.run(["export", store.path, "--model", Self.moody]).stdout)
    }
    #expect(exports[0] == exports[1])
    #expect(exports[0].contains("\"Mood\""))
  }

  /// A copy of Moody's model with a version 7 whose `Mood.rating` becomes a String: a type change
  /// Core Data's inference refuses, so no store before 7 has a path without a mapping file.
  static func moodyWithAStringRating(in folder: TemporaryDirectory) throws -> String {
    let copy = folder.url.appendingPathComponent("Moody.xcdatamodeld")
    try FileManager.default.copyItem(at: URL(fileURLWithPath: Self.moody), to: copy)
    let six = try String(contentsOf: copy.appendingPathComponent("Moody 6.xcdatamodel/contents"), encoding: .utf8)
    let seven = six.replacingOccurrences(
      of: #"name="rating" attributeType="Integer 16""#, with: #"name="rating" attributeType="String""#)
    #expect(seven != six)
    try folder.write(seven, to: "Moody.xcdatamodeld/Moody 7.xcdatamodel/contents")
    try folder.write(
      #"<plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Moody 7.xcdatamodel</string></dict></plist>"#,
      to: "Moody.xcdatamodeld/.xccurrentversion")
    return copy.path
  }

  @Test func aStepThatCannotBeInferredIsRefusedByPlanAndMigrateAlike() throws {
    let folder = try TemporaryDirectory()
    let model = try Self.moodyWithAStringRating(in: folder)
    let stores = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: stores)
    let before = try Data(contentsOf: store)
    for command in ["plan", "migrate"] {
      let result = try MigrunProcess.run([command, store.path, "--model", model])
      #expect(result.status == 1)
      #expect(
        result.errorLines.first?.contains(
          "step Moody 2 → Moody 7: entity 'Mood', property 'rating': changes type from Integer 16 to String") == true,
        "\(result.stderr)")
      #expect(result.stderr.contains("no mapping file Moody 2-Moody 7.lua"))
    }
    // status does not fail: the store needs migrating, the path is what is missing.
    let status = try MigrunProcess.run(["status", store.path, "--model", model])
    #expect(status.status == 10, "\(status.stderr)")
    #expect(status.stdout.contains("needs migrating, but there is no path yet"))
    #expect(try Data(contentsOf: store) == before)
    let left = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path)
    #expect(left == [store.lastPathComponent], "\(left)")
  }

  /// Core Data's default path, no policies: every Moody store goes straight to Moody 6 in one
  /// inferred step (Moody 2 → 3 adds a non-optional to-many, which infers as empty) and keeps
  /// every object.
  @Test func everyMoodyStoreReachesTheCurrentVersionByCoreDatasPath() throws {
    let folder = try TemporaryDirectory()
    for name in ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"] {
      let store = try copyOfFixture("objcio-core-data-moody/stores/\(name).moody.sqlite", into: folder)
      let before = try MigrunProcess.run(["inspect", store.path, "--model", Self.moody, "--json"])
      let plan = try MigrunProcess.run(["plan", store.path, "--model", Self.moody])
      #expect(plan.stdout.contains("Step 1  \(name) → Moody 6  inferred"), "\(name): \(plan.stdout)")
      #expect(!plan.stdout.contains("Step 2"), "\(name): one step")
      let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody])
      #expect(result.status == 0, "\(name): \(result.stderr)")
      let after = try MigrunProcess.run(["inspect", store.path, "--model", Self.moody, "--json"])
      func moods(_ json: String) throws -> Int? {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return ((object?["entities"] as? [String: Any])?["Mood"] as? [String: Any])?["count"] as? Int
      }
      #expect(try moods(after.stdout) == moods(before.stdout), "\(name): every mood kept")
      #expect(try moods(after.stdout) ?? 0 > 0)
    }
  }

  /// `plan`'s object counts are what `migrate` then reads, mapping by mapping and step by step —
  /// Core Data's direct path, a scripted chain, and a store with a row whose Z_ENT is stale.
  @Test func planCountsAreWhatMigrateReads() throws {
    let folder = try TemporaryDirectory()
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path
    let stale = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try makeDatabase(stale, ["UPDATE ZMOOD SET Z_ENT = 3 WHERE Z_PK = 38"])
    let runs: [(URL, [String])] = [
      (try copyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder), []),
      (
        try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder), ["--policies", policies]
      ),
      (stale, []),
    ]
    func object(_ text: String) throws -> [String: Any] {
      try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }
    for (store, options) in runs {
      let plan = try MigrunProcess.run(["plan", store.path, "--model", Self.moody, "--json"] + options)
      #expect(plan.status == 0, "\(plan.stderr)")
      let migrate = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--json"] + options)
      #expect(migrate.status == 0, "\(migrate.stderr)")
      let planned = try #require(try object(plan.stdout)["steps"] as? [[String: Any]])
      // The report is the last JSON line (progress lines come first).
      let last = try #require(migrate.stdout.split(separator: "\n").last.map(String.init))
      let done = try #require(try object(last)["steps"] as? [[String: Any]])
      #expect(planned.count == done.count, "\(store.lastPathComponent)")
      var compared = 0
      for (step, ran) in zip(planned, done) {
        let predicted = Dictionary(
          ((step["mappings"] as? [[String: Any]]) ?? []).compactMap { mapping -> (String, Int)? in
            guard let name = mapping["name"] as? String, let objects = mapping["objects"] as? Int else { return nil }
            return (name, objects)
          }, uniquingKeysWith: { first, _ in first })
        for mapping in (ran["mappings"] as? [[String: Any]]) ?? [] {
          let name = try #require(mapping["mapping"] as? String)
          #expect(
            predicted[name] == mapping["read"] as? Int, "\(store.lastPathComponent) \(step["name"] ?? ""): \(name)")
          compared += 1
        }
      }
      #expect(compared >= 3, "\(store.lastPathComponent)")
    }
  }

  /// `diff --lua` writes a starting mapping file that `migrate --policies` then runs as it is.
  @Test func diffWritesAMappingFileToStartFrom() throws {
    let folder = try TemporaryDirectory()
    let scripts = folder.url.appendingPathComponent("steps").path
    let written = try MigrunProcess.run([
      "diff", Self.moody, "--from", "Moody 3", "--to", "Moody 4", "--lua", "--out", scripts,
    ])
    #expect(written.status == 0, "\(written.stderr)")
    #expect(written.stdout == "wrote \(scripts)/Moody 3-Moody 4.lua\n")
    let again = try MigrunProcess.run([
      "diff", Self.moody, "--from", "Moody 3", "--to", "Moody 4", "--lua", "--out", scripts,
    ])
    #expect(
      again.errorLines == [
        "migrun: error: \(scripts)/Moody 3-Moody 4.lua: a file is already there; migrun does not overwrite it"
      ])
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder)
    let run = try MigrunProcess.run([
      "migrate", store.path, "--model", Self.moody, "--to", "Moody 4", "--policies", scripts,
    ])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains("Moody 3 → Moody 4: 9 objects"), "\(run.stdout)")
  }

  @Test func planSaysWhichRuleChoseThePath() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let direct = try MigrunProcess.run(["plan", store.path, "--model", Self.moody])
    #expect(direct.status == 0, "\(direct.stderr)")
    #expect(direct.stdout.contains("Path    Core Data's default: one inferred step from the store's version"))
    #expect(direct.stdout.contains("Step 1  Moody 2 → Moody 6  inferred"))
    let chained = try MigrunProcess.run([
      "plan", store.path, "--model", Self.moody, "--chain", "Moody 2,Moody 3,Moody 6",
    ])
    #expect(chained.stdout.contains("Path    the version order of --chain, one version at a time"))
    #expect(chained.stdout.contains("Step 2  Moody 3 → Moody 6  inferred"))
    let status = try MigrunProcess.run(["status", store.path, "--model", Self.moody])
    #expect(status.status == 10)
    #expect(status.stdout.contains("needs migrating: Moody 2 → Moody 6 (1 step)"), "\(status.stdout)")
  }

  @Test func migrateReportsProgressAsJSONLinesAndKeepsABackup() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = try result.jsonLines()
    #expect(lines.first?["event"] as? String == "start")
    #expect(
      lines.contains {
        $0["event"] as? String == "progress" && $0["stage"] as? String == "instances"
          && $0["mapping"] as? String == "MoodToMood" && $0["done"] as? Int == 4
      })
    #expect(lines.last?["event"] as? String == "result")
    #expect(lines.last?["result"] as? String == "migrated")
    #expect(lines.last?["to"] as? String == "Moody 2")
    let backup = store.deletingLastPathComponent().appendingPathComponent("Moody.moody~.sqlite")
    #expect(try Data(contentsOf: backup) == original)
    let status = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(status.status == 0)
  }

  @Test func dryRunAndNoBackupDoWhatTheySay() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    let dry = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2", "--dry-run"])
    #expect(dry.status == 0, "\(dry.stderr)")
    #expect(dry.stdout.contains("Dry run"))
    #expect(try Data(contentsOf: store) == original)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path) == [
        store.lastPathComponent
      ])
    let real = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2", "--no-backup"])
    #expect(real.status == 0, "\(real.stderr)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path) == [
        store.lastPathComponent
      ])
    #expect(try Data(contentsOf: store) != original)
  }

  /// `diff --lua` counts the placeholders it wrote, not the comment that tells where they are.
  @Test func diffLuaCountsThePlaceholdersItWrote() throws {
    let folder = try TemporaryDirectory()
    let model = try Self.moodyWithAStringRating(in: folder)
    let out = folder.url.appendingPathComponent("scripts").path
    let wrote = try MigrunProcess.run(["diff", model, "--from", "Moody 6", "--to", "Moody 7", "--lua", "--out", out])
    #expect(wrote.status == 0, "\(wrote.stderr)")
    #expect(wrote.stdout.contains(": 1 placeholder to fill"), "\(wrote.stdout)")
    let text = try String(contentsOfFile: out + "/Moody 6-Moody 7.lua", encoding: .utf8)
    #expect(text.contains("-- 1 value(s) cannot be inferred"), "\(text)")
  }

  @Test func diffShowsTheInferredMappingOrWhyThereIsNone() throws {
    let inferred = try MigrunProcess.run(["diff", Self.moody, "--from", "Moody", "--to", "Moody 2"])
    #expect(inferred.status == 0)
    #expect(inferred.stdout.contains("remoteID ← remoteIdentifier"))
    #expect(inferred.stdout.contains("rating ← default 0"))
    let folder = try TemporaryDirectory()
    let model = try Self.moodyWithAStringRating(in: folder)
    let refused = try MigrunProcess.run(["diff", model, "--from", "Moody 6", "--to", "Moody 7"])
    #expect(refused.status == 1)
    #expect(
      refused.errorLines == [
        "migrun: error: Moody 6 → Moody 7 cannot be inferred: entity 'Mood', property 'rating': changes type from Integer 16 to String; write a mapping script"
      ])
  }
}
