import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

/// Issue 62's reading side: a rollback-journal store whose writer crashed part way (a hot
/// `-journal` beside it, the uncommitted pages in the file) is read as SQLite reads it — rolled
/// back, never on the user's files — and a store another process holds EXCLUSIVE is in use, not
/// damaged.
@Suite struct HotJournalTests {
  /// A copy of the sample store whose writer deleted every other page row (triggers dropped first),
  /// spilled the changes into the file and was killed before committing; and an untouched copy.
  static func crashedWriter(in folder: TemporaryDirectory) throws -> (store: URL, intact: URL, pages: Int) {
    let intact = try writableCopyOfFixture(SalvageCommandTests.sampleStore, into: folder)
    let store = try writableCopyOfFixture(SalvageCommandTests.sampleStore, into: folder)
    let pages = try DatabaseQueue(path: intact.path).read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE") ?? 0
    }
    try SQLiteShell.crashMidTransaction(
      store, "DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE;\nDELETE FROM ZPAGE WHERE Z_PK % 2 = 0;")
    return (store, intact, pages)
  }

  static func bytes(_ store: URL) -> [Data?] {
    ["", "-journal"].map { FileManager.default.contents(atPath: store.path + $0) }
  }

  /// The test's premise: the kill left a hot journal and the file holds the uncommitted deletes.
  static func expectHot(_ store: URL, intact: URL) throws {
    let journal = try #require(FileManager.default.contents(atPath: store.path + "-journal"), "a -journal is left")
    #expect(Array(journal.prefix(8)) == [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
    #expect(try Data(contentsOf: store) != Data(contentsOf: intact), "the writer's pages reached the file")
  }

  @Test func salvageRollsAHotJournalBackAndSaysSo() throws {
    let folder = try TemporaryDirectory()
    let (store, intact, pages) = try Self.crashedWriter(in: folder)
    try Self.expectHot(store, intact: intact)
    let before = Self.bytes(store)
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try MigrunProcess.run(["salvage", store.path, "--out", out.path])
    #expect(result.status == 0 && result.stdout.contains("Nothing lost"), "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("hot -journal rolled back"), "the undone transaction is named: \(result.stdout)")
    let saved = try DatabaseQueue(path: out.path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE") }
    #expect(saved == pages, "the committed rows, not the crashed writer's: \(String(describing: saved)) of \(pages)")
    #expect(Self.bytes(store) == before, "the store and its journal are only read")
    let exports = try [intact, out].map { try MigrunProcess.run(["export", $0.path]).stdout }
    #expect(!exports[0].isEmpty && exports[0] == exports[1], "the salvaged store is the committed one")
  }

  @Test func readersReadTheStoreAsTheRollbackLeavesIt() throws {
    let folder = try TemporaryDirectory()
    let (store, intact, _) = try Self.crashedWriter(in: folder)
    let before = Self.bytes(store)
    for command in [["inspect"], ["export"]] {
      let expected = try MigrunProcess.run(command + [intact.path])
      let result = try MigrunProcess.run(command + [store.path])
      #expect(result.status == 0 && result.stdout == expected.stdout, "\(command): \(result.stdout)\(result.stderr)")
    }
    let check = try MigrunProcess.run(["check", store.path])
    #expect(check.status == 0, "a crashed writer is no damage: \(check.stdout)\(check.stderr)")
    #expect(check.stdout.contains("note: hot-journal"), "check names the hot journal: \(check.stdout)")
    #expect(!check.stdout.contains("salvage"), "\(check.stdout)")
    let drops = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"].flatMap { ["--drop", $0] }
    let copy = folder.url.appendingPathComponent("copy.xml")
    let copied = try MigrunProcess.run(["copy", store.path, copy.path, "--type", "xml"] + drops)
    #expect(copied.status == 0, "a store SQLite reads after its rollback: \(copied.stdout)\(copied.stderr)")
    #expect(Self.bytes(store) == before, "the store and its journal are only read")
    #expect(!FileManager.default.fileExists(atPath: store.path + "-wal"))
  }

  /// A writer in the middle of its commit (`BEGIN EXCLUSIVE` in a second process): every reader
  /// answers that the store is in use (exit 11), naming the holder — never damage, never salvaged.
  @Test func aStoreHeldExclusiveIsInUseNotDamaged() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(SalvageCommandTests.sampleStore, into: folder)
    let shell = try SQLiteShell(store, "PRAGMA journal_mode = DELETE;\nBEGIN EXCLUSIVE;")
    defer { shell.close() }
    let commands = [
      ["check", store.path], ["export", store.path], ["inspect", store.path],
      ["status", store.path, "--model", CompiledModelCommandTests.xcdatamodeld],
      ["copy", store.path, folder.url.appendingPathComponent("copy.xml").path, "--type", "xml", "--drop", "ACHANGE"],
      ["salvage", store.path, "--out", folder.url.appendingPathComponent("saved.sqlite").path],
    ]
    for command in commands {
      let result = try MigrunProcess.run(command)
      #expect(result.status == 11, "\(command[0]): \(result.stdout)\(result.stderr)")
      #expect(
        result.stderr.contains("in use") && result.stderr.contains("process \(shell.pid) (sqlite3)"),
        "\(command[0]) names the holder: \(result.stderr)")
      #expect(!result.stdout.contains("salvage") && !result.stderr.contains("not a SQLite"), "\(result.stdout)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("saved.sqlite").path))
    // --wait: the writer lets go a moment after the check starts waiting, and the check goes on.
    DispatchQueue.global().asyncAfter(deadline: .now() + 1) { shell.close() }
    let check = try MigrunProcess.run(["check", "--wait", "120", store.path])
    #expect(check.status == 0 && check.stdout.contains("clean"), "waited: \(check.stdout)\(check.stderr)")
  }

  /// `review` (and a policy test's `migrate{…}`) copies the store's file: under a writer's
  /// EXCLUSIVE lock (a rollback-journal commit writing the file in place) the copy could hold half of
  /// it, so the store is in use (exit 11, the holder named) — it was reviewed from the copy, exit 0.
  @Test func aReviewIsNeverMadeFromACopyOfHalfACommit() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let review = ["review", store.path, "--model", model, "--out", folder.url.appendingPathComponent("r.html").path]
    let shell = try SQLiteShell(store, "PRAGMA journal_mode = DELETE;\nBEGIN EXCLUSIVE;")
    let held = try MigrunProcess.run(review)
    #expect(held.status == 11, "\(held.stdout)\(held.stderr)")
    #expect(held.stderr.contains("in use") && held.stderr.contains("process \(shell.pid) (sqlite3)"), "\(held.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("r.html").path))
    shell.close()
    let free = try MigrunProcess.run(review)
    #expect(free.status == 0, "once the writer is gone: \(free.stdout)\(free.stderr)")
  }
}
