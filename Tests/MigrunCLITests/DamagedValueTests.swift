import Foundation
import TestSupport
import Testing

/// Columns holding values of another type than Core Data writes (a damaged or hand-edited store):
/// one line naming the column, never a trap. GRDB's typed row subscripts ended the process on each.
@Suite struct DamagedValueTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  @Test(arguments: [
    // Text affinity turns a number into text; a BLOB that is not UTF-8 stays what it is.
    ("UPDATE Z_METADATA SET Z_UUID = x'FF'", "Z_METADATA: Z_UUID holds"),
    ("UPDATE ZMOOD SET Z_OPT = x'00'", "Z_OPT holds"),
    ("UPDATE ZMOOD SET ZCOUNTRY = 'somewhere'", "ZCOUNTRY holds \"somewhere\", not Int64"),
  ])
  func aValueOfAnotherTypeIsOneLineNotACrash(sql: String, message: String) throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try makeDatabase(store, [sql])
    let before = storeFileBytes(store)
    let result = try MigrunProcess.run(["export", store.path, "--model", Self.moody])
    #expect(result.status == 1, "\(result.stderr)")
    #expect(result.errorLines.count == 1, "\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(storeFileBytes(store) == before)
  }
}
