import Foundation
import LuaHost
import MigrunKit

/// The script of a step: a Lua mapping file (`<From>-<To>.lua`) or a mapping model made with Xcode
/// (`<From>-<To>.xcmappingmodel`, `.cdm`), run through its Lua conversion with the Lua policies of
/// the custom classes it names (``AppleMappingConverter``).
public enum ScriptedStep {
  /// The extensions of step scripts, in the order a policy folder is searched.
  public static let extensions = ["lua", "xcmappingmodel", "cdm"]

  /// The script for `from → to` in `folders`: the first folder that has one, `.lua` first.
  public static func find(from: String, to: String, in folders: [URL]) -> URL? {
    for folder in folders {
      for pathExtension in extensions {
        let file = folder.appendingPathComponent("\(from)-\(to).\(pathExtension)")
        if FileManager.default.fileExists(atPath: file.path) { return file }
      }
    }
    return nil
  }

  public static func isMappingModel(_ file: URL) -> Bool {
    ["xcmappingmodel", "cdm"].contains(file.pathExtension)
  }

  /// Loads `file` for `step`.
  public static func load(_ step: MigrationStep, file: URL, policyFolders: [URL], limits: LuaLimits = LuaLimits())
    throws -> StepMapping
  {
    guard isMappingModel(file) else {
      return try LuaMappingFile.load(step, file: file, policyFolders: policyFolders, limits: limits)
    }
    let conversion = try convert(step, file: file, policyFolders: policyFolders, missing: .fail)
    return try LuaMappingFile.load(
      step, source: conversion.lua, name: file.lastPathComponent, policyFolders: policyFolders, limits: limits)
  }

  /// The Lua conversion of the mapping model `file` for `step`, refused when it was made for other versions.
  public static func convert(
    _ step: MigrationStep, file: URL, policyFolders: [URL], missing: AppleMappingConverter.MissingPolicy
  ) throws -> AppleMappingConverter.Conversion {
    let model = try AppleMappingModel.read(
      contentsOf: file, versions: [step.source, step.destination], modelName: "the step's model")
    if let mismatch = model.mismatch(source: step.source, destination: step.destination) {
      throw MigrationError(.badMapping, step: step.name, reason: "\(file.lastPathComponent): \(mismatch)")
    }
    return try AppleMappingConverter.convert(
      model, source: step.source, destination: step.destination, policyFolders: policyFolders, missing: missing)
  }
}
