import Foundation
import MigrunStore

/// One migration of one store, from the moment migrun takes the store to the moment it lets go:
/// the one place a migration is put together. Every migration goes through it — `StoreMigrator`'s
/// ``StoreMigrator/run()``, MigrunScripting's `MigrationScripts.migrate`, the command line's
/// migration jobs and fleets, `verify` and `migrun test` (through `MigrationScripts`).
///
/// Made, it holds the store: the existence checked, the store's migration lock taken (another
/// migrun's working files are not stale: its lock comes first), a swap an earlier run left half done
/// completed and its working files removed, the store's sidecars checked — and one look at the store
/// (``look``) that the plan and the run both read. Then its ``plan`` is set, made from that look, and
/// ``run()`` runs it; ``close()`` (or the end of the value) lets the store go.
///
/// ```swift
/// let session = try MigrationSession(store, options: options)
/// defer { session.close() }
/// session.scripts = lua
/// session.plan = try planner.plan(session: session.look, …)
/// let report = try session.run()
/// ```
package final class MigrationSession {
  package let store: URL
  package let options: StoreMigrator.Options
  /// The one look at the store (its journal mode, its metadata, its connection) the plan and the run share.
  package let look: StoreSession
  /// The plan the run runs: made by the caller from ``look`` (the scripting layer's planner, or Core
  /// Data's inferred path) — a value handed down, as everything the core needs from above — or made
  /// before the store was taken (``StoreMigrator/init(store:plan:options:)``).
  package var plan: MigrationPlan?
  /// What the run asks of the layer that knows scripts (its files read once, for the plan and the run).
  package var scripts: (any StepScripts)?
  /// Swift policies for a step's entity mappings (``StoreMigrator/policies``).
  package var policies: ((MigrationStep) -> [String: any EntityMigrationPolicy])?
  /// Told of each step's progress.
  package var progress: ((MigrationProgress) -> Void)?
  /// Told once the store is the migration's — locked, free of other processes — before any work.
  package var willStart: ((MigrationPlan) -> Void)?
  private var lock: MigrationLock?

  /// Takes `store` for one migration (see the type's description); `swapCompleted` is told when an
  /// interrupted swap was completed. A dry run completes nothing: a pending swap is refused.
  package init(_ store: URL, options: StoreMigrator.Options, swapCompleted: () -> Void = {}) throws {
    guard FileManager.default.fileExists(atPath: store.path) else {
      throw StoreError(.notFound, file: store.path, reason: "no such file")
    }
    let lock = try MigrationLock(store: store, wait: options.wait)
    do {
      look = try Self.prepare(store, options: options, swapCompleted: swapCompleted)
    } catch {
      lock.release()
      throw error
    }
    self.lock = lock
    self.store = store
    self.options = options
  }

  deinit { close() }

  /// Lets the store go: the look's connection closed, the migration lock released.
  package func close() {
    look.close()
    lock?.release()
    lock = nil
  }

  /// Runs the plan: first the store is found free (waiting up to ``StoreMigrator/Options/wait``),
  /// then every step on working files beside it, checked, and swapped in (``MigrationRun``). A plan
  /// with no steps runs nothing: a store already current is reported so even while its app has it open.
  package func run() throws -> StoreMigrator.Report {
    guard let plan else {
      throw MigrationError(.store, reason: "internal: a migration of \(store.path) was run before it was planned")
    }
    guard plan.needsMigration else { return StoreMigrator.Report() }
    var run = MigrationRun(store: store, plan: plan, options: options, session: look)
    run.scripts = scripts
    run.policies = policies
    run.progress = progress
    run.willStart = { [willStart] in willStart?(plan) }
    return try run.run()
  }

  /// What a migration does first, holding the store's migration lock: an interrupted swap of an
  /// earlier run completed (`swapCompleted` told; a dry run refuses a pending one) and its working
  /// files removed, its sidecars checked (``StoreFiles/checkSidecars(of:)``). Returns the one look
  /// at the store the plan and the run share.
  private static func prepare(_ store: URL, options: StoreMigrator.Options, swapCompleted: () -> Void) throws
    -> StoreSession
  {
    if options.dryRun {
      _ = try StoreMigrator.completeInterruptedSwap(of: store, dryRun: true)
    } else {
      if try StoreFiles.completeInterruptedSwap(of: store) { swapCompleted() }
      for stale in StoreMigrator.staleFiles(beside: store) { try? FileManager.default.removeItem(at: stale) }
    }
    // A -wal, -shm or -journal that is a link, a folder or a FIFO: refused before anything reads it.
    try StoreFiles.checkSidecars(of: store)
    return StoreSession(store, readWait: options.wait)
  }
}
