import FileDoors
import Foundation
import MigrunModel
import MigrunStore

/// One step of a migration chain: an inferred mapping, or a mapping script for that pair of versions.
public struct MigrationStep: Sendable {
  package enum Kind: Sendable, Hashable {
    case inferred
    /// The step's scripts: a Lua mapping file (`<From>-<To>.lua`) or a mapping model — or several,
    /// run in the order given into one destination, each in its own three passes (Core Data's
    /// migration in chunks; ``MappingPass``).
    case scripted([URL])
  }

  public let from: String
  public let to: String
  package let kind: Kind
  /// The inferred mapping between the two versions (a script starts from it), or nil when a script
  /// runs a step that cannot be inferred.
  public let inferredMapping: MappingModel?
  public let source: ObjectModel
  public let destination: ObjectModel

  public var name: String { "\(from) → \(to)" }
  /// The step's script files, in the order they run (several: one mapping model after another);
  /// empty when the step is inferred.
  public var scripts: [URL] { if case .scripted(let files) = kind { files } else { [] } }

  package init(
    from: String, to: String, kind: Kind, inferredMapping: MappingModel?, source: ObjectModel, destination: ObjectModel
  ) {
    self.from = from
    self.to = to
    self.kind = kind
    self.inferredMapping = inferredMapping
    self.source = source
    self.destination = destination
  }
}

/// How a plan's path was chosen (`migrun plan` says which).
package enum PathRule: Sendable, Hashable, CustomStringConvertible {
  /// The store is at the destination version.
  case current
  /// An explicit order (`--chain`, or a `chain` file: its path), walked one version at a time.
  case chain(String)
  /// Core Data's default: the mapping file made for the store's version and the destination.
  case directMapping
  /// Core Data's default: one inferred step from the store's version straight to the destination.
  case directInferred
  /// The model has no version with the store's hashes: the store's own model (`Z_MODELCACHE`) is
  /// the source of one inferred step to the destination, as Core Data falls back to it.
  case storeModel
  /// Neither direct step exists: the shortest path through mapping files and inferable steps (what
  /// Core Data's staged migration, `NSStagedMigrationManager`, does with stages given by hand).
  case shortestPath
  /// Core Data's one inferred step would leave these destination attributes ("Entity.attribute")
  /// without the source a walk through every version between carries (renaming identifiers that
  /// each name only the version before): migrun walks, and keeps them. Our rule, not Core Data's.
  case keepingValues(lostDirectly: [String])

  package var description: String {
    switch self {
    case .current: "the store is at the destination version"
    case .chain(let origin): "the version order of \(origin), one version at a time"
    case .directMapping: "Core Data's default: the mapping file for the store's version → the destination"
    case .directInferred: "Core Data's default: one inferred step from the store's version to the destination"
    case .shortestPath:
      "no direct step (no mapping file, not inferable): the shortest path through mapping files and inferable steps"
    case .storeModel:
      "the model has no version with the store's hashes: the store's own model (Z_MODELCACHE) is the source of one step"
    case .keepingValues(let lost):
      "one version at a time: Core Data's one inferred step would lose \(lost.joined(separator: ", ")), which the steps through the versions between keep"
    }
  }

  /// A short name for JSON.
  package var name: String {
    switch self {
    case .current: "current"
    case .chain: "chain"
    case .directMapping: "direct-mapping"
    case .directInferred: "direct-inferred"
    case .shortestPath: "shortest-path"
    case .storeModel: "store-model"
    case .keepingValues: "keeping-values"
    }
  }
}

/// The path from a store's version to the destination version.
public struct MigrationPlan: Sendable {
  public let sourceVersion: String
  public let destinationVersion: String
  public let steps: [MigrationStep]
  /// How the path was chosen.
  package let rule: PathRule

