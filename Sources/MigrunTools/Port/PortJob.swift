import FileDoors
import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import SwiftDataModel

/// `migrun port FILES… --model M [--out DIR]`: the app's custom migration code in Swift, written as
/// a policy folder migrun runs (``SwiftPort``, ``PortFolder``). Mapping models among the inputs
/// (`.xcmappingmodel`, `.cdm`) are converted with the ported classes as their policies.
package struct PortJob {
  package var inputs: [String]
  package var model: String
  package var out: String?
  package var force: Bool

  package init(inputs: [String], model: String, out: String?, force: Bool) {
    self.inputs = inputs
    self.model = model
    self.out = out
    self.force = force
  }

  package func run() throws -> JobOutput {
    let bundle = try loadModel(URL(fileURLWithPath: model))
    let (sources, mappingModels) = try readInputs()
    let translation: SwiftPort.Translation
    do {
      translation = try SwiftPort.translate(sources: sources)
    } catch {
      throw ToolError(message: "\(error)", underlying: error)
    }
    let folder = URL(fileURLWithPath: out ?? FileManager.default.currentDirectoryPath, isDirectory: true)
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
      throw ToolError(
        message: "\(folder.path): cannot make the folder (\(OutputFile.reason(error)))", underlying: error)
    }
    var writer = PortFolder(translation: translation, bundle: bundle)
    var named: [String: String] = [:]
    let steps = try mappingModels.map { url in try Self.step(of: url, bundle: bundle) }
    for (url, step, classes) in steps {
      for name in classes {
        writer.mappedClasses[name] = step
        named[name] = url.lastPathComponent
      }
    }
    // Every name refused or taken before anything is written: never half a folder.
    let files = writer.files()
    let written =
      files.map(\.name).filter { !$0.contains("-") } + steps.map { "\($0.step).lua" }
      + files.map(\.name).filter { $0.contains("-") }
    for name in written + ["port.md"] {
      try OutputFile.check(folder.appendingPathComponent(name).path, force: force)
    }
    for (name, text) in files where !name.contains("-") { try write(name, text, in: folder) }
    for (url, _, _) in steps { try convert(url, bundle: bundle, folder: folder) }
    for (name, text) in files where name.contains("-") { try write(name, text, in: folder) }
    let summary = writer.summary(
      inputs: sources.map(\.file), model: model, files: written + ["port.md"], mappingModels: named)
    try write("port.md", summary, in: folder)
    return report(translation, writer: writer, folder: folder, files: written + ["port.md"])
  }

  // MARK: - Non public

  private func report(_ translation: SwiftPort.Translation, writer: PortFolder, folder: URL, files: [String])
    -> JobOutput
  {
    var output = JobOutput()
    let counts = translation.counts
    output.say("wrote \(folder.path): \(files.joined(separator: ", "))")
    output.say(
      "statements translated: \(counts.translated) of \(counts.statements)\(PortFolder.percent(counts)); "
        + "\(translation.classes.count) class\(translation.classes.count == 1 ? "" : "es"), \(plural(translation.stages.count, "stage")), "
        + "\(plural(counts.placeholders.count, "placeholder")) left (each fails where it stands until written; see port.md)"
    )
    for ported in translation.classes
    where !ported.hooks.isEmpty && writer.mappedClasses[ported.name] == nil && writer.placement(of: ported) == nil {
      output.notes.append("\(ported.name) (\(ported.spot)): no step of the model found for it; see port.md")
    }
    for collision in writer.collisions {
      output.notes.append("\(collision.spot): \(collision.message); the step fails until one entry takes both")
    }
    for stage in translation.stages where writer.placement(of: stage) == nil {
      output.notes.append("the stage of \(stage.spot): its versions are none of the model's; see port.md")
    }
    return output
  }

  private func write(_ name: String, _ text: String, in folder: URL) throws {
    let path = folder.appendingPathComponent(name).path
    try OutputFile.check(path, force: force)
    try writeAtomically(to: path, text: text)
  }

  /// The Swift files (folders walked) and the mapping models among the inputs.
  private func readInputs() throws -> ([(file: String, text: String)], [URL]) {
    var urls: [URL] = []
    var mappingModels: [URL] = []
    var paths = inputs
    if SwiftDataSources.isSwiftSource(URL(fileURLWithPath: model)) { paths.append(model) }
    for path in paths {
      let url = URL(fileURLWithPath: path)
      if ScriptedStep.isMappingModel(url) {
        mappingModels.append(url)
      } else if url.pathExtension == "swift" {
        urls.append(url)
      } else if case .folder? = InputFile.kind(at: path) {
        urls += SwiftDataSources.swiftFiles(in: url)
      } else {
        throw ToolError(
          message: "\(path): give .swift files, folders of them, or mapping models (.xcmappingmodel, .cdm)")
      }
    }
    var seen: Set<String> = []
    urls = urls.filter { seen.insert($0.standardizedFileURL.path).inserted }
    let names = Dictionary(grouping: urls, by: \.lastPathComponent)
    let sources = try urls.map { url -> (file: String, text: String) in
      let shown = names[url.lastPathComponent]?.count == 1 ? url.lastPathComponent : url.path
      do {
        return (shown, try InputFile.text(url, origin: .named, limit: 1 << 20))
      } catch {
        throw ToolError(message: "\(url.path): \(error)", underlying: error)
      }
    }
    guard !sources.isEmpty else { throw ToolError(message: "no .swift file among \(inputs.joined(separator: ", "))") }
    return (sources, mappingModels)
  }

  /// A mapping model's step (`From-To`) and the classes it names (as modules: no module prefix).
  private static func step(of url: URL, bundle: ModelBundle) throws -> (url: URL, step: String, classes: [String]) {
    let appleModel = try AppleMappingModel.read(contentsOf: url, bundle: bundle)
    let classes = Set(appleModel.entityMappings.compactMap(\.policyClassName))
    return (
      url, "\(appleModel.sourceVersion)-\(appleModel.destinationVersion)",
      classes.map(AppleMappingConverter.moduleName(ofClass:)).sorted()
    )
  }

  /// A mapping model converted as `convert` converts it, its custom classes taken from the modules
  /// just written.
  private func convert(_ url: URL, bundle: ModelBundle, folder: URL) throws {
    let appleModel = try AppleMappingModel.read(contentsOf: url, bundle: bundle)
    let step = MigrationStep(
      from: appleModel.sourceVersion, to: appleModel.destinationVersion, kind: .scripted([url]), inferredMapping: nil,
      source: try bundle.model(named: appleModel.sourceVersion),
      destination: try bundle.model(named: appleModel.destinationVersion))
    let conversion = try ScriptedStep.convert(step, file: url, policyFolders: [folder], missing: .stub)
    try write("\(step.from)-\(step.to).lua", conversion.lua, in: folder)
  }
}

extension PortJob {
  /// The command's help (`migrun port --help`).
  package static let help = """
    Reads Swift sources with swift-syntax: every NSEntityMigrationPolicy subclass (its
    createDestinationInstances, createRelationships and other hooks, and the functions a mapping model's
    FUNCTION($entityPolicy, "selector:", …) calls), every SwiftData MigrationStage.custom(willMigrate:didMigrate:)
    and NSCustomMigrationStage handler. Writes a policy folder: ClassName.lua per class, <From>-<To>.lua per step
    (the class's entity mapping read off its name, BookToBookPolicy → Book, or from a mapping model given among the
    inputs), <From>-<To>.stage.lua per stage, swift.lua (what the translations call), port_test.lua and port.md
    (classes, methods, statements translated and left). Each Lua statement ends with its Swift line; a statement
    the port cannot translate is an error("migrun port: File.swift:LINE: …") that fails the migration there until
    it is written — never left out. See docs/porting.md.

    Example:
      migrun port App/Migrations --model App/Model.xcdatamodeld --out policies/
    """
}
