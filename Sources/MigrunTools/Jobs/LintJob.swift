import FileDoors
import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// `lint`'s job: what the command does, without its printing.
package struct LintJob {
  /// The rules `--ignore` may name (`ModelLint`'s findings).
  package static let rules = [
    "probable-rename", "unchanged-hashes", "required-without-default", "cardinality-change", "uniqueness-added",
    "composite-changed", "cloudkit-required",
    "cloudkit-unique", "cloudkit-inverse", "cloudkit-optional", "cloudkit-deny", "cloudkit-ordered", "cloudkit-removed",
    "cloudkit-renamed",
  ]

  package var model: String
  package var policyFolders: [String]
  package var cloudkit: Bool
  package var json: Bool
  package var ignore: [String]
  package var baseline: String?
  package var writeBaseline: String?
  package var deployed: String?

  package init(
    model: String, policyFolders: [String], cloudkit: Bool, json: Bool, ignore: [String], baseline: String?,
    writeBaseline: String?, deployed: String?
  ) {
    self.model = model
    self.policyFolders = policyFolders
    self.cloudkit = cloudkit
    self.json = json
    self.ignore = ignore
    self.baseline = baseline
    self.writeBaseline = writeBaseline
    self.deployed = deployed
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let bundle = try loadModel(URL(fileURLWithPath: model))
    let findings = try findings(of: bundle)
    let known = try knownFindings(findings)
    let new = findings.filter { !known.contains(Self.key($0)) }
    if json {
      for finding in findings {
        let known = baseline == nil ? nil : known.contains(Self.key(finding))
        try out.emit("finding", encoding: FindingLine(finding: finding, known: known))
      }
      try out.emit(
        "summary",
        encoding: LintSummary(
          model: bundle.name, versions: bundle.versionNames.count, findings: findings.count, new: new.count))
    } else {
      for finding in findings {
        out.say(known.contains(Self.key(finding)) ? "known: \(finding)" : "\(finding)")
      }
      let knownCount = findings.count - new.count
      out.say(
        findings.isEmpty
          ? "\(bundle.name): \(plural(bundle.versionNames.count, "version")), no findings"
          : "\(bundle.name): \(plural(findings.count, "finding"))"
            + (baseline == nil ? "" : " (\(knownCount) known from the baseline, \(new.count) new)"))
    }
    if !new.isEmpty { out.status = 1 }
    return out
  }

  /// The findings known from the baseline (and today's, when written as the baseline now).
  private func knownFindings(_ findings: [ModelLint.Finding]) throws -> Set<String> {
    if let writeBaseline {
      // The same lines lint --json prints, so either can be a baseline.
      var lines = Data()
      for finding in findings {
        lines += try JSONLines.line("finding", JSONLines.fields("finding", FindingLine(finding: finding, known: nil)))
      }
      try writeAtomically(to: writeBaseline) { try $0.write(lines) }
    }
    // Written as the baseline, today's findings are known: the run passes.
    var known: Set<String> = writeBaseline == nil ? [] : Set(findings.map(Self.key))
    if let baseline {
      let data: Data
      do {
        data = try InputFile.data(URL(fileURLWithPath: baseline), origin: .named)
      } catch let error as InputFileError {
        throw ToolError(message: "--baseline: \(error)", underlying: error)
      } catch {
        throw ToolError(
          message: "--baseline: cannot read \(baseline) (\(error.localizedDescription))", underlying: error)
      }
      guard let recorded = Self.findings(in: data) else {
        throw ToolError(
          message: "--baseline: \(baseline) is not a list of findings (--write-baseline and lint --json write one)")
      }
      known.formUnion(
        recorded.map { finding in
          Self.key(
            rule: finding["rule"] as? String ?? "", versions: finding["versions"] as? [String] ?? [],
            entity: finding["entity"] as? String ?? "", properties: finding["properties"] as? [String] ?? [])
        })
    }
    return known
  }

  /// The findings of `bundle`'s versions, steps the policy folders script or stage left to them, the
  /// ignored rules left out, and CloudKit's before the deployed version.
  func findings(of bundle: ModelBundle) throws -> [ModelLint.Finding] {
    let folders = policyFolders.map { URL(fileURLWithPath: $0) }
    var findings = try ScriptedStep.lintFindings(of: bundle, in: folders, cloudKit: cloudkit)
      .filter { !ignore.contains($0.rule) }
    if let deployed {
      guard let first = bundle.versionNames.firstIndex(of: deployed) else {
        throw ToolError(
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
    return findings
  }

  /// What identifies a finding from one run to the next (its message may be reworded).
  static func key(rule: String, versions: [String], entity: String, properties: [String]) -> String {
    [rule, versions.joined(separator: ","), entity, properties.joined(separator: ",")].joined(separator: "|")
  }

  static func key(_ finding: ModelLint.Finding) -> String {
    key(rule: finding.rule, versions: finding.versions, entity: finding.entity, properties: finding.properties)
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

/// `lint --json`'s line per finding; `known` only against a baseline.
struct FindingLine: Encodable {
  let rule: String
  let versions: [String]
  let entity: String
  let properties: [String]
  let message: String
  let known: Bool?

  init(finding: ModelLint.Finding, known: Bool?) {
    rule = finding.rule
    versions = finding.versions
    entity = finding.entity
    properties = finding.properties
    message = finding.message
    self.known = known
  }
}

/// `lint --json`'s closing line.
struct LintSummary: Encodable {
  let command = "lint"
  let model: String
  let versions: Int
  let findings: Int
  let new: Int
}