  public var needsMigration: Bool { !steps.isEmpty }
  /// Why the path is this one, in the words `migrun plan` prints after `Path` (Core Data's direct
  /// step, a chain file's order, …).
  public var pathReason: String { rule.description }

  package init(sourceVersion: String, destinationVersion: String, steps: [MigrationStep], rule: PathRule) {
    self.sourceVersion = sourceVersion
    self.destinationVersion = destinationVersion
    self.steps = steps
    self.rule = rule
  }
}

/// Plans migrations as Core Data does: finds the store's version by its hashes, then goes
/// **directly** to the destination — with the mapping file made for that pair if there is one, else
/// an inferred mapping (`NSMigratePersistentStoresAutomaticallyOption` +
/// `NSInferMappingModelAutomaticallyOption`: Core Data never walks the versions in between). When
/// neither exists, the shortest path through mapping files and inferable steps; an explicit order
/// (`--chain`, a `chain` file) walks its versions one at a time instead. A step that has neither a
/// mapping nor an inferred mapping is refused before anything runs.
public enum MigrationPlanner {
  /// The explicit order: `override`, else a `chain` file (one version per line) in a policy folder,
  /// else nil (Core Data's default path: no order needed).
  /// `overrideOrigin`: where `override` came from, for messages (`--chain`, or the project file's key).
  package static func explicitOrder(
    _ bundle: ModelBundle, policyFolders: [URL], override: [String]?, overrideOrigin: String = "--chain"
  ) throws(MigrationError) -> VersionOrder? {
    if let override {
      try check(override, in: bundle, origin: overrideOrigin)
      return VersionOrder(names: override, origin: overrideOrigin)
    }
    for folder in policyFolders {
      let file = folder.appendingPathComponent("chain")
      // No chain file: none in this folder. One that cannot be read as text is an error — never
      // passed over for Core Data's direct step, which may drop what the chain's steps keep.
      guard InputFile.kind(at: file.path) != nil else { continue }
      let text: String
      do {
        text = try InputFile.text(file)
      } catch {
        throw MigrationError(.badMapping, reason: "\(error)")
      }
      let lines = text.split(whereSeparator: \.isNewline).map { String($0).trimmingWhitespace() }
        .filter { !$0.isEmpty && !$0.hasPrefix("#") }
      var parsed: [(version: String, files: [URL])] = []
      for line in lines { parsed.append(try chainLine(line, of: file, in: bundle)) }
      try check(parsed.map(\.version), in: bundle, origin: file.path)
      var order = VersionOrder(names: parsed.map(\.version), origin: file.path)
      for (previous, line) in zip(parsed, parsed.dropFirst()) where !line.files.isEmpty {
        order.scripts["\(previous.version)\u{0}\(line.version)"] = line.files
      }
      if let first = parsed.first, !first.files.isEmpty {
        throw MigrationError(
          .badMapping,
          reason: "\(file.path): the first line '\(lines[0])' names step files, but no step leads into the "
            + "oldest version: name them on the line of the version they migrate to")
      }
      return order
    }
    return bundle.declaredOrder
  }

  /// One line of a chain file: a version name, or a version name, a colon and the step files that
  /// migrate into it, comma-separated and relative to the chain file's folder (`V3: users.xcmappingmodel,
  /// books.xcmappingmodel`: Core Data's migration in chunks, run in that order). A whole line that is
  /// a version's name is that version, whatever it contains.
  private static func chainLine(_ line: String, of file: URL, in bundle: ModelBundle) throws(MigrationError)
    -> (version: String, files: [URL])
  {
    if bundle.versionNames.contains(line) { return (line, []) }
    guard
      let colon = line.indices.first(where: {
        line[$0] == ":" && bundle.versionNames.contains(String(line[..<$0]).trimmingWhitespace())
      })
    else { return (line, []) }
    let version = String(line[..<colon]).trimmingWhitespace()
    let names = line[line.index(after: colon)...].split(separator: ",").map { String($0).trimmingWhitespace() }
    var files: [URL] = []
    for name in names {
      let url = file.deletingLastPathComponent().appendingPathComponent(name)
      guard !name.contains("/"), name != ".", name != ".." else {
        throw MigrationError(
          .badMapping,
          reason: "\(file.path): line '\(line)' names '\(name)': name a file beside the chain file, not a path")
      }
      guard !name.isEmpty, InputFile.kind(at: url.path) != nil else {
        throw MigrationError(
          .badMapping,
          reason:
            "\(file.path): line '\(line)' names the step file '\(name)', which is not in \(file.deletingLastPathComponent().path)"
        )
      }
      guard !files.contains(url) else {
        throw MigrationError(.badMapping, reason: "\(file.path): line '\(line)' names '\(name)' twice")
      }
      files.append(url)
    }
    return (version, files)
  }

