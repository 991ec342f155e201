import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// `migrun test` on the project's policy library, and on a copy with one expectation changed.
@Suite struct TestCommandTests {
  static let library = Fixtures.repositoryRoot.appendingPathComponent("policies")

  @Test func theLibraryPassesWithAtLeastSixtyTests() throws {
    let folder = try TemporaryDirectory()
    let junit = folder.url.appendingPathComponent("junit.xml")
    let result = try MigrunProcess.run(
      ["test", Self.library.path, "--junit", junit.path, "--fixtures", Fixtures.coreData.path])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let summary = try #require(result.stdout.split(separator: "\n").last.map(String.init))
    let passed = Int(summary.split(separator: " ").first ?? "") ?? 0
    #expect(passed >= 60, "\(summary)")
    #expect(summary.contains(" passed, 0 failed"))
    let xml = try String(contentsOf: junit, encoding: .utf8)
    #expect(xml.contains("<testsuites name=\"migrun test\" tests=\"\(passed)\" failures=\"0\">"))
  }

  /// `migrate{ store = … }` migrates a copy of a real store: the file, its folder and its -wal are
  /// left exactly as they were, and the test sees the migrated objects.
  /// The library's tests find their fixture stores from any working folder, through
  /// `MIGRUN_FIXTURES` as through `--fixtures` — and say where they looked without either.
  @Test func theLibrarysTestsFindTheirStoresFromAnyFolder() throws {
    let elsewhere = try TemporaryDirectory()
    let without = try MigrunProcess.run(["test", Self.library.path], in: elsewhere.url)
    #expect(without.status == 1)
    #expect(without.stdout.contains("in the working folder or a fixture folder"), "\(without.stdout)")
    let with = try MigrunProcess.run(
      ["test", Self.library.path], in: elsewhere.url, environment: ["MIGRUN_FIXTURES": Fixtures.coreData.path])
    #expect(with.status == 0, "\(with.stdout)\(with.stderr)")
    #expect(with.stdout.contains(" passed, 0 failed"), "\(with.stdout)")
  }

  @Test func aPolicyTestMigratesACopyOfARealStore() throws {
    let folder = try TemporaryDirectory()
    let library = try folder.folder("library")
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try SQLiteShell.commitIntoWAL(
      store, "UPDATE ZMOOD SET ZCREATORID = 'from the wal' WHERE Z_PK = (SELECT min(Z_PK) FROM ZMOOD);")
    let storeFolder = store.deletingLastPathComponent()
    #expect(FileManager.default.fileExists(atPath: store.path + "-wal"))
    let before = try FileManager.default.contentsOfDirectory(atPath: storeFolder.path).sorted().map { name in
      (name, try Data(contentsOf: storeFolder.appendingPathComponent(name)))
    }
    _ = try folder.write(
      """
      test("a device's store reaches Moody 3", function()
        local out = migrate { store = "\(store.path)", model = "\(Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path)", to = "Moody 3" }
        expect(#out.Mood):equals(4)
        local creators = {}
        for _, mood in ipairs(out.Mood) do creators[mood.creatorID] = true end
        expect(creators["from the wal"]):equals(true)
      end)
      """, to: "library/device_test.lua")
    let result = try MigrunProcess.run(
      ["test", library.path, "--fixtures", storeFolder.path, "--fixtures", Fixtures.coreData.path])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("1 passed, 0 failed"))
    let after = try FileManager.default.contentsOfDirectory(atPath: storeFolder.path).sorted().map { name in
      (name, try Data(contentsOf: storeFolder.appendingPathComponent(name)))
    }
    #expect(after.map(\.0) == before.map(\.0), "no backup or working file beside the store")
    #expect(after.map(\.1) == before.map(\.1), "the store's files are as they were")
  }

  /// A policy test may run an Xcode mapping model (here CoreDataPlus's compiled V2toV3.cdm, with
  /// the compiled model beside it) on a few objects, with the Lua policy of its custom class.
  @Test func aPolicyTestRunsAnXcodeMappingModel() throws {
    let folder = try TemporaryDirectory()
    let library = try folder.folder("library")
    let fixtures = Fixtures.url("coredataplus-samplemodels/SampleModel/Fixtures")
    for name in ["SampleModel.momd", "V2toV3.cdm"] {
      try FileManager.default.copyItem(
        at: fixtures.appendingPathComponent(name), to: library.appendingPathComponent(name))
    }
    try FileManager.default.copyItem(
      at: Fixtures.repositoryRoot.appendingPathComponent("policies/examples/samplemodel/V2to3MakerPolicy.lua"),
      to: library.appendingPathComponent("V2to3MakerPolicy.lua"))
    _ = try folder.write(
      """
      test("each maker name becomes one Maker", function()
        local out = migrate {
          mapping = "V2toV3.cdm",
          source = { Car = {
            { numberPlate = "A1", maker = "Fiat" }, { numberPlate = "B2", maker = "Fiat" },
            { numberPlate = "C3", maker = NULL },
          } },
        }
        expect(#out.Maker):equals(1)
        expect(out.Maker[1].name):equals("Fiat")
        expect(out.Car[1].createdBy):equals(out.Maker[1]._id)
        expect(out.Car[3].createdBy == nil):equals(true)
      end)
      """, to: "library/makers_test.lua")
    let result = try MigrunProcess.run(["test", library.path])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("1 passed, 0 failed"), "\(result.stdout)")
  }

  @Test func aChangedExpectationFailsWithFileLineAndDiff() throws {
    let folder = try TemporaryDirectory()
    let copy = folder.url.appendingPathComponent("policies")
    try FileManager.default.copyItem(at: Self.library, to: copy)
    let test = copy.appendingPathComponent("text/names_test.lua")
    let text = try String(contentsOf: test, encoding: .utf8)
    let changed = text.replacingOccurrences(
      of: #"expect(names.split("Ada Lovelace")):equals({ first = "Ada", middle = NULL, last = "Lovelace" })"#,
      with: #"expect(names.split("Ada Lovelace")):equals({ first = "Ada", middle = NULL, last = "Byron" })"#)
    #expect(changed != text)
    try changed.write(to: test, atomically: true, encoding: .utf8)
    let junit = folder.url.appendingPathComponent("junit.xml")
    let result = try MigrunProcess.run(["test", copy.path, "--junit", junit.path, "--fixtures", Fixtures.coreData.path])
    #expect(result.status == 1)
    #expect(result.stdout.contains("FAIL policies/text/names_test.lua: first and last"), "\(result.stdout)")
    #expect(result.stdout.contains("policies/text/names_test.lua:4: not equal:"), "\(result.stdout)")
    #expect(result.stdout.contains(#"value.last: expected "Byron", got "Lovelace""#), "\(result.stdout)")
    #expect(result.stdout.contains(" passed, 1 failed"))
    #expect(try String(contentsOf: junit, encoding: .utf8).contains("<failure message="))
  }

  @Test func integersAndFloatsAndNullAreTold() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      """
      test("int vs float", function() expect({ a = 1 }):equals({ a = 1.0 }) end)
      test("NULL vs missing", function() expect({ a = NULL }):equals({}) end)
      test("errors are expected", function() expect_error(function() end) end)
      test("passes", function() expect(NULL):is_null() end)
      """, to: "lib/sample_test.lua")
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("lib").path])
    #expect(result.status == 1)
    #expect(result.stdout.contains("value.a: expected 1.0 (float), got 1"), "\(result.stdout)")
    #expect(result.stdout.contains("value.a: not expected, got NULL"), "\(result.stdout)")
    #expect(result.stdout.contains("lib/sample_test.lua:3: expected an error, none was raised"), "\(result.stdout)")
    #expect(result.stdout.contains("1 passed, 3 failed"))
  }

  @Test func noTestsIsAnError() throws {
    let folder = try TemporaryDirectory()
    let result = try MigrunProcess.run(["test", folder.url.path])
    #expect(result.status == 1)
    #expect(result.stderr.contains("no *_test.lua under"))
  }
}

