import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// What a migration job is given — the command line's flags, else the project file, resolved.
package struct MigrationSetup: Sendable {
  /// The model: a `.xcdatamodeld`/`.momd`, SwiftData sources, or a store whose own model is the destination.
  package var model: URL
  /// The configuration the store was written for (nil: found from the store).
  package var configuration: String?
  /// The destination version (nil: the current version).
  package var destination: String?
  /// Versions to walk one at a time, oldest first (nil: a chain file, else Core Data's path).
  package var chain: [String]?
  /// Folders of step scripts, mapping models and Lua policies.
  package var policyFolders: [URL] = []
  /// Xcode mapping models given one by one.
  package var mappingModels: [URL] = []
  /// The limits every Lua VM of the job runs under.
  package var limits = LuaLimits()
  /// Lua merge rules for uniqueness collisions in every step.
  package var mergeRules: URL?
  /// How long a read of a store waits for another process's write lock, in seconds (`--wait`).
  package var readWait: Double = 0
  /// Where an option's value came from when not from its flag — `model`, `to`, `chain`,
  /// `configuration` → "key: in /path/.migrun.yml" — so that a message about the value names it.
  package var origins: [String: String] = [:]

  package init(model: URL) { self.model = model }
}

/// The front door of `status`, `plan` and `migrate`, for one store or each store of a fleet: each
/// owns its whole sequence (an interrupted swap completed, the plan, the migrator with its scripts
/// and stages, the run) and returns a report; the command line only prints it. The model is read
/// once, when the jobs are made.
package struct MigrationJobs {
  package let setup: MigrationSetup
  package let bundle: ModelBundle

  package init(_ setup: MigrationSetup) throws {
    self.setup = setup
    bundle = try Self.naming(setup.origins["model"]) { try loadModel(setup.model) }
  }

  /// `body`'s error, saying where the value it is about came from (`origin`, when not a flag).
  static func naming<T>(_ origin: String?, _ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch {
      guard let origin else { throw error }
      throw ToolError(message: "\(Fleet.message(error)) (\(origin))", underlying: error)
    }
  }

  /// Jobs on a model already read (`setup.model` names where it came from).
  package init(_ setup: MigrationSetup, bundle: ModelBundle) {
    self.setup = setup
    self.bundle = bundle
  }

  /// The plan for `store`: its configuration (given or found), the step scripts of the policy
  /// folders and mapping models, the chain. An XML or binary store is planned as its SQLite working
  /// copy (``AtomicStoreWork``) is.
  package func plan(for store: URL) throws -> MigrationPlan {
    try withSQLite(session(of: store), for: "plan") { try sqlitePlan(for: $0, lua: scripts.luaScripts) }
  }

  /// One look at `store` for a job (``StoreSession``), reads waiting as long as `--wait` says.
  package func session(of store: URL) -> StoreSession { StoreSession(store, readWait: setup.readWait) }

  /// `body` given a session of a SQLite store to read for the session's store: the store itself,
  /// or — for an XML or binary store — a SQLite working copy of its objects, removed afterwards.
  func withSQLite<T>(_ session: StoreSession, for command: String, _ body: (StoreSession) throws -> T) throws -> T {
    guard AtomicStoreInput.isAtomic(session) else { return try body(session) }
    let work = try AtomicStoreWork(session.url, bundle: bundle, for: command)
    defer { work.discard() }
    return try body(StoreSession(work.sqlite))
  }

  func sqlitePlan(for session: StoreSession, lua: LuaScripts) throws -> MigrationPlan {
    try scripts.plan(session: session, bundle: configured(session), destination: setup.destination, lua: lua)
  }

  /// The model's versions for the configuration the store was written for (given, or found).
  private func configured(_ session: StoreSession) throws -> ModelBundle {
    try Self.naming(setup.origins["configuration"]) {
      try ConfigurationChoice.bundle(bundle, configuration: setup.configuration, session: session)
    }
  }

  /// The scripting layer's door (the one `verify` takes too): the job's policy folders, chain,
  /// mapping models, merge rules and limits, with where each came from for its errors.
  var scripts: MigrationScripts {
    var scripts = MigrationScripts(
      policyFolders: setup.policyFolders, limits: ScriptLimits(setup.limits), mergeRules: setup.mergeRules,
      chain: setup.chain, mappingModels: setup.mappingModels)
    scripts.chainOrigin = setup.origins["chain"] ?? "--chain"
    scripts.destinationOrigin = setup.origins["to"]
    return scripts
  }

  /// Step files of the policy folders that the plan for `store` does not use, each with why.
  package func unusedStepFiles(of plan: MigrationPlan) -> [ScriptedStep.UnusedStepFile] {
    ScriptedStep.unusedStepFiles(of: plan, bundle: bundle, in: PolicyFiles(setup.policyFolders))
  }

  /// Whether `store` needs migrating, and the path; a store with no path yet is one that needs
  /// migrating (``StatusReport/reason`` says why there is none). Other failures are thrown.
  package func status(of store: URL, as name: String) throws -> StatusReport {
    do {
      let plan = try plan(for: store)
      let path = plan.needsMigration ? [plan.sourceVersion] + plan.steps.map(\.to) : []
      return StatusReport(
        store: name, version: plan.sourceVersion, destination: plan.destinationVersion, path: path,
        steps: plan.steps.count)
    } catch let error as MigrationError where error.code == .notInferable {
      return StatusReport(
        store: name, version: nil, destination: setup.destination, path: [], steps: 0, reason: Fleet.message(error))
    } catch let error as MigrationError where error.code == .backwards && setup.destination == nil {
      // Newer than the model's current version: no path, and none to take without --to.
      var report = StatusReport(
        store: name, version: nil, destination: bundle.currentVersionName, path: [], steps: 0,
        reason: Fleet.message(error))
      report.isNewer = true
      report.needsMigration = false
      return report
    }
  }

  /// One store's migration, as one session (``MigrationSession``: the store's migration lock taken,
  /// an interrupted swap completed — `swapCompleted` told — its working files removed); then the plan
  /// and — unless the store is current — the run, both reading the store through that one look at
  /// it, with the step files loaded once (``MigrationScripts/migrate(in:bundle:destination:)``);
  /// `progress` and `willStart` (once the store is the migration's, before any work).
  package func migrate(
    _ store: URL, options: StoreMigrator.Options, swapCompleted: () -> Void = {},
    progress: ((MigrationProgress) -> Void)? = nil, willStart: ((MigrationPlan) -> Void)? = nil
  ) throws -> MigrationOutcome {
    let session = try MigrationSession(store, options: options, swapCompleted: swapCompleted)
    defer { session.close() }
    if AtomicStoreInput.isAtomic(session.look) {
      try session.look.free(wait: options.wait)
      return try migrateAtomic(store, options: options, progress: progress, willStart: willStart)
    }
    session.progress = progress
    session.willStart = willStart
    let chosen = try configured(session.look)
    let (plan, report) = try scripts.migrate(in: session, bundle: chosen, destination: setup.destination)
    return MigrationOutcome(plan: plan, report: report)
  }

  /// An XML or binary store's migration: its objects in a SQLite working store (``AtomicStoreWork``)
  /// migrated by the same plan, steps, policies, stages and checks as any SQLite store, then written
  /// back in the store's own type — read back, compared and swapped in with the `~` backup. A dry
  /// run writes nothing back.
  private func migrateAtomic(
    _ store: URL, options: StoreMigrator.Options, progress: ((MigrationProgress) -> Void)?,
    willStart: ((MigrationPlan) -> Void)?
  ) throws -> MigrationOutcome {
    // The store's migration lock is the caller's (the SQLite working copy's own lock is its alone).
    let work = try AtomicStoreWork(store, bundle: bundle, for: "migrate")
    defer { work.discard() }
    var inner = options
    inner.keepBackup = false
    let session = try MigrationSession(work.sqlite, options: inner)
    defer { session.close() }
    session.progress = progress
    session.willStart = willStart
    let (plan, migrated) = try scripts.migrate(
      in: session, bundle: configured(session.look), destination: setup.destination)
    guard var report = migrated, let destination = plan.steps.last?.destination else {
      return MigrationOutcome(plan: plan, report: nil)
    }
    if !options.dryRun { report.backup = try work.writeBack(destination, keepBackup: options.keepBackup) }
    return MigrationOutcome(plan: plan, report: report)
  }
}

