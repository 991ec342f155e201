import Foundation
import MigrunContext
import MigrunModel
import MigrunStore

/// Runs a plan on a store file: each step writes a new file beside the store; the original is
/// untouched until the last step is complete and validated, then swapped in atomically (the
/// original kept as `NAME~.EXT` unless told otherwise). Any failure removes the working files and
/// leaves the original exactly as it was.
public final class StoreMigrator {
  /// How a migration runs: the defaults are what `migrun migrate` does.
  public struct Options: Sendable {
    /// Keep the original as `NAME~.EXT` after the swap (``Report/backup``).
    public var keepBackup = true
    /// Run every step on scratch files, report, and delete them.
    public var dryRun = false
    /// Run steps as bulk SQL copies where their mappings allow it (inferred steps, and scripted
    /// ones whose policies only compute attributes); else object by object. Off only to compare
    /// the two paths.
    public var bulkCopy = true
    /// Run steps that only add, remove or rename columns, change optionality or indexes, or change
    /// nothing but hashes as DDL on a copy of the store (`DDLStep`) instead of copying rows. Off
    /// only to compare the paths.
    public var ddl = true
    /// Seconds to wait for another process to let go of the store before refusing (`StoreUse`).
    public var wait: Double = 0
    /// In a step that cannot be copied as a whole, copy the entity mappings that can be and run the
    /// rest object by object (`BulkCopy`'s mixed steps). Off only to compare the paths.
    public var mixed = true
    /// Tables, triggers and views of the store's own (not the model's) to drop on purpose where a
    /// step cannot carry them faithfully (`ForeignObjects`); everything else is carried.
    public var drop: Set<String> = []
    /// Refuse a step whose mapping leaves values behind (`DroppedProperty`), before it runs.
    public var refuseDrops = false
    /// Migrate a store that syncs through CloudKit even where the plan changes what CloudKit's
    /// schema does not allow (`StoreMigrator/cloudKitFindings(_:)`); refused otherwise.
    public var allowCloudKitChanges = false
    /// Delete persistent history's changes of objects whose entity a step removes (Core Data's
    /// `NSPersistentHistoryAllowPartialHistoryMigration`) instead of refusing the step.
    public var partialHistory = false
    /// A look into each step between its work and its checks (``MigrationProbe``): tests only.
    package var probe: (any MigrationProbe)?

    public init(
      keepBackup: Bool = true, dryRun: Bool = false, bulkCopy: Bool = true, ddl: Bool = true, wait: Double = 0
    ) {
      self.keepBackup = keepBackup
      self.dryRun = dryRun
      self.bulkCopy = bulkCopy
      self.ddl = ddl
      self.wait = wait
    }
  }

  /// What a migration did: each step's method, counts, drops and stage results (``steps``), where the
  /// original was kept (``backup``), and the external files no value refers to any more that were
  /// removed.
  ///
  /// ```swift
  /// for step in report.steps {
  ///   print(step.name, step.method, step.counts, step.drops.map(\.description))
  /// }
  /// ```
  public struct Report: Sendable {
    /// What one step did: how it ran and why, the objects it wrote per entity, what its mapping left
    /// behind, and what its custom stage saved.
    public struct Step: Sendable {
      /// The step's versions, `"Moody 2 → Moody 3"`.
      public let name: String
      package let kind: MigrationStep.Kind
      /// Destination entity → objects after the step.
      public let counts: [String: Int]
      /// How the step ran.
      public let method: StepMethod
      /// Why the step did not run as DDL, the fastest way (nil when it did): "Lua policies run per
      /// object, or per row where they only compute attributes", "DDL is turned off", …
      public package(set) var reason: String?
      /// Whether the step ran in SQL — DDL or a bulk copy — rather than object by object.
      public var bulkCopy: Bool { method != .objects }
      /// The step's script files, in the order they ran; empty when the step was inferred.
      public var scripts: [URL] { if case .scripted(let files) = kind { files } else { [] } }
      /// Each entity mapping's objects read from the source and written to the destination, in the
      /// order the step ran them: what `migrun migrate` prints per mapping.
      public var objectsByMapping: [(mapping: String, read: Int, written: Int)] {
        mappings.map { ($0.mapping, $0.read, $0.written) }
      }
      /// Destination objects folded into another by a merge rule (uniqueness collisions).
      public package(set) var merged = 0
      /// Per entity mapping: objects and relationship links read and written (`MappingCount`).
      package var mappings: [MappingCount] = []
      /// What the step's mapping left behind that held values in its source.
      public package(set) var drops: [DroppedProperty] = []
      /// Damage the step's source already had, carried (`CarriedDamage`).
      package var damage: [CarriedDamage] = []
      /// CloudKit's record metadata the step renumbered, and deleted with the entities it removes.
      package var cloudKit = CloudKitRenumbering()
      /// What the step rewrote in persistent history (`HistoryRewrite`).
      package var history = HistoryRewritten()
      /// What the step's custom stage saved before and after it (`MigrationStageHandlers`).
      package var stage: StageReport?
      /// What the step's custom stage saved in `willMigrate` (on the source version), if it has one.
      public var willMigrate: StageChanges? { stage?.willMigrate }
      /// What the step's custom stage saved in `didMigrate` (on the destination version), if it has one.
      public var didMigrate: StageChanges? { stage?.didMigrate }

