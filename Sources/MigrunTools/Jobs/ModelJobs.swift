import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// `hash`'s job: what the command does, without its printing.
package struct HashJob {
  package var model: String
  package var modelVersion: String?
  package var json: Bool

  package init(model: String, modelVersion: String?, json: Bool) {
    self.model = model
    self.modelVersion = modelVersion
    self.json = json
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let bundle = try loadModel(URL(fileURLWithPath: model))
    let versionName = modelVersion ?? bundle.currentVersionName
    let objectModel = try bundle.model(named: versionName)
    let hashes = objectModel.entityVersionHashes.mapValues(\.base64)
    if json {
      try out.emit(
        "hash",
        encoding: HashReport(
          version: versionName, entities: hashes, digest: objectModel.versionHashesDigest,
          checksum: objectModel.versionChecksum))
      return out
    }
    out.say("\(bundle.name) — version \(versionName)")
    let width = hashes.keys.map(\.count).max() ?? 0
    for entity in objectModel.entities {
      let padded = entity.name.padding(toLength: width, withPad: " ", startingAt: 0)
      out.say("  \(padded)  \(hashes[entity.name] ?? "")")
    }
    out.say("digest    \(objectModel.versionHashesDigest)")
    out.say("checksum  \(objectModel.versionChecksum)")
    return out
  }
}

/// `hash --json`'s line.
struct HashReport: Codable {
  let version: String
  let entities: [String: String]
  let digest: String
  let checksum: String
}

/// `diagram`'s drawing: a model version, a step's mapping, or a store's planned path, as Graphviz dot.
package struct DiagramJob: ProjectJob {
  package var source: String
  package var version: String?
  package var from: String?
  package var to: String?
  package var model: String?
  package var policyFolders: [String]
  package var plan: Bool
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(
    source: String, version: String?, from: String?, to: String?, model: String?, policyFolders: [String], plan: Bool
  ) {
    self.source = source
    self.version = version
    self.from = from
    self.to = to
    self.model = model
    self.policyFolders = policyFolders
    self.plan = plan
  }

  var folders: [URL] { policyFolders.map { URL(fileURLWithPath: $0) } }

  /// `--model`; for a store given without it, the project file's `model:` (a model given as the
  /// argument is drawn as it is).
  var storeModel: String? {
    get throws {
      if let model { return model }
      guard (try? SQLiteStore.metadata(at: URL(fileURLWithPath: source))) != nil else { return nil }
      return project?.model
    }
  }

  /// The drawing as SVG (drawn by Graphviz's dot) or as the DOT itself, written to `out`, else to
  /// standard output.
  package func write(svg: Bool, to out: String?) throws {
    let dot = try drawing()
    let data: Data
    do {
      data = svg ? try Diagram.svg(dot) : Data(dot.utf8)
    } catch let error as Diagram.DiagramError {
      throw ToolError(message: error.description)
    }
    if let out {
      try writeAtomically(to: out) { try $0.write(data) }
    } else {
      try StandardOutput.write(data)
    }
  }

  package func drawing() throws -> String {
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
        throw ToolError(
          message: planned.steps.isEmpty
            ? "\(store.lastPathComponent) is at \(planned.destinationVersion): no step to draw (--plan draws the path)"
            : "the plan has \(planned.steps.count) steps: draw them with --plan, or one with MODEL --from --to")
      }
      return Diagram.step(
        try mapping(of: step), from: step.from, to: step.to, title: "\(store.lastPathComponent): \(step.name)")
    }
    guard !plan else { throw ToolError(message: "--plan draws a store's path: give the store and --model") }
    let bundle = try loadModel(URL(fileURLWithPath: source))
    switch (from, to) {
    case (let from?, let to?):
      let (source, destination) = (try bundle.model(named: from), try bundle.model(named: to))
      let file = ScriptedStep.find(from: from, to: to, in: folders)
      let step = MigrationStep(
        from: from, to: to, kind: file.map { .scripted([$0]) } ?? .inferred,
        inferredMapping: file == nil ? try MappingModel.inferred(from: source, to: destination) : nil,
        source: source, destination: destination)
      return Diagram.step(
        try mapping(of: step), from: from, to: to, title: "\(bundle.name): \(step.name) (\(Diagram.kind(of: step)))")
    case (nil, nil):
      let name = version ?? bundle.currentVersionName
      return Diagram.model(try bundle.model(named: name), title: "\(bundle.name) · \(name)")
    default:
      throw ToolError(message: "give both --from and --to to draw a step")
    }
  }

  func mapping(of step: MigrationStep) throws -> MappingModel {
    switch step.kind {
    case .inferred:
      guard let mapping = step.inferredMapping else { throw ToolError(message: "\(step.name): no inferred mapping") }
      return mapping
    case .scripted(let files):
      return try LuaScripts(policyFolders: folders).mapping(for: step, files: files).mapping
    }
  }
}

