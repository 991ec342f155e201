import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunTools

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

  static let rules = [
    "probable-rename", "unchanged-hashes", "required-without-default", "cardinality-change", "uniqueness-added",
    "composite-changed", "cloudkit-required",
    "cloudkit-unique", "cloudkit-inverse", "cloudkit-optional", "cloudkit-deny", "cloudkit-ordered", "cloudkit-removed",
  ]

  func validate() throws {
    for rule in ignore where !Self.rules.contains(rule) {
      throw ValidationError("--ignore: no rule '\(rule)' (rules: \(Self.rules.joined(separator: ", ")))")
    }
  }

  /// What identifies a finding from one run to the next (its message may be reworded).
  static func key(_ finding: [String: Any]) -> String {
    let versions = (finding["versions"] as? [String] ?? []).joined(separator: ",")
    let properties = (finding["properties"] as? [String] ?? []).joined(separator: ",")
    return [finding["rule"] as? String ?? "", versions, finding["entity"] as? String ?? "", properties].joined(
      separator: "|")
  }

  static func json(_ finding: ModelLint.Finding) -> [String: Any] {
    [
      "rule": finding.rule, "versions": finding.versions, "entity": finding.entity, "properties": finding.properties,
      "message": finding.message,
    ]
  }

  func execute() throws {
    let bundle = try loadModel(URL(fileURLWithPath: try modelPath(argument: modelArgument, option: model)))
    let folders = policyFolders.map { URL(fileURLWithPath: $0) }
    try ScriptedStep.checkPolicyFolders(folders, bundle: bundle)
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: folders, override: nil)?.names
    let scripted = ScriptedStep.scriptedSteps(of: bundle, order: order ?? bundle.versionNames, in: folders)
    let versions = order ?? bundle.versionNames
    let staged = Set(
      zip(versions, versions.dropFirst()).filter { LuaStage.file(from: $0, to: $1, in: folders) != nil }
        .map { "\($0)\u{0}\($1)" })
    var findings = ModelLint.findings(bundle.models, cloudKit: cloudkit, scripted: scripted, staged: staged)
      .filter { !ignore.contains($0.rule) }
    if let deployed {
      guard let first = bundle.versionNames.firstIndex(of: deployed) else {
        throw CLIError(
          message:
            "--deployed: \(bundle.name) has no version '\(deployed)' (versions: \(bundle.versionNames.joined(separator: ", ")))"
        )
      }
      // A change between two versions before the one deployed with CloudKit is not CloudKit's concern.
      findings.removeAll { finding in
        finding.rule.hasPrefix("cloudkit-") && finding.versions.count == 2
          && (bundle.versionNames.firstIndex(of: finding.versions[0]) ?? first) < first
      }
    }
    if let writeBaseline {
      // The same lines lint --json prints, so either can be a baseline.
      var lines = Data()
      for finding in findings {
        var line = Self.json(finding)
        (line["event"], line["schema"]) = ("finding", JSONLines.schema)
        lines += try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) + Data("\n".utf8)
      }
      try lines.write(to: URL(fileURLWithPath: writeBaseline))
    }
    // Written as the baseline, today's findings are known: the run passes.
    var known: Set<String> = writeBaseline == nil ? [] : Set(findings.map { Self.key(Self.json($0)) })
    if let baseline {
      let data: Data
      do {
        data = try Data(contentsOf: URL(fileURLWithPath: baseline))
      } catch {
        throw CLIError(message: "--baseline: cannot read \(baseline) (\(error.localizedDescription))")
      }
      guard let recorded = Self.findings(in: data) else {
        throw CLIError(
          message: "--baseline: \(baseline) is not a list of findings (--write-baseline and lint --json write one)")
      }
      known.formUnion(recorded.map(Self.key))
    }
    let new = findings.filter { !known.contains(Self.key(Self.json($0))) }
    if json {
      for finding in findings {
        var entry = Self.json(finding)
        if baseline != nil { entry["known"] = known.contains(Self.key(entry)) }
        try JSONLines.emit("finding", entry)
      }
      try JSONLines.emit(
        "summary",
        [
          "command": "lint", "model": bundle.name, "versions": bundle.versionNames.count, "findings": findings.count,
          "new": new.count,
        ])
    } else {
      for finding in findings {
        print(known.contains(Self.key(Self.json(finding))) ? "known: \(finding)" : "\(finding)")
      }
      let knownCount = findings.count - new.count
      print(
        findings.isEmpty
          ? "\(bundle.name): \(plural(bundle.versionNames.count, "version")), no findings"
          : "\(bundle.name): \(plural(findings.count, "finding"))"
            + (baseline == nil ? "" : " (\(knownCount) known from the baseline, \(new.count) new)"))
    }
    if !new.isEmpty { throw ExitCode(1) }
  }

  /// A baseline's findings: JSON lines (`finding` events, other lines passed over), or a JSON
  /// array of findings (the form baselines had before schema 1).
  static func findings(in data: Data) -> [[String: Any]]? {
    if let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] { return array }
    var found: [[String: Any]] = []
    for line in data.split(separator: UInt8(ascii: "\n")) where !line.allSatisfy({ $0 == 32 || $0 == 13 }) {
      guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { return nil }
      if object["event"] as? String == "finding" { found.append(object) }
    }
    return found
  }
}
