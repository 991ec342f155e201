import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// `migrun verify`: a store of every old version, filled with made-up objects, migrated to the
/// current version as `migrate` would migrate it (Core Data's path or the chain file, the policy
/// folders' mapping files), with conservation and validation checked by the migration itself.
package enum Verify {
  package struct Outcome: Sendable {
    public let version: String
    public let passed: Bool
    /// The objects the store of the version held.
    public let objects: Int
    /// The steps run (`A → B`), or what failed.
    public let detail: String
    public let seconds: Double
    /// What the path's steps left behind that held values (``DroppedProperty``), step by step.
    public var drops: [DroppedProperty] = []
  }

  /// Every version of `bundle` before `destination` (default: the current one), in the bundle's
  /// order, each migrated in a folder of its own under `scratch`.
  public static func run(
    bundle: ModelBundle, destination: String? = nil, policyFolders: [URL], objects: Int, seed: UInt64, scratch: URL,
    done: (Outcome) -> Void = { _ in }
  ) throws -> [Outcome] {
    let target = destination ?? bundle.currentVersionName
    guard let end = bundle.versionNames.firstIndex(of: target) else {
      throw MigrationError(.unknownVersion, reason: "\(bundle.name) has no version '\(target)'")
    }
    var outcomes: [Outcome] = []
    for (offset, version) in bundle.versionNames[..<end].enumerated() {
      let start = Date()
      let folder = scratch.appendingPathComponent("v\(offset)", isDirectory: true)
      var count = 0
      let outcome: Outcome
      do {
        let store = try makeStore(
          of: version, in: folder, bundle: bundle, objects: objects, seed: seed &+ UInt64(offset))
        count = store.objects
        var setup = MigrationSetup(model: bundle.url)
        setup.destination = target
        setup.policyFolders = policyFolders
        // The front door every migration goes through (MigrationJobs), with the model already read.
        let migrated = try MigrationJobs(setup, bundle: bundle).migrate(store.url, options: .init(keepBackup: false))
        let plan = migrated.plan
        let path = ([plan.sourceVersion] + plan.steps.map(\.to)).joined(separator: " → ")
        var passed = Outcome(
          version: version, passed: true, objects: count, detail: path, seconds: Date().timeIntervalSince(start))
        passed.drops = migrated.report?.steps.flatMap(\.drops) ?? []
        outcome = passed
      } catch {
        outcome = Outcome(
          version: version, passed: false, objects: count, detail: "\(error)", seconds: Date().timeIntervalSince(start))
      }
      try? FileManager.default.removeItem(at: folder)
      outcomes.append(outcome)
      done(outcome)
    }
    return outcomes
  }

  /// A store of `version` in `folder`, filled with made-up objects that keep the version's rules.
  private static func makeStore(of version: String, in folder: URL, bundle: ModelBundle, objects: Int, seed: UInt64)
    throws -> (url: URL, objects: Int)
  {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let store = folder.appendingPathComponent("store.sqlite")
    let model = try bundle.model(named: version)
    let made = StoreFiller.objects(for: model, perEntity: objects, seed: seed)
    let created = try SQLiteStore.create(at: store, model: model)
    try StoreFiller.fill(created, with: made)
    let broken = try created.ruleViolations(limit: 3)
    try created.close()
    guard broken.isEmpty else {
      throw MigrationError(
        .validation,
        reason:
          "no valid store of \(version) could be made up (\(broken.joined(separator: "; "))): its rules need data this generator cannot make"
      )
    }
    return (store, made.count)
  }
}
