import Foundation
import GRDB
import MigrunModel

#if canImport(Glibc)
  import Glibc
#endif

/// What a command reads of a store before it works on it — the metadata, the tables, the model it
/// carries — read once per store per command instead of once per question (a `status` asked the
/// file four times: which configuration, which tables, which version, which hashes).
///
/// Only inside ``during(_:)`` (the command line runs each command in it); elsewhere every read goes
/// to the file, as a library user expects. An entry holds while the store's files stay as they were:
/// the main file's, the `-wal`'s and the `-journal`'s identity, size and times (a `stat`, not an open:
/// a writer that starts, or crashes leaving a hot journal, during a command is noticed). A write by this
/// process through ``SQLiteStore`` forgets everything, whatever the clock's granularity.
package enum StoreLooks {
  /// What one open of a store read.
  package struct Look: Sendable {
    package var metadata: StoreMetadata?
    package var tables: [String: [String]]?
    /// `.some(nil)`: the store has no model cache; nil: not read yet.
    package var cachedModel: ObjectModel??
    /// Whether another process held the store when it was first read (``StoreUse/holder(of:)``),
    /// which decides how it is opened for reading, and whether its header says WAL mode. `migrate`
    /// asks ``StoreUse`` itself again before it works.
    package var probe: (isHeld: Bool, walMode: Bool)?
    /// The read-only connection the look was read through, until a ``SQLiteStore`` takes it.
    var connection: DatabaseQueue?
  }

  /// Guarded by `lock`; GRDB's queues are themselves safe to share.
  private final class State: @unchecked Sendable {
    let lock = NSLock()
    var depth = 0
    var looks: [String: (stamp: [Int64], look: Look)] = [:]
  }

  private static let state = State()

  /// Runs `body` with looks kept between reads.
  package static func during<T>(_ body: () throws -> T) rethrows -> T {
    state.lock.withLock { state.depth += 1 }
    defer {
      let left = state.lock.withLock { () -> [DatabaseQueue] in
        state.depth -= 1
        guard state.depth == 0 else { return [] }
        defer { state.looks = [:] }
        return state.looks.values.compactMap(\.look.connection)
      }
      for connection in left { try? connection.close() }
    }
    return try body()
  }

  /// The look of `url` so far (empty outside ``during(_:)`` or when the files changed).
  static func look(_ url: URL) -> Look {
    let stamp = stamp(url)
    return state.lock.withLock {
      guard state.depth > 0, let entry = state.looks[url.path], entry.stamp == stamp else { return Look() }
      return entry.look
    }
  }

  /// Keeps what was read of `url`, added to what its look held.
  static func keep(_ url: URL, _ update: (inout Look) -> Void) {
    let stamp = stamp(url)
    state.lock.withLock {
      guard state.depth > 0 else { return }
      var look = state.looks[url.path].flatMap { $0.stamp == stamp ? $0.look : nil } ?? Look()
      update(&look)
      state.looks[url.path] = (stamp, look)
    }
  }

  /// Whether another process holds the store and whether it is in WAL mode, asked once per look.
  static func probe(_ url: URL) -> (isHeld: Bool, walMode: Bool) {
    if let probe = look(url).probe { return probe }
    let found = StoreUse.probe(url)
    let probe = (isHeld: found.holder != nil, walMode: found.walMode)
    keep(url) { $0.probe = probe }
    return probe
  }

  /// The look's open connection, for a read that needs one (it stays the look's).
  static func connection(_ url: URL) -> DatabaseQueue? { look(url).connection }

  /// The look's open connection, taken: the caller closes it.
  static func takeConnection(_ url: URL) -> DatabaseQueue? {
    let stamp = stamp(url)
    return state.lock.withLock {
      guard state.depth > 0, var entry = state.looks[url.path], entry.stamp == stamp else { return nil }
      defer {
        entry.look.connection = nil
        state.looks[url.path] = entry
      }
      return entry.look.connection
    }
  }

  /// Forgets the look of `url`: this process is about to write it.
  static func forget(_ url: URL) {
    let connection = state.lock.withLock { state.looks.removeValue(forKey: url.path)?.look.connection }
    try? connection?.close()
  }

  private static func stamp(_ url: URL) -> [Int64] {
    [url.path, url.path + "-wal", url.path + "-journal"].flatMap { path -> [Int64] in
      var info = stat()
      guard stat(path, &info) == 0 else { return [-1] }
      return [
        Int64(info.st_dev), Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec),
        Int64(info.st_mtim.tv_nsec), Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec),
      ]
    }
  }
}
