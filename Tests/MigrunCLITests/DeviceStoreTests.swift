import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Stores as they come off a device or out of a running app: transactions still in the `-wal`, a
/// second process holding the store, a file system without room.
@Suite(.serialized) struct DeviceStoreTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let moodyStore = "objcio-core-data-moody/stores/Moody.moody.sqlite"
  /// Adds a fifth mood (a copy of the first under the next key), as the app would.
  static let addMood = """
    CREATE TEMP TABLE m AS SELECT * FROM ZMOOD LIMIT 1;
    UPDATE m SET Z_PK = (SELECT max(Z_PK) + 1 FROM ZMOOD), ZCREATORID = 'from-the-wal';
    INSERT INTO ZMOOD SELECT * FROM m;
    UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM ZMOOD) WHERE Z_NAME = 'Mood';
    """

  static func names(in folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
  }

  static func moods(_ store: URL, creator: String) throws -> Int {
    try DatabaseQueue(path: StoreFiles.immutableURI(store)).read {
      try Int.fetchOne($0, sql: "SELECT count(*) FROM ZMOOD WHERE ZCREATORID = ?", arguments: [creator]) ?? -1
    }
  }

  @Test(arguments: [true, false]) func transactionsInTheWALAreMigratedAndTheOriginalsFilesAreNeverWritten(
    withSHM: Bool
  ) throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    let place = store.deletingLastPathComponent()
    try SQLiteShell.commitIntoWAL(store, Self.addMood)
    if !withSHM { try FileManager.default.removeItem(atPath: store.path + "-shm") }
    #expect(StoreFiles.hasWALContent(store), "the new mood is only in the -wal")
    let original = storeFileBytes(store)
    let files = try Self.names(in: place)

    let inspect = try MigrunProcess.run(["inspect", store.path, "--model", Self.moody])
    #expect(inspect.status == 0, "\(inspect.stderr)")
    #expect(inspect.stdout.split(separator: "\n").contains { $0.hasPrefix("  Mood") && $0.hasSuffix(" 5") })
    #expect(storeFileBytes(store) == original, "reading changes none of the three files")
    #expect(try Self.names(in: place) == files, "and adds none")

    let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(result.status == 0, "\(result.stderr)")
    let backup = StoreFiles.backupURL(for: store)
    #expect(storeFileBytes(backup) == original, "the original's files, kept together as the backup, byte for byte")
    #expect(
      try Self.names(in: place)
        == (["Moody.moody.sqlite", "Moody.moody~.sqlite", "Moody.moody~.sqlite-wal"]
        + (withSHM ? ["Moody.moody~.sqlite-shm"] : [])).sorted())
    #expect(try Self.moods(store, creator: "from-the-wal") == 1, "the WAL's transaction is in the result")
    #expect(StoreFiles.isWALMode(store), "written in the journal mode the original had")
    let status = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(status.status == 0, "\(status.stderr)")
  }

  struct Holder: CustomTestStringConvertible, Sendable {
    let name: String
    let sql: String
    let holds: String
    var testDescription: String { name }
  }

  static let holders = [
    Holder(name: "WAL, read transaction", sql: "BEGIN; SELECT count(*) FROM ZMOOD;", holds: "a read transaction"),
    Holder(name: "WAL, write lock", sql: "BEGIN IMMEDIATE;", holds: "a write lock"),
    Holder(name: "WAL, open and idle", sql: "SELECT count(*) FROM ZMOOD;", holds: "the store open"),
    Holder(
      name: "rollback journal, read transaction",
      sql: "PRAGMA journal_mode = DELETE; BEGIN; SELECT count(*) FROM ZMOOD;", holds: "a read transaction"),
    Holder(
      name: "rollback journal, write lock", sql: "PRAGMA journal_mode = DELETE; BEGIN IMMEDIATE;",
      holds: "a write lock"),
  ]

  @Test(arguments: holders) func aStoreHeldByAnotherProcessIsRefusedBeforeAnyWorkAndStillReadable(
    holder: Holder
  ) throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    let place = store.deletingLastPathComponent()
    let shell = try SQLiteShell(store, holder.sql)
    defer { shell.close() }
    let before = storeFileBytes(store)
    let files = try Self.names(in: place)

    let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(result.status == 11, "\(result.stderr)")
    #expect(result.errorLines.count == 1, "\(result.stderr)")
    let line = result.errorLines.first ?? ""
    #expect(line.contains(store.path) && line.contains("the store is in use"), "\(line)")
    #expect(line.contains("process \(shell.pid) (sqlite3) holds \(holder.holds)"), "\(line)")
    #expect(line.contains("--wait"), "\(line)")
    #expect(!result.stdout.contains("Migrating"), "nothing says it is migrating a store it refuses: \(result.stdout)")

    for command in [
      ["inspect", store.path, "--model", Self.moody], ["export", store.path, "--model", Self.moody],
      ["plan", store.path, "--model", Self.moody, "--to", "Moody 2"],
    ] {
      let read = try MigrunProcess.run(command)
      #expect(read.status == 0, "\(command[0]): \(read.stderr)")
    }
    let status = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(status.status == 10, "\(status.stderr)")
    #expect(storeFileBytes(store) == before, "nothing of the store was written")
    #expect(try Self.names(in: place) == files, "no working file was made")
  }

  /// An app that opens the store after the migration's session found it free — between `prepare`
  /// and the run, here taking SQLite's exclusive lock for its writes — is asked about again where the
  /// run reads the store (the bulk copy's read of it): read with SQLite's locks, never as an immutable file
  /// under the app's writes, the run (a dry run: no swap to refuse it at) is refused as the store
  /// in use, naming the app, at once (`wait` 0), and nothing is written.
  @Test func anAppThatOpensTheStoreAfterPrepareIsMetWhereTheRunReadsIt() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    try DatabaseQueue(path: store.path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = DELETE") }
    let bundle = try ModelBundle(modelOrStoreAt: URL(fileURLWithPath: Self.moody))
    let plan = try MigrationPlanner.plan(store: store, bundle: bundle, destination: "Moody 2")
    var options = StoreMigrator.Options()
    options.dryRun = true
    options.ddl = false
    let session = try MigrationSession(store, options: options)
    defer { session.close() }
    session.plan = plan
    let shell = try SQLiteShell(store, "BEGIN EXCLUSIVE;")
    defer { shell.close() }
    let before = storeFileBytes(store)
    #expect {
      try session.run()
    } throws: { error in
      StoreFailure.isInUse(error)
        && "\(error)".contains("\(store.path): the store is in use: process \(shell.pid) (sqlite3) holds a write lock")
    }
    #expect(storeFileBytes(store) == before, "nothing of the store was written")
  }

  @Test func aSecondMigrationOfTheSameStoreWaitsForTheFirstOrIsRefused() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    let lockFile = store.deletingLastPathComponent().appendingPathComponent(".Moody.moody.sqlite.migrun-lock")
    try Data("4242\n".utf8).write(to: lockFile)
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    holder.arguments = [lockFile.path, "sleep", "5"]
    try holder.run()
    // Until the lock is taken: a second open file description cannot take it either.
    for _ in 0..<200 {
      let probe = open(lockFile.path, O_RDONLY)
      defer { close(probe) }
      if flock(probe, LOCK_EX | LOCK_NB) != 0 { break }
      flock(probe, LOCK_UN)
      usleep(50_000)
    }
    let refused = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(refused.status == 11, "\(refused.stderr)")
    #expect(refused.stderr.contains("another migrun (process 4242) is migrating it"), "\(refused.stderr)")
    let waited = try MigrunProcess.run([
      "migrate", store.path, "--model", Self.moody, "--to", "Moody 2", "--wait", "30",
    ])
    holder.waitUntilExit()
    #expect(waited.status == 0, "\(waited.stderr)")
    #expect(!FileManager.default.fileExists(atPath: lockFile.path), "the lock goes with the migration")
  }

  @Test func waitWaitsForTheHolderToLetGo() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    let shell = try SQLiteShell(store, "BEGIN IMMEDIATE;")
    DispatchQueue.global().asyncAfter(deadline: .now() + 1) { shell.close() }
    let result = try MigrunProcess.run([
      "migrate", store.path, "--model", Self.moody, "--to", "Moody 2", "--wait", "30",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("Done"))
  }

  /// A tmpfs of `size`, or `nil` where mounting is not allowed (``TinyFileSystem``).
  static func tinyFileSystem(_ size: String, in folder: TemporaryDirectory, test: String) throws -> URL? {
    try TinyFileSystem.mount(size, in: folder, test: "DeviceStoreTests: \(test)")
  }

  static func unmount(_ mountPoint: URL) { TinyFileSystem.unmount(mountPoint) }

  /// A DDL step on a file system that clones files: the working copy is a clone the step then
  /// alters; the original (now the `~` backup) keeps every byte, and the result is the store the
  /// same migration gives elsewhere.
  @Test func aDDLStepOnXFSAltersACloneAndLeavesTheOriginalAsItWas() throws {
    let folder = try TemporaryDirectory()
    guard let xfs = try LoopFileSystem.make("xfs", megabytes: 320, in: folder, test: "a DDL step on XFS") else {
      return
    }
    defer { xfs.unmount() }
    var exports: [String] = []
    for place in [xfs.mountPoint, try folder.folder("elsewhere")] {
      let store = try writableCopyOfFixture(Self.moodyStore, in: place)
      let before = storeFileBytes(store)
      let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2", "--json"])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(
        result.stdout.contains("\"method\":\"DDL\"") || result.stdout.contains("\"method\" : \"DDL\""),
        "\(result.stdout)")
      #expect(storeFileBytes(StoreFiles.backupURL(for: store)) == before, "the original's bytes, kept as the backup")
      exports.append(try MigrunProcess.run(["export", store.path, "--model", Self.moody]).stdout)
    }
    #expect(exports[0] == exports[1])
    #expect(exports[0].contains("\"Mood\""))
  }

  @Test func aFileSystemWithoutRoomIsRefusedBeforeAnyWork() throws {
    let folder = try TemporaryDirectory()
    // 128 KiB: the 84 KiB store fits, its working copy does not.
    guard let mountPoint = try Self.tinyFileSystem("128k", in: folder, test: "the space check") else { return }
    defer { Self.unmount(mountPoint) }
    let store = mountPoint.appendingPathComponent("Moody.moody.sqlite")
    try FileManager.default.copyItem(at: Fixtures.url(Self.moodyStore), to: store)
    let before = storeFileBytes(store)

    let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(result.status == 12, "\(result.stderr)")
    #expect(result.errorLines.count == 1, "\(result.stderr)")
    let line = result.errorLines.first ?? ""
    #expect(line.contains("needs ~92 KiB beside the store") && line.contains("KiB free"), "\(line)")
    #expect(storeFileBytes(store) == before)
    #expect(try Self.names(in: mountPoint) == ["Moody.moody.sqlite"])
  }

  /// A script that grows the data past the estimate fills the disk mid-step: the same exit code,
  /// the working files gone, the store untouched.
  @Test func aDiskThatFillsDuringAStepLeavesTheStoreAndNoWorkingFiles() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      #"<model><entity name="R"><attribute name="s" optional="YES" attributeType="String"/></entity></model>"#,
      to: "R.xcdatamodeld/R.xcdatamodel/contents")
    try folder.write(
      #"<model><entity name="R"><attribute name="s" optional="YES" attributeType="String" versionHashModifier="2"/></entity></model>"#,
      to: "R.xcdatamodeld/R 2.xcdatamodel/contents")
    try folder.write(
      #"return { R = { attributes = { s = function(src) return string.rep(src.s, 2000) end } } }"#,
      to: "policies/R-R 2.lua")
    guard let mountPoint = try Self.tinyFileSystem("512k", in: folder, test: "the full-disk test") else { return }
    defer { Self.unmount(mountPoint) }
    let bundle = folder.url.appendingPathComponent("R.xcdatamodeld")
    let store = mountPoint.appendingPathComponent("r.sqlite")
    let created = try SQLiteStore.create(at: store, model: try ModelBundle(modelOrStoreAt: bundle).model(named: "R"))
    try created.write { writer in
      for index in 1...200 {
        try writer.insert(
          StoredObject(id: ObjectID(entity: "R", primaryKey: Int64(index)), attributes: ["s": .string("grow")]))
      }
    }
    try created.close()
    let before = storeFileBytes(store)
    let result = try MigrunProcess.run([
      "migrate", store.path, "--model", bundle.path, "--policies", folder.url.appendingPathComponent("policies").path,
    ])
    #expect(result.status == 12, "\(result.stderr)")
    #expect(result.errorLines.count == 1, "\(result.stderr)")
    #expect(result.stderr.contains("the file system filled up during step R → R 2"), "\(result.stderr)")
    #expect(result.stderr.contains("the working files are removed and the store is unchanged"))
    #expect(storeFileBytes(store) == before)
    #expect(try Self.names(in: mountPoint) == ["r.sqlite"])
  }

  /// A kill between unlinking the original's sidecars and renaming the new store in: reading commands
  /// say so, and the next `migrate` completes the swap before it plans anything.
  @Test func aSwapCutShortByAKillIsCompletedByTheNextMigrate() throws {
    let folder = try TemporaryDirectory()
    let migrated = try writableCopyOfFixture(Self.moodyStore, into: folder)
    let done = try MigrunProcess.run(["migrate", migrated.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(done.status == 0, "\(done.stderr)")
    let store = try writableCopyOfFixture(Self.moodyStore, into: folder)
    try SQLiteShell.commitIntoWAL(store, Self.addMood)
    let place = store.deletingLastPathComponent()
    let working = place.appendingPathComponent(".Moody.moody.sqlite.migrun-1-step1")
    try FileManager.default.copyItem(at: migrated, to: working)
    let state = StoreFiles.State(of: store)
    for suffix in ["", "-wal", "-shm"] {
      try FileManager.default.linkItem(
        atPath: store.path + suffix, toPath: place.path + "/Moody.moody~.sqlite" + suffix)
    }
    try Data((working.lastPathComponent + "\n" + state.text + "\n").utf8).write(
      to: place.appendingPathComponent(".Moody.moody.sqlite.migrun-swap"))
    for suffix in ["-wal", "-shm"] { try FileManager.default.removeItem(atPath: store.path + suffix) }

    let status = try MigrunProcess.run(["status", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(status.status == 1)
    #expect(status.stderr.contains("interrupted while putting the new store in place"), "\(status.stderr)")
    let rerun = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(rerun.status == 0, "\(rerun.stderr)")
    #expect(rerun.stdout.contains("completed the swap"), "\(rerun.stdout)")
    #expect(rerun.stdout.contains("already at Moody 2"), "\(rerun.stdout)")
    #expect(
      try Self.names(in: place) == [
        "Moody.moody.sqlite", "Moody.moody~.sqlite", "Moody.moody~.sqlite-shm", "Moody.moody~.sqlite-wal",
      ])
  }
}