  /// The plan for the store at `store` to `destination` (the current version when nil), on Core
  /// Data's path: straight from the version the store's hashes name to the destination by one
  /// inferred step where Core Data can infer one, else the shortest chain of inferable steps.
  ///
  /// With `chain` (versions oldest first), the plan walks those versions one at a time instead,
  /// every step inferred (`MigrationScripts` in MigrunScripting adds the user's step files).
  ///
  /// ```swift
  /// let plan = try MigrationPlanner.plan(store: storeURL, bundle: bundle)
  /// print(plan.needsMigration, plan.steps.map(\.name))
  /// ```
  public static func plan(store: URL, bundle: ModelBundle, destination: String? = nil, chain: [String]? = nil)
    throws -> MigrationPlan
  {
    let order =
      chain == nil
      ? bundle.declaredOrder : try explicitOrder(bundle, policyFolders: [], override: chain, overrideOrigin: "chain")
    return try plan(
      bundle: bundle, storeHashes: SQLiteStore.metadata(at: store).versionHashes, destination: destination,
      order: order)
  }

  /// The plan for a store whose entity hashes are `storeHashes`: along `order` when one is given,
  /// else Core Data's default path. `script(from, to)` returns the mapping file for a step, if there
  /// is one.
  ///
  /// `storeModel`: the model the store carries (`Z_MODELCACHE`), taken as the source when no version
  /// of the bundle has the store's hashes — the stored hashes decide which version a store is; its
  /// cached model is only the fallback.
  ///
  /// `destinationOrigin`: where `destination` was given (a flag, a project file's key), said with
  /// it when the bundle has no such version.
  package static func plan(
    bundle: ModelBundle, storeHashes: [String: VersionHash], destination: String? = nil,
    destinationOrigin: String? = nil, order: VersionOrder? = nil, storeModel: ObjectModel? = nil,
    script: @escaping (String, String) -> [URL]? = { _, _ in nil }, scripts: (any StepScripts)? = nil
  ) throws(MigrationError) -> MigrationPlan {
    let target = destination ?? bundle.currentVersionName
    let targetModel = try destinationModel(target, of: bundle, given: destination, origin: destinationOrigin)
    let (source, fromStore) = try sourceModel(of: bundle, storeHashes: storeHashes, storeModel: storeModel)
    let sourceName = source.versionName ?? "the store's own model"
    if sourceName == target || source.entityVersionHashes == targetModel.entityVersionHashes {
      return MigrationPlan(sourceVersion: target, destinationVersion: target, steps: [], rule: .current)
    }
    if destination == nil, !fromStore {
      try refuseNewer(
        sourceName, than: target, in: order?.names ?? bundle.versionNames, isOrderGuessed: order == nil, bundle: bundle)
    }
    if fromStore { try refuseUnrelated(source, to: targetModel, named: target, of: bundle) }
    return try withoutActuallyEscaping(script) { script throws(MigrationError) in
      var planner = PathFinder(
        bundle: bundle, storeModel: fromStore ? source : nil, script: script, scripts: scripts)
      guard fromStore else { return try plan(planner: &planner, sourceName: sourceName, target: target, order: order) }
      // Only one step can start from a model the bundle does not have: the mapping model made for
      // it (matched by its entity hashes), else the inferred one.
      switch try planner.step(from: sourceName, to: target) {
      case .success(let step):
        return MigrationPlan(sourceVersion: sourceName, destinationVersion: target, steps: [step], rule: .storeModel)
      case .failure(let error):
        throw MigrationError(
          .notInferable, step: "\(sourceName) → \(target)", entity: error.entity, property: error.property,
          reason:
            "\(error.reason); the store's version is not in \(bundle.name), so only a step from its own model (Z_MODELCACHE) can run: a mapping model made for it, or an inferred one"
        )
      }
    }
  }

