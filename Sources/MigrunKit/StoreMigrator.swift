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
    /// Keep the original as `NAME~.EXT` after the swap (``MigrationReport/backup``).
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
    /// schema does not allow (`MigrationPlan.cloudKitFindings`); refused otherwise.
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

  /// What a migration did (``MigrationReport``): the name the library has always used.
  public typealias Report = MigrationReport

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

  /// Runs the plan, as one migration session (`MigrationSession`) from start to end: the store's
  /// migration lock taken, an interrupted swap of an earlier run completed, its working files
  /// removed, the store checked not to be in use (waiting up to ``Options/wait``) and the free space
  /// checked, before any work. The store's files are only ever read; a store whose `-wal` has
  /// content is read through a snapshot.
  public func run() throws -> Report {
    let session = try MigrationSession(store, options: options)
    defer { session.close() }
    session.plan = plan
    session.scripts = scripts
    session.policies = policies
    session.progress = progress
    session.willStart = willStart.map { willStart in { _ in willStart() } }
    return try session.run()
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

  /// A full disk, known from the error's codes (SQLite's, the system's), not from its words.
  static func isDiskFull(_ error: any Error) -> Bool { StoreFailure.isDiskFull(error) }
}
