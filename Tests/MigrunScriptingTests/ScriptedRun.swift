import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport

/// Runs migrations as `migrun migrate` does — each step's script (Lua file or Xcode mapping model)
/// found in policy folders — for tests that compare stores made different ways.
enum ScriptedRun {
  /// Migrates `store` to `destination` (default: the current version), scripts and policies from
  /// `folders`; `mixed` off runs steps that would be mixed object by object. Returns each step's method.
  @discardableResult
  static func migrate(
    _ store: URL, bundle bundleURL: URL, folders: [URL], to destination: String? = nil, mixed: Bool = true
  ) throws -> [StepMethod] {
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: folders, override: nil)
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try SQLiteStore.metadata(at: store).versionHashes, destination: destination,
      order: order,
      script: { from, to in ScriptedStep.find(from: from, to: to, in: folders).map { [$0] } })
    var options = StoreMigrator.Options()
    options.mixed = mixed
    let migrator = StoreMigrator(store: store, plan: plan, options: options)
    migrator.scripts = LuaScripts(policyFolders: folders)
    return try migrator.run().steps.map(\.method)
  }

  /// The store's objects as JSON, read with version `version` of the bundle.
  static func export(_ store: URL, bundle bundleURL: URL, version: String) throws -> String {
    let opened = try SQLiteStore(url: store, model: try ModelBundle(modelOrStoreAt: bundleURL).model(named: version))
    defer { try? opened.close() }
    return try StoreJSON.export(opened)
  }
}