  /// The destination version's model; `.unknownVersion` naming the versions there are, and where
  /// `destination` was given (`origin`), when the bundle has no such version.
  private static func destinationModel(
    _ target: String, of bundle: ModelBundle, given destination: String?, origin: String?
  ) throws(MigrationError) -> ObjectModel {
    do {
      return try bundle.model(named: target)
    } catch {
      let given = destination == nil ? "" : origin.map { " (\($0))" } ?? ""
      throw MigrationError(
        .unknownVersion,
        reason:
          "\(bundle.name) has no version '\(target)' (versions: \(bundle.versionNames.joined(separator: ", ")))\(given)"
      )
    }
  }

  /// The store's version: the one its stored hashes name — they decide — else the store's own model
  /// (`fromStore`); `.unknownSourceVersion` naming the closest versions when there is neither.
  private static func sourceModel(
    of bundle: ModelBundle, storeHashes: [String: VersionHash], storeModel: ObjectModel?
  ) throws(MigrationError) -> (model: ObjectModel, fromStore: Bool) {
    if let matched = bundle.version(matching: storeHashes) { return (matched, false) }
    if let storeModel {
      do {
        return (storeModel.versionName == nil ? try storeModel.named("the store's own model") : storeModel, true)
      } catch {
        throw MigrationError(.unknownVersion, reason: error.description, underlying: error)
      }
    }
    let closest = bundle.closestVersions(to: storeHashes).prefix(3)
      .map { "\($0.name) (\($0.matchingEntities) of \(storeHashes.count) entities equal)" }.joined(separator: ", ")
    throw MigrationError(
      .unknownSourceVersion,
      reason: "no version of \(bundle.name) has the store's entity hashes (store entities: "
        + "\(storeHashes.keys.sorted().joined(separator: ", ")); closest: \(closest))")
  }

  /// A store whose own model has no entity in common with the destination is not a store of this
  /// model (another app's, or the wrong model given): an inferred step would remove every object.
  /// Core Data's inference would run it; we refuse — our rule, so nothing is dropped by mistake.
  private static func refuseUnrelated(
    _ source: ObjectModel, to targetModel: ObjectModel, named target: String, of bundle: ModelBundle
  ) throws(MigrationError) {
    let names = Set(targetModel.entities.flatMap { [$0.name, $0.renamingIdentifier].compactMap { $0 } })
    guard !source.entities.contains(where: { names.contains($0.name) || names.contains($0.canonicalName) }) else {
      return
    }
    throw MigrationError(
      .unknownSourceVersion,
      reason:
        "the store's model (entities: \(source.entities.map(\.name).sorted().joined(separator: ", "))) has no entity of \(bundle.name)'s version \(target): it is not a store of this model"
    )
  }

