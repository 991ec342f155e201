import Foundation
import TestSupport
import Testing

/// What a new user trips on (issue 48, part): errors that name what was given and what it is.
@Suite struct NewUserErrorTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  @Test func aFolderGivenAsAStoreIsSaidToBeAFolder() throws {
    let folder = try TemporaryDirectory()
    let given = try folder.folder("stores")
    for command in ["inspect", "check", "export"] {
      let result = try MigrunProcess.run([command, given.path, "--model", Self.moody])
      #expect(result.status != 0)
      #expect(result.stderr.contains("\(given.path): a folder, not a store file"), "\(command): \(result.stderr)")
    }
  }

  @Test func aFolderWithNoModelIsSaidToHoldNone() throws {
    let folder = try TemporaryDirectory()
    let empty = try folder.folder("Model")
    let result = try MigrunProcess.run(["hash", empty.path])
    #expect(result.status != 0)
    #expect(result.stderr.contains("a folder with no model in it"), "\(result.stderr)")
    #expect(!result.stderr.contains("/contents"), "\(result.stderr)")
  }

  /// An Xcode 3 model (`X.xcdatamodel/elements`, a binary archive, as stores of framework 320 come
  /// with) is refused as that format by name, given alone or as a version of an .xcdatamodeld.
  @Test func anXcode3ModelIsRefusedAsThatFormat() throws {
    let folder = try TemporaryDirectory()
    let single = try folder.folder("Old.xcdatamodel")
    let archive = Data("bplist00".utf8) + Data(repeating: 0, count: 32)
    try archive.write(to: single.appendingPathComponent("elements"))
    let bundle = try folder.folder("Old.xcdatamodeld")
    let version = try folder.folder("Old.xcdatamodeld/Old 1.xcdatamodel")
    try archive.write(to: version.appendingPathComponent("elements"))
    for given in [single, bundle] {
      let result = try MigrunProcess.run(["hash", given.path])
      #expect(result.status == 1, "\(given.lastPathComponent): \(result.stderr)")
      #expect(
        result.stderr.contains("elements: an Xcode 3 model (its `elements` archive, before Xcode 4's `contents` XML)"),
        "\(given.lastPathComponent): \(result.stderr)")
      #expect(result.stderr.contains("open the model in Xcode 4 or later and save it"), "\(result.stderr)")
    }
  }

  @Test func helpForNoCommandIsAnError() throws {
    let result = try MigrunProcess.run(["help", "nosuch"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("no command 'nosuch'"), "\(result.stderr)")
    #expect(try MigrunProcess.run(["help", "plan"]).status == 0)
  }
}

extension NewUserErrorTests {
  /// A step file the path does not take is named with the reason, by plan and migrate (it was passed
  /// over without a word: a Moody 4 store went to Moody 6 in one inferred step past the user's
  /// Moody 4-Moody 5.lua).
  @Test func aStepFileThePathDoesNotTakeIsNamed() throws {
    let folder = try TemporaryDirectory()
    let policies = try folder.folder("policies")
    try FileManager.default.copyItem(
      at: Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody/Moody 4-Moody 5.lua"),
      to: policies.appendingPathComponent("Moody 4-Moody 5.lua"))
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    let arguments = ["--model", Self.moody, "--policies", policies.path]
    let plan = try MigrunProcess.run(["plan", store.path] + arguments)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(
      plan.stdout.contains("Unused  \(policies.path)/Moody 4-Moody 5.lua: the path goes Moody 4 → Moody 6 in one step"),
      "\(plan.stdout)")
    let json = try MigrunProcess.run(["plan", store.path, "--json"] + arguments)
    let unused = try json.jsonLine("plan")["unusedStepFiles"] as? [[String: String]]
    #expect(unused?.first?["file"] == "\(policies.path)/Moody 4-Moody 5.lua", "\(json.stdout)")
    // Through a chain that takes it, it is used.
    let chained = try MigrunProcess.run(
      ["plan", store.path, "--chain", "Moody 4,Moody 5,Moody 6"] + arguments)
    #expect(!chained.stdout.contains("Unused"), "\(chained.stdout)")
    let migrate = try MigrunProcess.run(["migrate", store.path] + arguments)
    #expect(migrate.status == 0, "\(migrate.stderr)")
    #expect(migrate.stdout.contains("Unused    \(policies.path)/Moody 4-Moody 5.lua"), "\(migrate.stdout)")
  }
}

extension NewUserErrorTests {
  /// An export imported at the wrong version says which version it fits.
  @Test func anImportAtTheWrongVersionNamesTheVersionThatFits() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let exported = try MigrunProcess.run(["export", store.path, "--model", Self.moody])
    let json = folder.url.appendingPathComponent("moody.json")
    try Data(exported.stdout.utf8).write(to: json)
    let out = folder.url.appendingPathComponent("moody3.sqlite")
    let result = try MigrunProcess.run([
      "import", json.path, "--model", Self.moody, "--model-version", "Moody 3", "--out", out.path,
    ])
    #expect(result.status == 1)
    #expect(result.stderr.contains("it fits version Moody: give --model-version \"Moody\""), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out.path))
  }
}

