import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunStore
import MigrunTools

struct DiagramCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "diagram",
    abstract: "Draw a model, a step between two versions, or a store's planned path (SVG or Graphviz DOT).",
    discussion: HelpText.reflow(
      """
      migrun diagram MODEL [--model-version V]: the entities (attributes with their types, abstract and
      parent entities) and relationships with their cardinality and inverses, as Xcode's graph shows
      them.
      migrun diagram MODEL --from V1 --to V2: the two versions side by side, what the step adds,
      removes, renames and transforms marked (the mapping file in --policies for the pair, else the
      inferred mapping). migrun diagram STORE --model M: the same for the store's version and the
      destination, when the plan is one step.
      migrun diagram STORE --model M --plan: the model's versions and the planned path through them,
      each step's kind (inferred, Lua, Apple mapping model).
      SVG is drawn by Graphviz's dot (Debian: graphviz); --format dot writes the DOT itself.
      """))

  enum Format: String, ExpressibleByArgument, CaseIterable {
    case svg, dot
  }

  @Argument(
    help:
      "A model (.xcdatamodeld, .momd, .xcdatamodel, SwiftData sources, a store as its own model), or a store with --model."
  )
  var source: String
  @Option(name: .customLong("model-version"), help: "The version to draw (default: the current version).")
  var version: String?
  @Option(help: "Draw the step from this version (with --to).") var from: String?
  @Option(help: "Draw the step to this version (with --from), or a store's destination version.") var to: String?
  @Option(help: "The model, when the argument is a store.") var model: String?
  @Option(
    name: .customLong("policies"), help: "Folders of mapping files (repeatable): a step's own mapping is drawn.")
  var policyFolders: [String] = []
  @Flag(help: "Draw the store's planned path through the versions (with --model).") var plan = false
  @Option(help: "svg (default) or dot.") var format: Format = .svg
  @Option(help: ArgumentHelp("Write to this file (default: standard output).", valueName: "file")) var out: String?

  func execute(_ project: ProjectConfig?) throws {
    try DiagramJob(
      source: source, version: version, from: from, to: to, model: model, policyFolders: policyFolders, plan: plan
    ).reading(project).write(svg: format == .svg, to: out)
  }
}
