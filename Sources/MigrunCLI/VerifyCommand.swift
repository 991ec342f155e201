import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunTools

struct VerifyCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract:
      "Check that a store of every old version reaches the current one: made-up stores, migrated as migrate would.",
    discussion: HelpText.reflow(
      """
      For every version before the destination, a store of that version is filled with --objects
      made-up objects per entity (valid under that version's rules, every relationship shape used,
      the same for the same --seed) and migrated to the destination the way migrate would (Core
      Data's path, or a chain file; the mapping files and policies of --policies), with the
      migration's own checks: objects and links conserved, the destination's rules met. One line
      (and one JUnit test case) per version; exit 1 when any fails.
      """))

  @Argument(help: "A .xcdatamodeld or .momd, or SwiftData sources (a folder or .swift file).") var modelArgument:
    String?
  @Option(help: "The model, as every other command takes it (instead of the argument).") var model: String?
  @Option(help: "The destination version (default: the current version).") var to: String?
  @Option(name: .customLong("policies"), help: "A folder of mapping files and Lua policies (repeatable).")
  var policyFolders: [String] = []
  @Option(help: "Objects made up per entity.") var objects = 20
  @Option(help: "The seed of the made-up objects.") var seed: UInt64 = 1
  @Option(help: ArgumentHelp("Write one JUnit test case per version to this file.", valueName: "file")) var junit:
    String?

  func execute() throws {
    guard objects >= 0 else { throw CLIError(message: "--objects: give 0 or more") }
    let bundle = try loadModel(URL(fileURLWithPath: try modelPath(argument: modelArgument, option: model)))
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("migrun-verify-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: scratch) }
    let folders = policyFolders.map { URL(fileURLWithPath: $0) }
    try ScriptedStep.checkPolicyFolders(folders, bundle: bundle)
    let outcomes = try Verify.run(
      bundle: bundle, destination: to, policyFolders: folders,
      objects: objects, seed: seed, scratch: scratch
    ) { outcome in
      print(
        "\(outcome.passed ? "ok  " : "FAIL") \(outcome.version) (\(plural(outcome.objects, "object"))): \(outcome.detail)"
      )
      // Values the path leaves behind, by name: passing is not the same as keeping everything.
      for drop in outcome.drops { print("       drops \(drop)") }
    }
    let failed = outcomes.filter { !$0.passed }.count
    let destination = to ?? bundle.currentVersionName
    guard !outcomes.isEmpty else {
      print(
        "no version of \(bundle.name) comes before \(destination): nothing to check (--to names another destination)")
      return
    }
    print("\(outcomes.count - failed) of \(outcomes.count) versions reach \(destination)")
    if let junit {
      let report = Fleet.Report(
        outcomes.map {
          Fleet.Outcome(
            path: $0.version, to: to ?? bundle.currentVersionName, status: $0.passed ? .migrated : .failed,
            objects: $0.objects, seconds: $0.seconds, error: $0.passed ? nil : $0.detail)
        })
      try FleetOptions.write(report, suite: "migrun verify \(bundle.name)", json: nil, junit: junit)
    }
    if failed > 0 { throw ExitCode(1) }
  }
}
