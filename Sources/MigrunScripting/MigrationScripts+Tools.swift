import Foundation
import LuaHost
import MigrunKit
import MigrunModel

extension ScriptedStep {
  /// `lint`'s findings for `bundle`'s versions (in the policy folders' order, if they give one): the
  /// steps their scripts cover left to them, the steps their custom stages cover left to those.
  package static func lintFindings(of bundle: ModelBundle, in folders: [URL], cloudKit: Bool) throws
    -> [ModelLint.Finding]
  {
    let files = PolicyFiles(folders)
    try checkPolicyFolders(files, bundle: bundle)
    let explicit = try MigrationPlanner.explicitOrder(bundle, policyFolders: folders, override: nil)
    let versions = explicit?.names ?? bundle.versionNames
    // A chain file's line names a step's files too (`V3: a.lua, b.lua`).
    let scripted = scriptedSteps(of: bundle, order: versions, in: files).union((explicit?.scripts ?? [:]).keys)
    let staged = Set(
      zip(versions, versions.dropFirst()).filter { LuaStage.file(from: $0, to: $1, in: folders) != nil }
        .map { "\($0)\u{0}\($1)" })
    return ModelLint.findings(bundle.models, cloudKit: cloudKit, scripted: scripted, staged: staged)
  }

  /// `convert`'s work: the mapping model at `file` (an `.xcmappingmodel` or `.cdm`) as a Lua mapping
  /// file for the two versions of `bundle` it was made for, checked to load as that step's file.
  package static func luaConversion(
    of file: URL, bundle: ModelBundle, policyFolders: [URL], missing: AppleMappingConverter.MissingPolicy
  ) throws -> (step: MigrationStep, conversion: AppleMappingConverter.Conversion, entityMappings: Int) {
    guard isMappingModel(file) else {
      throw MigrationError(.badMapping, reason: "\(file.path): give an .xcmappingmodel folder or a .cdm file")
    }
    let appleModel = try AppleMappingModel.read(contentsOf: file, bundle: bundle)
    let step = MigrationStep(
      from: appleModel.sourceVersion, to: appleModel.destinationVersion, kind: .scripted([file]),
      inferredMapping: nil, source: try bundle.model(named: appleModel.sourceVersion),
      destination: try bundle.model(named: appleModel.destinationVersion))
    let conversion = try convert(step, file: file, policyFolders: policyFolders, missing: missing)
    do {
      _ = try LuaMappingFile.load(
        step, source: conversion.lua, name: "\(step.from)-\(step.to).lua", policyFolders: policyFolders)
    } catch {
      throw MigrationError(
        .badMapping, reason: "\(file.path): the Lua conversion does not load (\(error)); please report this",
        underlying: error)
    }
    return (step, conversion, appleModel.entityMappings.count)
  }
}

extension MigrationScripts {
  /// `migrun lint`: what each step between `bundle`'s versions would do that may surprise — a
  /// probable rename taken as a drop, a required attribute without a default, a new uniqueness
  /// constraint — one line each (`V1 → V2: Entity.property: … [rule]`); steps the policy folders'
  /// scripts or stages cover are left to them. `cloudKit`: CloudKit's rules too.
  ///
  /// ```swift
  /// for finding in try MigrationScripts.lint(bundle, policyFolders: [policiesURL]) { print(finding) }
  /// ```
  public static func lint(_ bundle: ModelBundle, policyFolders: [URL] = [], cloudKit: Bool = false) throws
    -> [String]
  {
    try ScriptedStep.lintFindings(of: bundle, in: policyFolders, cloudKit: cloudKit).map(\.description)
  }

  /// `migrun convert`: the Xcode mapping model at `mappingModel` (an `.xcmappingmodel` folder or a
  /// compiled `.cdm`) as the Lua mapping file migrun runs it as, for the versions of `bundle` it was
  /// made for. A custom policy class without a Lua port in `policyFolders` is written as a stub that
  /// fails, naming the class.
  ///
  /// ```swift
  /// let lua = try MigrationScripts.luaMapping(converting: mappingURL, bundle: bundle)
  /// ```
  public static func luaMapping(converting mappingModel: URL, bundle: ModelBundle, policyFolders: [URL] = [])
    throws -> String
  {
    try ScriptedStep.luaConversion(of: mappingModel, bundle: bundle, policyFolders: policyFolders, missing: .stub)
      .conversion.lua
  }
}