/// A store's status (`status`, and its `--json` line).
package struct StatusReport: Encodable, Sendable {
  /// The store as it was named.
  package var store: String
  /// The version the store is at; nil when none matches (or no path could be found).
  package var version: String?
  package var destination: String?
  /// The versions a migration walks, the store's first; empty when it is current; nil on a fleet's
  /// lines, which name the destination only.
  package var path: [String]?
  package var steps: Int
  /// Why the store has no path yet, or why it could not be read.
  package var reason: String?
  package var needsMigration: Bool
  /// The store is newer than the destination (``reason`` says both versions).
  package var isNewer = false

  package init(
    store: String, version: String?, destination: String?, path: [String], steps: Int, reason: String? = nil
  ) {
    self.store = store
    self.version = version
    self.destination = destination
    self.path = path
    self.steps = steps
    self.reason = reason
    needsMigration = version == nil || !path.isEmpty
  }

  /// A fleet's line for one of its stores.
  package init(_ outcome: Fleet.Outcome) {
    store = outcome.path
    version = outcome.from
    destination = outcome.to
    path = nil
    steps = 0
    reason = outcome.error
    needsMigration = outcome.status != .current
  }

  /// The line of a store that could not be read.
  package static func failed(_ store: String, _ error: any Error) -> StatusReport {
    StatusReport(store: store, version: nil, destination: nil, path: [], steps: 0, reason: Fleet.message(error))
  }

  /// The status as a line of text.
  package var line: String {
    if let reason, isNewer { return "\(store): newer than the model: \(reason)" }
    if let reason { return "\(store): needs migrating, but there is no path yet: \(reason)" }
    guard needsMigration else { return "\(store): at \(destination ?? "?"); no migration needed" }
    return
      "\(store): at \(version ?? "?"); needs migrating: \((path ?? []).joined(separator: " → ")) (\(plural(steps, "step")))"
  }

  private enum Keys: String, CodingKey { case store, version, destination, needsMigration, path, reason }

  /// Every key, null where there is no value (docs/json.md); `path` only for a single store.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(store, forKey: .store)
    try container.encode(version, forKey: .version)
    try container.encode(destination, forKey: .destination)
    try container.encode(needsMigration, forKey: .needsMigration)
    try container.encodeIfPresent(path, forKey: .path)
    try container.encode(reason, forKey: .reason)
  }
}