  private static func plan(planner: inout PathFinder, sourceName: String, target: String, order: VersionOrder?)
    throws(MigrationError) -> MigrationPlan
  {
    if let order {
      let steps = try planner.chain(from: sourceName, to: target, order: order)
      return MigrationPlan(
        sourceVersion: sourceName, destinationVersion: target, steps: steps, rule: .chain(order.origin))
    }
    let direct = try planner.step(from: sourceName, to: target)
    switch direct {
    case .success(let step):
      if case .inferred = step.kind, let kept = try planner.pathKeepingMore(than: step) {
        return MigrationPlan(
          sourceVersion: sourceName, destinationVersion: target, steps: kept.steps,
          rule: .keepingValues(lostDirectly: kept.lostDirectly))
      }
      let rule: PathRule = if case .scripted = step.kind { .directMapping } else { .directInferred }
      return MigrationPlan(sourceVersion: sourceName, destinationVersion: target, steps: [step], rule: rule)
    case .failure(let directError):
      guard let steps = try planner.shortestPath(from: sourceName, to: target) else {
        throw MigrationError(
          .notInferable, step: "\(sourceName) → \(target)", entity: directError.entity, property: directError.property,
          reason:
            "\(directError.reason); no mapping file \(sourceName)-\(target).lua (or mapping model "
            + "\(sourceName)-\(target).xcmappingmodel or .cdm) in the policy folders, and no path through other "
            + "versions by mapping files and inferable steps (or give the order: MigrationScripts.chain or a chain file)"
        )
      }
      return MigrationPlan(sourceVersion: sourceName, destinationVersion: target, steps: steps, rule: .shortestPath)
    }
  }

  /// A store newer than the model's current version is refused: Core Data will not open it
  /// (`NSPersistentStoreIncompatibleVersionHashError` — it migrates forward only, and only to the
  /// model the app runs), and an inferred step back would drop what the newer version added. Given
  /// on purpose (`--to`, the project file's `to:`), a step back is planned like any other.
  private static func refuseNewer(
    _ sourceName: String, than target: String, in order: [String], isOrderGuessed: Bool, bundle: ModelBundle
  ) throws(MigrationError) {
    guard let at = order.firstIndex(of: sourceName), let current = order.firstIndex(of: target), at > current else {
      return
    }
    // Core Data itself knows no order of versions: "newer" is known from a chain given, or — from
    // names alone — only between names Xcode numbers (`Moody`, `Moody 2`, … `Moody 6`: one stem). Two
    // names of no common stem (`alpha`, `Beta`) say nothing of which came first.
    guard !isOrderGuessed || numberedStem(sourceName) == numberedStem(target) else { return }
    throw MigrationError(
      .backwards,
      reason:
        "the store is at '\(sourceName)', newer than \(bundle.name)'s current version '\(target)' (an app built with an "
        + "older model: Core Data refuses to open such a store); give the model with '\(sourceName)' as its current "
        + "version, or the destination \(target) (MigrationScripts.plan's destination) to migrate the store back on "
        + "purpose")
  }

  /// A version name without the number Xcode puts after it (`Moody 6` → `Moody`, `Model_v2` → `Model`).
  private static func numberedStem(_ name: String) -> Substring {
    func trimmed(_ text: Substring) -> Substring {
      var text = text
      while let last = text.last, last.isNumber || " _-.".contains(last) { text = text.dropLast() }
      return text
    }
    var stem = trimmed(Substring(name))
    if stem.last == "v" || stem.last == "V", stem.count < name.count { stem = trimmed(stem.dropLast()) }
    return stem
  }

  private static func check(_ names: [String], in bundle: ModelBundle, origin: String) throws(MigrationError) {
    var seen = Set<String>()
    for name in names {
      guard bundle.versionNames.contains(name) else {
        throw MigrationError(
          .unknownVersion,
          reason:
            "\(origin) names version '\(name)', which \(bundle.name) does not have (versions: \(bundle.versionNames.joined(separator: ", ")))"
        )
      }
      // A version twice walks back to it (a chain file of a million lines 'V1' then 'V2' was a
      // million steps V1 → V1).
      guard seen.insert(name).inserted else {
        throw MigrationError(
          .backwards, reason: "\(origin) names version '\(name)' twice: a chain lists each version once, oldest first")
      }
    }
  }
}

