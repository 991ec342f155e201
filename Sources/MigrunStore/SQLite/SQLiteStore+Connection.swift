import FileDoors
import Foundation
import GRDB

/// The store's connection: how it is configured and opened (read-only without changing a file, a copy
/// where only a copy can be read that way), writes outside a transaction, and their errors.
extension SQLiteStore {
  /// `readWait`: how long a read waits for another process's write lock (`--wait`), in seconds.
  package static func configuration(readOnly: Bool, fastWrites: Bool = false, readWait: Double = 0) -> Configuration {
    var configuration = Configuration()
    configuration.readonly = readOnly
    configuration.label = "migrun"
    // A reader meeting a writer's commit waits as long as it was told to (--wait), then is refused.
    // GRDB converts the timeout to SQLite's 32-bit milliseconds with a conversion that traps past them.
    if readOnly, readWait > 0 { configuration.busyMode = .timeout(min(readWait, maximumWait)) }
    if !readOnly {
      // Several processes may write one store: a write waits its turn (up to 30 s). GRDB begins
      // write transactions IMMEDIATE, so a read-then-write save cannot deadlock with another.
      configuration.busyMode = .timeout(defaultBusyTimeout)
    }
    configuration.prepareDatabase { db in
      // Core Data's derived-attribute triggers call these functions; writes to such stores need them.
      for name in [
        "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
      ] {
        db.add(function: DatabaseFunction(name, pure: false) { _ in nil })
      }
      DerivedAttributes.addFunctions(to: db)
      // Fetches test strings as predicates do through it.
      db.add(function: PredicateStringFunction.function)
      if fastWrites {
        try db.execute(sql: "PRAGMA journal_mode = OFF")
        try db.execute(sql: "PRAGMA synchronous = OFF")
        // migrun's own working file, which no other process opens: read through a memory map (a
        // scan of a large table reads its pages in place instead of copying each one).
        try db.execute(sql: "PRAGMA mmap_size = 2147483648")
      }
    }
    return configuration
  }

  static func openQueue(_ url: URL, access: Access, fastWrites: Bool = false) throws -> DatabaseQueue {
    try openConnection(url, access: access, fastWrites: fastWrites).queue
  }

  /// ``openQueue(_:access:fastWrites:)``, and whether the connection is immutable (reads the file
  /// as it is, with no locks: it needs no read transaction). `session`: the job's look at the store
  /// (whether another process holds it; how long a read waits).
  static func openConnection(_ url: URL, access: Access, fastWrites: Bool = false, session: StoreSession? = nil)
    throws -> (queue: DatabaseQueue, immutable: Bool)
  {
    try checkOpenable(url)
    var copy: URL?
    defer { if let copy { ScratchFolder.remove(copy.deletingLastPathComponent()) } }
    let path: String
    if access == .readWrite {
      path = url.path
    } else if let direct = readOnlyPath(url, isHeld: session?.isHeld) {
      path = direct
    } else {
      // Committed transactions in a -wal with no -shm, or a hot journal: SQLite cannot read them
      // without writing beside the store, so a copy is read instead. Once open, the copy is unlinked
      // (the connection keeps its file open; an immutable connection opens nothing else).
      let folder = try ScratchFolder.make("read")
      let target = folder.appendingPathComponent(url.lastPathComponent)
      copy = target
      if RollbackJournal.isHot(url) {
        try RollbackJournal.rolledBackCopy(of: url, to: target)
      } else {
        try StoreFiles.snapshot(url, to: target)
      }
      path = StoreFiles.immutableURI(target)
    }
    do {
      let queue = try DatabaseQueue(
        path: path,
        configuration: configuration(
          readOnly: access == .readOnly, fastWrites: fastWrites, readWait: session?.readWait ?? 0))
      _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
      let immutable = path.hasSuffix("immutable=1")
      if immutable {
        // A file no process writes while it is open here (SQLite takes no lock on it) is read
        // through a memory map: a migration's counts and scans of the source read every page, and
        // each page copied out by a read of its own was a system call — 80,000 at a million objects.
        try queue.inDatabase { db in try db.execute(sql: "PRAGMA mmap_size = 2147483648") }
      }
      return (queue, immutable)
    } catch {
      throw openFailure(error, url: url, waited: session?.readWait ?? 0)
    }
  }

