import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunTools

struct LintCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "lint",
    abstract: "Find the model changes that lose data in practice, version by version. Exit 1 on findings.",
    discussion: HelpText.reflow(
      """
      Each pair of consecutive versions (in the model's version order) is checked for: a property
      removed and one of the same type added with no renaming identifier (probable-rename); a version
      whose hashes equal its predecessor's although its model changed (unchanged-hashes); a new
      required attribute without a default (required-without-default); a to-one turned to-many or
      back (cardinality-change); a new uniqueness constraint, which existing duplicates break
      (uniqueness-added; a custom stage <From>-<To>.stage.lua in --policies answers it); a composite
      attribute — SwiftData's Codable struct or enum — whose elements changed (composite-changed). With --cloudkit, also what Core Data's CloudKit mirroring does not
      allow: in the current version, required attributes without defaults, uniqueness constraints,
      relationships without inverses or not optional, Deny delete rules, ordered relationships; and
      between versions, removals and renames (the CloudKit schema only grows).
      """))

  @Argument(help: "A .xcdatamodeld or .momd, or SwiftData sources (a folder or .swift file).") var modelArgument:
    String?
  @Option(help: "The model, as every other command takes it (instead of the argument).") var model: String?
  @Flag(help: "Also check what Core Data's CloudKit mirroring forbids.") var cloudkit = false
  @Flag(help: "JSON lines (docs/json.md): a `finding` line per finding, then a `summary`.") var json = false
  @Option(
    name: .customLong("policies"),
    help: "A folder of mapping files or mapping models (repeatable): steps they cover are left to them.")
  var policyFolders: [String] = []
  @Option(help: ArgumentHelp("Leave out the findings of this rule (repeatable).", valueName: "rule"))
  var ignore: [String] = []
  @Option(
    help: ArgumentHelp(
      "Known findings (a file --write-baseline wrote, or lint --json's output): only findings not in it fail.",
      valueName: "file"))
  var baseline: String?
  @Option(
    help: ArgumentHelp("Write the findings to this file, as the baseline of later runs.", valueName: "file"))
  var writeBaseline: String?
  @Option(
    help: ArgumentHelp(
      "The first version deployed with CloudKit: changes between versions before it are not CloudKit's concern.",
      valueName: "version"))
  var deployed: String?

  func validate() throws {
    for rule in ignore where !LintJob.rules.contains(rule) {
      throw ValidationError("--ignore: no rule '\(rule)' (rules: \(LintJob.rules.joined(separator: ", ")))")
    }
  }

  func execute(_ project: ProjectConfig?) throws {
    try show(
      LintJob(
        model: try modelPath(argument: modelArgument, option: model, project: project), policyFolders: policyFolders,
        cloudkit: cloudkit,
        json: json, ignore: ignore, baseline: baseline, writeBaseline: writeBaseline, deployed: deployed
      ).run())
  }
}
