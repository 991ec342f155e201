import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting

struct LintCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "lint",
    abstract: "Find the model changes that lose data in practice, version by version. Exit 1 on findings.",
    discussion: HelpText.reflow(
      """
      Each pair of consecutive versions (in the model's version order) is checked for: a property
      removed and one of the same type added with no renaming identifier (probable-rename); a version
      whose hashes equal its predecessor's although its model changed (unchanged-hashes); a new
      required attribute without a default (required-without-default); a to-one turned to-many or
      back (cardinality-change). With --cloudkit, also what Core Data's CloudKit mirroring does not
      allow: in the current version, required attributes without defaults, uniqueness constraints,
      relationships without inverses or not optional, Deny delete rules, ordered relationships; and
      between versions, removals and renames (the CloudKit schema only grows).
      """))

  @Argument(help: "A .xcdatamodeld or .momd.") var modelArgument: String?
  @Option(help: "The model, as every other command takes it (instead of the argument).") var model: String?
  @Flag(help: "Also check what Core Data's CloudKit mirroring forbids.") var cloudkit = false
  @Flag(help: "Print the findings as JSON.") var json = false
  @Option(
    name: .customLong("policies"),
    help: "A folder of mapping files or mapping models (repeatable): steps they cover are left to them.")
  var policyFolders: [String] = []

  func execute() throws {
    let bundle = try ModelBundle(
      contentsOf: URL(fileURLWithPath: try modelPath(argument: modelArgument, option: model)))
    let folders = policyFolders.map { URL(fileURLWithPath: $0) }
    try ScriptedStep.checkPolicyFolders(folders, bundle: bundle)
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: folders, override: nil)?.names
    let scripted = ScriptedStep.scriptedSteps(of: bundle, order: order ?? bundle.versionNames, in: folders)
    let findings = ModelLint.findings(bundle.models, cloudKit: cloudkit, scripted: scripted)
    if json {
      try printJSONObject(
        findings.map {
          [
            "rule": $0.rule, "versions": $0.versions, "entity": $0.entity, "properties": $0.properties,
            "message": $0.message,
          ] as [String: Any]
        })
    } else {
      for finding in findings { print(finding) }
      print(
        findings.isEmpty
          ? "\(bundle.name): \(bundle.versionNames.count) versions, no findings"
          : "\(bundle.name): \(findings.count) finding\(findings.count == 1 ? "" : "s")")
    }
    if !findings.isEmpty { throw ExitCode(1) }
  }
}
