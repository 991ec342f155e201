import ArgumentParser
import Foundation
import MigrunTools

/// `migrun config`: the options in force for the migration commands here, and where each comes
/// from — a flag, the project file (`.migrun.yml`, found in this folder or above), or the default.
struct ConfigCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "config",
    abstract: "Show the options in force and where each comes from: a flag, .migrun.yml, or the default.",
    discussion: HelpText.reflow(
      """
      .migrun.yml (in this folder or the nearest above) holds what a project repeats: model, policies,
      chain, configuration, to, jobs, and lua (time, memory, instructions); paths are relative to
      the file. Flags given on a command line win over it. A key migrun does not know, or a value of the
      wrong kind, is an error naming the file (every such key at once) and exits 1.
      """))

  @OptionGroup var chain: ChainOptions
  @OptionGroup var lua: LuaLimitOptions
  @Option(help: ArgumentHelp("Stores run at a time.", valueName: "n")) var jobs: Int?
  @Flag(
    help:
      "One JSON line (docs/json.md): {\"event\": \"config\", \"file\", \"options\": {name: {\"value\", \"text\", \"source\"}}}; source is flag, default or the .migrun.yml's path."
  )
  var json = false

  func execute(_ project: ProjectConfig?) throws {
    try show(
      ConfigJob(
        model: chain.model, policyFolders: chain.policyFolders, chain: chain.chain, configuration: chain.configuration,
        to: chain.to, jobs: jobs, luaTime: lua.luaTime, luaMemory: lua.luaMemory, luaInstructions: lua.luaInstructions,
        json: json
      ).reading(project).run())
  }
}
