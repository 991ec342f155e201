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
}