  /// A store file is there (not a folder), its sidecars are plain files or absent
  /// (``StoreFiles/checkSidecars(of:)``), and no interrupted swap left the old file in its place.
  private static func checkOpenable(_ url: URL) throws {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
      throw StoreError(.notFound, file: url.path, reason: "no such file")
    }
    guard !isFolder.boolValue else {
      throw StoreError(.notSQLite, file: url.path, reason: StoreFiles.folderGivenAsStore(url))
    }
    // Through the door before SQLite opens it: a FIFO or a device would block SQLite's open.
    do {
      try InputFile.check(url, origin: .named)
    } catch let error as InputFileError {
      throw StoreError(.io, file: url.path, reason: error.reason, underlying: error)
    }
    // The names SQLite reads beside the store as its own: never an output of the command.
    ReadFiles.note(names: StoreFiles.sideFileSuffixes.map { url.path + $0 }, of: url.path)
    try StoreFiles.checkSidecars(of: url)
    // Between a crash and the next `migrate`, the main file is the old store without its -wal.
    if StoreFiles.pendingSwap(of: url) != nil {
      throw StoreError(
        .io, file: url.path,
        reason: "a migration was interrupted while putting the new store in place; "
          + "run `migrun migrate` on the store again to complete it")
    }
  }

  /// A URI that opens `url` for reading without ever changing any of its files, or `nil` when only a
  /// copy can be read that way (a `-wal` with content and no `-shm`, or a hot `-journal`, which
  /// SQLite would roll back first: ``RollbackJournal``):
  /// - with a `-shm`: read-only, sharing the `-shm` read-only (`readonly_shm`) — the WAL is read as
  ///   any reader would, with or without a live writer, and no byte of the three files is written;
  /// - held by another process (rollback journal): read-only with SQLite's locks, which write nothing;
  /// - else immutable: no locks, no side files.
  ///
  /// `isHeld`: whether another process holds the store, when the caller knows (its session's look,
  /// or its own file); nil: asked now (``StoreUse/holder(of:)``).
  package static func readOnlyPath(_ url: URL, isHeld: Bool? = nil) -> String? {
    let encoded = StoreFiles.encodedPath(url)
    if RollbackJournal.isHot(url) { return nil }
    if FileManager.default.fileExists(atPath: url.path + "-shm") {
      return "file:\(encoded)?mode=ro&readonly_shm=1"
    }
    if StoreFiles.hasWALContent(url) { return nil }
    return isHeld ?? (StoreUse.holder(of: url) != nil) ? "file:\(encoded)?mode=ro" : StoreFiles.immutableURI(url)
  }

  /// Commits stop waiting for the disk (`PRAGMA synchronous = OFF`), the journal kept (a failed
  /// transaction still rolls back): for migrun's own working files, which are fsynced once, whole,
  /// before they replace a store — a stage saving a batch at a time over a million objects would
  /// otherwise wait for a thousand fsyncs.
  package func deferSyncToTheEnd() throws {
    try withConnection { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
  }

  /// Runs `body` on the connection outside any transaction (for ATTACH, which needs that).

  package func withConnection<T>(_ body: (Database) throws -> T) throws -> T {
    try StoreAccesses.enter(self, file: url.lastPathComponent)
    defer { StoreAccesses.leave(self) }
    do {
      return try queue.writeWithoutTransaction(body)
    } catch {
      throw writeError(error)
    }
  }

  /// A write's failure as a store error naming this file (a unique-index violation as a constraint).
  func writeError(_ error: any Error) -> any Error {
    switch error {
    case let error as StoreError: error.inFile(url.lastPathComponent)
    case _ where StoreFailure.isInUse(error):
      StoreError(
        .inUse, file: url.lastPathComponent,
        reason: "the store is in use: another connection or process holds its write lock (still after waiting "
          + "\(busySeconds) s); nothing was written: save again once it lets go, or wait longer "
          + "(ObjectContext.busyTimeout)", underlying: error)
    case _ where StoreFailure.isDiskFull(error):
      StoreError(
        .noSpace, file: url.lastPathComponent, reason: "the disk is full; nothing was written", underlying: error)
    case let error as DatabaseError:
      StoreError(
        error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE ? .constraint : .sqlite, file: url.lastPathComponent,
        reason: error.message ?? "\(error)", underlying: error)
    default: error
    }
  }
}

/// The stores a thread is reading or writing now, in that thread's own storage (no lock: only the
/// thread itself reads its list). GRDB traps on a nested access to a queue (it cannot be made safe),
/// so a nested one is refused with an error first: whatever reached it — a script's host call from
/// inside a row loop — fails by name and the process goes on.
final class StoreAccesses {
  private var stores: [ObjectIdentifier] = []

  /// Enters `store`'s access on this thread, refused when it is inside one already. `file` is
  /// worked out only for the error (a URL's last component costs a parse per call).
  static func enter(_ store: AnyObject, file: @autoclosure () -> String) throws {
    let accesses = ofThisThread
    let id = ObjectIdentifier(store)
    guard !accesses.stores.contains(id) else {
      throw StoreError(
        .sqlite, file: file(),
        reason: "the store is being read or written here already: objects cannot be read or written from inside "
          + "this step (a row function reads only its own row)")
    }
    accesses.stores.append(id)
  }

  static func leave(_ store: AnyObject) {
    let accesses = ofThisThread
    if let index = accesses.stores.lastIndex(of: ObjectIdentifier(store)) { accesses.stores.remove(at: index) }
  }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
      if let pointer { Unmanaged<StoreAccesses>.fromOpaque(pointer).release() }
    }
    return key
  }()

  private static var ofThisThread: StoreAccesses {
    if let pointer = pthread_getspecific(key) {
      return Unmanaged<StoreAccesses>.fromOpaque(pointer).takeUnretainedValue()
    }
    let accesses = StoreAccesses()
    pthread_setspecific(key, Unmanaged.passRetained(accesses).toOpaque())
    return accesses
  }
}