      package init(name: String, kind: MigrationStep.Kind, counts: [String: Int], method: StepMethod) {
        self.name = name
        self.kind = kind
        self.counts = counts
        self.method = method
      }
    }

    /// Each step that ran, in order.
    public package(set) var steps: [Step] = []
    /// Where the original store was kept (`NAME~.EXT`), unless ``Options/keepBackup`` was off.
    public package(set) var backup: URL?
    /// Files of external binary data no value refers to after the migration, removed after the swap.
    public package(set) var externalFilesRemoved = 0

    package init() {}
  }

  public let store: URL
  public let plan: MigrationPlan
  public let options: Options
  public var progress: ((MigrationProgress) -> Void)?
  /// Called once the store is the migration's — locked, free of other processes — before any work.
  public var willStart: (() -> Void)?
  /// Swift policies for an inferred step's entity mappings, by entity mapping name
  /// (`EntityMapping.name(source:destination:)`): each runs Core Data's seven hooks for its
  /// mapping, object by object, as an `NSEntityMigrationPolicy` subclass would.
  public var policies: ((MigrationStep) -> [String: any EntityMigrationPolicy])?
  /// What the migration asks of the layer that knows scripts — a scripted step's mapping, a step's
  /// custom stage, merge rules — handed to it up front, one value (MigrunScripting's `LuaScripts`).
  package var scripts: (any StepScripts)?

  public init(store: URL, plan: MigrationPlan, options: Options = Options()) {
    self.store = store
    self.plan = plan
    self.options = options
  }

  /// Working files of earlier runs that were killed (removed by ``run()``): what
  /// `WorkingFiles/isLeftover(_:of:)` accepts. Anything else under migrun's names is left alone.
  public static func staleFiles(beside store: URL) -> [URL] {
    let folder = store.deletingLastPathComponent()
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { $0.hasPrefix(WorkingFiles.prefix(of: store)) }.map { folder.appendingPathComponent($0) }
      .filter { WorkingFiles.isLeftover($0, of: store) }
  }

  /// Bytes the working files need at their peak, beside the store: each step writes a new store
  /// about the size of the one it reads (a guess — a script may add or drop data), and the file read
  /// is a snapshot whenever the store's `-wal` has content, so two stores coexist from the second
  /// step or the snapshot on; 10% on top for indexes and association tables.
  public static func estimatedWorkingBytes(store: URL, steps: Int) -> Int64 {
    let size = StoreFiles.storeSize(store)
    let copies: Int64 = (steps > 1 || StoreFiles.hasWALContent(store)) ? 2 : 1
    return size * copies + size / 10
  }

  /// Refuses, before any work, when the store's file system has less free space than
  /// ``estimatedWorkingBytes(store:steps:)``.
  func checkSpace() throws {
    let needed = Self.estimatedWorkingBytes(store: store, steps: plan.steps.count)
    guard let free = StoreFiles.freeBytes(in: store.deletingLastPathComponent()), free < needed else { return }
    throw StoreError(
      .noSpace, file: store.path,
      reason: "not enough free space: the migration needs ~\(StoreFiles.formatBytes(needed)) beside the store "
        + "for its working copies, \(StoreFiles.formatBytes(free)) free; nothing was done")
  }

  /// Completes a swap an earlier run left half done (see `StoreFiles/completeInterruptedSwap(of:)`),
  /// holding the migration lock. Call it before planning: until then the store's main file is the old
  /// store without its `-wal`. Returns whether there was one.
  ///
  /// With `dryRun` nothing is completed: a pending swap is refused (a dry run changes nothing), a
  /// journal migrun did not write is refused by name either way.
  public static func completeInterruptedSwap(of store: URL, wait: Double = 0, dryRun: Bool = false) throws -> Bool {
    guard WorkingFiles.entry(at: StoreFiles.swapJournal(for: store).path) != .none else { return false }
    if dryRun {
      guard try StoreFiles.readJournal(of: store)?.replacement == nil else {
        throw StoreError(
          .io, file: store.path,
          reason: "a migration was interrupted while putting the new store in place; a dry run changes nothing — "
            + "run the migration without StoreMigrator.Options.dryRun to complete it")
      }
      return false
    }
    let lock = try MigrationLock(store: store, wait: wait)
    defer { lock.release() }
    return try StoreFiles.completeInterruptedSwap(of: store)
  }

