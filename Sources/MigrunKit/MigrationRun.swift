import Foundation
import MigrunContext
import MigrunModel
import MigrunStore

/// The work of one migration session (``MigrationSession/run()``): each step writes a new file
/// beside the store; the original is untouched until the last step is complete and validated, then
/// swapped in atomically (the original kept as `NAME~.EXT` unless told otherwise). Any failure
/// removes the working files and leaves the original exactly as it was. Each step is a ``StepRun``;
/// its custom stage around it is in `MigrationRun+Stage.swift`.
struct MigrationRun {
  let store: URL
  let plan: MigrationPlan
  let options: StoreMigrator.Options
  /// The session's look at the store: the first step reads the store through it.
  let session: StoreSession
  var scripts: (any StepScripts)?
  var policies: ((MigrationStep) -> [String: any EntityMigrationPolicy])?
  var progress: ((MigrationProgress) -> Void)?
  var willStart: () -> Void = {}

  init(store: URL, plan: MigrationPlan, options: StoreMigrator.Options, session: StoreSession) {
    self.store = store
    self.plan = plan
    self.options = options
    self.session = session
  }

  /// What a run carries from step to step.
  struct State {
    var report = StoreMigrator.Report()
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
  }

  /// Runs the plan: the store found free and its space checked, the steps run beside SQLite's own
  /// check of the file read, then the result swapped in. The store's files are only ever read; a
  /// store whose `-wal` has content is read through a snapshot.
  func run() throws -> StoreMigrator.Report {
    try checkReady()
    willStart()
    let filesBefore = StoreFiles.State(of: store)
    let walMode = session.walMode
    try checkSpace()
    var state = State(current: store, externalData: ExternalData(store: store))
    defer { for file in state.created { StoreFiles.remove(file) } }
    try makeWorkingFiles(&state)
    // SQLite's own check of the file, beside the steps: a damaged page is the user's store's
    // damage, named as such, and decided before the original is touched (IntegrityWatch).
    var syncing: BackgroundWork?
    try IntegrityWatch(
      checking: state.current, for: store, withLocks: readsWithLocks(state.current), readWait: session.readWait
    ).judging {
      try runSteps(&state)
      // The result is made durable while the check takes its last pages: its verdict still comes
      // before the swap, which waits for both.
      if state.current != store, !options.dryRun {
        syncing = try swapping { try prepareSwap(state.current, walMode: walMode) }
      }
    }
    guard state.current != store, !options.dryRun else { return state.report }
    state.report.backup = try swapIn(&state, expecting: filesBefore, syncing: syncing)
    // Cleaning is after the fact: a file left behind (this failing) is only space, never a value.
    if !state.referencedBefore.isEmpty, let last = plan.steps.last {
      state.report.externalFilesRemoved =
        (try? Self.removeExternalFiles(
          of: store, model: last.destination, noLongerReferencedOf: state.referencedBefore)) ?? 0
    }
    return state.report
  }

  /// The store found free (waiting up to ``StoreMigrator/Options/wait``), with no crashed writer's
  /// journal beside it (it would be left beside the migrated store and rolled back into it).
  private func checkReady() throws {
    guard session.url == store else {
      throw MigrationError(.store, reason: "internal: the session is of \(session.url.path), not \(store.path)")
    }
    try session.free(wait: options.wait)
    if RollbackJournal.isHot(store) {
      throw StoreError(
        .io, file: store.path,
        reason: "a hot journal (\(store.lastPathComponent)-journal) is beside it: a writer crashed part way through "
          + "a transaction, which SQLite rolls back when the store is next opened; open it once (its app, or "
          + "`sqlite3 STORE 'PRAGMA quick_check'`), then migrate again")
    }
  }

  /// Refuses, before any work, when the store's file system has less free space than
  /// ``StoreMigrator/estimatedWorkingBytes(store:steps:)``.
  private func checkSpace() throws {
    let needed = StoreMigrator.estimatedWorkingBytes(store: store, steps: plan.steps.count)
    guard let free = StoreFiles.freeBytes(in: store.deletingLastPathComponent()), free < needed else { return }
    throw StoreError(
      .noSpace, file: store.path,
      reason: "not enough free space: the migration needs ~\(StoreFiles.formatBytes(needed)) beside the store "
        + "for its working copies, \(StoreFiles.formatBytes(free)) free; nothing was done")
  }

  /// The folder the steps' external files wait in, and a snapshot of the store when its `-wal` has
  /// content (the steps then read the snapshot).
  private func makeWorkingFiles(_ state: inout State) throws {
    let staging = try scratch("external")
    state.created.append(staging)
    state.externalData.staging = staging
    if StoreFiles.hasWALContent(store) {
      let snapshot = try scratch("source")
      state.created.append(snapshot)
      try withSpaceReported { try StoreFiles.snapshot(store, to: snapshot) }
      state.current = snapshot
    }
  }

