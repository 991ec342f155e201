import Foundation
import MigrunStore

/// SQLite's integrity check of a migration's input, run beside the migration instead of before it:
/// the file is read-only until the swap, so the check can take its whole read pass while the steps
/// run (a store the size of the durable copy costs ~a third of that copy to check), and its verdict
/// is taken before the original is touched — or at once, when a step fails, to tell a damaged
/// store from a failed step. The file is opened here, before the steps can remove a snapshot.
final class IntegrityWatch: @unchecked Sendable {
  private let store: URL
  private let lock = NSLock()
  private let finished = DispatchSemaphore(value: 0)
  private var outcome: Result<[String], any Error> = .success([])

  /// `file`: the store, or migrun's own copy of it; `withLocks`: read with SQLite's locks (the
  /// store itself in rollback-journal mode, which an app may open after it was found free), else
  /// as a file no other process holds.
  init(checking file: URL, for store: URL, withLocks: Bool, readWait: Double = 0) throws {
    self.store = store
    let opened: StoreCheck.OpenedFile
    do {
      opened = try StoreCheck.openForCheck(file, isHeld: withLocks, readWait: readWait)
    } catch {
      throw MigrationError(
        .store, reason: "\(store.path): cannot be read as a SQLite database (\(error))", underlying: error)
    }
    Thread.detachNewThread { [self] in
      let result = Result { try opened.problems() }
      lock.withLock { outcome = result }
      finished.signal()
    }
  }

  /// Runs `body` (the migration's steps) while the check runs, then takes the check's verdict —
  /// also when `body` fails: a step that failed on a damaged file reports the damage.
  func judging<T>(_ body: () throws -> T) throws -> T {
    let result: T
    do {
      result = try body()
    } catch {
      try verdict()
      throw error
    }
    try verdict()
    return result
  }

  /// Waits for the check; throws naming the user's store when it found damage.
  private func verdict() throws {
    finished.wait()
    finished.signal()  // later calls return at once
    let result = lock.withLock { outcome }
    let problems: [String]
    switch result {
    case .success(let found): problems = found
    case .failure(let error): problems = ["\(error)"]
    }
    guard problems.isEmpty else {
      throw MigrationError(
        .store,
        reason:
          "\(store.path) is damaged — SQLite's integrity check: \(problems.prefix(3).joined(separator: "; ")); nothing was written (`migrun check` lists what it finds; migrate a backup)"
      )
    }
  }
}

/// Work on a thread of its own (a file copy beside CPU-bound counting), waited for once.
final class BackgroundWork: @unchecked Sendable {
  private let lock = NSLock()
  private let finished = DispatchSemaphore(value: 0)
  private var failure: (any Error)?
  private var waited = false

  init(_ work: @escaping @Sendable () throws -> Void) {
    Thread.detachNewThread { [self] in
      do { try work() } catch { lock.withLock { failure = error } }
      finished.signal()
    }
  }

  /// Waits for the work (once; later calls return at once) and rethrows its error.
  func wait() throws {
    let first = lock.withLock {
      defer { waited = true }
      return !waited
    }
    if first { finished.wait() }
    if let failure = lock.withLock({ failure }) { throw failure }
  }
}

/// The store copied on a thread of its own, its pages handed to the disk as they are copied and the
/// copy's fsync started there the moment it is whole: they go to the disk while the step still reads
/// the source, not from when the step first needs the copy.
final class StoreCopy: @unchecked Sendable {
  private let lock = NSLock()
  private var flushing: BackgroundWork?
  private var copying: BackgroundWork?

  init(_ source: URL, to copy: URL) {
    copying = BackgroundWork { [self] in
      try StoreFiles.cloneOrCopy(source, to: copy, writingBack: true)
      let sync = try StoreFiles.syncLater(copy)
      lock.withLock { flushing = BackgroundWork { try sync() } }
    }
  }

  /// Waits for the copy (its fsync may still run) and rethrows its error.
  func wait() throws { try lock.withLock { copying }?.wait() }

  /// The copy's fsync, once the copy is whole (``wait()`` first): the swap waits for it.
  var flush: BackgroundWork? { lock.withLock { flushing } }
}
