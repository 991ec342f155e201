import ArgumentParser
import Foundation
import LuaHost
import MigrunKit
import MigrunScripting
import MigrunTools

struct TestCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "test",
    abstract: "Run the *_test.lua files of a policy library.",
    discussion: HelpText.reflow(
      """
      Each file declares tests as test("name", function() … end) and checks with
      expect(x):equals(y), expect_error(fn, pattern) and the migrate{…} fixture (docs/policies.md). Tests run in the sandbox and limits of a migration; `require` finds modules in the
      folder given. Prints each failure with file:line and a diff, then "N passed, N failed".
      Exit 0 when all pass, 1 otherwise.
      """))

  @Argument(help: "Test files or folders searched for *_test.lua (default: policies: in .migrun.yml, else policies).")
  var paths: [String] = []

  @Option(help: "Also write the results as JUnit XML to this file.")
  var junit: String?

  @Option(
    help: ArgumentHelp(
      "A folder of stores and models that migrate{ store = …, model = … } may read, beside the library, the test's folder and the working folder (repeatable; also the folders of MIGRUN_FIXTURES, colon-separated).",
      valueName: "folder"))
  var fixtures: [String] = []

  @Option(
    name: .customLong("policies"),
    help: ArgumentHelp(
      "A folder `require` also searches, after the tested folder, and migrate{…} takes step files from (repeatable; default: policies: in .migrun.yml when paths are given).",
      valueName: "folder"))
  var policyFolders: [String] = []

  @Flag(help: "List every test, not only the failures.")
  var verbose = false

  @OptionGroup(title: "Lua limits") var lua: LuaLimitOptions

  @Option(
    help: ArgumentHelp(
      "Write line coverage of the policy files under the tested folders to this file (lcov tracefile), and list each file's percentage and the lines never run.",
      valueName: "file"))
  var coverage: String?

  @Flag(help: "Replace the --junit and --coverage files if they exist (never a test file).")
  var force = false

  func execute(_ project: ProjectConfig?) throws {
    try show(
      PolicyTestJob(
        paths: paths, junit: junit, fixtures: fixtures, policyFolders: policyFolders, verbose: verbose,
        limits: lua.limits(project), coverage: coverage, force: force
      ).reading(project).run())
  }
}