/// `verify`'s job: what the command does, without its printing.
package struct VerifyJob {
  package var model: String
  package var to: String?
  package var policyFolders: [String]
  package var objects: Int
  package var seed: UInt64
  package var junit: String?

  package init(model: String, to: String?, policyFolders: [String], objects: Int, seed: UInt64, junit: String?) {
    self.model = model
    self.to = to
    self.policyFolders = policyFolders
    self.objects = objects
    self.seed = seed
    self.junit = junit
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    guard objects >= 0 else { throw ToolError(message: "--objects: give 0 or more") }
    let bundle = try loadModel(URL(fileURLWithPath: model))
    let scratch = try ScratchFolder.make("verify")
    defer { ScratchFolder.remove(scratch) }
    let folders = policyFolders.map { URL(fileURLWithPath: $0) }
    try ScriptedStep.checkPolicyFolders(PolicyFiles(folders), bundle: bundle)
    let outcomes: [VerificationOutcome]
    do {
      outcomes = try MigrationScripts(policyFolders: folders).verify(
        bundle: bundle, destination: to, objectsPerEntity: objects, seed: seed, scratch: scratch
      ) { outcome in
        out.say(
          "\(outcome.passed ? "ok  " : "FAIL") \(outcome.version) (\(plural(outcome.objects, "object"))): \(CommandLineWords.flags(in: outcome.detail))"
        )
        // Values the path leaves behind, by name: passing is not the same as keeping everything.
        for drop in outcome.drops { out.say("       drops \(drop)") }
      }
    } catch {
      throw OutputFile.explainTemporary(error)
    }
    let failed = outcomes.filter { !$0.passed }.count
    let destination = to ?? bundle.currentVersionName
    guard !outcomes.isEmpty else {
      out.say(
        "no version of \(bundle.name) comes before \(destination): nothing to check (--to names another destination)")
      return out
    }
    out.say("\(outcomes.count - failed) of \(outcomes.count) versions reach \(destination)")
    if let junit {
      let report = Fleet.Report(
        outcomes.map {
          Fleet.Outcome(
            path: $0.version, to: to ?? bundle.currentVersionName, status: $0.passed ? .migrated : .failed,
            objects: $0.objects, seconds: $0.seconds, error: $0.passed ? nil : $0.detail)
        })
      try report.write(suite: "migrun verify \(bundle.name)", json: nil, junit: junit)
    }
    if failed > 0 { out.status = 1 }
    return out
  }
}