/// Steps between versions of one bundle, each decided once: the mapping file for the pair, else the
/// inferred mapping, else why there is neither.
private struct PathFinder {
  let bundle: ModelBundle
  /// The store's own model, a source the bundle does not have.
  let storeModel: ObjectModel?
  let script: (String, String) -> [URL]?
  /// Loads a scripted step's mapping, so that a walk through the user's step files can be weighed
  /// against the direct step (nil: scripted steps are not weighed).
  let scripts: (any StepScripts)?
  private var decided: [String: Result<MigrationStep, MigrationError>] = [:]

  init(
    bundle: ModelBundle, storeModel: ObjectModel?, script: @escaping (String, String) -> [URL]?,
    scripts: (any StepScripts)?
  ) {
    self.bundle = bundle
    self.storeModel = storeModel
    self.script = script
    self.scripts = scripts
  }

  private func model(named name: String) throws(ModelError) -> ObjectModel {
    if let storeModel, storeModel.versionName == name { return storeModel }
    return try bundle.model(named: name)
  }

  /// The step `a → b`, or why there is none (a bad model is thrown).
  mutating func step(from a: String, to b: String) throws(MigrationError) -> Result<MigrationStep, MigrationError> {
    let key = "\(a)\u{0}\(b)"
    if let known = decided[key] { return known }
    let stepName = "\(a) → \(b)"
    let source: ObjectModel
    let destination: ObjectModel
    do {
      source = try model(named: a)
      destination = try model(named: b)
    } catch {
      throw MigrationError(.unknownVersion, step: stepName, reason: error.description, underlying: error)
    }
    let result: Result<MigrationStep, MigrationError>
    if let files = script(a, b), !files.isEmpty {
      let inferred = try? MappingModel.inferred(from: source, to: destination)
      result = .success(
        MigrationStep(
          from: a, to: b, kind: .scripted(files), inferredMapping: inferred, source: source, destination: destination))
    } else {
      do {
        let inferred = try MappingModel.inferred(from: source, to: destination)
        result = .success(
          MigrationStep(
            from: a, to: b, kind: .inferred, inferredMapping: inferred, source: source, destination: destination))
      } catch {
        result = .failure(error)
      }
    }
    decided[key] = result
    return result
  }

  /// The steps along an explicit order, one version at a time.
  mutating func chain(from sourceName: String, to target: String, order: VersionOrder) throws(MigrationError)
    -> [MigrationStep]
  {
    // What to do about it: the order is a file to add the version to, or the --chain list.
    func missing(_ what: String, _ name: String) -> MigrationError {
      let fix =
        order.origin == "--chain" || order.origin == "MigrationScripts.chain"
        ? "add it to \(order.origin)" : "add a line '\(name)' to \(order.origin) where it belongs, oldest first"
      return MigrationError(
        .unknownVersion,
        reason:
          "\(what) '\(name)' is not in the version order of \(order.origin) (\(order.names.joined(separator: " → "))): \(fix)"
      )
    }
    guard let from = order.names.firstIndex(of: sourceName) else { throw missing("the store's version", sourceName) }
    guard let to = order.names.firstIndex(of: target) else { throw missing("the destination", target) }
    guard from <= to else {
      throw MigrationError(
        .backwards,
        reason: "the store is at '\(sourceName)', after the destination '\(target)' in the order of \(order.origin)")
    }
    var steps: [MigrationStep] = []
    for index in from..<to {
      let (a, b) = (order.names[index], order.names[index + 1])
      switch try step(from: a, to: b) {
      case .success(let step): steps.append(step)
      case .failure(let error):
        throw MigrationError(
          .notInferable, step: "\(a) → \(b)", entity: error.entity, property: error.property,
          reason:
            "\(error.reason); no mapping file \(a)-\(b).lua (or mapping model \(a)-\(b).xcmappingmodel or .cdm) in the policy folders"
        )
      }
    }
    return steps
  }

