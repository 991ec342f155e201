import Foundation
import TestSupport
import Testing

/// What a team meets on its first days: a mistyped command, an error in its own mapping file, a
/// hook that needs more than the default Lua limits, a fleet's merged report.
@Suite struct AdoptionTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  @Test func aMistypedCommandIsAUsageErrorThatNamesTheNearestOne() throws {
    let result = try MigrunProcess.run(["migrat", "store.sqlite"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("unknown command 'migrat'. Did you mean 'migrate'?"), "\(result.stderr)")
  }

  /// A Moody store and a mapping file Moody → Moody 2 whose MoodToMood has `body`.
  static func migrate(mood body: String, _ extra: [String] = []) throws -> MigrunProcess.Result {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try folder.write("return {\n  Mood = {\n\(body)\n  },\n}\n", to: "policies/Moody-Moody 2.lua")
    let policies = folder.url.appendingPathComponent("policies").path
    return try MigrunProcess.run(
      ["migrate", store.path, "--model", Self.moody, "--to", "Moody 2", "--policies", policies] + extra)
  }

  /// A misspelled property is reported at the user's file and line, never the host's prelude.
  @Test func aScriptErrorNamesTheUsersFileAndLine() throws {
    let result = try Self.migrate(
      mood: """
        attributes = {
          rating = function(src)
            return src.ratng
          end,
        },
        """)
    #expect(result.status == 1)
    #expect(result.stderr.contains("Moody-Moody 2.lua:5: entity 'Mood' has no property 'ratng'"), "\(result.stderr)")
    #expect(!result.stderr.contains("prelude"), "\(result.stderr)")
  }

