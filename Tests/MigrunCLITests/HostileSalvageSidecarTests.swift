import Foundation
import GRDB
import TestSupport
import Testing

@testable import MigrunStore

/// Issue 69's hostile round: a row wider than any table, a hot journal naming a super-journal, and
/// sidecars of 1.5 GB (sparse files: no disk used) — salvage ends, reads as SQLite reads, and says
/// what it did.
@Suite struct HostileSalvageSidecarTests {
  static let moody = HostileStoreTests.moody

  /// A page appended to Moody 2's store (the header counting it), no tree leading to it, holding
  /// one row of 2,100 values: the table of rows of no table would need more columns than SQLite
  /// allows, and the whole salvage failed. The row is kept value by value and counted.
  @Test func aRowWiderThanAnyTableIsKeptValueByValue() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(HostileStoreTests.moodyStore, into: folder)
    let moods = try HostileSalvageTests.sqlite(store, "SELECT count(*) FROM ZMOOD")
    let size = try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int ?? 0
    let row = HostileSalvageTests.record([nil] + (1..<2100).map { $0 % 2 })
    try HostileSalvageTests.write(HostileSalvageTests.leaf(size: 4096, cells: [(7, row)]), at: size, of: store)
    let pages = UInt32(size / 4096 + 1)
    try HostileSalvageTests.write(withUnsafeBytes(of: pages.bigEndian, Array.init), at: 28, of: store)
    let (out, result) = try SalvageProofTests.salvaged(store, in: folder, ["--model", Self.moody])
    #expect(result.status == 1, "something is kept aside: \(result.stdout)\(result.stderr)")
    #expect(
      result.stdout.contains("1 rows of no table kept value by value in MIGRUN_SALVAGED_VALUES"), "\(result.stdout)")
    #expect(try HostileSalvageTests.sqlite(out, "SELECT count(*) FROM ZMOOD") == moods)
    let kept = try HostileSalvageTests.sqlite(
      out, "SELECT count(*), max(Z_INDEX), sum(Z_VALUE) FROM MIGRUN_SALVAGED_VALUES")
    #expect(kept == ["2100", "2099", "1050"], "\(kept)")
  }

  /// A store whose transaction (every other page row deleted) was committed in full, beside the
  /// hot journal of that transaction (the originals of the pages it changed), a super-journal's
  /// name at its end: the transaction was several databases' (SQLite's master
  /// journal). The super-journal gone — the commit point of such a transaction — SQLite reads the
  /// transaction as committed and deletes the journal unplayed: salvage rolled it back. Now it
  /// reads the store as SQLite does, and says so; with the super-journal there, it rolls back.
  @Test func aJournalNamingAMissingSuperJournalIsNotPlayedBack() throws {
    let folder = try TemporaryDirectory()
    let intact = try writableCopyOfFixture(SalvageCommandTests.sampleStore, into: folder)
    let pages =
      Int(try HostileSalvageTests.sqlite(intact, "SELECT count(*) FROM ZPAGE").first?.flatMap { $0 } ?? "") ?? 0
    let store = try writableCopyOfFixture(SalvageCommandTests.sampleStore, into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA journal_mode = DELETE")
      try db.inTransaction {
        try db.execute(sql: "DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE")
        try db.execute(sql: "DELETE FROM ZPAGE WHERE Z_PK % 2 = 0")
        return .commit
      }
    }
    try queue.close()
    // The transaction's journal: the original of every page it changed.
    let before = Array(try Data(contentsOf: intact))
    let after = Array(try Data(contentsOf: store))
    func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    let changed = (1...(before.count / 4096)).filter { page in
      let range = (page - 1) * 4096..<page * 4096
      return range.upperBound > after.count || before[range] != after[range]
    }
    let nonce: UInt32 = 0x1234_5678
    var journal: [UInt8] = RollbackJournal.magic + bigEndian(UInt32(changed.count)) + bigEndian(nonce)
    journal += bigEndian(UInt32(before.count / 4096)) + bigEndian(512) + bigEndian(4096)
    journal += [UInt8](repeating: 0, count: 512 - journal.count)
    for page in changed {
      let original: ArraySlice<UInt8> = before[(page - 1) * 4096..<page * 4096]
      let sum: UInt32 = RollbackJournal.checksum(original, nonce: nonce)
      journal += bigEndian(UInt32(page))
      journal += original
      journal += bigEndian(sum)
    }
    let superJournal = folder.url.appendingPathComponent("gone-mj0123ABCD")
    let name = Array(superJournal.path.utf8)
    let sum = name.reduce(UInt32(0)) { $0 &+ UInt32($1) }
    let record = bigEndian(UInt32(0x4000_0000 / 4096 + 1)) + name + bigEndian(UInt32(name.count)) + bigEndian(sum)
    try Data(journal + record + RollbackJournal.magic).write(to: URL(fileURLWithPath: store.path + "-journal"))
    // With the super-journal there, SQLite plays the journal back: so does salvage.
    try Data("x".utf8).write(to: superJournal)
    let (rolled, back) = try SalvageProofTests.salvaged(store, in: folder)
    #expect(back.stdout.contains("hot -journal rolled back"), "\(back.stdout)\(back.stderr)")
    #expect(try HostileSalvageTests.sqlite(rolled, "SELECT count(*) FROM ZPAGE") == ["\(pages)"], "\(back.stdout)")
    try FileManager.default.removeItem(at: superJournal)
    let sqlite = try SalvageProofTests.sqliteReads(store, "SELECT count(*) FROM ZPAGE", in: folder)
    #expect(sqlite == [pages - pages / 2], "the premise: SQLite reads the transaction committed: \(sqlite)")
    let (out, result) = try SalvageProofTests.salvaged(store, in: folder)
    #expect(
      result.stdout.contains("hot -journal not played back: it names the super-journal \(superJournal.path)"),
      "\(result.stdout)\(result.stderr)")
    #expect(!result.stdout.contains("rolled back"), "\(result.stdout)")
    #expect(
      try HostileSalvageTests.sqlite(out, "SELECT count(*) FROM ZPAGE") == ["\(sqlite[0])"], "\(sqlite) \(pages)")
  }

  /// `program` run under an address-space limit of 1 GB (where `prlimit` is), so a file read whole
  /// into memory fails the run instead of the machine.
  static func limited(_ arguments: [String]) throws -> MigrunProcess.Result {
    let prlimit = "/usr/bin/prlimit"
    guard FileManager.default.isExecutableFile(atPath: prlimit) else { return try MigrunProcess.run(arguments) }
    return try MigrunProcess.run(
      ["--as=\(1 << 30)", "--", MigrunProcess.executable.path] + arguments, program: prlimit)
  }

  /// A `-wal` of one committed frame followed by 1.5 GB of nothing (a sparse file), and a hot
  /// `-journal` of 1.5 GB: each was read whole into memory (a crash). They are read a frame and a
  /// record at a time: salvage ends within a 1 GB address space, the frame applied, the journal
  /// rolled back.
  @Test func sidecarsOfOnePointFiveGigabytesAreReadInBoundedMemory() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(HostileStoreTests.moodyStore, into: folder)
    // One commit frame: the store's last page as it is (the store's size in pages its commit's).
    let bytes = try Data(contentsOf: store)
    let last = Array(bytes.suffix(4096))
    let wal = URL(fileURLWithPath: store.path + "-wal")
    try Data(HostileStoreTests.writeAheadLog(pageSize: 4096, frames: [(UInt32(bytes.count / 4096), last)])).write(
      to: wal)
    try FileHandle(forWritingTo: wal).truncate(atOffset: 1_500_000_000)
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let result = try Self.limited(["salvage", store.path, "--out", out.path, "--model", Self.moody])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("1 committed frames of the -wal applied"), "\(result.stdout)")

    let (crashed, intact, pages) = try HotJournalTests.crashedWriter(in: folder)
    try HotJournalTests.expectHot(crashed, intact: intact)
    try FileHandle(forWritingTo: URL(fileURLWithPath: crashed.path + "-journal")).truncate(atOffset: 1_500_000_000)
    let saved = folder.url.appendingPathComponent("journal.sqlite")
    let rolled = try Self.limited(["salvage", crashed.path, "--out", saved.path])
    #expect(
      rolled.status == 0 && rolled.stdout.contains("hot -journal rolled back"), "\(rolled.stdout)\(rolled.stderr)")
    #expect(try HostileSalvageTests.sqlite(saved, "SELECT count(*) FROM ZPAGE") == ["\(pages)"])
  }
}