/// What `migrate` did to one store: the plan, and the migrator's report (nil: the store was current).
package struct MigrationOutcome {
  package let plan: MigrationPlan
  package let report: StoreMigrator.Report?

  /// The store's `result` line (docs/json.md).
  package func result(store: String, dryRun: Bool) -> MigrationResult {
    MigrationResult(
      store: store, result: report == nil ? "current" : dryRun ? "dry-run" : "migrated", from: plan.sourceVersion,
      to: plan.destinationVersion, report: report)
  }
}

extension MigrationSetup {
  /// The setup of a migration command: each option its flag gave (`model` already resolved, from
  /// its flag or the project file), else the project file's (`project`); a value the file gave is
  /// named by its key and file in messages about it (``origins``).
  package init(
    model: String, flags: (model: String?, configuration: String?, to: String?, chain: String?),
    policyFolders: [String], mappingModels: [String], project: ProjectConfig?
  ) {
    self.init(model: URL(fileURLWithPath: model))
    configuration = flags.configuration ?? project?.configuration
    destination = flags.to ?? project?.to
    chain = (flags.chain ?? project?.chain).map {
      $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
    }
    if let project {
      let given = [
        ("model", flags.model, project.model), ("to", flags.to, project.to), ("chain", flags.chain, project.chain),
        ("configuration", flags.configuration, project.configuration),
      ]
      for (key, flag, value) in given where flag == nil && value != nil {
        origins[key] = "\(key): in \(project.file.path)"
      }
    }
    self.policyFolders = (policyFolders.isEmpty ? project?.policies ?? [] : policyFolders).map {
      URL(fileURLWithPath: $0)
    }
    self.mappingModels = mappingModels.map { URL(fileURLWithPath: $0) }
  }
}
