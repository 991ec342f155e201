import Foundation
import TestSupport
import Testing

/// Every number the user gives is checked before it is converted (issue 69, part C): `--wait
/// 2147484` trapped converting its milliseconds to SQLite's 32-bit count (SIGILL). Each option past
/// its range is a usage error naming the option and the range, exit 64, before any work.
@Suite struct NumberOptionTests {
  static let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let store = "objcio-core-data-moody/stores/Moody.moody.sqlite"

  @Test(arguments: [
    (["check", "STORE", "--wait", "2147484"], "--wait: give a number of seconds from 0 to 2147483 (24 days)"),
    (["inspect", "STORE", "--wait", "1e300"], "--wait: give a number of seconds from 0 to 2147483 (24 days)"),
    (["export", "STORE", "--wait", "inf"], "--wait: give a number of seconds from 0 to 2147483 (24 days)"),
    (["status", "STORE", "--model", "MODEL", "--wait", "9999999999"], "--wait: give a number of seconds from 0 to"),
    (["migrate", "STORE", "--model", "MODEL", "--wait", "3000000"], "--wait: give a number of seconds from 0 to"),
    (["verify", "MODEL", "--objects=-1"], "--objects: give a number of objects per entity from 0 to 1000000"),
    (["verify", "MODEL", "--objects", "9223372036854775807"], "--objects: give a number of objects per entity"),
    (["migrate", "STORE", "--model", "MODEL", "--lua-time", "inf"], "--lua-time must be more than 0 seconds"),
    (["migrate", "STORE", "--model", "MODEL", "--lua-memory", "9223372036854775807"], "--lua-memory must be between"),
  ])
  func aNumberPastItsRangeIsAUsageErrorNeverATrap(arguments: [String], expected: String) throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(Self.store, into: folder)
    let before = try Data(contentsOf: store)
    let resolved = arguments.map { $0 == "STORE" ? store.path : $0 == "MODEL" ? Self.model : $0 }
    let result = try MigrunProcess.run(resolved)
    #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
    #expect(result.stderr.contains(expected), "\(arguments): \(result.stderr)")
    #expect(try Data(contentsOf: store) == before)
  }

  /// The longest wait allowed is taken (SQLite's busy handler is given it) and a free store is read.
  @Test func theLongestWaitIsTaken() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(Self.store, into: folder)
    let result = try MigrunProcess.run(["check", store.path, "--model", Self.model, "--wait", "2147483"])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
  }
}