  /// Every step in order, each reading the last one's result; a step's failure said as the step's.
  private func runSteps(_ state: inout State) throws {
    for (index, step) in plan.steps.enumerated() {
      let working = try scratch("step\(index + 1)")
      let associations = try scratch("assoc\(index + 1)")
      state.created += [working, associations]
      let result: URL
      do {
        result = try runStaged(index, step, into: working, associations: associations, state: &state)
      } catch {
        throw failure(error, in: step)
      }
      if state.current != store, state.current != result { StoreFiles.remove(state.current) }
      state.current = result
    }
  }

  /// A step's error as the migration says it: a full disk as such, the step named in the others.
  private func failure(_ error: any Error, in step: MigrationStep) -> any Error {
    if StoreMigrator.isDiskFull(error) { return outOfSpace(during: "step \(step.name)") }
    if let error = error as? MigrationError { return error.inStep(step.name) }
    if let error = error as? StoreError {
      return MigrationError(.store, step: step.name, reason: error.description, underlying: error)
    }
    return MigrationError(.ofPolicy(error), step: step.name, reason: "\(error)", underlying: error)
  }

  /// The migrated file put in the store's place, once it and the copies' early fsyncs are on the
  /// disk: the files of values the steps kept outside the store placed first (removed again if the
  /// swap fails). Returns the backup.
  private func swapIn(_ state: inout State, expecting filesBefore: StoreFiles.State, syncing: BackgroundWork?)
    throws -> URL?
  {
    let (current, externalData, flushing) = (state.current, state.externalData, state.flushing)
    return try swapping {
      for flush in flushing { try flush.wait() }
      try syncing?.wait()
      let staged = try filesReferenced(by: current, staged: externalData)
      var placed: [URL] = []
      do {
        return try StoreFiles.replace(store, with: current, keepBackup: options.keepBackup, expecting: filesBefore) {
          placed = try externalData.placeStagedFiles(referencedBy: staged)
        }
      } catch {
        for file in placed { unlink(file.path) }
        throw error
      }
    }
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
    } catch let error as StoreError where StoreMigrator.isDiskFull(error) {
      throw outOfSpace(during: "the swap")
    } catch {
      throw MigrationError(
        .store, reason: "the migrated store is complete but could not be put in place: \(error)", underlying: error)
    }
  }

  /// After a successful swap: the files the original referred to that the migrated store no longer
  /// does (values removed or rewritten inline) are removed; the backup keeps its own links to them.
  private static func removeExternalFiles(of store: URL, model: ObjectModel, noLongerReferencedOf before: Set<String>)
    throws
    -> Int
  {
    let migrated = try SQLiteStore(url: store, model: model, access: .readOnly)
    defer { try? migrated.close() }
    return try migrated.removeExternalFiles(noLongerReferencedOf: before)
  }

  /// Whether a read that opens `file` now takes SQLite's locks (its `readOnlyPath`'s `isHeld`): the
  /// store in rollback-journal mode, always — an app may have opened it since the session found it
  /// free, which no change of its files shows, and SQLite's locks answer that at every read (no look
  /// of migrun's, no open more); a WAL store is read with its `-shm`, there whenever a process has
  /// it open, else as immutable (a read-only connection would make one beside it). Migrun's own
  /// files (a snapshot, a step's result) no other process holds.
  func readsWithLocks(_ file: URL) -> Bool { file == store && !session.walMode }

  /// The snapshot's disk filling up said as such.
  func withSpaceReported(_ body: () throws -> Void) throws {
    do {
      try body()
    } catch let error where StoreMigrator.isDiskFull(error) {
      throw outOfSpace(during: "the snapshot of the store")
    }
  }

  /// The error for a file system that filled up although the first check passed (another writer,
  /// or a step that grew the data beyond the estimate).
  private func outOfSpace(during what: String) -> StoreError {
    let needed = StoreMigrator.estimatedWorkingBytes(store: store, steps: plan.steps.count)
    return StoreError(
      .noSpace, file: store.path,
      reason: "the file system filled up during \(what) (~\(StoreFiles.formatBytes(needed)) was estimated); "
        + "the working files are removed and the store is unchanged")
  }

  /// A working copy's name beside the store; an entry already there (a dry run removes no earlier
  /// run's files; a link planted under the name) is refused by name, never written through.
  func scratch(_ label: String) throws -> URL {
    let url = WorkingFiles.scratch(of: store, label: label)
    for suffix in [""] + StoreFiles.sideFileSuffixes {
      try WorkingFiles.requireAbsentOr(
        .none, at: URL(fileURLWithPath: url.path + suffix), beside: store, as: "working copy")
    }
    return url
  }
}