  /// Whether an inferred step removes data the target keeps: an entity, attribute or relationship
  /// that the step's source version and the target both have (matched by name or renaming
  /// identifier, as inference matches them) and the step's destination lacks. Such a step would lose
  /// data the direct way keeps (going back through an older version, say), so the search does not
  /// take it. A mapping file is its author's intent and is always taken. This guard is migrun's own
  /// rule: Core Data's staged migration walks stages in the order the app gives, not a search.
  static func drops(_ step: MigrationStep, keptBy target: ObjectModel) -> Bool {
    for entity in target.entities {
      guard let inSource = try? MappingModel.match(entity, in: step.source) else { continue }
      guard let inDestination = try? MappingModel.match(entity, in: step.destination) else { return true }
      for attribute in target.attributes(of: entity) where !attribute.isTransient {
        if MappingModel.continued(attribute, in: step.source.attributes(of: inSource)) != nil,
          MappingModel.continued(attribute, in: step.destination.attributes(of: inDestination)) == nil
        {
          return true
        }
      }
      for relationship in target.relationships(of: entity) where !relationship.isTransient {
        if MappingModel.continued(relationship, in: step.source.relationships(of: inSource)) != nil,
          MappingModel.continued(relationship, in: step.destination.relationships(of: inDestination)) == nil
        {
          return true
        }
      }
    }
    return false
  }

  /// The walk through every version between `direct`'s two (in the bundle's version order), when it
  /// is all inferable steps and carries a value into some destination attribute that `direct`
  /// leaves without a source: the steps, and those attributes. Nil when the direct step loses
  /// nothing such a walk keeps.
  mutating func pathKeepingMore(than direct: MigrationStep) throws(MigrationError)
    -> (steps: [MigrationStep], lostDirectly: [String])?
  {
    let names = bundle.versionNames
    guard let mapping = direct.inferredMapping, let from = names.firstIndex(of: direct.from),
      let to = names.firstIndex(of: direct.to), to > from + 1
    else { return nil }
    var steps: [MigrationStep] = []
    var mappings: [MappingModel] = []
    var scripted: [String] = []
    for index in from..<to {
      guard case .success(let step) = try self.step(from: names[index], to: names[index + 1]),
        let stepMapping = try self.stepMapping(of: step)
      else { return nil }
      steps.append(step)
      mappings.append(stepMapping.mapping)
      if case .scripted(let files) = step.kind {
        scripted += Self.work(of: stepMapping, files: files, droppedDirectly: mapping.drops())
      }
    }
    let directly = Self.carried(through: [mapping])
    let walking = Self.carried(through: mappings)
    // Only a walk that keeps everything the direct step keeps, and more: more values, or a user's
    // step file the direct step would pass over doing what no inference does.
    let more = walking.subtracting(directly).sorted()
    let lost = more.isEmpty ? scripted : more
    return lost.isEmpty || !directly.isSubset(of: walking) ? nil : (steps, lost)
  }

  /// What a user's step file on the walk does that the direct inferred step would not: its hooks
  /// (which may create objects: a policy turning a String into objects of another entity), and the
  /// attributes it reads that the direct step drops — matched by entity and attribute name, a
  /// heuristic (the file's source version may have renamed them since the store's version).
  static func work(of stepMapping: StepMapping, files: [URL], droppedDirectly: [DroppedProperty]) -> [String] {
    let names = files.map(\.lastPathComponent).joined(separator: " + ")
    var work: [String] = []
    for entityMapping in stepMapping.mapping.entityMappings {
      guard let policy = stepMapping.policies[entityMapping.name], let from = entityMapping.sourceEntity else {
        continue
      }
      let reads = droppedDirectly.filter { $0.entity == from && $0.property != nil }.compactMap(\.property)
        .filter { name in
          stepMapping.mapping.source.entity(named: from).map {
            stepMapping.mapping.source.attributes(of: $0).contains { $0.name == name }
          } ?? false
        }
      if !reads.isEmpty || !policy.computesAttributesOnly {
        let what = reads.isEmpty ? "runs its hooks" : "reads \(reads.map { "\(from).\($0)" }.joined(separator: ", "))"
        work.append("what \(names) does (\(entityMapping.name) \(what))")
      }
    }
    return work
  }

