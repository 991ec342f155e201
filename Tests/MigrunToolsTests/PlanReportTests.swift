import Foundation
import MigrunTools
import TestSupport
import Testing

/// What `plan` prints, made by the tools layer alone (`MigrationJobs.planReport`): the store and
/// its version, each step with its method, its mappings and the objects they take.
@Suite(.enabled(if: Fixtures.areAvailable))
struct PlanReportTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")

  static func report(chain: [String]?) throws -> (lines: [String], store: URL, folder: TemporaryDirectory) {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    var setup = MigrationSetup(model: moody)
    setup.chain = chain
    return (try MigrationJobs(setup).planReport(for: store).lines, store, folder)
  }

  @Test func aStepAlongTheChainShowsItsMethodAndTheObjectsEachMappingTakes() throws {
    let (lines, store, _) = try Self.report(chain: ["Moody 4", "Moody 5", "Moody 6"])
    let objects = try #require(lines.first)
    #expect(objects.hasPrefix("Store   \(store.lastPathComponent) at Moody 4 ("), "\(lines)")
    #expect(lines.contains("Target  Moody 6"))
    let steps = lines.filter { $0.hasPrefix("Step ") }
    #expect(steps == ["Step 1  Moody 4 → Moody 5  inferred", "Step 2  Moody 5 → Moody 6  inferred"], "\(lines)")
    // The first step's counts are the store's; the next step's are what the step before hands on.
    let moods = lines.filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("MoodToMood ") }
    #expect(moods.count == 2, "\(lines)")
    #expect(moods.first?.hasSuffix(" objects") == true && moods.last?.contains("~") == true, "\(moods)")
    #expect(lines.last?.hasPrefix("(~: what the step before hands on") == true, "\(lines)")
  }

  @Test func oneStepHasNoEstimates() throws {
    let (lines, _, _) = try Self.report(chain: nil)
    #expect(lines.filter { $0.hasPrefix("Step ") }.count == 1, "\(lines)")
    #expect(!lines.contains { $0.contains("~") }, "\(lines)")
    #expect(lines.contains { $0.hasPrefix("        runs as DDL") || $0.hasPrefix("        copies rows") }, "\(lines)")
  }
}
