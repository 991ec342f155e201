import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunStore

/// A migration through the user's own step files, as `migrun migrate --policies` runs it: Lua
/// mapping files (`<From>-<To>.lua`) and Xcode mapping models found by name in the policy folders,
/// the Lua policies they require, each step's custom stage (`<From>-<To>.stage.lua`), merge rules
/// for uniqueness collisions, and the version order of a `chain` file (or ``chain``), walked one
/// version at a time.
///
/// ```swift
/// let scripts = MigrationScripts(policyFolders: [policies])
/// let plan = try scripts.plan(store: storeURL, bundle: bundle)
/// let report = try scripts.migrator(store: storeURL, plan: plan).run()
/// ```
public struct MigrationScripts: Sendable {
  /// Folders of step files, mapping models, stages and the Lua modules they require.
  public var policyFolders: [URL]
  /// The limits of every Lua script the migration runs.
  public var limits: ScriptLimits
  /// A Lua merge-rule file for uniqueness collisions in every step (`migrun migrate --merge-rules`).
  public var mergeRules: URL?
  /// Versions to walk one at a time, oldest first; nil: a `chain` file in a policy folder, else the
  /// model's declared order or Core Data's path.
  public var chain: [String]?
  /// Xcode mapping models given one by one, matched to the versions they were made for.
  public var mappingModels: [URL]

  public init(
    policyFolders: [URL], limits: ScriptLimits = ScriptLimits(), mergeRules: URL? = nil, chain: [String]? = nil,
    mappingModels: [URL] = []
  ) {
    self.policyFolders = policyFolders
    self.limits = limits
    self.mergeRules = mergeRules
    self.chain = chain
    self.mappingModels = mappingModels
  }

  /// The plan for the store at `store` to `destination` (the current version when nil), as `migrun
  /// plan` makes it: each step scripted where a policy folder has its file, inferred otherwise.
  /// Throws `MigrationError.Code.unknownSourceVersion` when no version has the store's hashes (and
  /// it carries no model to start from), `MigrationError.Code.unknownVersion` for a destination
  /// the model does not have, `MigrationError.Code.badMapping` for a policy folder holding a file
  /// no step can use.
  public func plan(store: URL, bundle: ModelBundle, destination: String? = nil) throws -> MigrationPlan {
    let lua = luaScripts
    let plan = try plan(session: StoreSession(store), bundle: bundle, destination: destination, lua: lua)
    // As `migrun plan` does: every step's mapping file and stage file loaded now, so that a script
    // that does not load fails the plan, not the migration after its first steps.
    for step in plan.steps {
      if case .scripted(let files) = step.kind { _ = try lua.mapping(for: step, files: files) }
      _ = try lua.stage(for: step)
    }
    return plan
  }

  /// Sends the lines scripts say — `print`, a mapping file's `m:log`, a stage's `ctx:log`, each
  /// after the name of the file that said it — to `handler` instead of standard error (nil: back to
  /// standard error, control characters escaped). Process-wide, as standard error is.
  ///
  /// ```swift
  /// MigrationScripts.sendScriptLines { line in logger.info("\(line)") }
  /// ```
  public static func sendScriptLines(to handler: (@Sendable (String) -> Void)?) {
    ScriptOutput.setHandler(handler)
  }

  /// The migrator for `plan` on `store`, running the steps' scripts, stages and merge rules.
  public func migrator(store: URL, plan: MigrationPlan, options: StoreMigrator.Options = StoreMigrator.Options())
    -> StoreMigrator
  {
    migrator(store: store, plan: plan, options: options, lua: luaScripts)
  }

  /// Migrates the store at `store` to `destination` (the current version when nil) as one session:
  /// the store's migration lock taken, a swap an earlier run left half done completed, the store
  /// found free, then the plan made (``plan(store:bundle:destination:)``) and run, both reading the
  /// store through that one look at it, each step file loaded once. A store already at the
  /// destination is left alone (a report with no steps).
  public func migrate(
    store: URL, bundle: ModelBundle, destination: String? = nil,
    options: StoreMigrator.Options = StoreMigrator.Options()
  ) throws -> StoreMigrator.Report {
    let session = try MigrationSession(store, options: options)
    defer { session.close() }
    return try migrate(in: session, bundle: bundle, destination: destination).report ?? StoreMigrator.Report()
  }

