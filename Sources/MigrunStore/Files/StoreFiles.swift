import FileDoors
import Foundation
import GRDB

#if canImport(Glibc)
  import Glibc
#endif

/// A store file and its WAL sidecars (`-wal`, `-shm`) handled as one unit. The rule every function
/// here keeps: **a store's own files are never written** — not checkpointed, not truncated, not
/// given a `-shm` — until a complete replacement is swapped in by ``replace(_:with:keepBackup:expecting:)``.
package enum StoreFiles {
  /// The sidecar suffixes SQLite writes beside a database in WAL mode.
  package static let sidecarSuffixes = ["-wal", "-shm"]
  /// Every file SQLite may write beside a database: the WAL's two and the rollback journal. The one
  /// list of them (a fleet's search, the working copies' names, what a command reads, removal).
  package static let sideFileSuffixes = sidecarSuffixes + ["-journal"]

  /// `Moody.sqlite` → `Moody~.sqlite`, `Store` → `Store~`: where the original goes after a migration
  /// (`number` 2, 3…: `Moody~2.sqlite`, for when that name is taken).
  package static func backupURL(for url: URL, number: Int = 1) -> URL {
    let ext = url.pathExtension
    let base = url.deletingPathExtension().lastPathComponent + (number > 1 ? "~\(number)" : "~")
    return url.deletingLastPathComponent().appendingPathComponent(ext.isEmpty ? base : "\(base).\(ext)")
  }

  /// The first backup name for `url` that nothing uses — no file, no sidecar, no support folder —
  /// `Moody~.sqlite`, else `Moody~2.sqlite`, …: an earlier migration's backup (perhaps the only copy
  /// of the original) is never overwritten.
  package static func freeBackupURL(for url: URL) -> URL {
    var number = 1
    while true {
      let candidate = backupURL(for: url, number: number)
      // The entries themselves: a dangling symbolic link takes a name as much as a file does.
      let taken =
        ([""] + sidecarSuffixes).contains { WorkingFiles.entry(at: candidate.path + $0) != .none }
        || WorkingFiles.entry(at: ExternalData.supportFolder(of: candidate).path) != .none
      if !taken { return candidate }
      number += 1
    }
  }

  /// Whether a file name's stem is a backup's (`NAME~`, `NAME~2`, …).
  package static func isBackupStem(_ stem: String) -> Bool {
    guard let tilde = stem.lastIndex(of: "~") else { return false }
    return stem[stem.index(after: tilde)...].allSatisfy(\.isNumber)
  }

  /// Why the folder at `url` is not a store, in words that say what to give instead: a model folder
  /// (`.xcdatamodeld`, `.xcdatamodel`, `.momd`) is named as a model, any other folder as a folder.
  package static func folderGivenAsStore(_ url: URL) -> String {
    guard ["xcdatamodeld", "xcdatamodel", "momd"].contains(url.pathExtension.lowercased()) else {
      return "a folder, not a store file (give the .sqlite file in it)"
    }
    return "a model, not a store: give the store (.sqlite) and this model as --model "
      + "(`migrun hash \(url.lastPathComponent)` describes the model itself)"
  }

  /// Throws unless each file SQLite keeps beside the store — `-wal`, `-shm`, `-journal` — is absent or
  /// a plain file. SQLite reads them as the store's own (a `-wal`'s frames, a hot journal's pages),
  /// so one that is a symbolic link would read another file into the store, and a FIFO or device
  /// would hold every read forever; a folder is no sidecar at all. Such an entry is refused by name,
  /// before anything opens the store — never followed, read, moved or removed.
  package static func checkSidecars(of url: URL) throws {
    for suffix in sideFileSuffixes {
      let path = url.path + suffix
      let reason: String
      switch WorkingFiles.entry(at: path) {
      case .none, .file: continue
      case .symlink: reason = "is a symbolic link"
      case .folder: reason = "is a folder"
      case .other: reason = "is not a regular file (a FIFO, socket or device)"
      }
      throw StoreError(
        .foreignFile, file: url.path,
        reason: "\(url.lastPathComponent)\(suffix) beside the store \(reason): SQLite would take it for the store's "
          + "own \(suffix) file, and migrun does not follow, read, change or remove it — look at it, and move it away "
          + "if it is not the store's. Nothing was done")
    }
  }

  /// The sidecars present beside `url`.
  package static func sidecars(of url: URL) -> [URL] {
    sidecarSuffixes.map { URL(fileURLWithPath: url.path + $0) }.filter {
      FileManager.default.fileExists(atPath: $0.path)
    }
  }

  /// The size of a file in bytes, `nil` when there is none.
  static func fileSize(_ path: String) -> Int64? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int64(info.st_size)
  }

  /// Whether committed transactions may live in the store's `-wal` (it exists and is not empty).
  package static func hasWALContent(_ url: URL) -> Bool {
    (fileSize(url.path + "-wal") ?? 0) > 0
  }

  /// The bytes a store occupies: its main file and its `-wal`.
  package static func storeSize(_ url: URL) -> Int64 {
    (fileSize(url.path) ?? 0) + (fileSize(url.path + "-wal") ?? 0)
  }

  /// Whether the store's header says WAL mode (file format bytes 18 and 19 are 2), as Core Data's
  /// stores are by default.
  package static func isWALMode(_ url: URL) -> Bool { StoreUse.probe(url).walMode }

  /// What identifies the store's content on disk: device, inode, size and modification time of the
  /// main file and of the `-wal`. Equal states mean no process wrote to the store in between (the
  /// `-shm` is left out: readers write their marks there). The one `stat` of a store's files: a
  /// swap's record of the original, and a session's look (``StoreSession``, its `-journal` too).
  package struct State: Equatable, Sendable {
    let files: [[Int64]]

    /// One line: the numbers of each file, files separated by `;`.
    package var text: String { files.map { $0.map(String.init).joined(separator: ",") }.joined(separator: ";") }

    package init?(text: Substring) {
      let parts = text.split(separator: ";", omittingEmptySubsequences: false)
      let files = parts.map { $0.split(separator: ",").compactMap { Int64($0) } }
      guard files.count == 2 else { return nil }
      self.files = files
    }

    /// The main file and its `-wal` (a swap's record: its text keeps these numbers).
    package init(of url: URL) { self.init(of: url, sideFiles: ["-wal"], changeTimes: false) }

    /// The main file and its `sideFiles` (`-wal`, `-journal`): each one's device, inode, size and
    /// modification time — and, with `changeTimes`, its change time (its mode or links changed) —
    /// or nothing for a file that is not there.
    package init(of url: URL, sideFiles: [String], changeTimes: Bool) {
      files = ([""] + sideFiles).map { suffix in
        var info = stat()
        guard stat(url.path + suffix, &info) == 0 else { return [] }
        let numbers = [
          Int64(info.st_dev), Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec),
          Int64(info.st_mtim.tv_nsec),
        ]
        return changeTimes ? numbers + [Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec)] : numbers
      }
    }
  }

  /// Copies the store at `source` (its main file and, when it has content, its `-wal`) to
  /// `destination` and folds the copy's WAL into a single file in rollback-journal mode. The source is
  /// only read — opened for reading by the copy, never by SQLite.
  package static func snapshot(_ source: URL, to destination: URL) throws {
    let manager = FileManager.default
    guard manager.fileExists(atPath: source.path) else {
      throw StoreError(.notFound, file: source.path, reason: "no such file")
    }
    remove(destination)
    do {
      try cloneOrCopy(source, to: destination)
      if hasWALContent(source) {
        try cloneOrCopy(URL(fileURLWithPath: source.path + "-wal"), to: URL(fileURLWithPath: destination.path + "-wal"))
      }
    } catch {
      remove(destination)
      throw error
    }
    do {
      try checkpoint(destination)
    } catch {
      remove(destination)
      throw error
    }
  }

  /// The number of `FICLONE` (`_IOW(0x94, 9, int)`), which Glibc does not export to Swift.
  private static let ficlone: UInt = 0x4004_9409

  private typealias CopyFileRange =
    @convention(c) (
      Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32
    ) -> Int
  /// glibc's `copy_file_range`, which its Swift module hides behind `_GNU_SOURCE`: looked up by name.
  private static let copyFileRange: CopyFileRange? = dlsym(nil, "copy_file_range").map {
    unsafeBitCast($0, to: CopyFileRange.self)
  }

  private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
  /// glibc's `sync_file_range`, hidden the same way.
  private static let syncFileRange: SyncFileRange? = dlsym(nil, "sync_file_range").map {
    unsafeBitCast($0, to: SyncFileRange.self)
  }

  /// Copies the file `source` to `destination` (which must not exist) without writing `source`: a
  /// reflink clone where the file system offers one (Btrfs, XFS, …: no bytes copied), else the
  /// kernel's `copy_file_range`, else plain reads and writes. The copy is not synced; `writingBack`:
  /// each 64 MiB copied is handed to the disk at once (`sync_file_range`, which starts the writes
  /// and does not wait), so the fsync that follows has only the last part left to wait for.
  package static func cloneOrCopy(_ source: URL, to destination: URL, writingBack: Bool = false) throws {
    let failure = copyFailure
    // Through the door first: a FIFO or a device in the store's place is refused, never waited on.
    do {
      try InputFile.check(source, origin: .named)
    } catch let error as InputFileError {
      throw StoreError(.io, file: source.path, reason: error.reason, underlying: error)
    }
    let input = open(source.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard input >= 0 else { throw failure("open the store to copy it", source) }
    defer { close(input) }
    let output = open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard output >= 0 else { throw failure("create the copy", destination) }
    var completed = false
    defer {
      close(output)
      if !completed { unlink(destination.path) }
    }
    if ioctl(output, Self.ficlone, input) == 0 {
      completed = true
      return
    }
    var written: Int64 = 0
    while true {
      let copied = copyFileRange?(input, nil, output, nil, writingBack ? 64 << 20 : 1 << 30, 0) ?? -1
      if copied > 0 {
        // SYNC_FILE_RANGE_WRITE (2): a hint; where it fails the fsync still writes everything.
        if writingBack { _ = syncFileRange?(output, written, Int64(copied), 2) }
        written += Int64(copied)
        continue
      }
      if copied == 0 { break }
      // Not offered here (another file system, an old kernel): read and write from where it stopped.
      guard copyFileRange == nil || [EXDEV, ENOSYS, EOPNOTSUPP, EINVAL].contains(errno) else {
        throw failure("copy the store", destination)
      }
      try copyByReading(input, source, to: output, destination)
      break
    }
    completed = true
  }

  /// A failure of the system call that just failed, its error kept under it: a full disk is
  /// `noSpace` (exit 12), not a failure of the store.
  private static func copyFailure(_ what: String, _ file: URL) -> StoreError {
    let number = errno
    return StoreError(
      number == ENOSPC || number == EDQUOT ? .noSpace : .io, file: file.path,
      reason: "cannot \(what) (\(String(cString: strerror(number))))",
      underlying: POSIXError(POSIXErrorCode(rawValue: number) ?? .EIO))
  }

  /// The rest of the open file `input` (`source`) copied to `output` (`destination`) by plain reads
  /// and writes, from where each file's offset stands.
  private static func copyByReading(_ input: Int32, _ source: URL, to output: Int32, _ destination: URL) throws {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let read = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
      if read < 0 && errno == EINTR { continue }
      guard read >= 0 else { throw copyFailure("read the store", source) }
      if read == 0 { break }
      var offset = 0
      while offset < read {
        let written = buffer.withUnsafeBytes { write(output, $0.baseAddress.map { $0 + offset }, read - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw copyFailure("write the copy", destination) }
        offset += written
      }
    }
  }

  /// Folds a WAL store's `-wal` into its main file and leaves it in rollback-journal mode, so the
  /// main file alone holds everything. Only for migrun's own copies: it writes the file.
  static func checkpoint(_ url: URL) throws {
    do {
      let queue = try DatabaseQueue(path: url.path, configuration: SQLiteStore.configuration(readOnly: false))
      try queue.writeWithoutTransaction { db in
        _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
      }
      try queue.close()
    } catch {
      throw StoreError(
        .sqlite, file: url.path, reason: "cannot fold the WAL into the copy (\(error))", underlying: error)
    }
    for sidecar in sidecars(of: url) { try? FileManager.default.removeItem(at: sidecar) }
  }

  /// Puts a migrun-made store (`url`, one file, no sidecars) in WAL mode, as Core Data writes them.
  /// Closing the last connection folds and removes the `-wal` again; the header keeps the mode.
  package static func setWALMode(_ url: URL) throws {
    do {
      let queue = try DatabaseQueue(path: url.path, configuration: SQLiteStore.configuration(readOnly: false))
      try queue.writeWithoutTransaction { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
      try queue.close()
    } catch {
      throw StoreError(
        .sqlite, file: url.path, reason: "cannot put the store in WAL mode (\(error))", underlying: error)
    }
    for sidecar in sidecars(of: url) { try? FileManager.default.removeItem(at: sidecar) }
  }

  /// The file beside `store` that records a swap in progress: the name of the replacement.
  package static func swapJournal(for store: URL) -> URL { WorkingFiles.swapJournal(of: store) }

  /// Puts `replacement` (a complete store, one file in the same folder, named as a working copy:
  /// `WorkingFiles/scratch(of:label:)`) in place of `original`.
  ///
  /// 1. `expecting` (when given) must still describe the original — no process wrote to it since
  ///    the migration read it — and no process may hold it ( ``StoreUse`` ); else nothing changes.
  /// 2. With `keepBackup`, the original's files become `NAME~.EXT` (+ `-wal`/`-shm` when they exist)
  ///    by hard links (copies where links are refused); a backup of an earlier run is replaced whole.
  /// 3. A swap journal naming the replacement is written and synced; then the original's sidecars
  ///    are unlinked (an old `-wal` beside the new file would be replayed into it) and the
  ///    replacement renamed over the original; the journal is removed. A crash in between is
  ///    completed by ``completeInterruptedSwap(of:)``.
  ///
  /// Returns the backup's URL.
  @discardableResult
  package static func replace(
    _ original: URL, with replacement: URL, keepBackup: Bool, expecting: State? = nil,
    beforeJournal: () throws -> Void = {}
  ) throws -> URL? {
    try sync(replacement)
    if let expecting, State(of: original) != expecting {
      throw StoreError(
        .inUse, file: original.path,
        reason: "another process wrote to the store while it was being migrated; the migrated copy is "
          + "discarded and the store is as that process left it — migrate again when it is closed")
    }
    if let holder = StoreUse.holder(of: original) {
      throw StoreError(
        .inUse, file: original.path,
        reason: "the store was opened while it was being migrated: \(holder); the migrated copy is discarded")
    }
    let folder = original.deletingLastPathComponent()
    let journal = swapJournal(for: original)
    guard WorkingFiles.isReplacementName(replacement.lastPathComponent, of: original),
      replacement.deletingLastPathComponent().standardizedFileURL == folder.standardizedFileURL
    else {
      throw StoreError(
        .io, file: original.path, reason: "internal: \(replacement.lastPathComponent) is not a working copy's name")
    }
    try WorkingFiles.requireAbsentOr(.none, at: journal, beside: original, as: "swap journal")
    var backup: URL?
    if keepBackup {
      let target = freeBackupURL(for: original)
      for suffix in [""] + sidecarSuffixes where FileManager.default.fileExists(atPath: original.path + suffix) {
        try keep(original.path + suffix, as: target.path + suffix)
      }
      try keepSupportFolder(of: original, as: target)
      backup = target
    }
    // What must be in place before the replacement can be (files it refers to): a crash after the
    // journal completes the swap, so they come first.
    try beforeJournal()
    do {
      // The replacement's name, and the state of the original it replaces.
      let record = replacement.lastPathComponent + "\n" + State(of: original).text + "\n"
      try writeNewFile(Data(record.utf8), to: journal)
      try sync(folder)
    } catch let error as StoreError {
      throw StoreError(
        error.code, file: journal.path, reason: "cannot write the swap journal: \(error.reason)", underlying: error)
    }
    try finishSwap(original, replacement: replacement, journal: journal)
    return backup
  }

  /// A hard link `path` → `target` (the original's bytes are shared, not written); a synced copy
  /// where the file system refuses links.
  private static func keep(_ path: String, as target: String) throws {
    do {
      try FileManager.default.linkItem(atPath: path, toPath: target)
    } catch {
      do {
        try FileManager.default.copyItem(atPath: path, toPath: target)
        try sync(URL(fileURLWithPath: target))
      } catch {
        throw StoreError(
          .io, file: target, reason: "cannot keep the original as a backup (\(error.localizedDescription))")
      }
    }
  }

  /// A private copy of the SQLite store `url` at `copy`, to work on where the original must never be
  /// written (a review, a policy test's `migrate{…}`): its sidecars checked first
  /// (``checkSidecars(of:)``), its `-wal` folded in (``snapshot(_:to:)``) or a hot journal rolled
  /// back (``RollbackJournal/rolledBackCopy(of:to:)``), as SQLite would read it; its external data
  /// kept file by file (``copySupportFolder(of:as:)``).
  /// A process writing the store is waited for by no one here: its transaction may be part way in
  /// the files (a rollback-journal commit writes the main file in place), so the copy is refused
  /// (``StoreError/Code/inUse``) rather than made of half of it.
  package static func privateCopy(of url: URL, to copy: URL) throws {
    try checkSidecars(of: url)
    if let holder = StoreUse.probe(url).holder, holder.what == StoreUse.writeLock {
      throw StoreError(
        .inUse, file: url.path,
        reason: "the store is in use: \(holder); a copy now could hold part of that write — close it, then run again")
    }
    if RollbackJournal.isHot(url) {
      try RollbackJournal.rolledBackCopy(of: url, to: copy)
    } else {
      try snapshot(url, to: copy)
    }
    try copySupportFolder(of: url, as: copy)
  }

  /// The support folder of `original` kept for its copy `target` as migrate reads it: never through a
  /// link (a link copied as a link would lead the copy's writes into the original's folder, or
  /// outside it) — one on the way is refused by name — plain files kept file by file
  /// (``keepSupportFolder(of:as:)``).
  package static func copySupportFolder(of original: URL, as target: URL) throws {
    if let link = ExternalData(store: original).linkOnTheWay(to: nil) {
      throw StoreError(
        .foreignFile, file: original.path,
        reason: "\(link.path) is a symbolic link: migrun reads values kept outside the store only from plain files "
          + "in the store's own support folder (migrate refuses it too); the store is unchanged")
    }
    try keepSupportFolder(of: original, as: target)
  }

  /// The support folder beside `original` (`.NAME_SUPPORT`: external binary data), kept for the
  /// backup `target` as `.NAME~_SUPPORT`, file by file with ``keep(_:as:)``; an earlier run's is
  /// replaced whole.
  package static func keepSupportFolder(of original: URL, as target: URL) throws {
    let from = ExternalData.supportFolder(of: original)
    let to = ExternalData.supportFolder(of: target)
    try? FileManager.default.removeItem(at: to)
    guard FileManager.default.fileExists(atPath: from.path),
      let files = FileManager.default.enumerator(atPath: from.path)
    else { return }
    do {
      try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
    } catch {
      throw StoreError(
        .io, file: to.path, reason: "cannot keep the store's support folder (\(error.localizedDescription))")
    }
    while let name = files.nextObject() as? String {
      let path = from.appendingPathComponent(name).path
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
      let copy = to.appendingPathComponent(name).path
      if isFolder.boolValue {
        try? FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
      } else {
        try keep(path, as: copy)
      }
    }
  }

  private static func finishSwap(_ original: URL, replacement: URL, journal: URL) throws {
    for suffix in sidecarSuffixes { unlink(original.path + suffix) }
    if FileManager.default.fileExists(atPath: replacement.path) {
      guard rename(replacement.path, original.path) == 0 else {
        let reason = String(cString: strerror(errno))
        throw StoreError(.io, file: original.path, reason: "cannot move the new store into place (\(reason))")
      }
    }
    try sync(original.deletingLastPathComponent())
    try? FileManager.default.removeItem(at: journal)
  }

  /// What a swap journal beside `store` records: the replacement (when the file is still there) and
  /// the original's state when the swap began; `nil` when there is no journal. A journal migrun did
  /// not write — a symbolic link, a folder, more than migrun writes, a name other than one of its
  /// working copies' in the store's own folder, a replacement that is not a plain file — is refused
  /// by name (`WorkingFiles`): it is never read as an instruction.
  package static func readJournal(of store: URL) throws -> (replacement: URL?, recorded: State)? {
    let journal = swapJournal(for: store)
    let role = "swap journal"
    switch WorkingFiles.entry(at: journal.path) {
    case .none: return nil
    case .file: break
    default: try WorkingFiles.requireAbsentOr(.file, at: journal, beside: store, as: role)
    }
    guard let data = readPlainFile(journal.path, limit: 4096) else {
      throw WorkingFiles.refuse(journal, beside: store, as: role, because: "cannot be read or is too big")
    }
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.count == 3, lines[2].isEmpty, WorkingFiles.isReplacementName(String(lines[0]), of: store),
      let recorded = State(text: lines[1])
    else {
      throw WorkingFiles.refuse(journal, beside: store, as: role, because: "does not hold what migrun writes there")
    }
    let replacement = store.deletingLastPathComponent().appendingPathComponent(String(lines[0]))
    try WorkingFiles.requireAbsentOr(.file, at: replacement, beside: store, as: "replacement named by the swap journal")
    return (WorkingFiles.entry(at: replacement.path) == .file ? replacement : nil, recorded)
  }

  /// The replacement a crash left half swapped in (a valid swap journal beside `store` naming a file
  /// that is still there), if any. A journal migrun did not write is no sign of one.
  package static func pendingSwap(of store: URL) -> URL? {
    (try? readJournal(of: store))??.replacement
  }

  /// Completes a swap that a crash interrupted (a swap journal beside `store`): the replacement it
  /// names is complete and synced, so it goes in place — unless the original was written since (an
  /// app opened it after the crash): then the replacement is out of date and is discarded, and the
  /// store stays as that app left it. Returns whether a swap was completed. A journal migrun did not
  /// write is refused by name, and nothing is changed.
  @discardableResult
  package static func completeInterruptedSwap(of store: URL) throws -> Bool {
    guard let (found, recorded) = try readJournal(of: store) else { return false }
    let journal = swapJournal(for: store)
    guard let replacement = found else {
      // Nothing to put in place: the rename happened before the crash.
      unlink(journal.path)
      return false
    }
    // The sidecars are unlinked before the rename: a main file alone is as the swap left it.
    let current = State(of: store)
    let untouched = recorded == current || (recorded.files.first == current.files.first && current.files[1].isEmpty)
    guard untouched else {
      remove(replacement)
      unlink(journal.path)
      return false
    }
    try finishSwap(store, replacement: replacement, journal: journal)
    return true
  }

  /// Whether the file system `url` lies on has no room left for an unprivileged write (`statvfs`'s
  /// available blocks): how a failure SQLite words as a disk I/O error is told to be a full disk.
  package static func hasNoFreeSpace(beside url: URL) -> Bool {
    var info = statvfs()
    return statvfs(url.deletingLastPathComponent().path, &info) == 0 && info.f_bavail == 0
  }

  /// The bytes of the plain file at `path` through the door in (``InputFile``: a symbolic link is
  /// not followed, a FIFO or device not read), `nil` when it cannot be read or holds more than `limit` bytes.
  static func readPlainFile(_ path: String, limit: Int) -> Data? {
    try? InputFile.data(URL(fileURLWithPath: path), origin: .found, limit: limit)
  }

  /// Writes `data` to a new file at `url` — never through a symbolic link, never over an entry that
  /// is there — and syncs it.
  static func writeNewFile(_ data: Data, to url: URL) throws {
    let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw StoreError(.io, file: url.path, reason: "cannot create (\(String(cString: strerror(errno))))")
    }
    defer { close(descriptor) }
    var offset = 0
    while offset < data.count {
      let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress.map { $0 + offset }, data.count - offset) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else {
        let reason = String(cString: strerror(errno))
        unlink(url.path)
        throw StoreError(.io, file: url.path, reason: "cannot write (\(reason))")
      }
      offset += written
    }
    guard fsync(descriptor) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(url.path)
      throw StoreError(.io, file: url.path, reason: "cannot sync (\(reason))")
    }
  }

  /// A URI that opens `url` as immutable: no locks, no side files, nothing written — and opened by
  /// the operating system for reading only (`mode=ro`: an `ATTACH` would otherwise open it with the
  /// connection's read-write, create flags, and create a file that is not there).
  package static func immutableURI(_ url: URL) -> String { "file:\(encodedPath(url))?mode=ro&immutable=1" }

  /// `url`'s path for a `file:` URI (`?`, `#`, `%` and the like percent-encoded).
  static func encodedPath(_ url: URL) -> String {
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove(charactersIn: "?#&=")
    return url.path.addingPercentEncoding(withAllowedCharacters: allowed) ?? url.path
  }

  /// Free bytes for an unprivileged writer on the file system holding `folder`.
  package static func freeBytes(in folder: URL) -> Int64? {
    var info = statvfs()
    guard statvfs(folder.path, &info) == 0 else { return nil }
    return Int64(info.f_bavail) * Int64(info.f_frsize)
  }

  /// `1.2 GiB`, `300 MiB`, `12 KiB`.
  package static func formatBytes(_ bytes: Int64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    guard unit > 0 else { return "\(bytes) bytes" }
    return (value < 10 ? String(format: "%.1f", value) : "\(Int(value.rounded()))") + " " + units[unit]
  }

  /// Removes a store and its sidecars (a working copy that failed).
  package static func remove(_ url: URL) {
    try? FileManager.default.removeItem(at: url)
    for suffix in sideFileSuffixes { try? FileManager.default.removeItem(atPath: url.path + suffix) }
  }

  /// fsync(2) on a file or folder.
  package static func sync(_ url: URL) throws { try syncLater(url)() }

  /// fsync(2) of `url`, its file opened now and synced when the returned work runs (on a thread of
  /// its own, beside other work): the name may be removed or replaced meanwhile — an earlier step's
  /// file a later step made moot — and the sync still reaches the file it was started for, never
  /// failing on a name gone (under load the thread may start after the next step removed it).
  package static func syncLater(_ url: URL) throws -> @Sendable () throws -> Void {
    let descriptor = open(url.path, O_RDONLY)
    guard descriptor >= 0 else {
      throw StoreError(.io, file: url.path, reason: "cannot open to sync (\(String(cString: strerror(errno))))")
    }
    return {
      defer { close(descriptor) }
      guard fsync(descriptor) == 0 else {
        throw StoreError(.io, file: url.path, reason: "cannot sync (\(String(cString: strerror(errno))))")
      }
    }
  }
}
