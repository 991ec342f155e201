import Foundation
import GRDB
import MigrunKit
import MigrunStore
import TestSupport
import Testing

@Suite struct StoreFilesTests {
  @Test func backupNamesPutTheTildeBeforeTheExtension() {
    let folder = URL(fileURLWithPath: "/data")
    #expect(
      StoreFiles.backupURL(for: folder.appendingPathComponent("Moody.sqlite")).lastPathComponent == "Moody~.sqlite")
    #expect(
      StoreFiles.backupURL(for: folder.appendingPathComponent("Moody 2.moody")).lastPathComponent == "Moody 2~.moody")
    #expect(StoreFiles.backupURL(for: folder.appendingPathComponent("Store")).lastPathComponent == "Store~")
  }

  /// A WAL store whose latest rows live only in its -wal file (copied while its writer is open).
  static func walStore(in folder: TemporaryDirectory) throws -> URL {
    let live = try folder.folder("live").appendingPathComponent("live.sqlite")
    var configuration = Configuration()
    configuration.journalMode = .wal
    let pool = try DatabasePool(path: live.path, configuration: configuration)
    try pool.write { db in
      try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
      try db.execute(sql: "CREATE TABLE t (x INTEGER)")
      for value in 1...100 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) }
    }
    let copy = try folder.folder("copy").appendingPathComponent("store.sqlite")
    for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: live.path + suffix) {
      try FileManager.default.copyItem(atPath: live.path + suffix, toPath: copy.path + suffix)
    }
    try pool.close()
    return copy
  }

  static func sum(_ url: URL) throws -> Int {
    try DatabaseQueue(path: url.path).read { try Int.fetchOne($0, sql: "SELECT sum(x) FROM t") ?? -1 }
  }

  /// On a file system that clones files (XFS here), the working copy shares the original's blocks
  /// (no bytes copied), and writing the copy leaves the original as it was.
  @Test func onXFSTheCopyIsAClone() throws {
    let folder = try TemporaryDirectory()
    guard let xfs = try LoopFileSystem.make("xfs", megabytes: 320, in: folder, test: "the clone on XFS") else { return }
    defer { xfs.unmount() }
    let original = xfs.mountPoint.appendingPathComponent("store.sqlite")
    // 64 MiB of random bytes: no block a copy of another that the file system could share.
    let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
    let bytes = try #require(try random.read(upToCount: 64 << 20))
    try random.close()
    try bytes.write(to: original)
    let before = try xfs.freeBytes()
    let copy = xfs.mountPoint.appendingPathComponent("copy.sqlite")
    try StoreFiles.cloneOrCopy(original, to: copy)
    let used = before - (try xfs.freeBytes())
    #expect(used < 4 << 20, "a clone of 64 MiB takes no room of its own; it took \(used) bytes")
    #expect(try Data(contentsOf: copy) == bytes)
    let handle = try FileHandle(forWritingTo: copy)
    try handle.seek(toOffset: 1 << 20)
    try handle.write(contentsOf: Data([1, 2, 3]))
    try handle.close()
    #expect(try Data(contentsOf: original) == bytes, "writing the clone leaves the original as it was")
    #expect(try Data(contentsOf: copy) != bytes)
  }

  @Test func copyTakesTheWALAlongAndLeavesOneFile() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.walStore(in: folder)
    #expect(!StoreFiles.sidecars(of: store).isEmpty, "the fixture has its content in -wal")
    let before = try Data(contentsOf: store)
    let copy = folder.url.appendingPathComponent("copy.sqlite")
    try StoreFiles.snapshot(store, to: copy)
    #expect(StoreFiles.sidecars(of: copy).isEmpty)
    #expect(try Self.sum(copy) == 5050)
    #expect(try Data(contentsOf: store) == before, "the source is only read")
  }

  @Test func replaceKeepsTheOriginalsThreeFilesAsBackupAndSwapsInTheNewStore() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.walStore(in: folder)
    let original = storeFileBytes(store)
    let working = WorkingFiles.scratch(of: store, label: "work")
    try makeDatabase(working, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (7)"])
    let backup = try #require(try StoreFiles.replace(store, with: working, keepBackup: true))
    #expect(backup.lastPathComponent == "store~.sqlite")
    #expect(storeFileBytes(backup) == original, "the original's main file, -wal and -shm, byte for byte")
    let left = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path).sorted()
    #expect(left == ["store.sqlite", "store~.sqlite", "store~.sqlite-shm", "store~.sqlite-wal"])
    #expect(try Self.sum(store) == 7, "no old -wal beside the new store to replay into it")
    #expect(try Self.sum(backup) == 5050, "the backup holds the original's WAL content too")
  }

  @Test func aSwapInterruptedByACrashIsCompletedNextTime() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.walStore(in: folder)
    let working = store.deletingLastPathComponent().appendingPathComponent(".store.sqlite.migrun-1-step1")
    try makeDatabase(working, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (7)"])
    // As left by a kill after the journal was written and the -wal unlinked, before the rename.
    try Data((working.lastPathComponent + "\n" + StoreFiles.State(of: store).text + "\n").utf8).write(
      to: store.deletingLastPathComponent().appendingPathComponent(".store.sqlite.migrun-swap"))
    try FileManager.default.removeItem(atPath: store.path + "-wal")
    #expect(throws: StoreError.self) { try SQLiteStore(url: store, access: .readWrite) }
    #expect(try StoreFiles.completeInterruptedSwap(of: store))
    #expect(try Self.sum(store) == 7)
    let left = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path).sorted()
    #expect(left == ["store.sqlite"])
    #expect(try !StoreFiles.completeInterruptedSwap(of: store))
  }

  @Test func anInterruptedSwapIsDroppedWhenAnAppWroteToTheStoreSince() throws {
    let folder = try TemporaryDirectory()
    let store = try folder.folder("s").appendingPathComponent("s.sqlite")
    try makeDatabase(store, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (1)"])
    let working = store.deletingLastPathComponent().appendingPathComponent(".s.sqlite.migrun-1-step1")
    try makeDatabase(working, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (7)"])
    let journal = store.deletingLastPathComponent().appendingPathComponent(".s.sqlite.migrun-swap")
    try Data((working.lastPathComponent + "\n" + StoreFiles.State(of: store).text + "\n").utf8).write(to: journal)
    usleep(10_000)
    try makeDatabase(store, ["INSERT INTO t VALUES (2)"])
    #expect(try !StoreFiles.completeInterruptedSwap(of: store))
    #expect(try Self.sum(store) == 3, "the app's write stays; the out-of-date replacement is dropped")
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path) == ["s.sqlite"])
  }

  @Test func replaceRefusesWhenTheOriginalChangedSinceItWasRead() throws {
    let folder = try TemporaryDirectory()
    let store = try folder.folder("s").appendingPathComponent("s.sqlite")
    try makeDatabase(store, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (1)"])
    let state = StoreFiles.State(of: store)
    try makeDatabase(store, ["INSERT INTO t VALUES (2)"])
    let working = WorkingFiles.scratch(of: store, label: "work")
    try makeDatabase(working, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (9)"])
    let error = try #require(throws: StoreError.self) {
      try StoreFiles.replace(store, with: working, keepBackup: true, expecting: state)
    }
    #expect(error.code == .inUse)
    #expect(error.description.contains("another process wrote to the store while it was being migrated"))
    #expect(try Self.sum(store) == 3, "the other process's write is kept")
  }

  @Test func replaceWithoutBackupLeavesOnlyTheNewStore() throws {
    let folder = try TemporaryDirectory()
    let store = try folder.folder("s").appendingPathComponent("s.sqlite")
    try makeDatabase(store, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (1)"])
    let working = WorkingFiles.scratch(of: store, label: "work")
    try makeDatabase(working, ["CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (2)"])
    #expect(try StoreFiles.replace(store, with: working, keepBackup: false) == nil)
    #expect(try Self.sum(store) == 2)
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path) == ["s.sqlite"])
  }
}