  /// What the plan changes that CloudKit's schema does not allow, for a store that syncs through
  /// `NSPersistentCloudKitContainer`: ``ModelLint``'s `cloudkit-…` rules over the plan's versions,
  /// less what the store's own version already breaks (it syncs as it is).
  package static func cloudKitFindings(_ plan: MigrationPlan) -> [ModelLint.Finding] {
    guard let first = plan.steps.first else { return [] }
    let versions = [first.source] + plan.steps.map(\.destination)
    let before = Set(ModelLint.findings([first.source], cloudKit: true).map { [$0.rule, $0.entity] + $0.properties })
    return ModelLint.findings(versions, cloudKit: true).filter { finding in
      finding.rule.hasPrefix("cloudkit-") && !before.contains([finding.rule, finding.entity] + finding.properties)
    }
  }

  static func refuseCloudKitChanges(_ plan: MigrationPlan) throws {
    let findings = cloudKitFindings(plan)
    guard !findings.isEmpty else { return }
    throw MigrationError(
      .wouldDrop,
      reason:
        "the store syncs through CloudKit (it has NSPersistentCloudKitContainer's tables), and the plan changes what CloudKit's schema does not allow: "
        + findings.map(\.description).joined(separator: "; ")
        + ". Set StoreMigrator.Options.allowCloudKitChanges to migrate anyway (CloudKit will not take the change); the store is unchanged"
    )
  }

  /// What a run carries from step to step.
  private struct Run {
    var report = Report()
    /// migrun's working files, removed however the run ends (the result is swapped in first).
    var created: [URL] = []
    /// The file the next step reads: the store, a snapshot of it, or the last step's result.
    var current: URL
    /// Values kept outside the store are read from the original's folder by every copy; the files of
    /// values the steps write wait in a working folder (``ExternalData/staging``) until the swap.
    var externalData: ExternalData
    /// The files the original refers to: the only ones a successful migration may clean up.
    var referencedBefore = Set<String>()
    /// Early fsyncs of a DDL step's copy (its pages reach the disk while the step edits it).
    var flushing: [BackgroundWork] = []
    /// The job's look at the store: the first step reads the store through it.
    let session: StoreSession
  }

  /// Runs the plan. Before any work: an interrupted swap of an earlier run is completed, its working
  /// files removed, the store checked not to be in use (waiting up to ``Options/wait``) and the free
  /// space checked. The store's files are only ever read; a store whose `-wal` has content is read
  /// through a snapshot.
  public func run() throws -> Report {
    guard FileManager.default.fileExists(atPath: store.path) else {
      throw StoreError(.notFound, file: store.path, reason: "no such file")
    }
    // Another migrun's working files are not stale: its lock comes first.
    let lock = try MigrationLock(store: store, wait: options.wait)
    defer { lock.release() }
    return try run(in: Self.prepare(store, options: options))
  }

  /// What a migration does first, holding the store's migration lock: an interrupted swap of an
  /// earlier run completed (`swapCompleted` told; a dry run refuses a pending one) and its working
  /// files removed, its sidecars checked (``StoreFiles/checkSidecars(of:)``). Returns the session:
  /// the one look at the store the plan and the run share (the run checks the store is not in use,
  /// waiting up to ``Options/wait``, before any work — a store already current is reported so even
  /// while its app has it open).
  package static func prepare(_ store: URL, options: Options, swapCompleted: () -> Void = {}) throws
    -> StoreSession
  {
    if options.dryRun {
      _ = try completeInterruptedSwap(of: store, dryRun: true)
    } else {
      if try StoreFiles.completeInterruptedSwap(of: store) { swapCompleted() }
      for stale in staleFiles(beside: store) { try? FileManager.default.removeItem(at: stale) }
    }
    // A -wal, -shm or -journal that is a link, a folder or a FIFO: refused before anything reads it.
    try StoreFiles.checkSidecars(of: store)
    return StoreSession(store, readWait: options.wait)
  }