extension NewUserErrorTests {
  /// `status --json` of one store that cannot be read prints its line, as a fleet does.
  @Test func aStoreThatCannotBeReadStillGetsItsStatusLine() throws {
    let folder = try TemporaryDirectory()
    let broken = folder.url.appendingPathComponent("broken.sqlite")
    try Data("garbage".utf8).write(to: broken)
    let result = try MigrunProcess.run(["status", broken.path, "--model", Self.moody, "--json"])
    #expect(result.status == 1)
    let line = try result.jsonLine("status")
    #expect(line["store"] as? String == broken.path)
    #expect((line["reason"] as? String)?.contains("not a SQLite database") == true, "\(result.stdout)")
    #expect(result.stderr.contains("not a SQLite database"))
  }
}

extension NewUserErrorTests {
  /// `store` in --json is the path as given, in status and migrate as in check.
  @Test func jsonNamesTheStoreAsGiven() throws {
    let folder = try TemporaryDirectory()
    let copy = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let here = copy.deletingLastPathComponent()
    let given = copy.lastPathComponent
    for command in ["status", "check"] {
      let result = try MigrunProcess.run([command, given, "--model", Self.moody, "--json"], in: here)
      let line = try result.jsonLine(command)
      #expect(line["store"] as? String == given, "\(command): \(result.stdout)")
      #expect(line["reason"] == nil || line["reason"] is NSNull, "\(command): \(result.stdout)")
    }
    let migrate = try MigrunProcess.run(["migrate", given, "--model", Self.moody, "--json"], in: here)
    #expect(try migrate.jsonLine("result")["store"] as? String == given, "\(migrate.stdout)\(migrate.stderr)")
  }
}

/// What a new user still trips on (issue 61): each message says what was given and what to do.
extension NewUserErrorTests {
  /// A model folder given where a store goes is named as a model, not as a folder to look inside.
  @Test func aModelGivenAsAStoreIsSaidToBeAModel() throws {
    let inspect = try MigrunProcess.run(["inspect", Self.moody])
    #expect(inspect.status == 1, "\(inspect.stderr)")
    #expect(
      inspect.stderr.contains(
        "Moody.xcdatamodeld: a model, not a store: give the store (.sqlite) and this model as --model"),
      "\(inspect.stderr)")
    #expect(!inspect.stderr.contains("give the .sqlite file in it"), "\(inspect.stderr)")
    let check = try MigrunProcess.run(["check", Self.moody])
    #expect(check.status == 1)
    #expect(check.stderr.contains("a model, not a store"), "\(check.stderr)")
  }

  /// A broken `.migrun.yml` is a failure of the file (exit 1, no command's Usage line), with every
  /// problem of it named at once.
  @Test func aProjectFileErrorNamesEveryProblemWithoutAUsageLine() throws {
    let folder = try TemporaryDirectory()
    try folder.write("modle: M.xcdatamodeld\njobs: many\nlua: { time: 0 }\n", to: ".migrun.yml")
    for command in [["status", "x.sqlite"], ["config"], ["hash"]] {
      let result = try MigrunProcess.run(command, in: folder.url)
      #expect(result.status == 1, "\(command): \(result.stderr)")
      #expect(result.stderr.contains(".migrun.yml: 3 problems:"), "\(command): \(result.stderr)")
      #expect(result.stderr.contains("'jobs' must be a whole number"), "\(command): \(result.stderr)")
      #expect(result.stderr.contains("unknown key 'modle'"), "\(command): \(result.stderr)")
      #expect(result.stderr.contains("'lua.time' must be more than 0 seconds"), "\(command): \(result.stderr)")
      #expect(!result.stderr.lowercased().contains("usage:"), "\(command): \(result.stderr)")
    }
  }

  /// `status STORE` with no model anywhere says what is missing and names the command's help, not
  /// the top-level usage.
  @Test func statusWithNoModelSaysTheModelIsMissing() throws {
    let folder = try TemporaryDirectory()
    let result = try MigrunProcess.run(["status", "x.sqlite"], in: folder.url)
    #expect(result.status == 64, "\(result.stderr)")
    #expect(
      result.errorLines
        == [
          "migrun: error: give --model (or model: in .migrun.yml, found in this folder or above)"
            + "; migrun status --help lists the options"
        ], "\(result.stderr)")
  }

  /// `check A missing`: A is checked, the missing one reported in its place, exit 1.
  @Test func checkOfAStoreAndAMissingOneChecksTheFirst() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let missing = folder.url.appendingPathComponent("missing.sqlite").path
    let result = try MigrunProcess.run(["check", store.path, missing, "--model", Self.moody])
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.stdout.contains("\(store.path): clean"), "\(result.stdout)\(result.stderr)")
    #expect(result.errorLines == ["migrun: error: \(missing): no such file"], "\(result.stderr)")
    let json = try MigrunProcess.run(["check", missing, store.path, "--model", Self.moody, "--json"])
    #expect(json.stdout.split(separator: "\n").count == 3, "a line per store, then the summary: \(json.stdout)")
    #expect(json.stdout.contains(#""withFindings":1"#), "\(json.stdout)")
  }

  /// A policy test whose store is not found says how to give the folder that holds it.
  @Test func aTestStoreNotFoundNamesFixturesAndItsVariable() throws {
    let folder = try TemporaryDirectory()
    let library = try folder.folder("library")
    _ = try folder.write(
      """
      test("a device's store", function()
        migrate { store = "device.sqlite", model = "Moody.xcdatamodeld" }
      end)
      """, to: "library/device_test.lua")
    let result = try MigrunProcess.run(["test", library.path], in: folder.url)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    let output = result.stdout + result.stderr
    #expect(output.contains("migrate: no device.sqlite in library/"), "\(output)")
    #expect(output.contains("migrun test --fixtures DIR, or MIGRUN_FIXTURES=DIR"), "\(output)")
  }
}