  /// A hook that holds ~100 MB: over the default 64 MiB (named at the user's file and line), within
  /// `--lua-memory 512`.
  @Test func theLuaLimitsCanBeRaisedForARun() throws {
    let hook = """
        createRelationships = function(dst, m)
          local t = {}
          for i = 1, 400000 do t[i] = string.rep("x", 200) .. i end
        end,
      """
    let refused = try Self.migrate(mood: hook)
    #expect(refused.status == 1)
    #expect(
      refused.stderr.contains("Moody-Moody 2.lua:5: memory limit of 67108864 bytes exceeded"), "\(refused.stderr)")
    let raised = try Self.migrate(mood: hook, ["--lua-memory", "512"])
    #expect(raised.status == 0, "\(raised.stderr)")
    let bad = try Self.migrate(mood: hook, ["--lua-memory", "0"])
    #expect(bad.status == 64, "\(bad.stderr)")
  }

  /// merge-reports writing files says what it merged and where it went (it used to print nothing).
  @Test func mergeReportsSaysWhatItWrote() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let stores = folder.url.appendingPathComponent("stores")
    try FileManager.default.createDirectory(at: stores, withIntermediateDirectories: true)
    try FileManager.default.moveItem(at: store, to: stores.appendingPathComponent("a.sqlite"))
    let report = folder.url.appendingPathComponent("r.json").path
    let run = try MigrunProcess.run(["migrate", stores.path, "--model", Self.moody, "--report", report])
    #expect(run.status == 0, "\(run.stderr)")
    let merged = folder.url.appendingPathComponent("all.json").path
    let result = try MigrunProcess.run(["merge-reports", report, "--out", merged])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.contains("merged 1 report: 1 store, 1 migrated, 0 current, 0 failed → \(merged)"),
      "\(result.stdout)")
  }

  /// `status --json`: one line a CI gate can read, with the same exit code as the text.
  @Test func statusSpeaksJSONForCIGates() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let behind = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--json"])
    #expect(behind.status == 10)
    let line = try behind.jsonLine("status")
    #expect(line["version"] as? String == "Moody")
    #expect(line["needsMigration"] as? Bool == true)
    #expect(line["path"] as? [String] == ["Moody", "Moody 6"])
    let current = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--to", "Moody", "--json"])
    #expect(current.status == 0)
    #expect(current.stdout.contains(#""needsMigration":false"#), "\(current.stdout)")
  }

  /// Every command's --json is one schema (docs/json.md): JSON lines, each with `event` and
  /// `schema` (jsonLines() refuses any other line), the events each command documents.
  @Test func everyJSONOutputIsJSONLinesWithAnEventAndTheSchema() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let fleet = folder.url.appendingPathComponent("fleet")
    try FileManager.default.createDirectory(at: fleet, withIntermediateDirectories: true)
    _ = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", in: fleet)
    let runs: [(arguments: [String], events: [String])] = [
      (["hash", Self.moody], ["hash"]),
      (["inspect", store.path], ["inspect"]),
      (["check", store.path, "--model", Self.moody], ["check", "summary"]),
      (["lint", Self.moody, "--cloudkit"], ["finding", "summary"]),
      (["diff", Self.moody, "--from", "Moody", "--to", "Moody 2"], ["diff"]),
      (["config"], ["config"]),
      (["status", store.path, "--model", Self.moody], ["status"]),
      (["status", fleet.path, "--model", Self.moody], ["status", "summary"]),
      (["plan", store.path, "--model", Self.moody], ["plan"]),
      (["review", store.path, "--model", Self.moody], ["review"]),
      (["migrate", store.path, "--model", Self.moody, "--to", "Moody 2"], ["start", "progress", "result"]),
      (["migrate", store.path, "--model", Self.moody, "--to", "Moody 2"], ["start", "result"]),
      (["migrate", fleet.path, "--model", Self.moody], ["start", "result", "summary"]),
      (
        ["migrate", folder.url.appendingPathComponent("none.sqlite").path, "--model", Self.moody], ["start", "result"]
      ),
    ]
    let documented = try Self.documentedKeys()
    for run in runs {
      let result = try MigrunProcess.run(run.arguments + ["--json"], in: folder.url)
      let lines = try result.jsonLines()
      let events = lines.compactMap { $0["event"] as? String }
      #expect(Set(events) == Set(run.events), "\(run.arguments): \(result.stdout) \(result.stderr)")
      // Every key of every line is one docs/json.md names for its event.
      for line in lines {
        let event = line["event"] as? String ?? ""
        let undocumented = Set(line.keys).subtracting(["event", "schema"]).subtracting(documented[event] ?? [])
        #expect(undocumented.isEmpty, "\(run.arguments): \(event) has keys json.md does not name: \(undocumented)")
      }
    }
    // One store that fails: its result line says so, and the exit code and message stay.
    let missing = try MigrunProcess.run(
      ["migrate", folder.url.appendingPathComponent("none.sqlite").path, "--model", Self.moody, "--json"])
    #expect(missing.status == 1)
    #expect(try missing.jsonLine("result")["result"] as? String == "failed")
    #expect(missing.stderr.hasPrefix("migrun: error:"), "\(missing.stderr)")
  }

  /// docs/json.md's events table: per event, every `word` its keys column names.
  static func documentedKeys() throws -> [String: Set<String>] {
    let page = try String(
      contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/json.md"), encoding: .utf8)
    var keys: [String: Set<String>] = [:]
    for row in page.split(separator: "\n") where row.hasPrefix("| `") {
      let cells = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
      guard cells.count >= 4 else { continue }
      let event = cells[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
      let named = cells[3].components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
      keys[event, default: []].formUnion(named)
    }
    return keys
  }

  /// Usage errors speak as every other error does, and exit 64.
  @Test func usageErrorsUseTheOneErrorFormat() throws {
    let result = try MigrunProcess.run(["plan", "store.sqlite"])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("migrun: error: give --model (or model: in .migrun.yml"), "\(result.stderr)")
    let unknown = try MigrunProcess.run(["plan", "store.sqlite", "--modle", "x"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr.hasPrefix("migrun: error: Unknown option '--modle'"), "\(unknown.stderr)")
  }

  /// A chain file without the destination says which line to add.
  @Test func aChainFileMissingTheDestinationSaysWhatToAdd() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try folder.write("Moody\nMoody 2\n", to: "policies/chain")
    let chain = folder.url.appendingPathComponent("policies/chain").path
    let result = try MigrunProcess.run(
      [
        "plan", store.path, "--model", Self.moody, "--to", "Moody 3", "--policies",
        folder.url.appendingPathComponent("policies").path,
      ])
    #expect(result.status == 1)
    #expect(result.stderr.contains("add a line 'Moody 3' to \(chain) where it belongs"), "\(result.stderr)")
  }
}