extension TestCommandTests {
  @Test func failedChecksPointAtTheTestsLine() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      """
      test("null", function()
        expect(1):is_null()
      end)
      test("true", function() expect(NULL):is_true() end)
      """, to: "lib/lines_test.lua")
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("lib").path])
    #expect(result.stdout.contains("lib/lines_test.lua:2: expected NULL, got 1"), "\(result.stdout)")
    #expect(result.stdout.contains("lib/lines_test.lua:4: expected true, got NULL"), "\(result.stdout)")
  }

  /// `includes` compares only the fields it names (at every depth): one field of an object is checked
  /// without listing the rest, and a differing one is still found.
  @Test func includesComparesOnlyTheFieldsItNames() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      """
      local recipe = { title = "Soup", minutes = 20, author = { name = "Ada", email = "ada@example.org" } }
      test("one field", function() expect(recipe):includes({ title = "Soup" }) end)
      test("nested", function() expect(recipe):includes({ author = { name = "Ada" } }) end)
      test("differs", function() expect(recipe):includes({ author = { name = "Grace" } }) end)
      test("missing", function() expect(recipe):includes({ rating = 5 }) end)
      """, to: "lib/partial_test.lua")
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("lib").path])
    #expect(result.status == 1)
    #expect(result.stdout.contains("2 passed, 2 failed"), "\(result.stdout)")
    #expect(result.stdout.contains(#"value.author.name: expected "Grace", got "Ada""#), "\(result.stdout)")
    #expect(result.stdout.contains("value.rating: expected 5, missing"), "\(result.stdout)")
    #expect(!result.stdout.contains("not expected"), "fields it does not name are not differences: \(result.stdout)")
  }
}

