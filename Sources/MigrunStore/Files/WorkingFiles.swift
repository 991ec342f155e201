import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The names migrun writes beside a store — its migration lock, its swap journal, its working
/// copies, an atomic store's working folder and replacement — in one place, with what migrun
/// accepts to find under them.
///
/// Stores arrive from devices, support tickets and old backups next to whatever files came with
/// them, so nothing under these names is trusted: an entry that is a symbolic link, or that is not
/// what migrun itself would have written there (a folder where a file belongs, a hard link to
/// another file, content migrun does not write), is refused by name — never followed, read as an
/// instruction, truncated or removed (``refuse(_:beside:as:because:)``).
package enum WorkingFiles {
  /// What is at a path, the path's own entry: a symbolic link is never followed.
  package enum Entry: Equatable, Sendable {
    case none
    case file
    case folder
    case symlink
    /// A FIFO, socket or device.
    case other
  }

  /// The entry at `path` itself (`lstat`).
  package static func entry(at path: String) -> Entry {
    var info = stat()
    guard lstat(path, &info) == 0 else { return .none }
    switch info.st_mode & S_IFMT {
    case S_IFREG: return .file
    case S_IFDIR: return .folder
    case S_IFLNK: return .symlink
    default: return .other
    }
  }

  /// `.NAME.migrun-` — the prefix of every working name beside `store`.
  package static func prefix(of store: URL) -> String { ".\(store.lastPathComponent).migrun-" }

  /// `.NAME.migrun-lock`: the migration lock (``MigrationLock``).
  package static func lock(of store: URL) -> URL { beside(store, "lock") }

  /// `.NAME.migrun-swap`: the swap journal (``StoreFiles/replace(_:with:keepBackup:expecting:)``).
  package static func swapJournal(of store: URL) -> URL { beside(store, "swap") }

  /// `.NAME.migrun-PID-LABEL`: a migration's working copy (`source`, `step1`, `assoc1`, `stage1`…).
  package static func scratch(of store: URL, label: String) -> URL {
    beside(store, "\(ProcessInfo.processInfo.processIdentifier)-\(label)")
  }

  /// `.NAME.migrun-atomic-PID`: an XML or binary store's working folder.
  package static func atomicFolder(of store: URL) -> URL {
    beside(store, "atomic-\(ProcessInfo.processInfo.processIdentifier)")
  }

  /// `.NAME.migrun-LABEL`: an output's working file, renamed into place once whole (`tmp` for a report
  /// or a text file, the command's name for a new store: `create`, `import`, `salvage`…).
  package static func output(of target: URL, label: String) -> URL { beside(target, label) }

  /// `.NAME.migrun-new`: an XML or binary store's replacement, before the swap.
  package static func atomicReplacement(of store: URL) -> URL { beside(store, "new") }

  /// Whether `name` (a file name beside `store`) is one a swap journal may name as the replacement:
  /// a working copy's (`.NAME.migrun-PID-LABEL`, LABEL letters then digits) or an atomic store's
  /// replacement (`.NAME.migrun-new`). Nothing else — not `..`, not a sibling, not a path.
  package static func isReplacementName(_ name: String, of store: URL) -> Bool {
    let prefix = prefix(of: store)
    guard name.hasPrefix(prefix) else { return false }
    let rest = name.dropFirst(prefix.count)
    if rest == "new" { return true }
    let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy(\.isASCIIDigit) else { return false }
    let label = parts[1]
    let letters = label.prefix { $0.isASCIILetter }
    return !letters.isEmpty && label.dropFirst(letters.count).allSatisfy(\.isASCIIDigit)
  }

  /// Whether `url`, an entry beside `store`, is a working entry a killed run left — one a new run
  /// may remove: a working copy (`.NAME.migrun-PID-LABEL`) that is a plain file holding a SQLite
  /// database or nothing, its sidecars (`-wal`, `-shm`, `-journal`) as plain files, or an atomic
  /// store's working folder holding its working store's plain files only. Never the lock, the journal, a link, or a
  /// name or content migrun does not write: those are left alone.
  package static func isLeftover(_ url: URL, of store: URL) -> Bool {
    let name = url.lastPathComponent
    let atomic = prefix(of: store) + "atomic-"
    if name.hasPrefix(atomic), name.count > atomic.count, name.dropFirst(atomic.count).allSatisfy(\.isASCIIDigit) {
      guard entry(at: url.path) == .folder,
        let inside = try? FileManager.default.contentsOfDirectory(atPath: url.path)
      else { return false }
      // What ``atomicFolder(of:)`` holds: the working store `STEM.sqlite` and its sidecars.
      let working = store.deletingPathExtension().lastPathComponent + ".sqlite"
      let names = Set([working] + StoreFiles.sideFileSuffixes.map { working + $0 })
      return inside.allSatisfy { names.contains($0) && entry(at: url.appendingPathComponent($0).path) == .file }
    }
    guard entry(at: url.path) == .file else { return false }
    for suffix in StoreFiles.sideFileSuffixes where name.hasSuffix(suffix) {
      let main = String(name.dropLast(suffix.count))
      return main != prefix(of: store) + "new" && isReplacementName(main, of: store)
    }
    guard name != prefix(of: store) + "new", isReplacementName(name, of: store) else { return false }
    let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: 16)
    let count = pread(descriptor, &header, 16, 0)
    return count == 0 || (count == 16 && header == Array("SQLite format 3\u{0}".utf8))
  }

  /// Throws unless the entry at `url` (a working name beside `store`) is absent or `expected` —
  /// a symbolic link, or an entry of another kind, is refused by name.
  package static func requireAbsentOr(_ expected: Entry, at url: URL, beside store: URL, as role: String) throws {
    switch entry(at: url.path) {
    case .none: return
    case expected: return
    case .symlink: throw refuse(url, beside: store, as: role, because: "is a symbolic link")
    case .folder: throw refuse(url, beside: store, as: role, because: "is a folder")
    case .file: throw refuse(url, beside: store, as: role, because: "is a file")
    case .other: throw refuse(url, beside: store, as: role, because: "is not a regular file")
    }
  }

  /// The error for an entry under one of migrun's names that migrun did not write as it would.
  package static func refuse(_ url: URL, beside store: URL, as role: String, because reason: String) -> StoreError {
    StoreError(
      .foreignFile, file: store.path,
      reason: "\(url.lastPathComponent) beside the store \(reason), not a \(role) migrun would have written; "
        + "migrun does not follow, read, change or remove it — look at it, and move it away if it is not needed. "
        + "Nothing was done")
  }

  // MARK: - Non public

  private static func beside(_ store: URL, _ suffix: String) -> URL {
    store.deletingLastPathComponent().appendingPathComponent(prefix(of: store) + suffix)
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
  fileprivate var isASCIILetter: Bool { isASCII && isLetter }
}