/// `migrun test` finds the model beside or above the policy folder, as the README says (it used to
/// stop at the folder it was given).
@Suite struct PolicyTestModelTests {
  @Test func theModelAboveThePolicyFolderIsFound() throws {
    let folder = try TemporaryDirectory()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
    try FileManager.default.copyItem(at: model, to: folder.url.appendingPathComponent("Moody.xcdatamodeld"))
    try folder.write(
      "return { Mood = { attributes = { rating = function(src) return 3 end } } }\n",
      to: "policies/Moody-Moody 2.lua")
    try folder.write(
      """
      test("every mood gets a rating of 3", function()
        local out = migrate { mapping = "Moody-Moody 2.lua", source = { Mood = { { date = 0, colors = "" } } } }
        expect(out.Mood[1].rating):equals(3)
      end)
      """, to: "policies/rating_test.lua")
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("policies").path])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("1 passed, 0 failed"), "\(result.stdout)")
  }
}

/// lint as a gate on a long history: a baseline of known findings, rules left out, CloudKit's rules
/// from the version first deployed with it.
@Suite struct LintGateTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  @Test func aBaselineLetsOnlyNewFindingsFail() throws {
    let folder = try TemporaryDirectory()
    let baseline = folder.url.appendingPathComponent("lint-baseline.json").path
    let all = try MigrunProcess.run(["lint", Self.moody, "--cloudkit"])
    #expect(all.status == 1)
    let written = try MigrunProcess.run(["lint", Self.moody, "--cloudkit", "--write-baseline", baseline])
    #expect(written.status == 0, "\(written.stdout)")
    let gated = try MigrunProcess.run(["lint", Self.moody, "--cloudkit", "--baseline", baseline])
    #expect(gated.status == 0, "\(gated.stdout)")
    #expect(gated.stdout.contains("(13 known from the baseline, 0 new)"), "\(gated.stdout)")
    // A finding the baseline does not have fails the run: the baseline without its last entry.
    // The baseline is lint --json's lines (one finding each).
    var lines = try String(contentsOfFile: baseline, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 13)
    #expect(lines.allSatisfy { $0.contains(#""event":"finding""#) })
    lines.removeLast()
    try lines.joined(separator: "\n").write(toFile: baseline, atomically: true, encoding: .utf8)
    let one = try MigrunProcess.run(["lint", Self.moody, "--cloudkit", "--baseline", baseline])
    #expect(one.status == 1)
    #expect(one.stdout.contains("1 new"), "\(one.stdout)")
  }

  @Test func rulesCanBeLeftOutAndCloudKitStartsWhereItWasDeployed() throws {
    let ignored = try MigrunProcess.run(["lint", Self.moody, "--cloudkit", "--ignore", "cloudkit-removed", "--json"])
    #expect(!ignored.stdout.contains("cloudkit-removed"), "\(ignored.stdout)")
    let deployed = try MigrunProcess.run(["lint", Self.moody, "--cloudkit", "--deployed", "Moody 5", "--json"])
    #expect(!deployed.stdout.contains(#""Moody 4","Moody 5""#) && !deployed.stdout.contains("Continent: removed"))
    #expect(deployed.stdout.contains("isoContinent"), "a removal after Moody 5 is still found: \(deployed.stdout)")
    let unknown = try MigrunProcess.run(["lint", Self.moody, "--ignore", "nope"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr.contains("no rule 'nope'"), "\(unknown.stderr)")
  }
}

/// `migrun --version` names the commit of the checkout it was built from — written into the build
/// (Plugins/BuildCommit), so a copy of the binary far from any `.git` names it too.
@Suite struct VersionTests {
  /// The checkout's commit as `git` says it (nil outside a checkout or without `git`).
  static func checkoutCommit() throws -> String? {
    let (status, output) = try runQuietly(
      URL(fileURLWithPath: "/usr/bin/env"),
      ["git", "-C", Fixtures.repositoryRoot.path, "rev-parse", "--short=12", "HEAD"])
    let commit = output.trimmingCharacters(in: .whitespacesAndNewlines)
    return status == 0 && !commit.isEmpty ? commit : nil
  }

  @Test func versionNamesTheCheckoutsCommit() throws {
    let result = try MigrunProcess.run(["--version"])
    #expect(result.status == 0)
    let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    // Built outside a checkout (a source archive), it says so rather than guess.
    let commit = try Self.checkoutCommit() ?? "unknown"
    #expect(line == "0.1.0 (commit \(commit))", "built before the last commit? swift build, then test again")
  }