  /// Runs the plan on the store of `session` (``prepare(_:options:swapCompleted:)``), whose
  /// migration lock the caller holds: first the store is found free (waiting up to ``Options/wait``);
  /// the session's look at the store — its journal mode, its connection — is the run's.
  package func run(in session: StoreSession) throws -> Report {
    guard session.url == store else {
      throw MigrationError(.store, reason: "internal: the session is of \(session.url.path), not \(store.path)")
    }
    // Found free only when there is work: a store already current is reported so while its app runs.
    try session.free(wait: options.wait)
    // A crashed writer's journal would be left beside the migrated store and rolled back into it.
    if RollbackJournal.isHot(store) {
      throw StoreError(
        .io, file: store.path,
        reason: "a hot journal (\(store.lastPathComponent)-journal) is beside it: a writer crashed part way through "
          + "a transaction, which SQLite rolls back when the store is next opened; open it once (its app, or "
          + "`sqlite3 STORE 'PRAGMA quick_check'`), then migrate again")
    }
    willStart?()
    let state = StoreFiles.State(of: store)
    let walMode = session.walMode
    try checkSpace()
    var run = Run(current: store, externalData: ExternalData(store: store), session: session)
    defer { for file in run.created { StoreFiles.remove(file) } }
    let staging = try scratch("external")
    run.created.append(staging)
    run.externalData.staging = staging
    if StoreFiles.hasWALContent(store) {
      let snapshot = try scratch("source")
      run.created.append(snapshot)
      try withSpaceReported { try StoreFiles.snapshot(store, to: snapshot) }
      run.current = snapshot
    }
    // SQLite's own check of the file, beside the steps: a damaged page is the user's store's
    // damage, named as such, and decided before the original is touched (IntegrityWatch).
    var syncing: BackgroundWork?
    try IntegrityWatch(
      checking: run.current, for: store, withLocks: readsWithLocks(run.current, session), readWait: session.readWait
    ).judging {
      for (index, step) in plan.steps.enumerated() {
        let working = try scratch("step\(index + 1)")
        let associations = try scratch("assoc\(index + 1)")
        run.created += [working, associations]
        let result: URL
        do {
          result = try runStaged(index, step, into: working, associations: associations, run: &run)
        } catch let error where Self.isDiskFull(error) {
          throw outOfSpace(during: "step \(step.name)")
        } catch let error as MigrationError {
          throw error.inStep(step.name)
        } catch let error as StoreError {
          throw MigrationError(.store, step: step.name, reason: error.description, underlying: error)
        } catch {
          throw MigrationError(.ofPolicy(error), step: step.name, reason: "\(error)", underlying: error)
        }
        if run.current != store, run.current != result { StoreFiles.remove(run.current) }
        run.current = result
      }
      // The result is made durable while the check takes its last pages: its verdict still comes
      // before the swap, which waits for both.
      if run.current != store, !options.dryRun {
        syncing = try swapping { try prepareSwap(run.current, walMode: walMode) }
      }
    }
    guard run.current != store, !options.dryRun else { return run.report }
    run.report.backup = try swapping {
      for flush in run.flushing { try flush.wait() }
      try syncing?.wait()
      let staged = try filesReferenced(by: run.current, staged: run.externalData)
      var placed: [URL] = []
      do {
        return try StoreFiles.replace(store, with: run.current, keepBackup: options.keepBackup, expecting: state) {
          placed = try run.externalData.placeStagedFiles(referencedBy: staged)
        }
      } catch {
        for file in placed { unlink(file.path) }
        throw error
      }
    }
    // Cleaning is after the fact: a file left behind (this failing) is only space, never a value.
    if !run.referencedBefore.isEmpty, let last = plan.steps.last {
      run.report.externalFilesRemoved =
        (try? Self.removeExternalFiles(
          of: store, model: last.destination, noLongerReferencedOf: run.referencedBefore)) ?? 0
    }
    return run.report
  }

