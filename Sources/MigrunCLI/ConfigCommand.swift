import ArgumentParser
import Foundation
import MigrunTools

/// `migrun config`: the options in force for the migration commands here, and where each comes
/// from — a flag, the project file (`.migrun.yml`, found in this folder or above), or the default.
struct ConfigCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "config",
    abstract: "Show the options in force and where each comes from: a flag, .migrun.yml, or the default.",
    discussion: HelpText.reflow(
      """
      .migrun.yml (in this folder or the nearest above) holds what a project repeats: model, policies,
      chain, configuration, to, jobs, and lua (time, memory, instructions); paths are relative to
      the file. Flags given on a command line win over it. A key migrun does not know is an error.
      """))

  @OptionGroup var chain: ChainOptions
  @OptionGroup var lua: LuaLimitOptions
  @Option(help: ArgumentHelp("Stores run at a time.", valueName: "n")) var jobs: Int?
  @Flag(help: "One JSON line: {\"event\": \"config\", \"file\", \"options\": {name: {\"value\", \"source\"}}}.")
  var json = false

  func execute() throws {
    let project = try ProjectConfig.current()
    let file = project.map { "\(ProjectConfig.fileName) (\($0.file.path))" } ?? ProjectConfig.fileName
    // Each option: the text shown, the value as JSON gives it (typed: a number, a list, null for
    // none), and where it came from.
    var rows: [(name: String, value: String, typed: Any, source: String)] = []
    func add(_ name: String, flag: String?, project projectValue: String?, fallback: String, typed: (String?) -> Any) {
      if let flag {
        rows.append((name, flag, typed(flag), "flag"))
      } else if let projectValue {
        rows.append((name, projectValue, typed(projectValue), file))
      } else {
        rows.append((name, fallback, typed(nil), "default"))
      }
    }
    func text(_ value: String?) -> Any { value ?? NSNull() }
    let policies = chain.policyFolders.isEmpty ? project?.policies ?? [] : chain.policyFolders
    add("model", flag: chain.model, project: project?.model, fallback: "(none: give --model)", typed: text)
    add(
      "policies", flag: chain.policyFolders.isEmpty ? nil : chain.policyFolders.joined(separator: ", "),
      project: project.flatMap { $0.policies.isEmpty ? nil : $0.policies.joined(separator: ", ") }, fallback: "(none)",
      typed: { _ in policies })
    add(
      "chain", flag: chain.chain, project: project?.chain, fallback: "Core Data's path (or a chain file)", typed: text)
    add(
      "configuration", flag: chain.configuration, project: project?.configuration, fallback: "found from the store",
      typed: text)
    add("to", flag: chain.to, project: project?.to, fallback: "the current version", typed: text)
    let jobCount = jobs ?? project?.jobs ?? ProcessInfo.processInfo.activeProcessorCount
    add(
      "jobs", flag: jobs.map(String.init), project: project?.jobs.map(String.init), fallback: String(jobCount),
      typed: { _ in jobCount })
    let seconds = lua.luaTime ?? project?.luaTime ?? 10
    add(
      "lua.time", flag: lua.luaTime.map { "\($0)" }, project: project?.luaTime.map { "\($0)" }, fallback: "10.0",
      typed: { _ in seconds })
    let mebibytes = lua.luaMemory ?? project?.luaMemory ?? 64
    add(
      "lua.memory", flag: lua.luaMemory.map { "\($0) MiB" }, project: project?.luaMemory.map { "\($0) MiB" },
      fallback: "64 MiB", typed: { _ in mebibytes })
    let instructions = lua.luaInstructions ?? project?.luaInstructions ?? 50_000_000
    add(
      "lua.instructions", flag: lua.luaInstructions.map(String.init),
      project: project?.luaInstructions.map(String.init), fallback: "50000000", typed: { _ in instructions })
    if json {
      try JSONLines.emit(
        "config",
        [
          "file": project?.file.path ?? NSNull(),
          "options": Dictionary(
            uniqueKeysWithValues: rows.map { ($0.name, ["value": $0.typed, "text": $0.value, "source": $0.source]) }),
        ])
      return
    }
    print(project.map { "project file: \($0.file.path)" } ?? "no \(ProjectConfig.fileName) in this folder or above")
    let width = rows.map(\.name.count).max() ?? 0
    for row in rows {
      print("\(row.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(row.value)  (\(row.source))")
    }
  }
}
