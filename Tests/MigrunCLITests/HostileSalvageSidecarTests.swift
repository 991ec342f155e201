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
