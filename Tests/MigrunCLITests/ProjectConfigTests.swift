import Foundation
import TestSupport
import Testing

/// `.migrun.yml` gives the options a project repeats; flags win; `migrun config` says where each
/// value in force comes from; a key migrun does not know is an error naming it.
@Suite struct ProjectConfigTests {
  @Test func theProjectFileAboveTheWorkingFolderIsInForceAndFlagsWin() throws {
    let folder = try TemporaryDirectory()
    let model = try ConfigurationTests.bundle(in: folder)
    try folder.write(
      """
      # the team's options
      model: \(model.lastPathComponent)
      jobs: 2
      lua:
        time: 30
        memory: 128
      """, to: ".migrun.yml")
    let stores = folder.url.appendingPathComponent("stores")
    try FileManager.default.createDirectory(at: stores, withIntermediateDirectories: true)
    let shown = try MigrunProcess.run(["config"], in: stores)
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdout.contains("project file: \(folder.url.appendingPathComponent(".migrun.yml").path)"))
    #expect(shown.stdout.contains("model             \(model.path)  (/"), "\(shown.stdout)")
    #expect(shown.stdout.contains("jobs              2  (/"))
    #expect(shown.stdout.contains("lua.time          30.0  (/"))
    #expect(shown.stdout.contains("lua.instructions  50000000  (default)"))
    let flagged = try MigrunProcess.run(["config", "--jobs", "3", "--json"], in: stores)
    let line = try #require(try JSONSerialization.jsonObject(with: Data(flagged.stdout.utf8)) as? [String: Any])
    let options = try #require(line["options"] as? [String: [String: Any]])
    #expect(options["jobs"]?["value"] as? Int == 3)
    #expect(options["jobs"]?["text"] as? String == "3")
    #expect(options["jobs"]?["source"] as? String == "flag")
    #expect(options["lua.time"]?["value"] as? Double == 30)
    #expect(options["lua.memory"]?["value"] as? Int == 128)
    #expect(options["model"]?["value"] as? String == model.path)
    #expect(line["event"] as? String == "config")
    // A command with no --model takes the file's.
    let created = try MigrunProcess.run(
      ["create", "new.sqlite", "--model", model.path, "--model-version", "S1"], in: stores)
    #expect(created.status == 0, "\(created.stderr)")
    let status = try MigrunProcess.run(["status", "new.sqlite"], in: stores)
    #expect(status.status == 10, "\(status.stdout)\(status.stderr)")
  }

  @Test func aKeyMigrunDoesNotKnowIsAnErrorNamingIt() throws {
    let folder = try TemporaryDirectory()
    try folder.write("modle: M.xcdatamodeld\n", to: ".migrun.yml")
    let result = try MigrunProcess.run(["status", "x.sqlite"], in: folder.url)
    #expect(result.status != 0)
    #expect(result.stderr.contains("unknown key 'modle' (known: model, policies"), "\(result.stderr)")
    try folder.write("jobs: many\n", to: ".migrun.yml")
    let config = try MigrunProcess.run(["config"], in: folder.url)
    #expect(config.status != 0)
    #expect(config.stderr.contains("'jobs' must be a whole number"), "\(config.stderr)")
  }

  /// `lua.memory` wrapped (Int.max: no limit; 2^44: a 0-byte limit) where the flag refused the same
  /// values (issue 55): the file's limits are checked in the flags' ranges, in the same words (exit 1
  /// for the file, 64 for the flag).
  @Test func theFilesLuaLimitsAreRangeCheckedAsTheirFlags() throws {
    let folder = try TemporaryDirectory()
    for (key, value, flag) in [
      ("memory", "9223372036854775807", "--lua-memory"), ("memory", "17592186044416", "--lua-memory"),
      ("memory", "0", "--lua-memory"), ("time", "0", "--lua-time"), ("instructions", "0", "--lua-instructions"),
    ] {
      try folder.write("lua: { \(key): \(value) }\n", to: ".migrun.yml")
      let file = try MigrunProcess.run(["config"], in: folder.url)
      #expect(file.status == 1, "\(key) \(value): \(file.stderr)")
      try FileManager.default.removeItem(at: folder.url.appendingPathComponent(".migrun.yml"))
      let flagged = try MigrunProcess.run(["config", flag, value], in: folder.url)
      #expect(flagged.status == 64, "\(flag) \(value): \(flagged.stderr)")
      let words = try #require(flagged.stderr.range(of: "\(flag) ").map { flagged.stderr[$0.upperBound...] })
      let problem = String(words.prefix { $0 != "\n" })
      #expect(file.stderr.contains("'lua.\(key)' \(problem)"), "\(file.stderr) / \(flagged.stderr)")
    }
  }

  /// ~500 bytes of nested aliases expanded to 7.7 GB and aborted every command (issue 55): counted
  /// before they are expanded, refused by name as any unreadable project file is (exit 1); an
  /// oversized file likewise. Aliases within reason work.
  @Test func aliasesThatExpandPastReasonAreRefusedBeforeTheyAreExpanded() throws {
    let folder = try TemporaryDirectory()
    var bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    for level in 1...12 {
      bomb += "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
    }
    bomb += "model: *a12\n"
    #expect(bomb.utf8.count < 1_000)
    try folder.write(bomb, to: ".migrun.yml")
    let result = try MigrunProcess.run(["status", "x.sqlite"], in: folder.url)
    #expect(result.status == 1, "\(result.stderr)")
    #expect(
      result.stderr.contains(".migrun.yml: its aliases (*name) expand to more than 100000 values"), "\(result.stderr)")
    try folder.write("# padding\n" + String(repeating: "#", count: 2 << 20) + "\n", to: ".migrun.yml")
    let large = try MigrunProcess.run(["config"], in: folder.url)
    #expect(large.status == 1, "\(large.stderr)")
    #expect(large.stderr.contains("larger than the 1 MiB"), "\(large.stderr)")
    try folder.write("jobs: &n 2\nchain: [*n, *n]\n", to: ".migrun.yml")
    let shared = try MigrunProcess.run(["config"], in: folder.url)
    #expect(shared.status == 0, "\(shared.stderr)")
  }

  @Test func withNoModelAnywhereItIsAUsageError() throws {
    let folder = try TemporaryDirectory()
    let result = try MigrunProcess.run(["status", "x.sqlite"], in: folder.url)
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains("give --model (or model: in .migrun.yml"), "\(result.stderr)")
  }
}