/// A test file is code from the library: it cannot spoof or crash the runner, read what the user did
/// not hand it, or break the report (issue 49).
extension TestCommandTests {
  @Test func aTestFileCannotReplaceTheRunner() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      """
      test("fails", function() expect(1):equals(2) end)
      __runner = function() return math.maxinteger end
      runner = function(index) if index == nil then return 1 end return "fails", true end
      tests = {}
      """, to: "lib/spoof_test.lua")
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("lib").path])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("0 passed, 1 failed"), "\(result.stdout)")
  }

  @Test func migrateReadsOnlyThePlacesItIsGiven() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      """
      test("root", function() migrate { store = "/", model = "/" } end)
      test("up", function() migrate { store = "../../../../../../../../etc/passwd", model = "x" } end)
      test("special", function() migrate { store = "/dev/zero", model = "x" } end)
      """, to: "lib/paths_test.lua")
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("lib").path])
    #expect(result.status == 1)
    #expect(result.stdout.contains("0 passed, 3 failed"), "\(result.stdout)")
    // Refused before anything is copied: no scratch folder is made for them.
    #expect(result.stdout.components(separatedBy: "is outside the library").count == 4, "\(result.stdout)")
  }

  @Test func controlCharactersInNamesKeepTheJUnitReportWellFormed() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      "test(\"bell\\7 and nul\\0 name\", function() error(\"escape\\27[31m red\") end)\n", to: "lib/xml_test.lua")
    let junit = folder.url.appendingPathComponent("junit.xml")
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("lib").path, "--junit", junit.path])
    #expect(result.status == 1)
    let data = try Data(contentsOf: junit)
    let parser = XMLParser(data: data)
    #expect(parser.parse(), "\(String(decoding: data, as: UTF8.self))")
  }
}

/// Hostile tests (issue 55): their names and messages reach the terminal escaped, and a test a limit
/// stops keeps its name and its own line.
extension TestCommandTests {
  @Test func namesAndMessagesReachTheTerminalEscaped() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      "test(\"bell\\7 nul\\0 \\27[2J name\", function() error(\"escape\\27[31m red\\r\") end)\n", to: "lib/tty_test.lua"
    )
    let result = try MigrunProcess.run(["test", folder.url.appendingPathComponent("lib").path])
    #expect(result.status == 1)
    #expect(
      !result.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(result.stdout.debugDescription)")
    #expect(result.stdout.contains("FAIL lib/tty_test.lua: bell\\u{7} nul\\u{0} \\u{1B}[2J name"), "\(result.stdout)")
    #expect(result.stdout.contains("escape\\u{1B}[31m red\\u{D}"), "\(result.stdout)")
  }

  @Test func aTestALimitStopsKeepsItsNameAndLine() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      """
      test("spins", function() while true do end end)
      test("grows", function()
        local t = {}
        while true do t[#t + 1] = { #t } end
      end)
      test("after", function() expect(1):equals(1) end)
      """, to: "lib/limits_test.lua")
    let result = try MigrunProcess.run(
      ["test", folder.url.appendingPathComponent("lib").path, "--lua-memory", "2", "--lua-instructions", "1000000"])
    #expect(result.status == 1)
    #expect(result.stdout.contains("FAIL lib/limits_test.lua: spins\n"), "\(result.stdout)")
    #expect(result.stdout.contains("lib/limits_test.lua:1: instruction limit of 1000000 exceeded"), "\(result.stdout)")
    #expect(result.stdout.contains("FAIL lib/limits_test.lua: grows\n"), "\(result.stdout)")
    #expect(result.stdout.contains("lib/limits_test.lua:4: memory limit of 2097152 bytes exceeded"), "\(result.stdout)")
    #expect(!result.stdout.contains("test 1") && !result.stdout.contains("prelude"), "\(result.stdout)")
    #expect(result.stdout.contains("1 passed, 2 failed"), "\(result.stdout)")
  }
}

extension TestCommandTests {
  /// A test kept outside the library requires the library's modules through --policies.
  @Test func aTestOutsideTheLibraryRequiresItsModulesThroughPolicies() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      """
      local names = require("text.names")
      test("split", function() expect(names.split("Ada Lovelace").last):equals("Lovelace") end)
      """, to: "mine/names_test.lua")
    let mine = folder.url.appendingPathComponent("mine").path
    let without = try MigrunProcess.run(["test", mine])
    #expect(without.status == 1)
    #expect(without.stdout.contains("module 'text.names' not found"), "\(without.stdout)")
    let with = try MigrunProcess.run(["test", mine, "--policies", Self.library.path])
    #expect(with.status == 0, "\(with.stdout)\(with.stderr)")
    #expect(with.stdout.contains("1 passed, 0 failed"), "\(with.stdout)")
  }
}

extension TestCommandTests {
  /// The test file docs/policies.md shows runs as written, from outside the library.
  @Test func theDocumentedTestFileRunsAsWritten() throws {
    let page = try String(
      contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/policies.md"), encoding: .utf8)
    let start = try #require(page.range(of: "```lua\nlocal names = require \"text.names\""))
    let end = try #require(page.range(of: "```", range: start.upperBound..<page.endIndex))
    let folder = try TemporaryDirectory()
    try folder.write(
      String(page[page.index(start.lowerBound, offsetBy: 7)..<end.lowerBound]), to: "docs/documented_test.lua")
    let result = try MigrunProcess.run(
      ["test", folder.url.appendingPathComponent("docs").path, "--policies", Self.library.path])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("3 passed, 0 failed"), "\(result.stdout)")
  }
}