  @Test func aCopyFarFromTheCheckoutNamesItsCommitToo() throws {
    let folder = try TemporaryDirectory()
    let copy = folder.url.appendingPathComponent("migrun")
    try FileManager.default.copyItem(at: MigrunProcess.executable, to: copy)
    let (status, version) = try runQuietly(copy, ["--version"])
    let built = try MigrunProcess.run(["--version"]).stdout
    #expect(status == 0 && version == built)
    #expect(!version.contains("unknown"))
  }
}

/// `export --dates iso8601` writes dates people can read; import reads them back (to the millisecond).
@Suite struct ReadableDateTests {
  @Test func exportWritesISODatesThatImportReadsBack() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let readable = try MigrunProcess.run(["export", store.path, "--dates", "iso8601"])
    #expect(readable.status == 0, "\(readable.stderr)")
    #expect(readable.stdout.contains("\"date\": \"2015-09-20T11:39:12.530Z\""))
    let json = folder.url.appendingPathComponent("m.json")
    try readable.stdout.write(to: json, atomically: true, encoding: .utf8)
    let back = folder.url.appendingPathComponent("back.sqlite")
    let imported = try MigrunProcess.run([
      "import", json.path, "--model", model, "--model-version", "Moody", "--out", back.path,
    ])
    #expect(imported.status == 0, "\(imported.stderr)")
    let original = try MigrunProcess.run(["export", store.path]).stdout
    let again = try MigrunProcess.run(["export", back.path]).stdout
    func dates(_ text: String) -> [Double] {
      text.split(separator: "\n").compactMap { line in
        guard let range = line.range(of: "\"date\": ") else { return nil }
        return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." || $0 == "-" })
      }
    }
    let (before, after) = (dates(original), dates(again))
    #expect(!before.isEmpty && before.count == after.count)
    #expect(zip(before, after).allSatisfy { abs($0 - $1) < 0.001 })
    let bad = try MigrunProcess.run(["export", store.path, "--dates", "julian"])
    #expect(bad.status == 64)
  }
}

/// The container recipe: its build stage is the install script (so the image is what
/// `scripts/install` makes), its runtime stage has no toolchain. Built and run where a container
/// engine answers (`docker info`); elsewhere its steps are checked as written.
@Suite struct ContainerRecipeTests {
  @Test func theImageIsTheInstallScriptsAndRunsWithoutTheToolchain() throws {
    let root = Fixtures.repositoryRoot
    let recipe = try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8)
    let stages = Array(recipe.components(separatedBy: "\nFROM ").dropFirst())
    #expect(stages.count == 2, "a build stage and a runtime stage")
    guard stages.count == 2 else { return }
    #expect(stages[0].contains("RUN scripts/install --prefix /opt/migrun"))
    #expect(!stages[1].lowercased().contains("swift"), "the runtime stage has no toolchain")
    #expect(stages[1].contains("COPY --from=build /opt/migrun /usr/local"))
    #expect(stages[1].contains("liblua5.4-0") && stages[1].contains("libsqlite3-0") && stages[1].contains("zlib1g"))
    let ignored = try String(contentsOf: root.appendingPathComponent(".dockerignore"), encoding: .utf8)
    #expect(ignored.contains(".build/"))
    // Where an engine runs: build it and run migrun --version in it.
    func docker(_ arguments: [String]) throws -> (Int32, String) {
      try runQuietly(URL(fileURLWithPath: "/usr/bin/env"), ["docker"] + arguments, in: root)
    }
    guard (try? docker(["info"]))?.0 == 0 else { return }
    #expect(try docker(["build", "-t", "migrun-recipe-test", "."]).0 == 0)
    let (status, version) = try docker(["run", "--rm", "migrun-recipe-test"])
    #expect(status == 0)
    #expect(version.hasPrefix("0.1.0 (commit "), "\(version)")
  }
}

/// Runs `executable` with `arguments` (in `folder`), its standard error dropped: its exit status and
/// standard output.
func runQuietly(_ executable: URL, _ arguments: [String], in folder: URL? = nil) throws -> (Int32, String) {
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  if let folder { process.currentDirectoryURL = folder }
  let output = Pipe()
  process.standardOutput = output
  process.standardError = FileHandle.nullDevice
  try process.run()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
