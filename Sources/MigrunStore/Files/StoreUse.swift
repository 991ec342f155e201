import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Whether another process has a store open, read from the locks SQLite itself takes — asked with
/// `fcntl(F_GETLK)`, which tests a lock without taking it and without writing a byte.
///
/// SQLite's unix locking (documented in its `os_unix.c` and "File Locking And Concurrency"):
/// - on the database file, a reader holds a read lock on the 510-byte *shared* range that starts
///   at `PENDING_BYTE + 2` (`PENDING_BYTE` is 0x40000000); a writer adds a write lock on
///   `RESERVED_BYTE` (`PENDING_BYTE + 1`), then `PENDING_BYTE`, then the whole shared range;
/// - in WAL mode, in the `-shm` file: byte 120 is the write lock, 121 the checkpointer's, 122
///   recovery's, 123–127 the read marks of open read transactions, and every connection that has
///   the store open holds a read lock on byte 128 (the "dead man switch") for as long as it is open.
///
/// Locks held by this process itself are not seen (POSIX locks never conflict with their owner).
package enum StoreUse {
  /// A process holding a lock on a store.
  package struct Holder: Sendable, Hashable, CustomStringConvertible {
    /// The process id, when the lock tells it (POSIX locks do; open-file-description locks do not).
    package let pid: Int32?
    /// The process's command name (`/proc/PID/comm`), when readable.
    package let command: String?
    /// What it holds: "a write lock", "a read transaction", "the store open".
    package let what: String

    package var description: String {
      let process =
        pid.map { pid in "process \(pid)" + (command.map { " (\($0))" } ?? "") } ?? "another process"
      return "\(process) holds \(what)"
    }
  }

  /// What a ``Holder`` holds when it is writing the store.
  package static let writeLock = "a write lock"
  static let pendingByte: Int64 = 0x4000_0000
  static let reservedByte = pendingByte + 1
  static let sharedFirst = pendingByte + 2
  static let sharedSize: Int64 = 510

  /// The first holder found, most disruptive first (writers, then readers, then open connections);
  /// `nil` when no other process holds any lock on the store. In WAL mode every open connection also
  /// holds a read lock on the database file's shared range, so the `-shm` is asked first.
  package static func holder(of store: URL) -> Holder? { probe(store).holder }

  /// What one look at a store's files tells: who holds it, and the first bytes of its main file.
  package struct Probe: Sendable {
    /// The first holder found (``holder(of:)``).
    package let holder: Holder?
    /// Up to the first 512 bytes of the main file (empty when it cannot be read).
    package let head: [UInt8]

    /// Whether the file's header says WAL mode (file format bytes 18 and 19 are 2).
    package var walMode: Bool { head.count >= 20 && head[18] == 2 }
    /// The store's type, told by its first bytes (``StoreType/of(head:)``).
    package var type: StoreType? { StoreType.of(head: head) }
  }

  /// ``holder(of:)``, and the file's first bytes (its type, its journal mode) — read from the same
  /// open of the file.
  package static func probe(_ store: URL) -> Probe {
    let shm = store.path + "-shm"
    let probes: [(path: String, start: Int64, length: Int64, what: String)] = [
      (shm, 120, 1, writeLock),
      (store.path, reservedByte, 1, writeLock),
      (store.path, pendingByte, 1, writeLock),
      (shm, 121, 1, "a checkpoint in progress"),
      (shm, 122, 1, "a recovery in progress"),
      (shm, 123, 5, "a read transaction"),
      (shm, 128, 1, "the store open"),
      (store.path, sharedFirst, sharedSize, "a read transaction"),
    ]
    // Each file is opened once for all its probes: fewer opens, and closing a descriptor drops
    // this process's own POSIX locks on the file (SQLite's, when it has the store open too).
    var descriptors: [String: Int32] = [:]
    for path in [shm, store.path] { descriptors[path] = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
    defer { for descriptor in descriptors.values where descriptor >= 0 { close(descriptor) } }
    var head = [UInt8](repeating: 0, count: 512)
    let headRead = descriptors[store.path].map { $0 >= 0 ? pread($0, &head, 512, 0) : -1 } ?? -1
    head = Array(head.prefix(max(0, headRead)))
    for probe in probes {
      guard let descriptor = descriptors[probe.path], descriptor >= 0,
        let found = lock(on: descriptor, start: probe.start, length: probe.length)
      else { continue }
      // A write lock on the database's shared range is SQLite's EXCLUSIVE lock: a commit in progress.
      let what = probe.start == sharedFirst && found.writing ? writeLock : probe.what
      return Probe(holder: Holder(pid: found.pid, command: found.pid.flatMap(command(of:)), what: what), head: head)
    }
    return Probe(holder: nil, head: head)
  }

  /// The process holding a write lock on the store's file (SQLite's RESERVED lock or more: a write
  /// transaction of a rollback-journal store under way), or `nil`. A `-journal` while no one holds
  /// one is a crashed writer's, which SQLite rolls back (``RollbackJournal``).
  package static func writer(of store: URL) -> Holder? {
    let descriptor = Glibc.open(store.path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    guard let found = lock(on: descriptor, start: reservedByte, length: 1) else { return nil }
    return Holder(pid: found.pid, command: found.pid.flatMap(command(of:)), what: writeLock)
  }

  private struct Found {
    let pid: Int32?
    let writing: Bool
  }

  /// The lock another process holds on `length` bytes from `start` of the open file, if any.
  private static func lock(on descriptor: Int32, start: Int64, length: Int64) -> Found? {
    var lock = flock()
    lock.l_type = Int16(F_WRLCK)
    lock.l_whence = Int16(SEEK_SET)
    lock.l_start = off_t(start)
    lock.l_len = off_t(length)
    guard fcntl(descriptor, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
    return Found(pid: lock.l_pid > 0 ? lock.l_pid : nil, writing: lock.l_type == Int16(F_WRLCK))
  }

  private static func command(of pid: Int32) -> String? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return nil }
    let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return name.isEmpty ? nil : name
  }

  /// Returns when no other process holds the store, polling every 100 ms for up to `wait` seconds;
  /// else throws ``StoreError/Code/inUse`` naming the store and what holds it.
  package static func waitUntilFree(_ store: URL, wait: Double = 0) throws {
    _ = try free(store, wait: wait)
  }

  /// ``waitUntilFree(_:wait:)`` from a probe already made (`first`; nil: probed now); returns the
  /// probe that found the store free.
  package static func free(_ store: URL, wait: Double, first: Probe? = nil) throws -> Probe {
    let deadline = Date().addingTimeInterval(max(0, wait))
    var probed = first ?? probe(store)
    while let holder = probed.holder {
      guard Date() < deadline else {
        let waited = wait > 0 ? " (still after waiting \(formatSeconds(wait)))" : ""
        throw StoreError(
          .inUse, file: store.path,
          reason: "the store is in use: \(holder)\(waited); close it, or wait for it (StoreMigrator.Options.wait)")
      }
      usleep(100_000)
      probed = probe(store)
    }
    return probed
  }

  /// The in-use answer for a read SQLite refused with `SQLITE_BUSY` (a writer holding its lock),
  /// naming what holds the store and how long the read waited (`waited` seconds).
  package static func inUseError(_ store: URL, cause: any Error, waited wait: Double) -> StoreError {
    let holder = holder(of: store).map { ": \($0)" } ?? ": another process is writing it"
    let waited = wait > 0 ? " (still after waiting \(formatSeconds(wait)))" : ""
    return StoreError(
      .inUse, file: store.path,
      reason: "the store is in use\(holder)\(waited); close it, or wait for it (StoreMigrator.Options.wait)",
      underlying: cause)
  }

  static func formatSeconds(_ seconds: Double) -> String {
    Int(exactly: seconds).map { "\($0) s" } ?? String(format: "%.1f s", seconds)
  }
}

/// One migration per store at a time: an exclusive `flock` on `.NAME.migrun-lock` beside the store,
/// held for the whole run and removed at the end. A lock left by a killed run is free again (the
/// kernel releases it with the process) and is taken over. What is under that name is never trusted
/// (`WorkingFiles`): a symbolic link, a folder, a hard link to another file or a file holding
/// anything but a process id is refused by name — never followed, truncated or written.
package final class MigrationLock {
  private let path: String
  private var descriptor: Int32 = -1

  package init(store: URL, wait: Double) throws {
    let url = WorkingFiles.lock(of: store)
    path = url.path
    let deadline = Date().addingTimeInterval(max(0, wait))
    while true {
      let opened = try Self.open(url, store: store)
      if flock(opened, LOCK_EX | LOCK_NB) == 0 {
        // The file may have been removed by the run that held it, between our open and our lock.
        var held = stat()
        var named = stat()
        if fstat(opened, &held) == 0, lstat(path, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev
        {
          descriptor = opened
          let pid = Data("\(ProcessInfo.processInfo.processIdentifier)\n".utf8)
          _ = ftruncate(opened, 0)
          _ = pid.withUnsafeBytes { pwrite(opened, $0.baseAddress, $0.count, 0) }
          return
        }
        close(opened)
        continue
      }
      let holder = Self.processID(in: opened)
      close(opened)
      guard Date() < deadline else {
        throw StoreError(
          .inUse, file: store.path,
          reason: "the store is in use: another migrun (process \(holder ?? "?")) is migrating it"
            + (wait > 0 ? " (still after waiting \(StoreUse.formatSeconds(wait)))" : "")
            + "; wait for it (StoreMigrator.Options.wait)")
      }
      usleep(100_000)
    }
  }

  /// Removes the lock file, then lets go of the lock.
  package func release() {
    guard descriptor >= 0 else { return }
    unlink(path)
    close(descriptor)
    descriptor = -1
  }

  deinit { release() }

  // MARK: - Non public

  /// Opens (or creates) the lock file without following a link, and checks it is one migrun would
  /// have written: a plain file, no other name for it, empty or a process id.
  private static func open(_ url: URL, store: URL) throws -> Int32 {
    let role = "migration lock"
    try WorkingFiles.requireAbsentOr(.file, at: url, beside: store, as: role)
    let opened = Glibc.open(url.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
    guard opened >= 0 else {
      if errno == ELOOP { throw WorkingFiles.refuse(url, beside: store, as: role, because: "is a symbolic link") }
      throw StoreError(
        .io, file: store.path,
        reason: "cannot make the migration lock \(url.path) (\(String(cString: strerror(errno))))")
    }
    var info = stat()
    let plain = fstat(opened, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    let reason =
      !plain
      ? "is not a regular file"
      : info.st_nlink != 1
        ? "is a hard link to another file"
        : info.st_size > 32 || (info.st_size > 0 && processID(in: opened) == nil) ? "holds something else" : nil
    if let reason {
      close(opened)
      throw WorkingFiles.refuse(url, beside: store, as: role, because: reason)
    }
    return opened
  }

  /// The process id a lock file holds (`PID` and a line end), if that is what it holds.
  private static func processID(in descriptor: Int32) -> String? {
    var bytes = [UInt8](repeating: 0, count: 33)
    let count = pread(descriptor, &bytes, 33, 0)
    guard count > 0, count <= 32 else { return nil }
    let text = String(decoding: bytes[0..<count], as: UTF8.self)
    let digits = text.hasSuffix("\n") ? text.dropLast() : Substring(text)
    return !digits.isEmpty && digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? String(digits) : nil
  }
}