extension NewUserErrorTests {
  /// `inspect` of a damaged store says so (exit 1); `export` refuses it without SQLite's raw error,
  /// and both point at `check` and `salvage`.
  @Test func aDamagedStoreIsSaidToBeDamaged() throws {
    let folder = try TemporaryDirectory()
    let (store, _) = try SalvageCommandTests.damaged(in: folder)
    let inspect = try MigrunProcess.run(["inspect", store.path])
    #expect(inspect.status == 1, "\(inspect.stdout)\(inspect.stderr)")
    #expect(inspect.stdout.contains("Damaged    yes"), "\(inspect.stdout)")
    let export = try MigrunProcess.run(["export", store.path])
    #expect(export.status == 1)
    #expect(export.stdout.isEmpty, "nothing exported: \(export.stdout.prefix(200))")
    for result in [inspect, export] {
      #expect(result.stderr.contains("\(store.path): the file is damaged (SQLite's check: "), "\(result.stderr)")
      #expect(result.stderr.contains("`migrun check \(store.path)`"), "\(result.stderr)")
      #expect(result.stderr.contains("`migrun salvage \(store.path) --out NEW.sqlite`"), "\(result.stderr)")
      #expect(!result.stderr.contains("SELECT") && !result.stderr.contains("SQLite error"), "\(result.stderr)")
    }
    // Salvaged without a model: its own model is named as such, not as "version the store's own model".
    let salvage = try MigrunProcess.run([
      "salvage", store.path, "--out", folder.url.appendingPathComponent("s.sqlite").path,
    ])
    #expect(!salvage.stdout.contains("(version the store's own model"), "\(salvage.stdout)")
  }
}

extension NewUserErrorTests {
  /// The words a new user asked about: the version identifier explained, `config`'s source named
  /// once, a rename tagged as one, `--version` only where it means migrun's, `config --help`'s JSON.
  @Test func theWordingANewUserAskedAbout() throws {
    let store = Fixtures.url("objcio-core-data-moody/stores/Moody 5.moody.sqlite").path
    let inspect = try MigrunProcess.run(["inspect", store, "--model", Self.moody])
    #expect(inspect.stdout.contains("Identifier 5 (NSStoreModelVersionIdentifiers:"), "\(inspect.stdout)")
    let folder = try TemporaryDirectory()
    try folder.write("jobs: 2\n", to: ".migrun.yml")
    let config = try MigrunProcess.run(["config"], in: folder.url)
    #expect(config.stdout.contains("jobs              2  (/") && config.stdout.contains("/.migrun.yml)\n"))
    #expect(!config.stdout.contains(".migrun.yml ("), "\(config.stdout)")
    let lint = try MigrunProcess.run(["lint", Self.moody, "--cloudkit"])
    for line in lint.stdout.split(separator: "\n") where line.contains("renamed from") {
      #expect(line.contains("[cloudkit-renamed]"), "\(line)")
    }
    for command in ["status", "hash", "export", "config"] {
      let help = try MigrunProcess.run([command, "--help"])
      #expect(!help.stdout.contains("--version"), "\(command): \(help.stdout)")
    }
    #expect(try MigrunProcess.run(["--help"]).stdout.contains("migrun --version"))
    #expect(try MigrunProcess.run(["config", "--help"]).stdout.contains(#""text""#))
  }
}