/// `diff`'s job: what the command does, without its printing.
package struct DiffJob {
  package var model: String
  package var from: String
  package var to: String
  package var json: Bool
  package var lua: Bool
  package var out: String?

  package init(model: String, from: String, to: String, json: Bool, lua: Bool, out: String?) {
    self.model = model
    self.from = from
    self.to = to
    self.json = json
    self.lua = lua
    self.out = out
  }

  package func run() throws -> JobOutput {
    var output = JobOutput()
    let bundle = try loadModel(URL(fileURLWithPath: model))
    if lua {
      let folder = URL(fileURLWithPath: out ?? FileManager.default.currentDirectoryPath, isDirectory: true)
      let file = folder.appendingPathComponent(StarterMapping.fileName(from: from, to: to))
      let text = StarterMapping.lua(
        source: try bundle.model(named: from), destination: try bundle.model(named: to), from: from, to: to)
      do {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      } catch {
        throw ToolError(
          message: "\(folder.path): cannot make the folder (\(OutputFile.reason(error)))", underlying: error)
      }
      try OutputFile.check(file.path)
      try writeAtomically(to: file.path, text: text)
      // The placeholders themselves (`function(src) error("…") end`), not the comment that names them.
      let placeholders = text.components(separatedBy: "function(src) error(").count - 1
      output.say(
        "wrote \(file.path)"
          + (placeholders > 0
            ? ": \(plural(placeholders, "placeholder")) to fill (they fail the step until written)" : ""))
      return output
    }
    let mapping: MappingModel
    do {
      mapping = try MappingModel.inferred(from: try bundle.model(named: from), to: try bundle.model(named: to))
    } catch let error as MigrationError {
      throw ToolError(message: "\(from) → \(to) cannot be inferred: \(error.description)", underlying: error)
    }
    if json {
      try output.emit(
        "diff",
        encoding: DiffJSON(
          from: from, to: to, mappings: mapping.entityMappings.map { MappingJSON(mapping: $0) },
          dropped: mapping.drops().map(DroppedJSON.init)))
      return output
    }
    output.say("\(from) → \(to): inferred")
    for entityMapping in mapping.entityMappings {
      output.say("  \(entityMapping.name) (\(entityMapping.kind.rawValue))")
      for change in PlanReport.changes(entityMapping) { output.say("    \(change)") }
    }
    // Every property the step leaves behind: its values are lost unless a mapping file carries them.
    for drop in mapping.drops() { output.say("  drops \(drop)") }
    return output
  }
}

/// `convert`'s job: what the command does, without its printing.
package struct ConvertJob {
  package var mapping: String
  package var model: String
  package var policyFolders: [String]
  package var out: String?
  package var force: Bool

  package init(mapping: String, model: String, policyFolders: [String], out: String?, force: Bool) {
    self.mapping = mapping
    self.model = model
    self.policyFolders = policyFolders
    self.out = out
    self.force = force
  }

  package func run() throws -> JobOutput {
    var output = JobOutput()
    let bundle = try loadModel(URL(fileURLWithPath: model))
    let mappingURL = URL(fileURLWithPath: mapping)
    guard ScriptedStep.isMappingModel(mappingURL) else {
      throw ToolError(message: "\(mapping): give an .xcmappingmodel folder or a .cdm file")
    }
    let folders = policyFolders.map { URL(fileURLWithPath: $0) }
    // What is written loads as the step's mapping file (checked there).
    let (step, conversion, entityMappings) = try ScriptedStep.luaConversion(
      of: mappingURL, bundle: bundle, policyFolders: folders, missing: .stub)
    let fileName = "\(step.from)-\(step.to).lua"
    guard let out else {
      // The file's text as it is (it ends with its own newline, which say adds).
      output.say(lines: conversion.lua.hasSuffix("\n") ? String(conversion.lua.dropLast()) : conversion.lua)
      output.notes += reportStubs(conversion, to: nil)
      return output
    }
    var target = URL(fileURLWithPath: out)
    var isFolder: ObjCBool = false
    if FileManager.default.fileExists(atPath: target.path, isDirectory: &isFolder), isFolder.boolValue {
      target.appendPathComponent(fileName)
    }
    try OutputFile.check(target.path, option: "--out", force: force, inputs: [mapping])
    try writeAtomically(to: target.path, text: conversion.lua)
    output.say("Wrote \(target.path): \(step.name), \(entityMappings) entity mappings")
    output.notes += reportStubs(conversion, to: target)
    return output
  }

  /// The note for custom policy classes written as stubs (to standard error).
  func reportStubs(_ conversion: AppleMappingConverter.Conversion, to file: URL?) -> [String] {
    guard !conversion.missingModules.isEmpty else { return [] }
    let place = file.map { " in \($0.lastPathComponent)" } ?? ""
    return [
      "migrun: note: custom policy classes written as stubs\(place), to fill in: "
        + "\(conversion.missingModules.joined(separator: ", ")) (no ClassName.lua in the --policies folders)"
    ]
  }
}

/// `diff --json`'s line: the inferred mapping and what it drops.
struct DiffJSON: Encodable {
  let from: String
  let to: String
  let mappings: [MappingJSON]
  let dropped: [DroppedJSON]
}
