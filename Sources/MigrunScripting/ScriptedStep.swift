import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunStore

/// The script of a step: a Lua mapping file (`<From>-<To>.lua`) or a mapping model made with Xcode
/// (`<From>-<To>.xcmappingmodel`, `.cdm`), run through its Lua conversion with the Lua policies of
/// the custom classes it names (``AppleMappingConverter``).
package enum ScriptedStep {
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
  /// `chainOrigin` and `destinationOrigin` say where `chain` and `destination` were given, in errors
  /// about them.
  public static func plan(
    store: URL, bundle: ModelBundle, policyFolders folders: [URL], chain: [String]? = nil, destination: String? = nil,
    mappingModels: [URL] = [], chainOrigin: String = "--chain", destinationOrigin: String? = nil
  ) throws -> MigrationPlan {
    let order = try MigrationPlanner.explicitOrder(
      bundle, policyFolders: folders, override: chain, overrideOrigin: chainOrigin)
    let metadata = try SQLiteStore.metadata(at: store)
    let storeModel =
      bundle.version(matching: metadata.versionHashes) == nil
      ? try? SQLiteStore.cachedModel(at: store)?.named(
        "\(store.deletingPathExtension().lastPathComponent)'s own model") : nil
    var given: [String: URL] = [:]
    var givenModules = Set<String>()
    func take(_ url: URL, versions: [ObjectModel]) throws {
      let model = try AppleMappingModel.read(
        contentsOf: url, versions: versions, modelName: bundle.url.lastPathComponent)
      let key = "\(model.sourceVersion)\u{0}\(model.destinationVersion)"
      if given[key] == nil { given[key] = url }
      for className in model.entityMappings.compactMap(\.policyClassName) {
        givenModules.insert(AppleMappingConverter.moduleName(ofClass: className))
      }
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
    let byHashes = try checkPolicyFolders(
      folders, bundle: bundle, storeModel: storeModel, modulesOfGivenMappings: givenModules)
    return try MigrationPlanner.plan(
      bundle: bundle, storeHashes: metadata.versionHashes, destination: destination,
      destinationOrigin: destinationOrigin, order: order,
      storeModel: storeModel,
      script: { from, to in
        given["\(from)\u{0}\(to)"] ?? find(from: from, to: to, in: folders) ?? byHashes["\(from)\u{0}\(to)"]
      }, scripts: LuaScripts(policyFolders: folders))
  }

  /// Checks that `folders` hold only what a migration of `bundle` can use, so that nothing in them
  /// is passed over without a word (a misnamed mapping file would leave its step to inference):
  /// every folder exists; every mapping model fits two versions (by its hashes); every `.lua` file
  /// directly in a folder is a step (`<From>-<To>.lua`, two version names of the model), a test
  /// (`*_test.lua`), a module another Lua file requires, or the policy class a mapping model names.
  /// Returns the mapping models by the step they fit ("source\u{0}destination").
  @discardableResult
  public static func checkPolicyFolders(
    _ folders: [URL], bundle: ModelBundle, storeModel: ObjectModel? = nil, modulesOfGivenMappings: Set<String> = []
  ) throws -> [String: URL] {
    for folder in folders {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
        throw MigrationError(.badMapping, reason: "--policies \(folder.path): no such folder")
      }
    }
    let found = mappingModels(in: folders, bundle: bundle, storeModel: storeModel)
    if let (url, reason) = found.unmatched.first {
      throw MigrationError(
        .badMapping, reason: "\(url.path) is in a policy folder but fits no two versions of \(bundle.name): \(reason)")
    }
    let versions = Set(bundle.versionNames + (storeModel?.versionName.map { [$0] } ?? []))
    let luaFiles = folders.flatMap { folder in
      ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        .filter { $0.hasSuffix(".lua") }.map { folder.appendingPathComponent($0) }
    }
    let required = requiredModules(of: luaFiles).union(found.policyModules).union(modulesOfGivenMappings)
    for file in luaFiles {
      try checkLuaFile(file, versions: versions, required: required, bundle: bundle)
    }
    return found.matched
  }

  /// Modules some Lua file of `files` requires, by their first name part.
  private static func requiredModules(of files: [URL]) -> Set<String> {
    var required = Set<String>()
    for file in files {
      let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
      // `require "a.b"`, `require('a.b')`: the quoted name after the word (and an optional parenthesis).
      for range in text.ranges(of: "require") {
        var rest = text[range.upperBound...].drop(while: \.isWhitespace)
        if rest.first == "(" { rest = rest.dropFirst().drop(while: \.isWhitespace) }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { continue }
        let name = rest.dropFirst().prefix { $0 != quote && $0 != "\n" }
        guard !name.isEmpty, rest.dropFirst(name.count + 1).first == quote else { continue }
        required.insert(String(name.split(separator: ".").first ?? name))
      }
    }
    return required
  }

  /// Refuses a Lua file of a policy folder that is no step of `bundle` (`<From>-<To>.lua` or
  /// `.stage.lua`), no test and no required module: it would be passed over.
  private static func checkLuaFile(_ file: URL, versions: Set<String>, required: Set<String>, bundle: ModelBundle)
    throws
  {
    var name = file.deletingPathExtension().lastPathComponent
    if name.hasSuffix("_test") || required.contains(name) { return }
    // A custom stage's file, <From>-<To>.stage.lua (LuaStage): named for a step like a mapping file.
    if name.hasSuffix(".stage") { name.removeLast(".stage".count) }
    if versions.contains(where: { from in
      name.hasPrefix(from + "-") && versions.contains(String(name.dropFirst(from.count + 1)))
    }) {
      return
    }
    let steps = zip(bundle.versionNames, bundle.versionNames.dropFirst()).map { "\($0)-\($1)" }
    let folded = { (text: String) in text.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "-" } }
    let meant = steps.first { folded($0) == folded(name) }
    throw MigrationError(
      .badMapping,
      reason:
        "\(file.path) is no step of \(bundle.name) (a step's file is <From>-<To>.lua, or <From>-<To>.stage.lua for a custom stage, with two version names), no test (*_test.lua) and no module a mapping file requires: it would be passed over"
        + (meant.map { "; did you mean '\($0).lua'?" }
          ?? "; the steps are \(steps.map { "'\($0).lua'" }.joined(separator: ", "))"))
  }

  /// The mapping models in `folders`, matched to the versions they were made for by the entity
  /// hashes they record, whatever their files are called — Core Data's own rule
  /// (`NSMappingModel(from:forSourceModel:destinationModel:)` searches bundles by hashes). Keyed by
  /// "source\u{0}destination" (the first folder's wins); `unmatched`: the ones that fit no two
  /// versions of `bundle` (or `storeModel`), with the reason.
  public static func mappingModels(in folders: [URL], bundle: ModelBundle, storeModel: ObjectModel? = nil)
    -> (matched: [String: URL], unmatched: [(URL, String)], policyModules: Set<String>)
  {
    var matched: [String: URL] = [:]
    var unmatched: [(URL, String)] = []
    var policyModules = Set<String>()
    let files = folders.flatMap { folder in
      ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        .map { folder.appendingPathComponent($0) }.filter(isMappingModel)
    }
    for url in files {
      do {
        let model = try AppleMappingModel.read(
          contentsOf: url, versions: (storeModel.map { [$0] } ?? []) + bundle.models,
          modelName: bundle.url.lastPathComponent)
        let key = "\(model.sourceVersion)\u{0}\(model.destinationVersion)"
        if matched[key] == nil { matched[key] = url }
        for className in model.entityMappings.compactMap(\.policyClassName) {
          policyModules.insert(AppleMappingConverter.moduleName(ofClass: className))
        }
      } catch {
        unmatched.append((url, error.reason))
      }
    }
    return (matched, unmatched, policyModules)
  }

  /// A step file of the policy folders that `plan` does not use, and why.
  package struct UnusedStepFile: Sendable, Hashable {
    public let file: URL
    public let reason: String
  }

  /// Every step file in `folders` (`<From>-<To>.lua`, `.xcmappingmodel`, `.cdm`, `.stage.lua`, named after
  /// two versions of `bundle`) whose step `plan` does not take, with the reason: the path skips it (Core
  /// Data's path goes from one version straight to a later one), or the step lies outside the path.
  /// `plan` and `migrate` name each one, so a user's script is never passed over without a word.
  public static func unusedStepFiles(of plan: MigrationPlan, bundle: ModelBundle, in folders: [URL])
    -> [UnusedStepFile]
  {
    let taken = Set(plan.steps.map { "\($0.from)\u{0}\($0.to)" })
    let path = [plan.sourceVersion] + plan.steps.map(\.to)
    var unused: [UnusedStepFile] = []
    var seen = Set<String>()
    for from in bundle.versionNames {
      for to in bundle.versionNames where to != from && !taken.contains("\(from)\u{0}\(to)") {
        let names = extensions.map { "\(from)-\(to).\($0)" } + ["\(from)-\(to).stage.lua"]
        for folder in folders {
          for name in names {
            let file = folder.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: file.path), seen.insert(file.standardizedFileURL.path).inserted
            else { continue }
            let reason: String
            if let start = path.firstIndex(of: from), let end = path.lastIndex(of: to), start < end {
              reason =
                "the path goes \(path[start...end].joined(separator: " → ")) (\(plan.rule)), not through \(from) → \(to); "
                + "give --chain or a chain file through it to use it"
            } else if let start = path.firstIndex(of: from), start + 1 < path.count {
              reason =
                "the path goes \(path[start]) → \(path[start + 1]) in one step (\(plan.rule)) without stopping at \(to); "
                + "give --chain or a chain file through \(to) to use it"
            } else if path.count == 1 {
              reason = "the store is at \(plan.sourceVersion): nothing to migrate"
            } else {
              reason = "\(from) → \(to) is not on the path \(path.joined(separator: " → "))"
            }
            unused.append(UnusedStepFile(file: file, reason: reason))
          }
        }
      }
    }
    return unused.sorted { $0.file.path < $1.file.path }
  }

  /// The steps between consecutive versions of `bundle` (in `order`) that `folders` hold a script
  /// for — a Lua mapping file or a mapping model by name, or a mapping model by its hashes — as
  /// "source\u{0}destination": steps whose values the script decides (`lint` leaves them to it).
  public static func scriptedSteps(of bundle: ModelBundle, order: [String], in folders: [URL]) -> Set<String> {
    let byHashes = mappingModels(in: folders, bundle: bundle).matched
    var steps = Set<String>()
    for (from, to) in zip(order, order.dropFirst()) {
      let key = "\(from)\u{0}\(to)"
      if byHashes[key] != nil || find(from: from, to: to, in: folders) != nil { steps.insert(key) }
    }
    return steps
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
