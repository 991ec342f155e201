import Foundation
import TestSupport
import Testing

/// `--model` takes a compiled `.momd` (or `.mom`) wherever it takes the `.xcdatamodeld`, with the
/// same results.
@Suite struct CompiledModelCommandTests {
  static let folder = "coredataplus-samplemodels/SampleModel"
  static let xcdatamodeld = Fixtures.url("\(folder)/SampleModel.xcdatamodeld").path
  static let momd = Fixtures.url("\(folder)/Fixtures/SampleModel.momd").path

  /// Runs `arguments` with `--model` given as the `.xcdatamodeld` and as the `.momd`, on copies of
  /// the same store in `scratch`; returns both results and both stores.
  func both(_ command: String, _ extra: [String], in scratch: TemporaryDirectory) throws -> [(
    MigrunProcess.Result, URL
  )] {
    try [Self.xcdatamodeld, Self.momd].map { model in
      let store = try copyOfFixture("\(Self.folder)/Fixtures/SampleModel_V1.sqlite", into: scratch)
      return (try MigrunProcess.run([command, store.path, "--model", model] + extra), store)
    }
  }

  @Test func inspectAndPlanSayTheSameWithTheCompiledModel() throws {
    for command in ["inspect", "plan"] {
      let results = try both(
        command, command == "plan" ? ["--to", "SampleModel2", "--json"] : [], in: try TemporaryDirectory())
      for (result, _) in results { #expect(result.status == 0, "\(command): \(result.stderr)") }
      #expect(results[0].0.stdout == results[1].0.stdout, "\(command)")
      #expect(results[0].0.stdout.contains("SampleModel"))
    }
  }

  @Test func migrateWithTheCompiledModelGivesTheSameStore() throws {
    let scratch = try TemporaryDirectory()
    let results = try both("migrate", ["--to", "SampleModel2"], in: scratch)
    var exports: [String] = []
    for (result, store) in results {
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout.contains("is at SampleModel2"))
      let export = try MigrunProcess.run(["export", store.path, "--model", Self.momd])
      #expect(export.status == 0, "\(export.stderr)")
      exports.append(export.stdout)
      let status = try MigrunProcess.run(["status", store.path, "--model", Self.momd, "--to", "SampleModel2"])
      #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
    }
    #expect(exports[0] == exports[1])
    #expect(exports[0].contains("\"Car\""))
  }

  @Test func hashOfAMomPrintsTheHashesItsVersionInfoRecords() throws {
    let mom = Fixtures.url("\(Self.folder)/Fixtures/SampleModel.momd/SampleModel2.mom").path
    let fromMom = try MigrunProcess.run(["hash", mom, "--json"])
    let fromXML = try MigrunProcess.run(["hash", Self.xcdatamodeld, "--model-version", "SampleModel2", "--json"])
    #expect(fromMom.status == 0, "\(fromMom.stderr)")
    let decoded = try [fromMom, fromXML].map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.stdout.utf8)) as? [String: Any])
    }
    #expect(decoded[0]["entities"] as? [String: String] == decoded[1]["entities"] as? [String: String])
    #expect(decoded[0]["digest"] as? String == decoded[1]["digest"] as? String)
  }
}
