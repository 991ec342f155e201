import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// `config`'s job: what the command does, without its printing.
package struct ConfigJob: ProjectJob {
  package var model: String?
  package var policyFolders: [String]
  package var chain: String?
  package var configuration: String?
  package var to: String?
  package var jobs: Int?
  package var luaTime: Double?
  package var luaMemory: Int?
  package var luaInstructions: Int64?
  package var json: Bool
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(
    model: String?, policyFolders: [String], chain: String?, configuration: String?, to: String?, jobs: Int?,
    luaTime: Double?, luaMemory: Int?, luaInstructions: Int64?, json: Bool
  ) {
    self.model = model
    self.policyFolders = policyFolders
    self.chain = chain
    self.configuration = configuration
    self.to = to
    self.jobs = jobs
    self.luaTime = luaTime
    self.luaMemory = luaMemory
    self.luaInstructions = luaInstructions
    self.json = json
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let rows = rows(project)
    if json {
      try out.emit(
        "config",
        encoding: ConfigReport(
          file: project?.file.path,
          options: Dictionary(
            uniqueKeysWithValues: rows.map {
              ($0.name, ConfigReport.Option(value: $0.typed, text: $0.value, source: $0.source))
            })))
      return out
    }
    out.say(project.map { "project file: \($0.file.path)" } ?? "no \(ProjectConfig.fileName) in this folder or above")
    let width = rows.map(\.name.count).max() ?? 0
    for row in rows {
      out.say("\(row.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(row.value)  (\(row.source))")
    }
    return out
  }

  /// A text option's value as JSON gives it: the flag's, else the project file's, else null.
  private static func text(_ flag: String?, _ projectValue: String?) -> JSONField {
    (flag ?? projectValue).map(JSONField.string) ?? .null
  }

  /// Each option: the text shown, the value as JSON gives it (typed: a number, a list, null for
  /// none), and where it came from — a flag, the project file, or the default.
  private func rows(_ project: ProjectConfig?) -> [(name: String, value: String, typed: JSONField, source: String)] {
    // The file in force, by its path (which names it): "(/work/app/.migrun.yml)".
    let file = project?.file.path ?? ProjectConfig.fileName
    var rows: [(name: String, value: String, typed: JSONField, source: String)] = []
    /// The option as given by a flag, else by the project file, else its default; `typed` is the
    /// value in force as JSON gives it.
    func add(_ name: String, flag: String?, project projectValue: String?, fallback: String, typed: JSONField) {
      if let flag {
        rows.append((name, flag, typed, "flag"))
      } else if let projectValue {
        rows.append((name, projectValue, typed, file))
      } else {
        rows.append((name, fallback, typed, "default"))
      }
    }
    let text = Self.text
    let policies = policyFolders.isEmpty ? project?.policies ?? [] : policyFolders
    add(
      "model", flag: model, project: project?.model, fallback: "(none: give --model)",
      typed: text(model, project?.model))
    add(
      "policies", flag: policyFolders.isEmpty ? nil : policyFolders.joined(separator: ", "),
      project: project.flatMap { $0.policies.isEmpty ? nil : $0.policies.joined(separator: ", ") }, fallback: "(none)",
      typed: .list(policies.map(JSONField.string)))
    add(
      "chain", flag: chain, project: project?.chain, fallback: "Core Data's path (or a chain file)",
      typed: text(chain, project?.chain))
    add(
      "configuration", flag: configuration, project: project?.configuration, fallback: "found from the store",
      typed: text(configuration, project?.configuration))
    add("to", flag: to, project: project?.to, fallback: "the current version", typed: text(to, project?.to))
    let jobCount = jobs ?? project?.jobs ?? ProcessInfo.processInfo.activeProcessorCount
    add(
      "jobs", flag: jobs.map(String.init), project: project?.jobs.map(String.init), fallback: String(jobCount),
      typed: .integer(Int64(jobCount)))
    let seconds = luaTime ?? project?.luaTime ?? 10
    add(
      "lua.time", flag: luaTime.map { "\($0)" }, project: project?.luaTime.map { "\($0)" }, fallback: "10.0",
      typed: .number(seconds))
    let mebibytes = luaMemory ?? project?.luaMemory ?? 64
    add(
      "lua.memory", flag: luaMemory.map { "\($0) MiB" }, project: project?.luaMemory.map { "\($0) MiB" },
      fallback: "64 MiB", typed: .integer(Int64(mebibytes)))
    let instructions = luaInstructions ?? project?.luaInstructions ?? 50_000_000
    add(
      "lua.instructions", flag: luaInstructions.map(String.init),
      project: project?.luaInstructions.map(String.init), fallback: "50000000", typed: .integer(instructions))
    return rows
  }
}

/// `config --json`'s line: the project file in force, and each option's value, text and source.
struct ConfigReport: Encodable {
  struct Option: Encodable {
    let value: JSONField
    let text: String
    let source: String
  }

  let file: String?
  let options: [String: Option]

  private enum Keys: String, CodingKey { case file, options }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(file, forKey: .file)
    try container.encode(options, forKey: .options)
  }
}