/// The original is opened by the operating system for reading only — opened directly and attached
/// (`ATTACH` would otherwise take the connection's read-write, create flags) — and a missing file
/// is never created.
@Suite struct ReadOnlyOpeningTests {
  /// The access modes (`O_RDONLY` 0, `O_WRONLY` 1, `O_RDWR` 2) of this process's descriptors open on `path`.
  static func accessModes(of path: String) throws -> [Int] {
    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    var modes: [Int] = []
    for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
      guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) == target,
        let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(name)", encoding: .utf8),
        let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
        let flags = Int(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
      else { continue }
      modes.append(flags & 3)
    }
    return modes
  }

  @Test func theOriginalIsOpenedReadOnlyAndAttachedReadOnly() throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("s.sqlite")
    try DatabaseQueue(path: store.path).write { db in try db.execute(sql: "CREATE TABLE t (x)") }
    let direct = try DatabaseQueue(path: StoreFiles.immutableURI(store), configuration: Configuration())
    try direct.read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
    let attaching = try DatabaseQueue(path: folder.url.appendingPathComponent("other.sqlite").path)
    try attaching.writeWithoutTransaction { db in
      try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [StoreFiles.immutableURI(store)])
      _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM src.t")
      let modes = try Self.accessModes(of: store.path)
      #expect(modes.count == 2 && modes.allSatisfy { $0 == 0 }, "\(modes)")
    }
    let missing = folder.url.appendingPathComponent("missing.sqlite")
    let attached = Result {
      try attaching.writeWithoutTransaction { db in
        try db.execute(sql: "ATTACH DATABASE ? AS gone", arguments: [StoreFiles.immutableURI(missing)])
      }
    }
    #expect(throws: (any Error).self) { try attached.get() }
    #expect(!FileManager.default.fileExists(atPath: missing.path), "a missing original is never created")
    try direct.close()
    try attaching.close()
  }
}

/// A store SQLite cannot open for want of room is said as a full disk, not as a file that is not
/// SQLite (issue 71: "not a SQLite database (disk I/O error)" on a full disk).
@Suite struct FullDiskOpeningTests {
  @Test func openingAWALStoreForWritingOnAFullDiskIsNoSpace() throws {
    let folder = try TemporaryDirectory()
    guard let tiny = try TinyFileSystem.mount("256k", in: folder, test: "opening on a full disk") else { return }
    defer { TinyFileSystem.unmount(tiny) }
    let store = tiny.appendingPathComponent("Moody.sqlite")
    try FileManager.default.copyItem(
      at: Fixtures.url("objcio-core-data-moody/stores/Moody 2.moody.sqlite"), to: store)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.path)
    // The rest of the disk filled: no room for the -shm a WAL store needs.
    let fill = tiny.appendingPathComponent("fill").path
    #expect(FileManager.default.createFile(atPath: fill, contents: nil))
    let filler = try #require(FileHandle(forWritingAtPath: fill))
    let block = Data(count: 4096)
    while (try? filler.write(contentsOf: block)) != nil {}
    try? filler.close()
    let error = try #require(throws: StoreError.self) {
      let opened = try SQLiteStore(url: store, access: .readWrite)
      _ = try opened.count(of: "Mood", includingSubentities: true)
    }
    #expect(error.code == .noSpace, "\(error)")
  }
}
