import Foundation
import MigrunKit
import MigrunModel
import MigrunStore

/// How one old version fared in ``MigrationScripts/verify(bundle:destination:objectsPerEntity:seed:scratch:done:)``:
/// a store of it, filled with made-up objects, migrated to the destination — or what failed.
public struct VerificationOutcome: Sendable {
  /// The version the made-up store was of.
  public let version: String
  /// Whether it reached the destination with every check of the migration passed.
  public let passed: Bool
  /// The objects the store of the version held.
  public let objects: Int
  /// The versions walked (`Moody 1 → Moody 2 → …`), or what failed.
  public let detail: String
  /// Wall-clock seconds the version took (made up and migrated).
  public let seconds: Double
  /// What the path's steps left behind that held values, step by step: passing is not the same as
  /// keeping everything.
  public package(set) var drops: [DroppedProperty] = []
}

extension MigrationScripts {
  /// `migrun verify`: for every version of `bundle` before `destination` (the current version when
  /// nil), in the bundle's order, a store of that version filled with `objectsPerEntity` made-up
  /// objects per entity (valid under its rules, the same for the same `seed`) is migrated as
  /// ``migrate(store:bundle:destination:options:)`` would — these scripts, with the migration's own
  /// checks — in a folder of its own under `scratch`, removed afterwards. `done` is told each
  /// outcome as it is known. Throws when `destination` is not a version of `bundle`, and when the disk
  /// of `scratch` is full (`StoreError.Code.noSpace`: no version is reported failed for it).
  ///
  /// ```swift
  /// for outcome in try scripts.verify(bundle: bundle, scratch: folder) where !outcome.passed {
  ///   print(outcome.version, outcome.detail)
  /// }
  /// ```
  public func verify(
    bundle: ModelBundle, destination: String? = nil, objectsPerEntity: Int = 20, seed: UInt64 = 1, scratch: URL,
    done: (VerificationOutcome) -> Void = { _ in }
  ) throws -> [VerificationOutcome] {
    let target = destination ?? bundle.currentVersionName
    guard let end = bundle.versionNames.firstIndex(of: target) else {
      throw MigrationError(.unknownVersion, reason: "\(bundle.name) has no version '\(target)'")
    }
    var outcomes: [VerificationOutcome] = []
    for (offset, version) in bundle.versionNames[..<end].enumerated() {
      let start = Date()
      let folder = scratch.appendingPathComponent("v\(offset)", isDirectory: true)
      var count = 0
      var made = false
      let outcome: VerificationOutcome
      do {
        // A folder of its own, made here: one already under the name (or a link) is not written
        // into, nor removed after.
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        made = true
        let store = try Self.makeStore(
          of: version, in: folder, bundle: bundle, objects: objectsPerEntity, seed: seed &+ UInt64(offset))
        count = store.objects
        // As migrate runs it: one session, the step files loaded once for the plan and the run.
        let session = try MigrationSession(store.url, options: .init(keepBackup: false))
        defer { session.close() }
        let (plan, migrated) = try migrate(in: session, bundle: bundle, destination: target)
        let report = migrated ?? StoreMigrator.Report()
        let path = ([plan.sourceVersion] + plan.steps.map(\.to)).joined(separator: " → ")
        var passed = VerificationOutcome(
          version: version, passed: true, objects: count, detail: path, seconds: Date().timeIntervalSince(start))
        passed.drops = report.steps.flatMap(\.drops)
        outcome = passed
      } catch {
        // A full disk says nothing of the migrations: the run stops with it, no version failed.
        if StoreFailure.isDiskFull(error) {
          if made { try? FileManager.default.removeItem(at: folder) }
          throw error
        }
        outcome = VerificationOutcome(
          version: version, passed: false, objects: count, detail: "\(error)", seconds: Date().timeIntervalSince(start))
      }
      if made { try? FileManager.default.removeItem(at: folder) }
      outcomes.append(outcome)
      done(outcome)
    }
    return outcomes
  }

  /// A store of `version` in `folder`, filled with made-up objects that keep the version's rules
  /// (`review` makes one of a model's oldest version too).
  package static func makeStore(of version: String, in folder: URL, bundle: ModelBundle, objects: Int, seed: UInt64)
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
