import Foundation
import GRDB

/// A store file and its WAL sidecars (`-wal`, `-shm`) handled as one unit: copied together,
/// checkpointed before a swap, replaced atomically with a `NAME~.EXT` backup.
public enum StoreFiles {
  /// The sidecar suffixes SQLite writes beside a database.
  public static let sidecarSuffixes = ["-wal", "-shm"]

  /// `Moody.sqlite` → `Moody~.sqlite`, `Store` → `Store~`: where the original goes after a migration.
  public static func backupURL(for url: URL) -> URL {
    let ext = url.pathExtension
    let base = url.deletingPathExtension().lastPathComponent
    return url.deletingLastPathComponent().appendingPathComponent(ext.isEmpty ? base + "~" : "\(base)~.\(ext)")
  }

  /// The sidecars present beside `url`.
  public static func sidecars(of url: URL) -> [URL] {
    sidecarSuffixes.map { URL(fileURLWithPath: url.path + $0) }.filter {
      FileManager.default.fileExists(atPath: $0.path)
    }
  }

  /// Copies the store at `source` (with its sidecars) to `destination` and checkpoints the copy
  /// into a single file in rollback-journal mode. The source is only read.
  public static func copy(_ source: URL, to destination: URL) throws {
    let manager = FileManager.default
    guard manager.fileExists(atPath: source.path) else {
      throw StoreError(.notFound, file: source.path, reason: "no such file")
    }
    do {
      try manager.copyItem(at: source, to: destination)
      for sidecar in sidecarSuffixes where manager.fileExists(atPath: source.path + sidecar) {
        try manager.copyItem(atPath: source.path + sidecar, toPath: destination.path + sidecar)
      }
    } catch {
      remove(destination)
      throw StoreError(.io, file: destination.path, reason: "cannot copy the store (\(error.localizedDescription))")
    }
    try checkpoint(destination)
  }

  /// Folds a WAL store's `-wal` into its main file and leaves it in rollback-journal mode, so the
  /// main file alone holds everything. The content is unchanged; the file's bytes may change.
  public static func checkpoint(_ url: URL) throws {
    guard !sidecars(of: url).isEmpty else { return }
    do {
      let queue = try DatabaseQueue(path: url.path, configuration: SQLiteStore.configuration(readOnly: false))
      try queue.writeWithoutTransaction { db in
        _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
      }
      try queue.close()
    } catch {
      throw StoreError(.sqlite, file: url.path, reason: "cannot checkpoint the store's WAL (\(error))")
    }
    for sidecar in sidecars(of: url) { try? FileManager.default.removeItem(at: sidecar) }
  }

  /// Puts `replacement` (a complete store, in the same folder) in place of `original`, atomically:
  /// the original is checkpointed if it has a WAL, kept as ``backupURL(for:)`` when `keepBackup`,
  /// then `replacement` is renamed over it, and the folder is synced. Returns the backup's URL.
  @discardableResult
  public static func replace(_ original: URL, with replacement: URL, keepBackup: Bool) throws -> URL? {
    try sync(replacement)
    try checkpoint(original)
    var backup: URL?
    if keepBackup {
      let target = backupURL(for: original)
      remove(target)
      do {
        try FileManager.default.linkItem(at: original, to: target)
      } catch {
        do {
          try FileManager.default.copyItem(at: original, to: target)
          try sync(target)
        } catch {
          throw StoreError(
            .io, file: target.path, reason: "cannot keep the original as a backup (\(error.localizedDescription))")
        }
      }
      backup = target
    }
    guard rename(replacement.path, original.path) == 0 else {
      let reason = String(cString: strerror(errno))
      throw StoreError(.io, file: original.path, reason: "cannot move the new store into place (\(reason))")
    }
    try sync(original.deletingLastPathComponent())
    return backup
  }

  /// Removes a store and its sidecars (a working copy that failed).
  public static func remove(_ url: URL) {
    try? FileManager.default.removeItem(at: url)
    for suffix in sidecarSuffixes + ["-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
  }

  /// fsync(2) on a file or folder.
  public static func sync(_ url: URL) throws {
    let descriptor = open(url.path, O_RDONLY)
    guard descriptor >= 0 else {
      throw StoreError(.io, file: url.path, reason: "cannot open to sync (\(String(cString: strerror(errno))))")
    }
    defer { close(descriptor) }
    guard fsync(descriptor) == 0 else {
      throw StoreError(.io, file: url.path, reason: "cannot sync (\(String(cString: strerror(errno))))")
    }
  }
}
