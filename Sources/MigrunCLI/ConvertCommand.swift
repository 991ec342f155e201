import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunTools

struct ConvertCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "convert",
    abstract: "Write an Xcode mapping model (.xcmappingmodel or .cdm) as the equivalent Lua mapping file.",
    discussion: HelpText.reflow(
      """
      Each entity mapping becomes an entry keyed by its destination entity; each value expression
      is written as Lua beside the expression it came from. A custom NSEntityMigrationPolicy class
      the mapping model names is taken from ClassName.lua in a --policies folder when there is one
      (a `require` of it), else written as a stub table with the seven hooks to fill in. The file is
      loaded once for its step before it is written, so what is written runs.

      Example:
        migrun convert "Moody 4-Moody 5.xcmappingmodel" --model Moody.xcdatamodeld --out policies/
      """))

  @Argument(help: "The mapping model: an .xcmappingmodel folder or a .cdm file.") var mapping: String
  @Option(help: "The model it maps between: a .xcdatamodeld or .momd.") var model: String
  @Option(
    name: .customLong("policies"), help: "Folders with Lua policies ClassName.lua for its custom classes (repeatable).")
  var policyFolders: [String] = []
  @Option(help: "Write to this file, or to <From>-<To>.lua in this folder (default: standard output).") var out: String?
  @Flag(help: "Replace the --out file if it exists.") var force = false

  func execute() throws {
    let bundle = try loadModel(URL(fileURLWithPath: model))
    let mappingURL = URL(fileURLWithPath: mapping)
    guard ScriptedStep.isMappingModel(mappingURL) else {
      throw CLIError(message: "\(mapping): give an .xcmappingmodel folder or a .cdm file")
    }
    let appleModel = try AppleMappingModel.read(contentsOf: mappingURL, bundle: bundle)
    let step = MigrationStep(
      from: appleModel.sourceVersion, to: appleModel.destinationVersion, kind: .scripted(mappingURL),
      inferredMapping: nil, source: try bundle.model(named: appleModel.sourceVersion),
      destination: try bundle.model(named: appleModel.destinationVersion))
    let folders = policyFolders.map { URL(fileURLWithPath: $0) }
    let conversion = try ScriptedStep.convert(step, file: mappingURL, policyFolders: folders, missing: .stub)
    let fileName = "\(step.from)-\(step.to).lua"
    // What is written must load as the step's mapping file.
    do {
      _ = try LuaMappingFile.load(step, source: conversion.lua, name: fileName, policyFolders: folders)
    } catch {
      throw CLIError(message: "\(mapping): the Lua conversion does not load (\(error)); please report this")
    }
    guard let out else {
      print(conversion.lua, terminator: "")
      reportStubs(conversion, to: nil)
      return
    }
    var target = URL(fileURLWithPath: out)
    var isFolder: ObjCBool = false
    if FileManager.default.fileExists(atPath: target.path, isDirectory: &isFolder), isFolder.boolValue {
      target.appendPathComponent(fileName)
    }
    if FileManager.default.fileExists(atPath: target.path), !force {
      throw CLIError(message: "\(target.path) exists; give --force to replace it")
    }
    do {
      try conversion.lua.write(to: target, atomically: true, encoding: .utf8)
    } catch {
      throw CLIError(message: "cannot write \(target.path) (\(error.localizedDescription))")
    }
    print("Wrote \(target.path): \(step.name), \(appleModel.entityMappings.count) entity mappings")
    reportStubs(conversion, to: target)
  }

  func reportStubs(_ conversion: AppleMappingConverter.Conversion, to file: URL?) {
    guard !conversion.missingModules.isEmpty else { return }
    let place = file.map { " in \($0.lastPathComponent)" } ?? ""
    FileHandle.standardError.write(
      Data(
        ("migrun: note: custom policy classes written as stubs\(place), to fill in: "
          + "\(conversion.missingModules.joined(separator: ", ")) (no ClassName.lua in the --policies folders)\n").utf8)
    )
  }
}