  // MARK: - Non public

  /// Where ``chain`` was given, in errors about it (the command line: `--chain`, or the project file's key).
  package var chainOrigin = "MigrationScripts.chain"
  /// Where a plan's destination was given, in errors about it (nil: an argument).
  package var destinationOrigin: String?

  /// ``plan(store:bundle:destination:)`` from a job's look at the store (`session`), weighing walks
  /// through the step files with `lua` — the value the run then gets, so each file loads once, and
  /// the policy folders are walked once (`lua.files`). The version order of ``chain`` (or a chain
  /// file) if any, Core Data's path otherwise; Lua mapping files and mapping models found by name in
  /// the policy folders, ``mappingModels`` matched to the versions they were made for. When no
  /// version has the store's hashes, its own model (`Z_MODELCACHE`) is the source, and a mapping
  /// model made for it (given, or in a policy folder) is found by its hashes.
  package func plan(session: StoreSession, bundle: ModelBundle, destination: String?, lua: LuaScripts) throws
    -> MigrationPlan
  {
    let files = lua.files
    let order = try MigrationPlanner.explicitOrder(
      bundle, policyFolders: files.folders, override: chain, overrideOrigin: chainOrigin)
    let metadata = try session.metadata()
    let storeModel =
      bundle.version(matching: metadata.versionHashes) == nil
      ? try? session.cachedModel()?.named(
        "\(session.url.deletingPathExtension().lastPathComponent)'s own model") : nil
    let (given, givenModules) = try ScriptedStep.givenMappingModels(
      mappingModels, bundle: bundle, storeModel: storeModel)
    let chained = order?.scripts ?? [:]
    let found = try ScriptedStep.checkPolicyFolders(
      files, bundle: bundle, storeModel: storeModel, modulesOfGivenMappings: givenModules, order: order?.names,
      chained: Array(chained.values.joined()))
    return try MigrationPlanner.plan(
      bundle: bundle, storeHashes: metadata.versionHashes, destination: destination,
      destinationOrigin: destinationOrigin, order: order, storeModel: storeModel,
      script: { from, to in
        let key = "\(from)\u{0}\(to)"
        return given[key] ?? chained[key] ?? found.passes[key] ?? files.find(from: from, to: to).map { [$0] }
          ?? found.byHashes[key].map { [$0] }
      }, scripts: lua)
  }

  /// ``migrator(store:plan:options:)`` with the scripts the plan was made with (`lua`).
  package func migrator(store: URL, plan: MigrationPlan, options: StoreMigrator.Options, lua: LuaScripts)
    -> StoreMigrator
  {
    let migrator = StoreMigrator(store: store, plan: plan, options: options)
    migrator.scripts = lua
    return migrator
  }

  /// The plan and — unless the store is current — the run of a migration `session` (taken by the
  /// caller, its hooks set), both with these scripts: each step file loaded once, for the plan that
  /// weighs walks through them and the run that runs them. The report is nil for a current store.
  package func migrate(in session: MigrationSession, bundle: ModelBundle, destination: String?) throws
    -> (plan: MigrationPlan, report: StoreMigrator.Report?)
  {
    let lua = luaScripts
    session.scripts = lua
    let plan = try plan(session: session.look, bundle: bundle, destination: destination, lua: lua)
    session.plan = plan
    guard plan.needsMigration else { return (plan, nil) }
    return (plan, try session.run())
  }

  /// What the migrator asks of the scripting layer, under these limits (a new value each time: one
  /// per migration, which keeps the step files it loaded).
  package var luaScripts: LuaScripts {
    LuaScripts(policyFolders: policyFolders, limits: limits.lua, mergeRules: mergeRules)
  }
}
