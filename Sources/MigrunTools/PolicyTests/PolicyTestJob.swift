import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// `test`'s job: what the command does, without its printing.
package struct PolicyTestJob: ProjectJob {
  package var paths: [String]
  package var junit: String?
  package var fixtures: [String]
  package var policyFolders: [String]
  package var verbose: Bool
  package var limits: LuaLimits
  package var coverage: String?
  /// Whether files already at `junit` and `coverage` may be replaced (never a test file).
  package var force: Bool
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(
    paths: [String], junit: String?, fixtures: [String], policyFolders: [String], verbose: Bool, limits: LuaLimits,
    coverage: String?, force: Bool = false
  ) {
    self.paths = paths
    self.junit = junit
    self.fixtures = fixtures
    self.policyFolders = policyFolders
    self.verbose = verbose
    self.limits = limits
    self.coverage = coverage
    self.force = force
  }

  /// `--fixtures`, then the folders of `MIGRUN_FIXTURES` (colon-separated), so that a library's
  /// tests find their stores from any working folder.
  var fixtureFolders: [URL] {
    let environment = ProcessInfo.processInfo.environment["MIGRUN_FIXTURES"]?.split(separator: ":").map(String.init)
    return (fixtures + (environment ?? [])).map { URL(fileURLWithPath: $0) }
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    // Without paths: the project file's policy folders, else ./policies.
    let projectPolicies = project?.policies ?? []
    // Folders `require` searches beyond the tested one: --policies, else the project's.
    let extraPolicies = (policyFolders.isEmpty ? projectPolicies : policyFolders).map { URL(fileURLWithPath: $0) }
    let roots = (paths.isEmpty ? (projectPolicies.isEmpty ? ["policies"] : projectPolicies) : paths).map {
      URL(fileURLWithPath: $0)
    }
    let files = try PolicyTests.files(under: roots)
    guard !files.isEmpty else {
      throw ToolError(message: "no *_test.lua under \(roots.map(\.path).joined(separator: ", "))")
    }
    // Before any test runs: a report that cannot be written, or would replace a file by accident.
    for (option, path) in [("--junit", junit), ("--coverage", coverage)] {
      if let path { try OutputFile.check(path, option: option, force: force, inputs: files.map(\.file.path)) }
    }
    var results: [PolicyTests.Result] = []
    if coverage != nil { LuaCoverage.start() }
    for (file, root) in files {
      let fileResults = PolicyTests.run(
        file: file, root: root, limits: limits, fixtures: fixtureFolders,
        policies: extraPolicies.filter { $0.standardizedFileURL != root.standardizedFileURL })
      for result in fileResults where verbose || !result.passed {
        out.say("\(result.passed ? "ok  " : "FAIL") \(result.file): \(result.name)")
        if let message = result.message, !result.passed {
          out.say(
            lines: message.split(separator: "\n", omittingEmptySubsequences: false).map { "     \($0)" }
              .joined(separator: "\n"))
        }
      }
      results += fileResults
    }
    let failed = results.filter { !$0.passed }.count
    out.say("\(results.count - failed) passed, \(failed) failed (\(files.count) files)")
    if let coverage { out.lines += try coverageLines(coverage, roots: roots) }
    if let junit {
      try writeAtomically(to: junit, text: PolicyTests.junit(results))
    }
    if failed > 0 { out.status = 1 }
    // A store a test migrates is copied to the temporary folder: a full disk there is no finding.
    let full = results.filter(\.diskFull).count
    if full > 0 {
      out.say(
        "\(plural(full, "test")) met a full disk (the store copies of migrate{…} go to the temporary folder, "
          + "TMPDIR): that says nothing of the policies — free some space, or set TMPDIR, and run them again")
      out.status = 12
    }
    return out
  }

  /// Line coverage of the policy files under `roots`, written as LCOV to `file`; its summary.
  private func coverageLines(_ file: String, roots: [URL]) throws -> [String] {
    let coverage = file
    var lines: [String] = []
    LuaCoverage.stop()
    let folders = roots.filter { root in
      var isFolder: ObjCBool = false
      return FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder) && isFolder.boolValue
    }
    let covered = PolicyCoverage.collect(
      roots: folders.isEmpty ? roots.map { $0.deletingLastPathComponent() } : folders, counted: LuaCoverage.lines())
    try writeAtomically(to: coverage, text: PolicyCoverage.lcov(covered))
    lines.append("Line coverage (\(coverage)):")
    for line in PolicyCoverage.summary(covered) { lines.append(line) }
    return lines
  }
}
