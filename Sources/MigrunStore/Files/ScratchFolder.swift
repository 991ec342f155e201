import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A private working folder in the system's temporary folder, `$TMPDIR/migrun-LABEL-UUID` — a
/// store read through a copy, a `check` of a store with a `-wal`, a policy test's migration, a
/// `verify` run — that no killed process leaves behind for good.
///
/// The folder is its process's while it exists: an `flock` on its `.owner` file, which the kernel
/// lets go when the process ends, however it ends. Each new scratch folder first removes those of
/// the same user whose owner is gone (a `kill -9` in the middle of `migrun test` left one per run,
/// fixture copies included, never removed). A folder without that lock — not made by this type — is
/// never touched.
///
/// ```swift
/// let scratch = try ScratchFolder.make("test")
/// defer { ScratchFolder.remove(scratch) }
/// ```
package enum ScratchFolder {
  /// A new folder `$TMPDIR/migrun-LABEL-UUID`, held by this process until ``remove(_:)``.
  package static func make(_ label: String) throws -> URL {
    removeAbandoned()
    let temporary = FileManager.default.temporaryDirectory
    let name = "migrun-\(label)-\(UUID().uuidString)"
    // Made under a name the sweep takes only from a process that is gone (`.NAME.PID`), locked,
    // then given its name: no other process can take it for abandoned between the folder's making
    // and its lock, and a process killed in between leaves nothing for good.
    let making = temporary.appendingPathComponent(".\(name).\(getpid())")
    // Private (0700: the copies of the user's store in it are no one else's), and new: a name
    // already there is not taken over.
    try FileManager.default.createDirectory(
      at: making, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    let descriptor = open(
      making.appendingPathComponent(ownerName).path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let reason = String(cString: strerror(errno))
      if descriptor >= 0 { close(descriptor) }
      try? FileManager.default.removeItem(at: making)
      throw StoreError(.io, file: making.path, reason: "cannot make a working folder (\(reason))")
    }
    let folder = temporary.appendingPathComponent(name)
    guard rename(making.path, folder.path) == 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      try? FileManager.default.removeItem(at: making)
      throw StoreError(.io, file: folder.path, reason: "cannot make a working folder (\(reason))")
    }
    owners.withLock { $0[folder.path] = descriptor }
    return folder
  }

  /// Removes `folder` (made by ``make(_:)``) and lets its lock go.
  package static func remove(_ folder: URL) {
    try? FileManager.default.removeItem(at: folder)
    if let descriptor = owners.withLock({ $0.removeValue(forKey: folder.path) }) { close(descriptor) }
  }

  // MARK: - Non public

  private static let ownerName = ".owner"
  private static let owners = Mutex<[String: Int32]>([:])

  /// Scratch folders of this user whose owning process is gone: their `.owner` lock is free — or,
  /// for one killed while it was being made (`.migrun-LABEL-UUID.PID`), its maker is no process.
  private static func removeAbandoned() {
    let temporary = FileManager.default.temporaryDirectory
    let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
    for name in names where name.hasPrefix(".migrun-") {
      let folder = temporary.appendingPathComponent(name)
      guard isOwnFolder(folder), let maker = name.split(separator: ".").last.flatMap({ pid_t($0) }), maker > 0,
        kill(maker, 0) != 0, errno == ESRCH
      else { continue }
      try? FileManager.default.removeItem(at: folder)
    }
    for name in names where name.hasPrefix("migrun-") {
      let folder = temporary.appendingPathComponent(name)
      guard isOwnFolder(folder) else { continue }
      // Never waiting on what is planted there (a FIFO as `.owner`): only a plain file's lock is taken.
      let descriptor = open(
        folder.appendingPathComponent(ownerName).path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
      guard descriptor >= 0 else { continue }
      defer { close(descriptor) }
      var owner = stat()
      guard fstat(descriptor, &owner) == 0, owner.st_mode & S_IFMT == S_IFREG else { continue }
      guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
      try? FileManager.default.removeItem(at: folder)
    }
  }

  /// A folder (not a link) of this user's.
  private static func isOwnFolder(_ folder: URL) -> Bool {
    var info = stat()
    return lstat(folder.path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid()
  }
}