  /// The mapping a step of a walk applies: its inferred one, or — for the user's step file — the
  /// file's, loaded. A file that does not load stops the plan with its error, naming the step: the
  /// walk cannot be weighed without it, and the user's file is broken either way.
  private func stepMapping(of step: MigrationStep) throws(MigrationError) -> StepMapping? {
    switch step.kind {
    case .inferred: return step.inferredMapping.map { StepMapping(mapping: $0) }
    case .scripted(let files):
      guard let scripts else { return nil }
      do {
        return try scripts.mapping(for: step, files: files)
      } catch let error as MigrationError {
        throw error.inStep(step.name)
      } catch {
        let names = files.map(\.lastPathComponent).joined(separator: " + ")
        throw MigrationError(.badMapping, step: step.name, reason: "\(names): \(error)", underlying: error)
      }
    }
  }

  /// The destination attributes (`Entity.attribute`) whose values `mappings`, applied in turn, carry
  /// from the first version's: copied through every step, or computed by a script on the way (a
  /// script's computed attribute counts as carried — it is written from the source's values).
  static func carried(through mappings: [MappingModel]) -> Set<String> {
    guard let last = mappings.last else { return [] }
    var carried = Set<String>()
    for entityMapping in last.entityMappings {
      guard let entity = entityMapping.destinationEntity else { continue }
      for (attribute, source) in entityMapping.attributes where source.sourceAttribute != nil || source == .computed {
        if walksBack(to: (entity, attribute), through: mappings) { carried.insert("\(entity).\(attribute)") }
      }
    }
    return carried
  }
  /// Whether `place`'s value comes, step by step back through `mappings`, from the first version's
  /// values: each step copies it from an attribute of its source, or a script computes it.
  private static func walksBack(to place: (entity: String, attribute: String), through mappings: [MappingModel])
    -> Bool
  {
    var here = place
    for mapping in mappings.reversed() {
      guard
        let step = mapping.entityMappings.first(where: {
          $0.destinationEntity == here.entity && $0.sourceEntity != nil
        }),
        let from = step.sourceEntity, let source = step.attributes[here.attribute]
      else { return false }
      if source == .computed { return true }
      guard let name = source.sourceAttribute else { return false }
      here = (from, name)
    }
    return true
  }

  /// The fewest steps from `sourceName` to `target` through mapping files and inferable steps that
  /// keep what the target keeps (`drops(_:keptBy:)`), breadth first; among paths of equal length,
  /// the one whose versions come first in the bundle's order. Nil when there is none.
  mutating func shortestPath(from sourceName: String, to target: String) throws(MigrationError) -> [MigrationStep]? {
    let targetModel = try? model(named: target)
    var previous: [String: MigrationStep] = [:]
    var seen: Set<String> = [sourceName]
    var frontier = [sourceName]
    while !frontier.isEmpty {
      var next: [String] = []
      for version in frontier {
        for other in bundle.versionNames where !seen.contains(other) {
          guard case .success(let step) = try step(from: version, to: other) else { continue }
          if step.kind == .inferred, let targetModel, Self.drops(step, keptBy: targetModel) {
            continue
          }
          seen.insert(other)
          previous[other] = step
          next.append(other)
          if other == target {
            var steps: [MigrationStep] = []
            var at = target
            while let step = previous[at] {
              steps.insert(step, at: 0)
              at = step.from
            }
            return steps
          }
        }
      }
      frontier = next
    }
    return nil
  }
}
