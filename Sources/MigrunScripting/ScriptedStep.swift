import FileDoors
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
  package static let extensions = ["lua", "xcmappingmodel", "cdm"]

  /// The script for `from → to` in `folders` or anywhere below them (Xcode projects keep mapping
  /// models in groups: `Migrations/V3toV4/…`): the first folder that has one, `.lua` first. Two
  /// files of one name below one folder are refused by ``checkPolicyFolders(_:bundle:storeModel:modulesOfGivenMappings:order:)``.
  package static func find(from: String, to: String, in folders: [URL]) -> URL? {
    PolicyFiles(folders).find(from: from, to: to)
  }

  /// Every file and mapping model in `folder` and its subfolders, the folder's own first, then by
  /// path. Hidden entries and the insides of packages (`.xcmappingmodel`, `.xcdatamodeld`) are
  /// left out.
  package static func filesBelow(_ folder: URL) -> [URL] {
    guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return [] }
    var direct: [URL] = []
    var deeper: [URL] = []
    while let relative = walker.nextObject() as? String {
      let file = folder.appendingPathComponent(relative)
      var isFolder: ObjCBool = false
      _ = FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder)
      if file.lastPathComponent.hasPrefix(".") {
        if isFolder.boolValue { walker.skipDescendants() }
        continue
      }
      if isFolder.boolValue {
        guard ["xcmappingmodel", "xcdatamodeld", "xcdatamodel", "momd"].contains(file.pathExtension) else { continue }
        walker.skipDescendants()
      }
      if relative.contains("/") { deeper.append(file) } else { direct.append(file) }
    }
    let byPath = { (a: URL, b: URL) in a.path < b.path }
    return direct.sorted(by: byPath) + deeper.sorted(by: byPath)
  }

  /// Step files of one name twice below one policy folder (`A/3-4.lua`, `B/3-4.lua`): which one
  /// runs would be a guess, so the plan is refused naming both.
  static func refuseAmbiguousStepFiles(in files: PolicyFiles) throws {
    for (folder, below) in zip(files.folders, files.below) {
      var seen: [String: URL] = [:]
      for file in below
      where extensions.contains(file.pathExtension) || file.pathExtension == orderExtension
        || file.path.hasSuffix(".stage.lua")
      {
        let name = file.lastPathComponent
        guard name.contains("-"), !name.hasSuffix("_test.lua") else { continue }
        if let first = seen[name] {
          throw MigrationError(
            .badMapping,
            reason:
              "two step files named \(name) below MigrationScripts.policyFolders \(folder.path): \(first.path) and \(file.path); "
              + "which one runs would be a guess: remove or rename one")
        }
        seen[name] = file
      }
    }
  }

  package static func isMappingModel(_ file: URL) -> Bool {
    ["xcmappingmodel", "cdm"].contains(file.pathExtension)
  }

  /// The plan for the store file `store` with `bundle` through the step files of `policyFolders`,
  /// along `chain` if given: ``MigrationScripts/plan(store:bundle:destination:)`` from a look at the
  /// store of its own (tests and tools that plan without a job).
  package static func plan(
    store: URL, bundle: ModelBundle, policyFolders folders: [URL], chain: [String]? = nil, destination: String? = nil
  ) throws -> MigrationPlan {
    let scripts = MigrationScripts(policyFolders: folders, chain: chain)
    return try scripts.plan(
      session: StoreSession(store), bundle: bundle, destination: destination, lua: scripts.luaScripts)
  }

  /// The mapping models given one by one (``MigrationScripts/mappingModels``), by the step they were
  /// made for ("source\u{0}destination", several for one step in the order given: Core Data's
  /// migration in chunks, ``MappingPass``), with the modules of the policy classes they name. One
  /// given twice is refused; one made for the store's own model (`storeModel`) is matched to it.
  static func givenMappingModels(_ mappingModels: [URL], bundle: ModelBundle, storeModel: ObjectModel?)
    throws -> (byStep: [String: [URL]], modules: Set<String>)
  {
    var given: [String: [URL]] = [:]
    var givenModules = Set<String>()
    func take(_ url: URL, versions: [ObjectModel]) throws {
      let model = try AppleMappingModel.read(
        contentsOf: url, versions: versions, modelName: bundle.url.lastPathComponent)
      let key = "\(model.sourceVersion)\u{0}\(model.destinationVersion)"
      // Several mapping models for one step run in the order given, one after another into one
      // destination (Core Data's migration in chunks: MappingPass); one given twice is refused.
      if given[key, default: []].contains(where: { $0.standardizedFileURL == url.standardizedFileURL }) {
        throw MigrationError(
          .badMapping, reason: "MigrationScripts.mappingModels names \(url.path) twice: give each mapping model once")
      }
      given[key, default: []].append(url)
      for className in model.entityMappings.compactMap(\.policyClassName) {
        givenModules.insert(AppleMappingConverter.moduleName(ofClass: className))
      }
    }
    for url in mappingModels {
      guard isMappingModel(url) else {
        throw MigrationError(
          .badMapping, reason: "MigrationScripts.mappingModels \(url.path): give an .xcmappingmodel or a .cdm")
      }
      do {
        try take(url, versions: bundle.models)
      } catch {
        guard let storeModel else { throw error }
        try take(url, versions: [storeModel] + bundle.models)
      }
    }
    return (given, givenModules)
  }

  /// ``checkPolicyFolders(_:bundle:storeModel:modulesOfGivenMappings:order:chained:)`` as a plan
  /// of `bundle` checks them (`lint`, `verify`): along the version order of a chain file in them,
  /// whose lines' step files are the steps' own, whatever they are called.
  package static func checkPolicyFolders(_ files: PolicyFiles, bundle: ModelBundle) throws {
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: files.folders, override: nil)
    try checkPolicyFolders(
      files, bundle: bundle, storeModel: nil, modulesOfGivenMappings: [], order: order?.names,
      chained: Array((order?.scripts ?? [:]).values.joined()))
  }

  /// Checks that `folders` hold only what a migration of `bundle` can use, so that nothing in them
  /// is passed over without a word (a misnamed mapping file would leave its step to inference):
  /// every folder exists; every mapping model fits two versions (by its hashes); every `.lua` file
  /// directly in a folder is a step (`<From>-<To>.lua`, two version names of the model), a test
  /// (`*_test.lua`), a module another Lua file requires, or the policy class a mapping model names.
  /// Files an order file (``orderedPasses(in:versions:)``) or a chain file's line (`chained`) lists
  /// are the steps' own, whatever they are called.
  /// Returns the mapping models by the step they fit and the order files' passes ("source\u{0}destination").
  @discardableResult
  package static func checkPolicyFolders(
    _ files: PolicyFiles, bundle: ModelBundle, storeModel: ObjectModel?, modulesOfGivenMappings: Set<String>,
    order: [String]?, chained: [URL]
  ) throws -> (byHashes: [String: URL], passes: [String: [URL]]) {
    let folders = files.folders
    for folder in folders {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
        throw MigrationError(.badMapping, reason: "MigrationScripts.policyFolders \(folder.path): no such folder")
      }
    }
    try refuseAmbiguousStepFiles(in: files)
    let versions = Set(bundle.versionNames + (storeModel?.versionName.map { [$0] } ?? []))
    let passes = try orderedPasses(in: files, versions: versions)
    let listed = Set((passes.values.joined() + chained).map(\.standardizedFileURL.path))
    try refuseStepsNamedTwice(passes, files: files, listed: listed)
    let found = mappingModels(in: files, bundle: bundle, storeModel: storeModel)
    if let (first, second) = found.ambiguous.first(where: { pair in
      !listed.contains(pair.0.standardizedFileURL.path) || !listed.contains(pair.1.standardizedFileURL.path)
    }) {
      throw MigrationError(
        .badMapping,
        reason:
          "two mapping models in the policy folders fit the same step: \(first.path) and \(second.path); which one "
          + "runs would be a guess: remove one, name the one to run with MigrationScripts.mappingModels, or run "
          + "both one after another: list them in a <From>-<To>.order file beside them, in the order they run")
    }
    if let (url, reason) = found.unmatched.first {
      throw MigrationError(
        .badMapping, reason: "\(url.path) is in a policy folder but fits no two versions of \(bundle.name): \(reason)")
    }
    let luaFiles = folders.flatMap { folder in
      ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        .filter { $0.hasSuffix(".lua") }.map { folder.appendingPathComponent($0) }
    }
    let required = requiredModules(of: luaFiles).union(found.policyModules).union(modulesOfGivenMappings)
    for file in luaFiles where !listed.contains(file.standardizedFileURL.path) {
      try checkLuaFile(file, versions: versions, required: required, bundle: bundle, order: order)
    }
    return (found.matched, passes)
  }

  /// A step an order file runs in passes that also has a step file of its own the order file does
  /// not list: which runs would be a guess, so it is refused naming both.
  private static func refuseStepsNamedTwice(_ passes: [String: [URL]], files: PolicyFiles, listed: Set<String>)
    throws
  {
    for (key, passFiles) in passes {
      let names = key.split(separator: "\u{0}").map(String.init)
      if names.count == 2, let single = files.find(from: names[0], to: names[1]),
        !listed.contains(single.standardizedFileURL.path)
      {
        throw MigrationError(
          .badMapping,
          reason: "\(single.path) and the order file beside \(passFiles[0].lastPathComponent) both name the step "
            + "\(names[0]) → \(names[1]); which runs would be a guess: list it in the order file, or remove one")
      }
    }
  }

  /// Modules some Lua file of `files` requires, by their first name part.
  private static func requiredModules(of files: [URL]) -> Set<String> {
    var required = Set<String>()
    for file in files {
      let text = (try? InputFile.text(file)) ?? ""
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
  private static func checkLuaFile(
    _ file: URL, versions: Set<String>, required: Set<String>, bundle: ModelBundle, order: [String]?
  ) throws {
    var name = file.deletingPathExtension().lastPathComponent
    if name.hasSuffix("_test") || required.contains(name) { return }
    // A custom stage's file, <From>-<To>.stage.lua (LuaStage): named for a step like a mapping file.
    if name.hasSuffix(".stage") { name.removeLast(".stage".count) }
    if versions.contains(where: { from in
      name.hasPrefix(from + "-") && versions.contains(String(name.dropFirst(from.count + 1)))
    }) {
      return
    }
    // The steps of the version order the plan walks (a chain file's, --chain's), not of names' order.
    let names = order ?? bundle.versionNames
    let steps = zip(names, names.dropFirst()).map { "\($0)-\($1)" }
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
  package static func mappingModels(in policyFiles: PolicyFiles, bundle: ModelBundle, storeModel: ObjectModel? = nil)
    -> (
      matched: [String: URL], unmatched: [(URL, String)], policyModules: Set<String>, ambiguous: [(URL, URL)]
    )
  {
    var matched: [String: URL] = [:]
    var unmatched: [(URL, String)] = []
    var ambiguous: [(URL, URL)] = []
    var policyModules = Set<String>()
    // Anywhere below each folder; two fitting one step below one folder are ambiguous.
    let files = zip(policyFiles.folders, policyFiles.below).map { folder, below in
      (folder, below.filter(isMappingModel))
    }
    var byFolder: [String: URL] = [:]
    for (folder, url) in files.flatMap({ pair in pair.1.map { (pair.0, $0) } }) {
      do {
        let model = try AppleMappingModel.read(
          contentsOf: url, versions: (storeModel.map { [$0] } ?? []) + bundle.models,
          modelName: bundle.url.lastPathComponent)
        let key = "\(model.sourceVersion)\u{0}\(model.destinationVersion)"
        if let other = byFolder["\(folder.path)\u{0}\(key)"] { ambiguous.append((other, url)) }
        byFolder["\(folder.path)\u{0}\(key)"] = url
        if matched[key] == nil { matched[key] = url }
        for className in model.entityMappings.compactMap(\.policyClassName) {
          policyModules.insert(AppleMappingConverter.moduleName(ofClass: className))
        }
      } catch {
        unmatched.append((url, error.reason))
      }
    }
    return (matched, unmatched, policyModules, ambiguous)
  }

  /// A step file of the policy folders that `plan` does not use, and why.
  package struct UnusedStepFile: Sendable, Hashable {
    package let file: URL
    package let reason: String
  }

  /// Every step file in `folders` (`<From>-<To>.lua`, `.xcmappingmodel`, `.cdm`, `.stage.lua`, named after
  /// two versions of `bundle`) whose step `plan` does not take, with the reason: the path skips it (Core
  /// Data's path goes from one version straight to a later one), or the step lies outside the path.
  /// `plan` and `migrate` name each one, so a user's script is never passed over without a word.
  package static func unusedStepFiles(of plan: MigrationPlan, bundle: ModelBundle, in files: PolicyFiles)
    -> [UnusedStepFile]
  {
    let taken = Set(plan.steps.map { "\($0.from)\u{0}\($0.to)" })
    var unused: [UnusedStepFile] = []
    var seen = Set<String>()
    func passedOver(_ file: URL, _ from: String, _ to: String) {
      guard seen.insert(file.standardizedFileURL.path).inserted else { return }
      unused.append(
        UnusedStepFile(file: file, reason: unusedReason(plan, from, to) + work(ofMappingModel: file, bundle)))
    }
    for from in bundle.versionNames {
      for to in bundle.versionNames where to != from && !taken.contains("\(from)\u{0}\(to)") {
        let names =
          (extensions + [orderExtension]).map { "\(from)-\(to).\($0)" } + ["\(from)-\(to).stage.lua"]
        for file in files.named(names) { passedOver(file, from, to) }
      }
    }
    // Mapping models by their hashes, whatever they are called (`Migration7to8.xcmappingmodel`).
    for (key, file) in mappingModels(in: files, bundle: bundle).matched where !taken.contains(key) {
      let versions = key.split(separator: "\u{0}").map(String.init)
      if versions.count == 2 { passedOver(file, versions[0], versions[1]) }
    }
    return unused.sorted { $0.file.path < $1.file.path }
  }

  /// Why the plan does not take the step `from → to`.
  private static func unusedReason(_ plan: MigrationPlan, _ from: String, _ to: String) -> String {
    let path = [plan.sourceVersion] + plan.steps.map(\.to)
    if let start = path.firstIndex(of: from), let end = path.lastIndex(of: to), start < end {
      return
        "the path goes \(path[start...end].joined(separator: " → ")) (\(plan.rule)), not through \(from) → \(to); "
        + "give --chain or a chain file through it to use it"
    } else if let start = path.firstIndex(of: from), start + 1 < path.count {
      return
        "the path goes \(path[start]) → \(path[start + 1]) in one step (\(plan.rule)) without stopping at \(to); "
        + "give --chain or a chain file through \(to) to use it"
    } else if path.count == 1 {
      return "the store is at \(plan.sourceVersion): nothing to migrate"
    }
    return "\(from) → \(to) is not on the path \(path.joined(separator: " → "))"
  }

  /// What a mapping model passed over would have done, in words: its custom policies (`; it would
  /// have run …`), or nothing for other files.
  private static func work(ofMappingModel file: URL, _ bundle: ModelBundle) -> String {
    guard isMappingModel(file),
      let model = try? AppleMappingModel.read(contentsOf: file, versions: bundle.models, modelName: bundle.name)
    else { return "" }
    let policies = model.entityMappings.compactMap { mapping in
      mapping.policyClassName.map { "\($0) (\(mapping.name))" }
    }
    return policies.isEmpty ? "" : "; it would have run the custom policies \(policies.joined(separator: ", "))"
  }

  /// The steps between consecutive versions of `bundle` (in `order`) that `folders` hold a script
  /// for — a Lua mapping file or a mapping model by name, or a mapping model by its hashes — as
  /// "source\u{0}destination": steps whose values the script decides (`lint` leaves them to it).
  package static func scriptedSteps(of bundle: ModelBundle, order: [String], in files: PolicyFiles) -> Set<String> {
    let byHashes = mappingModels(in: files, bundle: bundle).matched
    let passes = (try? orderedPasses(in: files, versions: Set(bundle.versionNames))) ?? [:]
    var steps = Set<String>()
    for (from, to) in zip(order, order.dropFirst()) {
      let key = "\(from)\u{0}\(to)"
      if byHashes[key] != nil || passes[key] != nil || files.find(from: from, to: to) != nil { steps.insert(key) }
    }
    return steps
  }

  /// Loads `file` for `step`.
  package static func load(_ step: MigrationStep, file: URL, policyFolders: [URL], limits: LuaLimits = LuaLimits())
    throws -> StepMapping
  {
    guard isMappingModel(file) else {
      return try LuaMappingFile.load(step, file: file, policyFolders: policyFolders, limits: limits)
    }
    // A policy class ported beside its mapping model (in the same group below a policy folder) is
    // found there too; a mapping model from anywhere else lends its folder's Lua files nothing.
    let group = file.deletingLastPathComponent().standardizedFileURL.path
    let inPolicyFolder = policyFolders.contains {
      group == $0.standardizedFileURL.path || group.hasPrefix($0.standardizedFileURL.path + "/")
    }
    let folders = policyFolders + (inPolicyFolder ? [file.deletingLastPathComponent()] : [])
    let conversion = try convert(step, file: file, policyFolders: folders, missing: .fail)
    return try LuaMappingFile.load(
      step, source: conversion.lua, name: file.lastPathComponent, policyFolders: folders, limits: limits)
  }

  /// The Lua conversion of the mapping model `file` for `step`, refused when it was made for other versions.
  package static func convert(
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