/// Every command that takes a model or policies reads them from the project file when no flag gives
/// them (issue 48, part): in a project whose file names Moody's model, `check` of another app's
/// store finds no matching version instead of calling it clean.
extension ProjectConfigTests {
  @Test func everyCommandThatTakesAModelTakesTheProjectsModel() throws {
    let folder = try TemporaryDirectory()
    let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("policies"), withIntermediateDirectories: true)
    try folder.write("test('project', function() expect(1):equals(1) end)\n", to: "policies/p_test.lua")
    try folder.write("model: \(moody)\npolicies: [policies]\n", to: ".migrun.yml")
    let other = try copyOfFixture("coredataplus-samplemodels/SampleModel/Fixtures/SampleModel_V1.sqlite", into: folder)
    let mood = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let here = folder.url

    let check = try MigrunProcess.run(["check", other.path], in: here)
    #expect(check.status == 1, "\(check.stdout)")
    #expect(check.stdout.contains("no-matching-version"), "\(check.stdout)")
    let hash = try MigrunProcess.run(["hash"], in: here)
    #expect(hash.status == 0, "\(hash.stderr)")
    #expect(hash.stdout.contains("Mood"), "\(hash.stdout)")
    let inspect = try MigrunProcess.run(["inspect", mood.path], in: here)
    #expect(inspect.stdout.contains("Moody 2"), "\(inspect.stdout)\(inspect.stderr)")
    let created = try MigrunProcess.run(["create", "new.sqlite"], in: here)
    #expect(created.status == 0, "\(created.stderr)")
    let exported = try MigrunProcess.run(["export", "new.sqlite", "--out", "new.json"], in: here)
    #expect(exported.status == 0, "\(exported.stderr)")
    let imported = try MigrunProcess.run(["import", "new.json", "--out", "again.sqlite"], in: here)
    #expect(imported.status == 0, "\(imported.stderr)")
    let lint = try MigrunProcess.run(["lint"], in: here)
    #expect(!lint.stderr.contains("give the model"), "\(lint.stderr)")
    let test = try MigrunProcess.run(["test"], in: here)
    #expect(test.status == 0, "\(test.stdout)\(test.stderr)")
    #expect(test.stdout.contains("1 passed, 0 failed"), "\(test.stdout)")
  }
}

extension ProjectConfigTests {
  /// A policy folder the project file names that is not there is said with the file and key, not as
  /// a --policies flag the user never typed.
  /// A value the project file gave is named by its key and the file in the message about it; the
  /// same value given as a flag is named as before.
  @Test func aValueFromTheFileIsNamedByKeyAndFileInItsError() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let file = folder.url.appendingPathComponent(".migrun.yml").path
    let cases: [(yaml: String, says: String)] = [
      ("model: Missing.xcdatamodeld", "no such file or folder (model: in \(file))"),
      ("model: \(moody)\nchain: Moody 4, Nope", "chain: in \(file) names version 'Nope'"),
      (
        "model: \(moody)\nto: Nope",
        "has no version 'Nope' (versions: Moody, Moody 2, Moody 3, Moody 4, Moody 5, Moody 6) (to: in \(file))"
      ),
      (
        "model: \(moody)\nconfiguration: Cloud", "has a configuration 'Cloud' (it has none) (configuration: in \(file))"
      ),
    ]
    for (yaml, says) in cases {
      try folder.write(yaml, to: ".migrun.yml")
      let run = try MigrunProcess.run(["status", store.path], in: folder.url)
      #expect(run.status == 1 && run.stderr.contains(says), "\(yaml): \(run.stderr)")
    }
    try folder.write("model: \(moody)", to: ".migrun.yml")
    let flagged = try MigrunProcess.run(["status", store.path, "--to", "Nope"], in: folder.url)
    #expect(flagged.stderr.contains("has no version 'Nope'") && !flagged.stderr.contains(".migrun.yml"))
  }

  @Test func aMissingPolicyFolderOfTheFileIsNamedWithTheFileAndKey() throws {
    let folder = try TemporaryDirectory()
    try folder.write("policies: [nowhere]\n", to: ".migrun.yml")
    let result = try MigrunProcess.run(["config"], in: folder.url)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains(".migrun.yml: 'policies': "), "\(result.stderr)")
    #expect(result.stderr.contains("nowhere is no folder"), "\(result.stderr)")
    let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
    #expect(!first.contains("--policies"), "\(first)")
  }
}
