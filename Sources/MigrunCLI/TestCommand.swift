import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting

struct TestCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "test",
    abstract: "Run the *_test.lua files of a policy library.",
    discussion: HelpText.reflow(
      """
      Each file declares tests as test("name", function() … end) and checks with
      expect(x):equals(y), expect_error(fn, pattern) and the migrate{…} fixture (README: Testing
      policies). Tests run in the sandbox and limits of a migration; `require` finds modules in the
      folder given. Prints each failure with file:line and a diff, then "N passed, N failed".
      Exit 0 when all pass, 1 otherwise.
      """))

  @Argument(help: "Test files or folders searched for *_test.lua (default: policies).")
  var paths: [String] = []

  @Option(help: "Also write the results as JUnit XML to this file.")
  var junit: String?

  @Flag(help: "List every test, not only the failures.")
  var verbose = false

  func execute() throws {
    let roots = (paths.isEmpty ? ["policies"] : paths).map { URL(fileURLWithPath: $0) }
    let files = try PolicyTests.files(under: roots)
    guard !files.isEmpty else {
      throw CLIError(message: "no *_test.lua under \(roots.map(\.path).joined(separator: ", "))")
    }
    var results: [PolicyTests.Result] = []
    for (file, root) in files {
      let fileResults = PolicyTests.run(file: file, root: root)
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
