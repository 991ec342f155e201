import ArgumentParser
import Foundation
import LuaHost
import MigrunKit
import MigrunScripting
import MigrunTools

struct TestCommand: MigrunCommand {
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
      "A folder of stores and models that migrate{ store = …, model = … } may read, beside the library, the test's folder and the working folder (repeatable).",
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

  func execute() throws {
    // Without paths: the project file's policy folders, else ./policies.
    let projectPolicies = (try ProjectConfig.current())?.policies ?? []
    // Folders `require` searches beyond the tested one: --policies, else the project's.
    let extraPolicies = (policyFolders.isEmpty ? projectPolicies : policyFolders).map { URL(fileURLWithPath: $0) }
    let roots = (paths.isEmpty ? (projectPolicies.isEmpty ? ["policies"] : projectPolicies) : paths).map {
      URL(fileURLWithPath: $0)
    }
    let files = try PolicyTests.files(under: roots)
    guard !files.isEmpty else {
      throw CLIError(message: "no *_test.lua under \(roots.map(\.path).joined(separator: ", "))")
    }
    var results: [PolicyTests.Result] = []
    if coverage != nil { LuaCoverage.start() }
    for (file, root) in files {
      let fileResults = PolicyTests.run(
        file: file, root: root, limits: lua.limits, fixtures: fixtures.map { URL(fileURLWithPath: $0) },
        policies: extraPolicies.filter { $0.standardizedFileURL != root.standardizedFileURL })
      for result in fileResults where verbose || !result.passed {
        print("\(result.passed ? "ok  " : "FAIL") \(result.file): \(result.name)")
        if let message = result.message, !result.passed {
          print(
            message.split(separator: "\n", omittingEmptySubsequences: false).map { "     \($0)" }.joined(
              separator: "\n"))
        }
      }
      results += fileResults
    }
    let failed = results.filter { !$0.passed }.count
    print("\(results.count - failed) passed, \(failed) failed (\(files.count) files)")
    if let coverage {
      LuaCoverage.stop()
      let folders = roots.filter { root in
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder) && isFolder.boolValue
      }
      let covered = PolicyCoverage.collect(
        roots: folders.isEmpty ? roots.map { $0.deletingLastPathComponent() } : folders, counted: LuaCoverage.lines())
      do {
        try PolicyCoverage.lcov(covered).write(toFile: coverage, atomically: true, encoding: .utf8)
      } catch {
        throw CLIError(message: "cannot write \(coverage): \(error.localizedDescription)")
      }
      print("Line coverage (\(coverage)):")
      for line in PolicyCoverage.summary(covered) { print(line) }
    }
    if let junit {
      do {
        try PolicyTests.junit(results).write(toFile: junit, atomically: true, encoding: .utf8)
      } catch {
        throw CLIError(message: "cannot write \(junit): \(error.localizedDescription)")
      }
    }
    if failed > 0 { throw ExitCode(1) }
  }
}
