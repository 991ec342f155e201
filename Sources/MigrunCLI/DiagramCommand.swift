import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunStore
import MigrunTools

struct DiagramCommand: MigrunCommand {
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

  func execute() throws {
    let dot = try drawing()
    let data: Data
    do {
      data = format == .dot ? Data(dot.utf8) : try Diagram.svg(dot)
    } catch let error as Diagram.DiagramError {
      throw CLIError(message: error.description)
    }
    if let out {
      do {
        try data.write(to: URL(fileURLWithPath: out))
      } catch {
        throw CLIError(message: "--out: cannot write \(out) (\(error.localizedDescription))")
      }
    } else {
      FileHandle.standardOutput.write(data)
    }
  }

  var folders: [URL] { policyFolders.map { URL(fileURLWithPath: $0) } }

  /// `--model`; for a store given without it, the project file's `model:` (a model given as the
  /// argument is drawn as it is).
  var storeModel: String? {
    get throws {
      if let model { return model }
      guard (try? SQLiteStore.metadata(at: URL(fileURLWithPath: source))) != nil else { return nil }
      return try ProjectConfig.current()?.model
    }
  }

  func drawing() throws -> String {
    if let model = try storeModel {
      // The argument is a store.
      let store = URL(fileURLWithPath: source)
      let bundle = try loadModel(URL(fileURLWithPath: model))
      let planned = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: folders, destination: to)
      if plan {
        return Diagram.plan(
          planned, versions: bundle.versionNames, store: store.lastPathComponent,
          title: "\(store.lastPathComponent): \(planned.sourceVersion) → \(planned.destinationVersion)")
      }
      guard planned.steps.count == 1, let step = planned.steps.first else {
        throw CLIError(
          message: planned.steps.isEmpty
            ? "\(store.lastPathComponent) is at \(planned.destinationVersion): no step to draw (--plan draws the path)"
            : "the plan has \(planned.steps.count) steps: draw them with --plan, or one with MODEL --from --to")
      }
      return Diagram.step(
        try mapping(of: step), from: step.from, to: step.to, title: "\(store.lastPathComponent): \(step.name)")
    }
    guard !plan else { throw CLIError(message: "--plan draws a store's path: give the store and --model") }
    let bundle = try loadModel(URL(fileURLWithPath: source))
    switch (from, to) {
    case (let from?, let to?):
      let (source, destination) = (try bundle.model(named: from), try bundle.model(named: to))
      let file = ScriptedStep.find(from: from, to: to, in: folders)
      let step = MigrationStep(
        from: from, to: to, kind: file.map { .scripted($0) } ?? .inferred,
        inferredMapping: file == nil ? try MappingModel.inferred(from: source, to: destination) : nil,
        source: source, destination: destination)
      return Diagram.step(
        try mapping(of: step), from: from, to: to, title: "\(bundle.name): \(step.name) (\(Diagram.kind(of: step)))")
    case (nil, nil):
      let name = version ?? bundle.currentVersionName
      return Diagram.model(try bundle.model(named: name), title: "\(bundle.name) · \(name)")
    default:
      throw CLIError(message: "give both --from and --to to draw a step")
    }
  }

  func mapping(of step: MigrationStep) throws -> MappingModel {
    switch step.kind {
    case .inferred:
      guard let mapping = step.inferredMapping else { throw CLIError(message: "\(step.name): no inferred mapping") }
      return mapping
    case .scripted(let file):
      return try ScriptedStep.load(step, file: file, policyFolders: folders).mapping
    }
  }
}
