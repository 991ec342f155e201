import Foundation
import TestSupport
import Testing

/// A stage's budget grows with the objects it is handed (issue 72): `--lua-instructions` and
/// `--lua-time` are the base, each object a walk hands over adds to it, and a handler that stops
/// making progress is still stopped, by name.
@Suite struct StageBudgetTests {
  /// The trips project of `StageTests`, its store holding `count` trips, every fifth one's name
  /// the trip's before.
  static func project(trips count: Int) throws -> StageTests.Project {
    let project = try StageTests.project()
    let trips = (1...count).map { n in
      let name = n % 5 == 0 ? "trip \(n - 1)" : "trip \(n)"
      return #"{ "pk": \#(n), "attributes": { "name": "\#(name)", "start": \#(n) }, "relationships": { "stops": [] } }"#
    }
    let json = project.folder.url.appendingPathComponent("many.json")
    try #"{ "format": "migrun-store/1", "entities": { "Trip": [\#(trips.joined(separator: ",\n"))], "Stop": [] } }"#
      .write(to: json, atomically: true, encoding: .utf8)
    try FileManager.default.removeItem(at: project.store)
    let imported = try MigrunProcess.run([
      "import", json.path, "--model", project.model, "--model-version", "1.0.0", "--out", project.store.path,
    ])
    #expect(imported.status == 0, "\(imported.stderr)")
    return project
  }

  /// docs/policies.md's dedupe: a walk in name order, newest first, saved a batch at a time.
  static let dedupe = """
    return { willMigrate = function(ctx)
      local last
      ctx:each("Trip", nil, function(trip)
        if trip.name == last then ctx:delete(trip) else last = trip.name end
      end, { sort = { "name", "-start" }, save = true })
    end }
    """

  @Test func aWalkPastTheBaseBudgetRunsOnWhatItsObjectsEarn() throws {
    let project = try Self.project(trips: 2000)
    try Self.dedupe.write(
      to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    // 20,000 instructions are not the walk's 2,000 objects' worth: the grant for each is.
    let result = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path,
      "--lua-instructions", "20000",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect((result.stdout + result.stderr).contains("400 deleted"), "\(result.stdout)")
    let trips: Int = try StageTests.rows(project.store, "SELECT count(*) FROM ZTRIP").first?[0] ?? 0
    #expect(trips == 1600)
  }

  @Test func walkAfterWalkIsStoppedOnceItsObjectsStopEarning() throws {
    let project = try Self.project(trips: 2000)
    try "return { willMigrate = function(ctx) while true do ctx:each(\"Trip\", nil, function(t) end) end end }"
      .write(
        to: project.policies.appendingPathComponent("1.0.0-2.0.0.stage.lua"), atomically: true, encoding: .utf8)
    let original = try Data(contentsOf: project.store)
    let result = try MigrunProcess.run([
      "migrate", project.store.path, "--model", project.model, "--policies", project.policies.path, "--lua-time", "1",
    ])
    #expect(result.status == 1)
    #expect(
      result.stderr.contains("time limit of 1 s without a new object exceeded (4000 objects handed over until then)"),
      "\(result.stderr)")
    #expect(result.stderr.contains("--lua-time raised"), "\(result.stderr)")
    #expect(try Data(contentsOf: project.store) == original)
  }
}
