import Foundation
import GRDB
import MigrunModel

/// One job's reading of one store: what it asks of the store before working on it — its type, who
/// holds it and its journal mode (one look at its files, ``StoreUse/probe(_:)``), its metadata, its
/// tables and the model it carries (one read-only connection) — read once, as a value the job
/// hands down to whatever reads the store next (the planner, the migrator, the checks) instead of
/// each asking the file again. A `migrate` makes it once it holds the store's migration lock and
/// the store is free (``free(wait:)``).
///
/// What it read holds while the store's files stay as they were: the main file's, the `-wal`'s and
/// the `-journal`'s identity, size and times (a `stat`, not an open: a writer that starts, or
/// crashes leaving a hot journal, during the job is noticed, and the store is read again).
///
/// Not shared between threads: one job, one store.
package final class StoreSession {
  package let url: URL
  /// How long a read of the store waits for another process's write lock, in seconds (`--wait`;
  /// 0: the in-use answer at once).
  package let readWait: Double
  private var stamp: StoreFiles.State
  private var probed: StoreUse.Probe?
  private var metadataRead: StoreMetadata?
  private var tablesRead: [String: [String]]?
  /// `.some(nil)`: the store has no model cache; nil: not read yet.
  private var cachedModelRead: ObjectModel??
  /// The read-only connection the reads went through, until a ``SQLiteStore`` takes it (immutable
  /// connections only: they hold no lock).
  private var connection: DatabaseQueue?

  package init(_ url: URL, readWait: Double = 0) {
    self.url = url
    self.readWait = readWait
    stamp = Self.stamp(url)
  }

  deinit { close() }

  /// Closes the connection the session holds, if no store took it.
  package func close() {
    try? connection?.close()
    connection = nil
  }

  /// Who holds the store and its first bytes, looked at once (again when its files changed).
  package var probe: StoreUse.Probe {
    current()
    if let probed { return probed }
    let found = StoreUse.probe(url)
    probed = found
    return found
  }

  /// The store's type, told by its first bytes; nil when it is none (or cannot be read).
  package var type: StoreType? { probe.type }
  /// Whether another process holds the store (``StoreUse/holder(of:)``).
  package var isHeld: Bool { probe.holder != nil }
  /// Whether the store's header says WAL mode.
  package var walMode: Bool { probe.walMode }

  /// Returns when no other process holds the store, waiting up to `wait` seconds (else
  /// ``StoreError/Code/inUse``): the session's look is the one that found it free.
  package func free(wait: Double) throws {
    let found = try StoreUse.free(url, wait: wait, first: probe)
    probed = found
  }

  /// The store's metadata (``SQLiteStore/metadata(at:)``).
  package func metadata() throws -> StoreMetadata {
    current()
    if let metadataRead { return metadataRead }
    try read()
    guard let metadataRead else { throw StoreError(.sqlite, file: url.path, reason: "internal: no metadata read") }
    return metadataRead
  }

  /// Every table's columns, by table name.
  package func tables() throws -> [String: [String]] {
    current()
    if let tablesRead { return tablesRead }
    let queue = try open()
    defer { release(queue) }
    let tables = try SQLiteStore.readTables(queue, file: url.path)
    tablesRead = tables
    return tables
  }

  /// The names of the store's tables.
  package func tableNames() throws -> Set<String> { Set(try tables().keys) }

  /// The model the store carries in `Z_MODELCACHE`, or `nil` when it has none.
  package func cachedModel() throws -> ObjectModel? {
    current()
    if let cachedModelRead { return cachedModelRead }
    let queue = try open()
    defer { release(queue) }
    let model = try SQLiteStore.readCachedModel(queue, file: url.path)
    cachedModelRead = .some(model)
    return model
  }

  /// Whether the session holds a connection to the store (one no store took yet).
  package var holdsConnection: Bool { connection != nil }

  /// The model cache when the session read it already (`.some(nil)`: the store has none).
  var cachedModelIfRead: ObjectModel?? {
    current()
    return cachedModelRead
  }

  /// The connection the session read through, taken: the caller closes it. Nil when there is none
  /// or the store's files changed since.
  func takeConnection() -> DatabaseQueue? {
    current()
    defer { connection = nil }
    return connection
  }

  /// `body` on the session's connection, opened if need be (and kept when it can be).
  package func withConnection<T>(_ body: (DatabaseQueue) throws -> T) throws -> T {
    let queue = try open()
    defer { release(queue) }
    return try body(queue)
  }

  // MARK: - Non public

  /// The metadata and the tables, read in one open.
  private func read() throws {
    let queue = try open()
    defer { release(queue) }
    metadataRead = try SQLiteStore.readMetadata(queue, file: url.path)
    // A store whose tables cannot be listed still answers for its metadata (the tables' own error
    // comes from tables(), which reads again).
    tablesRead = try? SQLiteStore.readTables(queue, file: url.path)
  }

  /// The session's connection, or a new one (kept when immutable: it holds no lock).
  private func open() throws -> DatabaseQueue {
    current()
    if let connection { return connection }
    let (queue, immutable) = try SQLiteStore.openConnection(url, access: .readOnly, session: self)
    if immutable { connection = queue }
    return queue
  }

  /// Closes `queue` unless the session keeps it.
  private func release(_ queue: DatabaseQueue) {
    if queue !== connection { try? queue.close() }
  }

  /// Forgets what was read when the store's files changed since it was read.
  private func current() {
    let now = Self.stamp(url)
    guard now != stamp else { return }
    stamp = now
    probed = nil
    metadataRead = nil
    tablesRead = nil
    cachedModelRead = nil
    close()
  }

  /// The session's look at the store's files: the main file, its `-wal` and its `-journal`, with
  /// their change times (``StoreFiles/State``).
  private static func stamp(_ url: URL) -> StoreFiles.State {
    StoreFiles.State(of: url, sideFiles: ["-wal", "-journal"], changeTimes: true)
  }
}
