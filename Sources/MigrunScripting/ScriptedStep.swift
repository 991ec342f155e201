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

  /// The plan for the store file `store` with `bundle`, as `migrun plan` and `migrate` make it: the
  /// version order of `chain` (or a chain file) if any, Core Data's path otherwise; Lua mapping files
  /// and mapping models found by name in `policyFolders`, `mappingModels` matched to the versions they
  /// were made for. When no version has the store's hashes, its own model (`Z_MODELCACHE`) is the
  /// source, and a mapping model made for it (given, or in a policy folder) is found by its hashes.
  public static func plan(
    store: URL, bundle: ModelBundle, policyFolders folders: [URL], chain: [String]? = nil, destination: String? = nil,
    mappingModels: [URL] = []
  ) throws -> MigrationPlan {
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: folders, override: chain)
    let metadata = try SQLiteStore.metadata(at: store)
    let storeModel =
      bundle.version(matching: metadata.versionHashes) == nil
      ? try? SQLiteStore.cachedModel(at: store)?.named(
        "\(store.deletingPathExtension().lastPathComponent)'s own model") : nil
    var given: [String: URL] = [:]
    func take(_ url: URL, versions: [ObjectModel]) throws {
      let model = try AppleMappingModel.read(
        contentsOf: url, versions: versions, modelName: bundle.url.lastPathComponent)
      let key = "\(model.sourceVersion)\u{0}\(model.destinationVersion)"
      if given[key] == nil { given[key] = url }
    }
    for url in mappingModels {
      guard isMappingModel(url) else {
        throw MigrationError(.badMapping, reason: "--mapping \(url.path): give an .xcmappingmodel or a .cdm")
      }
      do {
        try take(url, versions: bundle.models)
      } catch {
        guard let storeModel else { throw error }
        try take(url, versions: [storeModel] + bundle.models)
      }
    }
    if let storeModel {
      // Mapping models are matched by hashes here, not names: the store's version has no name in the bundle.
      let inFolders = folders.flatMap { folder in
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
          .map { folder.appendingPathComponent($0) }.filter(isMappingModel)
      }
      for url in inFolders { try? take(url, versions: [storeModel] + bundle.models) }
    }
    return try MigrationPlanner.plan(
      bundle: bundle, storeHashes: metadata.versionHashes, destination: destination, order: order,
      storeModel: storeModel,
      script: { from, to in given["\(from)\u{0}\(to)"] ?? find(from: from, to: to, in: folders) })
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
