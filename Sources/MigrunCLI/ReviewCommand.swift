import ArgumentParser
import Foundation
import MigrunTools

struct ReviewCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "review",
    abstract: "Write one HTML page a reviewer reads: the plan and why, each step's changes and picture, and the proof.",
    discussion: HelpText.reflow(
      """
      The page holds the path and the rule that chose it (step files passed over, and why); per step its
      method, the model diff (entities and properties added, removed, renamed, changed, with version
      hashes), its entity mappings, what it drops, what its step files do (hooks, computed attributes;
      their test coverage with --coverage), lint's findings beside the change that causes them, and its
      diagram; then the migration run on a copy of the store, never on the store itself (objects per
      entity before and after each step, conservation, check before and after, time per step); and
      verify's made-up stores of every old version.
      Given a folder instead of a store (a model, or SwiftData sources), a store of the model's oldest
      version is made up and reviewed. The page is one file: inline CSS and SVG, no script, nothing
      loaded from elsewhere; it reads on a phone and prints. --json writes its twin (docs/json.md).
      """))

  @Argument(help: "The store (reviewed on a copy), or a folder: a model whose oldest version is made up.")
  var target: String
  @OptionGroup var chain: ChainOptions
  @Option(
    help: ArgumentHelp("An lcov tracefile of `migrun test --coverage FILE`: step files' coverage.", valueName: "file"))
  var coverage: String?
  @Option(help: ArgumentHelp("Write the page to this file (default: standard output).", valueName: "file"))
  var out: String?
  @Flag(help: "Write the review as one JSON line (a `review` event, docs/json.md) instead of HTML.") var json = false
  @Flag(help: "Replace the --out file if it exists.") var force = false
  @OptionGroup(title: "Lua limits") var lua: LuaLimitOptions

  func execute(_ project: ProjectConfig?) throws {
    if let out { try OutputFile.check(out, option: "--out", force: force, inputs: [target]) }
    // A folder is its own model when neither --model nor the project file names another.
    var options = chain
    if options.model == nil, project?.model == nil, ReviewJob.isFolder(target) { options.model = target }
    let setup = try options.setup(project, limits: lua.limits(project))
    try ReviewJob(target: target, setup: setup, coverage: coverage).write(json: json, to: out)
  }
}