  /// The staged files (values the steps kept outside the store) that the migrated file refers to.
  private func filesReferenced(by migrated: URL, staged externalData: ExternalData) throws -> Set<String> {
    guard let staging = externalData.staging, let last = plan.steps.last,
      !((try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []).isEmpty
    else { return [] }
    let result = try SQLiteStore(url: migrated, model: last.destination, access: .readOnly)
    defer { try? result.close() }
    return Set(try result.externalReferences().map(\.file))
  }

  /// The migrated file in the store's journal mode, its fsync started on a thread of its own.
  private func prepareSwap(_ migrated: URL, walMode: Bool) throws -> BackgroundWork {
    if walMode { try StoreFiles.setWALMode(migrated) }
    let sync = try StoreFiles.syncLater(migrated)
    return BackgroundWork { try sync() }
  }

  /// Runs a part of putting the migrated file in the store's place (the original kept as the
  /// backup, unless told otherwise), its failures said as such.
  private func swapping<T>(_ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as StoreError where error.code == .inUse {
      throw error
    } catch let error as StoreError where Self.isDiskFull(error) {
      throw outOfSpace(during: "the swap")
    } catch {
      throw MigrationError(
        .store, reason: "the migrated store is complete but could not be put in place: \(error)", underlying: error)
    }
  }

  /// The step's source, read-only, with the store's external files; for the first step, the files
  /// the original refers to are counted (those it never had are carried as references, reported).
  private func openSource(of step: MigrationStep, first: Bool, run: inout Run) throws -> SQLiteStore {
    let source = try SQLiteStore(
      url: run.current, model: step.source, access: .readOnly, fastWrites: false, session: run.session)
    source.externalData = run.externalData
    if first {
      run.referencedBefore = Set(try source.externalReferences().map(\.file))
      // Behind a link no file is read, and none would be found: refused by name, never carried as
      // "files the original never had".
      if !run.referencedBefore.isEmpty, let link = run.externalData.linkOnTheWay(to: nil) {
        throw StoreError(
          .badValue, file: store.path,
          reason: "\(link.path) is a symbolic link: values kept outside the store are read only from plain files in "
            + "the store's own support folder, never through a link; the store is unchanged")
      }
      run.externalData.carriedMissing = run.referencedBefore.subtracting(run.externalData.files())
      source.externalData = run.externalData
    }
    return source
  }

  /// The file a DDL step edits in place (its own tables stay; what was dropped on purpose goes):
  /// the copy of the store, once made — its pages go to the disk now, beside the edit, so the
  /// swap's fsync has only the edited pages left to write — or migrun's own file (a snapshot or an
  /// earlier step's result), where it is.
  private func ddlTarget(copying: StoreCopy?, working: URL, run: inout Run) throws -> URL {
    guard let copying else { return run.current }
    try copying.wait()
    if let flush = copying.flush { run.flushing.append(flush) }
    return working
  }

  /// Runs one step from `run.current`: as DDL on a copy (or on migrun's own file, in place), or
  /// into the new file `working`. Returns the step's result.
  private func runStep(
    _ index: Int, _ step: MigrationStep, into working: URL, associations: URL, run: inout Run
  ) throws -> URL {
    let stepProgress: (MigrationProgress) -> Void = { [progress] in
      var reported = $0
      reported.step = step.name
      progress?(reported)
    }
    let source = try openSource(of: step, first: index == 0, run: &run)
    defer { try? source.close() }
    let stepMapping = try mapping(for: step)
    let foreign = try source.inspecting { store in try ForeignObjects.read(store, schema: source.schema) }
    if index == 0, foreign.syncsWithCloudKit, !options.allowCloudKitChanges {
      try Self.refuseCloudKitChanges(plan)
    }
    // A DDL step on the store itself starts from a copy: made while the source is counted
    // (the copy is I/O, the counts CPU — two cores do both at once).
    let decision = try Self.ddlDecision(stepMapping, store: source, options: options)
    var copying: StoreCopy?
    if case .ddl = decision, run.current == store {
      let (from, to) = (store, working)
      copying = StoreCopy(from, to: to)
    }
    // Never leave the copy running past this step, whatever fails (its file is ours to remove).
    defer { try? copying?.wait() }
    let before = try Conservation.before(
      stepMapping.mapping, source: source, policies: Set(stepMapping.policies.keys))
    let drops = try drops(of: stepMapping, in: source, step: step)
    var done: Report.Step
    var result = working
    if case .ddl(var edit) = decision {
      // Read here, while the copy is made, not inside the edit's transaction after it.
      edit.staleEntityTables = try Set(
        edit.soleEntityTables.filter { try source.holdsRows(in: $0.table, ofAnotherEntityThan: $0.number) }
          .map { $0.table.uppercased() })
      try source.close()
      result = try ddlTarget(copying: copying, working: working, run: &run)
      done = try runDDL(
        edit, on: result, step: step, metadata: source.metadata, dropping: foreign, externalData: run.externalData,
        conserving: (stepMapping.mapping, before), progress: stepProgress)
    } else {
      done = try writeNewFile(
        step, from: source, at: run.current, withLocks: readsWithLocks(run.current, run.session), into: working,
        associations: associations, mapping: stepMapping, foreign: foreign, before: before,
        externalData: run.externalData, progress: stepProgress)
    }
    done.drops = drops
    if case .copyRows(let why) = decision { done.reason = why }
    run.report.steps.append(done)
    return result
  }

  /// ``runStep(_:_:into:associations:run:)`` inside the step's custom stage, if it has one:
  /// `willMigrate` before it (on a copy when the step would read the original), `didMigrate` on its
  /// result; what each saved goes in the step's report.
  private func runStaged(
    _ index: Int, _ step: MigrationStep, into working: URL, associations: URL, run: inout Run
  ) throws -> URL {
    guard let handlers = try scripts?.stage(for: step) else {
      return try runStep(index, step, into: working, associations: associations, run: &run)
    }
    var report = StageReport()
    if handlers.hooks.contains(.willMigrate) {
      if run.current == store {
        let copy = try scratch("stage\(index + 1)")
        run.created.append(copy)
        try withSpaceReported { try StoreFiles.cloneOrCopy(store, to: copy) }
        run.current = copy
      }
      report.willMigrate = try runStage(
        handlers, .willMigrate, on: run.current, model: step.source, step: step, run: run)
    }
    let result = try runStep(index, step, into: working, associations: associations, run: &run)
    if handlers.hooks.contains(.didMigrate) {
      report.didMigrate = try runStage(handlers, .didMigrate, on: result, model: step.destination, step: step, run: run)
    }
    if !run.report.steps.isEmpty { run.report.steps[run.report.steps.count - 1].stage = report }
    return result
  }

  /// Runs a stage handler on a context over `file` (migrun's own working file), which must save
  /// what it changes: changes left unsaved are an error, not dropped.
  private func runStage(
    _ handlers: any MigrationStageHandlers, _ hook: StageHook, on file: URL, model: ObjectModel, step: MigrationStep,
    run: Run
  ) throws -> StageChanges {
    guard file != store else {
      throw MigrationError(.store, step: step.name, reason: "internal: a stage would write the original store")
    }
    let working = try SQLiteStore(url: file, model: model, access: .readWrite)
    working.externalData = run.externalData
    defer { try? working.close() }
    // migrun's own file, fsynced whole before the swap: the stage's saves need not wait for the disk.
    try working.deferSyncToTheEnd()
    let context = StoreCoordinator(store: working).newContext()
    // A store with persistent history records the stage's saves as Core Data's staged migration
    // does, under these names (CloudKit's mirror exports them like any other change).
    context.transactionAuthor = "migrun"
    context.name = "\(step.name) \(hook.rawValue)"
    let changes = try handlers.run(hook, on: context, step: step)
    guard !context.hasChanges else {
      throw MigrationError(
        .policy, step: step.name,
        reason: "\(hook.rawValue) left changes unsaved (\(context.insertedObjects.count) inserted, "
          + "\(context.updatedObjects.count) changed, \(context.deletedObjects.count) deleted): save them (ctx:save()) or undo them"
      )
    }
    return changes
  }

  /// What the step's mapping leaves behind that holds values in `source`; refused here with
  /// ``Options/refuseDrops``.
  private func drops(of stepMapping: StepMapping, in source: SQLiteStore, step: MigrationStep) throws
    -> [DroppedProperty]
  {
    let drops = try source.counting(stepMapping.mapping.drops(scripted: Set(stepMapping.policies.keys)))
      .filter { ($0.values ?? 0) > 0 }
    if options.refuseDrops, case let certain = drops.filter(\.isCertain), !certain.isEmpty {
      throw MigrationError(
        .wouldDrop, step: step.name,
        reason:
          "the step's mapping leaves values behind: \(certain.map(\.description).joined(separator: "; ")). StoreMigrator.Options.refuseDrops refuses it: map them in a mapping file, or migrate without StoreMigrator.Options.refuseDrops to drop them on purpose; the store is unchanged"
      )
    }
    return drops
  }

  /// Whether a read that opens `file` now takes SQLite's locks (its `readOnlyPath`'s `isHeld`): the
  /// store in rollback-journal mode, always — an app may have opened it since the session found it
  /// free, which no change of its files shows, and SQLite's locks answer that at every read (no look
  /// of migrun's, no open more); a WAL store is read with its `-shm`, there whenever a process has
  /// it open, else as immutable (a read-only connection would make one beside it). Migrun's own
  /// files (a snapshot, a step's result) no other process holds.
  private func readsWithLocks(_ file: URL, _ session: StoreSession) -> Bool { file == store && !session.walMode }

  /// What the store holds beyond its model (CloudKit's tables, persistent history, its own tables),
  /// carried into the destination, renumbered where the step renumbers entities.
  private func carryForeign(
    _ foreign: ForeignObjects, from current: URL, withLocks locks: Bool, source: SQLiteStore,
    into destination: SQLiteStore,
    mapping: MappingModel, numbers: [Int: Int]
  ) throws -> HistoryRewritten {
    var history = HistoryRewritten()
    let path = SQLiteStore.readOnlyPath(current, isHeld: locks) ?? current.path
    let rewrite = HistoryRewrite(mapping: mapping, source: source.schema, destination: destination.schema)
    try destination.editing(attaching: current, at: path, readWait: options.wait) { store in
      try store.inTransaction {
        history = try foreign.carry(
          store, numbers: numbers, dropped: options.drop, history: rewrite, partialHistory: options.partialHistory)
      }
    }
    return history
  }

  /// A step that writes a new file: what the store holds beyond its model carried (or refused
  /// now, by name), the objects moved as rows, as objects or both, then every count checked.
  private func writeNewFile(
    _ step: MigrationStep, from source: SQLiteStore, at current: URL, withLocks locks: Bool, into working: URL,
    associations: URL,
    mapping stepMapping: StepMapping, foreign: ForeignObjects, before: Conservation.Before,
    externalData: ExternalData, progress stepProgress: @escaping (MigrationProgress) -> Void
  ) throws -> Report.Step {
    let numbers = stepMapping.mapping.entityNumbers(from: source.schema)
    if let refusal = try source.inspecting({ store in
      try foreign.refusal(store, numbers: numbers, dropped: options.drop, partialHistory: options.partialHistory)
    }) {
      throw MigrationError(.wouldDrop, step: step.name, reason: refusal)
    }
    // CloudKit's objects renumbered: the store is marked as Core Data marks it (see ForeignObjects).
    let cloudKit = try source.inspecting { store in
      try foreign.cloudKitRenumbering(store, numbers: numbers, dropped: options.drop)
    }
    var metadata = source.metadata.describing(step.destination)
    if !cloudKit.isEmpty { metadata.otherKeys[ForeignObjects.zoneFetchKey] = .boolean(true) }
    let destination = try SQLiteStore.create(
      at: working, model: step.destination, metadata: metadata, fastWrites: true, withIndexes: false,
      withTriggers: false)
    destination.externalData = externalData
    let (mapping, policies) = (stepMapping.mapping, stepMapping.policies)
    let manager = try MigrationManager(
      mapping: mapping, source: source, destination: destination, associationsFile: associations,
      policies: policies)
    manager.progress = stepProgress
    manager.mergeRules = try stepMapping.mergeRules + (scripts?.mergeRules(for: step) ?? [])
    let method = try moveObjects(
      from: current, withLocks: locks, schema: source.schema, into: destination, manager: manager,
      progress: stepProgress)
    let history =
      foreign.isEmpty
      ? HistoryRewritten()
      : try carryForeign(
        foreign, from: current, withLocks: locks, source: source, into: destination, mapping: mapping, numbers: numbers)
    try destination.installDerivedAttributes()
    try options.probe?.stepWritten(destination, by: method)
    let carriedFiles = try destination.checkExternalReferences()
    let conserved = try Conservation.check(
      mapping, before: before, destination: destination, policies: Set(policies.keys), merged: manager.mergedCount)
    var done = Report.Step(
      name: step.name, kind: step.kind, counts: try destination.entityCounts(known: conserved.objects), method: method)
    done.mappings = conserved.mappings
    done.merged = manager.mergedCount
    done.cloudKit = cloudKit
    done.history = history
    done.damage = try Conservation.damage(
      mapping, before: before, destination: destination, carriedFiles: carriedFiles)
    try destination.close()
    return done
  }

  /// Rows copied where the mappings allow it — all of them, or (mixed) some, the object path doing
  /// the rest after them — else object by object. Returns how the step ran.
  private func moveObjects(
    from current: URL, withLocks locks: Bool, schema: StoreSchema, into destination: SQLiteStore,
    manager: MigrationManager,
    progress stepProgress: @escaping (MigrationProgress) -> Void
  ) throws -> StepMethod {
    let mapping = manager.mapping
    let bulk =
      options.bulkCopy
      ? try BulkCopy.decide(
        mapping: mapping, sourceSchema: schema, policies: manager.policies, manager: manager,
        mixed: options.mixed && mapping.passes.isEmpty
      ).copy
      : nil
    if let bulk, bulk.objectMappings.isEmpty {
      try bulk.run(
        from: current, isHeld: locks, readWait: options.wait, into: destination, progress: stepProgress)
      try manager.validate()
      return .copyRows
    } else if let bulk {
      try bulk.run(
        from: current, isHeld: locks, readWait: options.wait, into: destination, progress: stepProgress)
      manager.copiedMappings = mapping.entityMappings.filter { mapping in
        bulk.copies.contains { $0.mapping.name == mapping.name }
      }
      try manager.migrate()
      return .mixed
    }
    try destination.createIndexes()
    try manager.migrate()
    return .objects
  }

  /// How `step` runs with `stepMapping` (ahead of running it, as `migrun plan` shows): DDL where the
  /// step's edits allow it, else rows copied, else object by object — with the reason it is not
  /// DDL. `store` is the step's source store when it is the store itself (the first step); later
  /// steps read a store migrun wrote, laid out as a new store of their source version.
  package static func method(
    of step: MigrationStep, mapping stepMapping: StepMapping, store: SQLiteStore?, options: Options = Options()
  ) throws -> (method: StepMethod, reason: String?) {
    let reason: String
    switch try ddlDecision(stepMapping, store: store, options: options) {
    case .ddl: return (.ddl, nil)
    case .copyRows(let why): reason = why
    }
    // (Policies that only compute attributes run as a row loop: that is known once their script runs.)
    let schema = store?.schema ?? StoreSchema(model: step.source)
    guard options.bulkCopy else { return (.objects, reason) }
    switch try BulkCopy.decide(
      mapping: stepMapping.mapping, sourceSchema: schema, policies: stepMapping.policies,
      // Rows first, objects after would run a later pass's copies before an earlier pass's hooks.
      mixed: options.mixed && stepMapping.mapping.passes.isEmpty)
    {
    case .rows(let bulk): return (bulk.objectMappings.isEmpty ? .copyRows : .mixed, reason)
    case .objects(let why): return (.objects, why == reason ? reason : "\(reason); not rows: \(why)")
    }
  }

  /// Whether a step runs as DDL, or why not — the one decision `run()` and `method(of:…)` share.
  /// `store` nil: a store migrun wrote (see ``DDLStep/decide(mapping:)``).
  static func ddlDecision(_ stepMapping: StepMapping, store: SQLiteStore?, options: Options) throws
    -> DDLStep.Decision
  {
    guard options.ddl else { return .copyRows("DDL is turned off") }
    guard stepMapping.policies.isEmpty else {
      return .copyRows("Lua policies run per object, or per row where they only compute attributes")
    }
    guard let store else { return DDLStep.decide(mapping: stepMapping.mapping) }
    return try DDLStep.decide(mapping: stepMapping.mapping, store: store)
  }

  /// A DDL step on `working` (migrun's own copy): the edit, then the destination's rules checked as
  /// after any other step.
  private func runDDL(
    _ edit: DDLStep, on working: URL, step: MigrationStep, metadata: StoreMetadata, dropping foreign: ForeignObjects,
    externalData: ExternalData, conserving: (mapping: MappingModel, before: Conservation.Before),
    progress: @escaping (MigrationProgress) -> Void
  ) throws -> Report.Step {
    let history = try edit.run(
      on: working, metadata: metadata.describing(step.destination), progress: progress,
      whileEditing: options.probe?.stepEditing)
    let destination = try SQLiteStore(url: working, model: step.destination, access: .readWrite, fastWrites: true)
    destination.externalData = externalData
    defer { try? destination.close() }
    if !options.drop.isEmpty {
      try destination.editing { store in try foreign.drop(store, options.drop) }
    }
    try MigrationManager.checkRules(of: destination)
    progress(
      MigrationProgress(step: step.name, stage: .validation, mapping: "model rules", done: 1, total: 1))
    try options.probe?.stepWritten(destination, by: .ddl)
    let carriedFiles = try destination.checkExternalReferences()
    // The objects conservation established (the tables the edit did not touch hold what their
    // source counted) are the report's: not counted again.
    let conserved = try Conservation.check(
      conserving.mapping, before: conserving.before, destination: destination, policies: [], merged: 0, inPlace: true,
      untouched: edit.untouchedTables)
    var done = Report.Step(
      name: step.name, kind: step.kind, counts: try destination.entityCounts(known: conserved.objects), method: .ddl)
    done.history = history
    done.mappings = conserved.mappings
    done.damage = try Conservation.damage(
      conserving.mapping, before: conserving.before, destination: destination, carriedFiles: carriedFiles,
      inPlace: true)
    return done
  }

  /// After a successful swap: the files the original referred to that the migrated store no longer
  /// does (values removed or rewritten inline) are removed; the backup keeps its own links to them.
  static func removeExternalFiles(of store: URL, model: ObjectModel, noLongerReferencedOf before: Set<String>) throws
    -> Int
  {
    let migrated = try SQLiteStore(url: store, model: model, access: .readOnly)
    defer { try? migrated.close() }
    return try migrated.removeExternalFiles(noLongerReferencedOf: before)
  }

  /// A full disk, known from the error's codes (SQLite's, the system's), not from its words.
  static func isDiskFull(_ error: any Error) -> Bool { StoreFailure.isDiskFull(error) }

  private func withSpaceReported(_ body: () throws -> Void) throws {
    do {
      try body()
    } catch let error where Self.isDiskFull(error) {
      throw outOfSpace(during: "the snapshot of the store")
    }
  }

  /// The error for a file system that filled up although the first check passed (another writer,
  /// or a step that grew the data beyond the estimate).
  private func outOfSpace(during what: String) -> StoreError {
    let needed = Self.estimatedWorkingBytes(store: store, steps: plan.steps.count)
    return StoreError(
      .noSpace, file: store.path,
      reason: "the file system filled up during \(what) (~\(StoreFiles.formatBytes(needed)) was estimated); "
        + "the working files are removed and the store is unchanged")
  }

  private func mapping(for step: MigrationStep) throws -> StepMapping {
    switch step.kind {
    case .inferred:
      guard let mapping = step.inferredMapping else {
        throw MigrationError(.notInferable, step: step.name, reason: "no inferred mapping")
      }
      return StepMapping(mapping: mapping, policies: policies?(step) ?? [:])
    case .scripted(let files):
      guard let scripts else {
        let names = files.map(\.lastPathComponent).joined(separator: ", ")
        throw MigrationError(.badMapping, step: step.name, reason: "\(names) needs the Lua policy runtime")
      }
      return try scripts.mapping(for: step, files: files)
    }
  }

  /// A working copy's name beside the store; an entry already there (a dry run removes no earlier
  /// run's files; a link planted under the name) is refused by name, never written through.
  private func scratch(_ label: String) throws -> URL {
    let url = WorkingFiles.scratch(of: store, label: label)
    for suffix in [""] + StoreFiles.sidecarSuffixes + ["-journal"] {
      try WorkingFiles.requireAbsentOr(
        .none, at: URL(fileURLWithPath: url.path + suffix), beside: store, as: "working copy")
    }
    return url
  }
}

/// How a step ran (``StoreMigrator/Report/Step/method``).
public enum StepMethod: String, Sendable, Hashable, CaseIterable {
  /// DDL on a copy of the store: no row copied (`DDLStep`).
  case ddl = "DDL"
  /// Rows copied by `INSERT … SELECT` (or a row loop through a Lua transform) (`BulkCopy`).
  case copyRows = "copy rows"
  /// Object by object, with the policies' hooks.
  case objects = "object by object"
  /// The entity mappings that can be copied as rows are, the others run object by object after them.
  case mixed = "rows, then objects"
}

/// What one step runs: its mapping model, the policies of its entity mappings and its merge rules
/// (a Lua mapping file gives all three).
package struct StepMapping {
  package var mapping: MappingModel
  package var policies: [String: any EntityMigrationPolicy]
  package var mergeRules: [any MigrationMergeRule]
  /// The entity mappings the script did not name, filled in by inference (a Lua mapping file's
  /// unmentioned entities): left out when the step runs several scripts in passes, where each maps
  /// only what it names (``MappingPass``).
  package var filledIn: Set<String> = []

  package init(
    mapping: MappingModel, policies: [String: any EntityMigrationPolicy] = [:],
    mergeRules: [any MigrationMergeRule] = []
  ) {
    self.mapping = mapping
    self.policies = policies
    self.mergeRules = mergeRules
  }
}
