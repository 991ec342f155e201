import Foundation
import GRDB
import TestSupport
import Testing

/// Mapping files that try what a hostile or careless script would (issue 49): each migration ends
/// with exit 1, a clear error naming the file, and the store byte for byte as it was.
@Suite struct HostileMappingTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  /// Migrates a copy of Moody 2 to Moody 3 with `script` as the step's mapping file.
  static func migrate(_ script: String) throws -> MigrunProcess.Result {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let policies = try folder.folder("policies")
    try script.write(to: policies.appendingPathComponent("Moody 2-Moody 3.lua"), atomically: true, encoding: .utf8)
    let before = try Data(contentsOf: store)
    let result = try MigrunProcess.run(
      ["migrate", store.path, "--model", moody, "--policies", policies.path, "--to", "Moody 3", "--lua-time", "3"])
    #expect(try Data(contentsOf: store) == before, "the store is unchanged")
    #expect(!FileManager.default.fileExists(atPath: store.path + "~"), "no backup: nothing was swapped")
    return result
  }

  @Test func aMadeUpObjectHandleIsRefused() throws {
    let result = try Self.migrate(
      """
      return { Mood = { createRelationships = function(dst, m)
        dst.country = { __entity = "Country", __pk = 999 }
      end } }
      """)
    #expect(result.status == 1)
    #expect(
      result.stderr.contains("Mood.country: Country/p999 does not exist in the destination store"), "\(result.stderr)")
  }

  @Test func anObjectOfTheWrongEntityIsRefused() throws {
    let result = try Self.migrate(
      """
      return { Mood = { createRelationships = function(dst, m)
        dst.country = dst
      end } }
      """)
    #expect(result.status == 1)
    #expect(result.stderr.contains("Mood.country links Country objects"), "\(result.stderr)")
  }

  @Test func aSourceObjectIsNoDestination() throws {
    let result = try Self.migrate(
      """
      return { Mood = { createRelationships = function(dst, m)
        dst.country = m:sources("MoodToMood", dst)[1].country
      end } }
      """)
    #expect(result.status == 1)
    #expect(result.stderr.contains("is a source object"), "\(result.stderr)")
  }

  @Test func aSourceObjectTurnedIntoADestinationOneCannotReenterTheStore() throws {
    let result = try Self.migrate(
      """
      return { Mood = { attributes = {
        rating = function(src)
          rawset(src, "__side", "dst")
          local country = src.country
          return 1
        end,
      } } }
      """)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("Moody 2-Moody 3.lua"), "\(result.stderr)")
  }

  @Test func aValueOutOfItsAttributesRangeIsRefused() throws {
    let result = try Self.migrate("return { Mood = { attributes = { rating = function(src) return 100000 end } } }")
    #expect(result.status == 1)
    #expect(result.stderr.contains("Mood.rating is Integer 16: 100000 is out of its range"), "\(result.stderr)")
  }

  @Test func textIsNoNumber() throws {
    let result = try Self.migrate("return { Mood = { attributes = { rating = function(src) return 'five' end } } }")
    #expect(result.status == 1)
    #expect(result.stderr.contains("Mood.rating is Integer 16; a string cannot be stored in it"), "\(result.stderr)")
  }

  @Test func checkFindsValuesOfAnotherType() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in
      try db.execute(
        sql:
          "UPDATE ZGEOGRAPHICREGION SET ZNUMERICISO3166CODE = 100000 WHERE Z_PK = (SELECT min(Z_PK) FROM ZGEOGRAPHICREGION)"
      )
      try db.execute(sql: "UPDATE ZMOOD SET ZDATE = 'yesterday' WHERE Z_PK = (SELECT min(Z_PK) FROM ZMOOD)")
    }
    try queue.close()
    let result = try MigrunProcess.run(["check", store.path, "--model", Self.moody])
    #expect(result.status == 1)
    #expect(result.stdout.contains("value-of-another-type"), "\(result.stdout)")
    #expect(result.stdout.contains("outside -32768…32767"), "\(result.stdout)")
    #expect(result.stdout.contains("Mood.date (Date): 1 value stored as text or bytes"), "\(result.stdout)")
  }

  /// Issue 55: a NaN written to the required Date `Mood.date` was stored as the text 'NaN' (exit 0;
  /// `check` failed after), and invalid UTF-8 written to a String became U+FFFD without a word. (A
  /// NaN Double is kept, as the text NaN Core Data writes for one.)
  @Test(arguments: [
    ("date = function(src) return 0/0 end", "Mood.date is a Date: NaN (0/0) is no date"),
    ("creatorID = function(src) return 'me\\xff\\xfe' end", "Mood.creatorID is String: the text given is not UTF-8"),
  ])
  func aNaNDateAndTextThatIsNotUTF8AreRefused(attribute: String, expected: String) throws {
    let result = try Self.migrate("return { Mood = { attributes = { \(attribute) } } }")
    #expect(result.status == 1)
    #expect(result.stderr.contains(expected), "\(result.stderr)")
  }

  @Test func writingToASourceObjectIsAnError() throws {
    for script in [
      "return { Mood = { attributes = { rating = function(src) src.mood = 5 return 1 end } } }",
      "return { Mood = { createDestinationInstances = function(src, m) src.colors = 'x' end } }",
    ] {
      let result = try Self.migrate(script)
      #expect(result.status == 1)
      #expect(result.stderr.contains("source objects are read-only (Mood."), "\(result.stderr)")
    }
  }

  /// Work the limits never saw before (a close handler after a trip, C library loops, patterns):
  /// in a mapping file each ends the migration with a limit's error naming the file.
  @Test(arguments: [
    """
    local co = coroutine.create(function()
      local g <close> = setmetatable({}, { __close = function() while true do end end })
      while true do end
    end)
    coroutine.resume(co)
    coroutine.close(co)
    return 1
    """,
    "table.move({}, 1, 1e15, 1) return 1",
    "return #string.rep('ab', math.maxinteger)",
    "return #tostring(string.match(('a'):rep(40), ('a?'):rep(40) .. ('a'):rep(40)))",
    "local t = {} for i = 1, 30 do t = { t, t } end return json.encode(t)",
  ])
  func aRunawayAttributeFunctionStopsTheMigration(body: String) throws {
    let result = try Self.migrate(
      "return { Mood = { attributes = { rating = function(src)\n\(body)\nend } } }")
    #expect(result.status == 1)
    #expect(result.stderr.contains("Moody 2-Moody 3.lua:"), "\(result.stderr)")
    #expect(
      ["limit", "exceed", "would make"].contains { result.stderr.contains($0) }, "\(result.stderr)")
  }
}
