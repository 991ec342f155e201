import Foundation

/// One step of a migration chain: an inferred mapping, or a mapping script for that pair of versions.
public struct MigrationStep: Sendable {
  public enum Kind: Sendable, Hashable {
    case inferred
    /// A Lua mapping file (`<From>-<To>.lua`).
    case scripted(URL)
  }

  public let from: String
  public let to: String
  public let kind: Kind
  /// The inferred mapping between the two versions (a script starts from it), or nil when a script
  /// runs a step that cannot be inferred.
  public let inferredMapping: MappingModel?
  public let source: ObjectModel
  public let destination: ObjectModel

  public var name: String { "\(from) → \(to)" }

  public init(
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

/// The chain from a store's version to the destination version.
public struct MigrationPlan: Sendable {
  public let sourceVersion: String
  public let destinationVersion: String
  public let steps: [MigrationStep]
  /// The version order came from names alone (no `chain` file, no `--chain`).
  public let orderIsGuessed: Bool

  public var needsMigration: Bool { !steps.isEmpty }

  public init(sourceVersion: String, destinationVersion: String, steps: [MigrationStep], orderIsGuessed: Bool) {
    self.sourceVersion = sourceVersion
    self.destinationVersion = destinationVersion
    self.steps = steps
    self.orderIsGuessed = orderIsGuessed
  }
}

/// Plans migrations: finds the store's version by its hashes, the path to the destination, and for
/// each step a mapping script or an inferred mapping — refusing, before anything runs, a step that
/// has neither.
public enum MigrationPlanner {
  /// The version order: `override`, else a `chain` file (one version per line) in a policy folder,
  /// else the bundle's natural order (a guess, said so in errors).
  public static func versionOrder(_ bundle: ModelBundle, policyFolders: [URL], override: [String]?)
    throws(MigrationError)
    -> (names: [String], guessed: Bool)
  {
    if let override {
      try check(override, in: bundle, origin: "--chain")
      return (override, false)
    }
    for folder in policyFolders {
      let file = folder.appendingPathComponent("chain")
      guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
      let names = text.split(whereSeparator: \.isNewline).map { String($0).trimmingWhitespace() }
        .filter { !$0.isEmpty && !$0.hasPrefix("#") }
      try check(names, in: bundle, origin: file.path)
      return (names, false)
    }
    return (bundle.versionNames, bundle.isOrderGuessed)
  }

  /// The plan for a store whose entity hashes are `storeHashes`.
  /// `script(from, to)` returns the mapping file for a step, if there is one.
  public static func plan(
    bundle: ModelBundle, storeHashes: [String: VersionHash], destination: String? = nil, order: [String],
    orderIsGuessed: Bool,
    script: (String, String) -> URL? = { _, _ in nil }
  ) throws(MigrationError) -> MigrationPlan {
    guard let sourceModel = bundle.version(matching: storeHashes), let sourceName = sourceModel.versionName else {
      let closest = bundle.closestVersions(to: storeHashes).prefix(3)
        .map { "\($0.name) (\($0.matchingEntities) of \(storeHashes.count) entities equal)" }.joined(separator: ", ")
      throw MigrationError(
        .unknownSourceVersion,
        reason: "no version of \(bundle.name) has the store's entity hashes (store entities: "
          + "\(storeHashes.keys.sorted().joined(separator: ", ")); closest: \(closest))")
    }
    let target = destination ?? bundle.currentVersionName
    guard let from = order.firstIndex(of: sourceName) else {
      throw MigrationError(.unknownVersion, reason: "the store's version '\(sourceName)' is not in the version order")
    }
    guard let to = order.firstIndex(of: target) else {
      throw MigrationError(.unknownVersion, reason: "the destination '\(target)' is not in the version order \(order)")
    }
    guard from <= to else {
      let guess =
        orderIsGuessed
        ? " (the order \(order.joined(separator: ", ")) is guessed from names: give --chain or a chain file)" : ""
      throw MigrationError(
        .backwards, reason: "the store is at '\(sourceName)', after the destination '\(target)'\(guess)")
    }
    var steps: [MigrationStep] = []
    for index in from..<to {
      let (a, b) = (order[index], order[index + 1])
      let stepName = "\(a) → \(b)"
      let source: ObjectModel
      let destinationModel: ObjectModel
      do {
        source = try bundle.model(named: a)
        destinationModel = try bundle.model(named: b)
      } catch {
        throw MigrationError(.unknownVersion, step: stepName, reason: error.description)
      }
      if let file = script(a, b) {
        let inferred = try? MappingModel.inferred(from: source, to: destinationModel)
        steps.append(
          MigrationStep(
            from: a, to: b, kind: .scripted(file), inferredMapping: inferred, source: source,
            destination: destinationModel))
        continue
      }
      do {
        let inferred = try MappingModel.inferred(from: source, to: destinationModel)
        steps.append(
          MigrationStep(
            from: a, to: b, kind: .inferred, inferredMapping: inferred, source: source, destination: destinationModel))
      } catch {
        let guess = orderIsGuessed ? " (version order guessed from names)" : ""
        throw MigrationError(
          .notInferable, step: stepName, entity: error.entity, property: error.property,
          reason:
            "\(error.reason); no mapping file \(a)-\(b).lua (or mapping model \(a)-\(b).xcmappingmodel or .cdm) in the policy folders\(guess)"
        )
      }
    }
    return MigrationPlan(
      sourceVersion: sourceName, destinationVersion: target, steps: steps, orderIsGuessed: orderIsGuessed)
  }

  private static func check(_ names: [String], in bundle: ModelBundle, origin: String) throws(MigrationError) {
    for name in names where !bundle.versionNames.contains(name) {
      throw MigrationError(
        .unknownVersion,
        reason:
          "\(origin) names version '\(name)', which \(bundle.name) does not have (versions: \(bundle.versionNames.joined(separator: ", ")))"
      )
    }
  }
}
