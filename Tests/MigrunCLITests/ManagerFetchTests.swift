import Foundation
import TestSupport
import Testing

/// `m:fetch` (issue 70): a policy fetches, as Core Data's policies fetch in the manager's contexts,
/// the destination's objects an earlier entity mapping made, and the source's, by predicate, sorted
/// and limited.
@Suite struct ManagerFetchTests {
  static let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  static func migrate(_ mapping: String) throws -> MigrunProcess.Result {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let policies = try folder.folder("policies")
    try mapping.write(to: policies.appendingPathComponent("Moody 2-Moody 3.lua"), atomically: true, encoding: .utf8)
    return try MigrunProcess.run(
      ["migrate", store.path, "--model", Self.model, "--to", "Moody 3", "--policies", policies.path])
  }

  /// Moody 2 has countries 231, 704 and 710, two continents and four moods. Mood's mapping runs
  /// after Country's (`order`): its policy finds the countries Country's mapping made.
  @Test func aPolicyFetchesWhatAnEarlierMappingMadeAndTheSource() throws {
    let result = try Self.migrate(
      """
      return {
        order = { "Country", "Mood" },
        Country = "copy",
        Mood = {
          createDestinationInstances = function(src, m)
            local big = m:fetch("Country", "numericISO3166Code > %@", { args = { 500 }, sort = { "-numericISO3166Code" } })
            local codes = {}
            for _, country in ipairs(big) do codes[#codes + 1] = country.numericISO3166Code end
            local sources = m:fetch("Mood", nil, { source = true, limit = 2 })
            m:log("fetched " .. table.concat(codes, ",") .. "; " .. #sources .. " source moods")
          end,
        },
      }

      """)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("fetched 710,704; 2 source moods"), "\(result.stderr)")
  }

  /// Before Country's mapping has run, the destination holds no country: the fetch finds none (the
  /// order decides what a fetch sees, as in Core Data).
  @Test func aFetchBeforeTheMappingThatMakesTheObjectsFindsNone() throws {
    let result = try Self.migrate(
      """
      return {
        order = { "Mood", "Country" },
        Country = "copy",
        Mood = {
          createDestinationInstances = function(src, m)
            m:log("fetched " .. #m:fetch("Country") .. " countries")
          end,
        },
      }

      """)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("fetched 0 countries"), "\(result.stderr)")
  }

  /// A predicate the store cannot test whole is refused by name, never judged otherwise.
  @Test func aPredicateTheStoreCannotSayIsRefusedByName() throws {
    let result = try Self.migrate(
      """
      return {
        Mood = {
          createDestinationInstances = function(src, m)
            m:fetch("Country", "name MATCHES %@", { args = { "x.*" } })
          end,
        },
      }

      """)
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("cannot be tested by the store whole"), "\(result.stderr)")
  }
}
