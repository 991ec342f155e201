import Foundation
import TestSupport
import Testing

@Suite struct StoreCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  struct Inspection: Decodable {
    struct Count: Decodable { let count: Int }
    let uuid: String
    let entities: [String: Count]
    let version: String?
  }

  @Test func inspectIdentifiesTheVersionAndCountsEveryEntity() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder)
    let before = try Data(contentsOf: store)
    let result = try MigrunProcess.run(["inspect", store.path, "--model", Self.moody, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONDecoder().decode(Inspection.self, from: Data(result.stdout.utf8))
    #expect(report.version == "Moody 3")
    #expect(report.uuid == "374C5961-3E41-43E5-915C-383EA914074C")
    #expect(report.entities.mapValues(\.count) == ["Continent": 2, "Country": 3, "GeographicRegion": 0, "Mood": 4])
    #expect(try Data(contentsOf: store) == before)
  }

  @Test func inspectWithoutAModelUsesTheStoresOwnModel() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(
      "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V2.sqlite", into: folder)
    let result = try MigrunProcess.run(["inspect", store.path, "--json"])
    let report = try JSONDecoder().decode(Inspection.self, from: Data(result.stdout.utf8))
    #expect(report.version == nil)
    #expect(report.entities["Page"]?.count ?? 0 > 100)
    let text = try MigrunProcess.run(["inspect", store.path])
    #expect(text.stdout.contains("Objects    (counted with the model from Z_MODELCACHE)"))
  }

  /// Stores migrun writes (imported, created, migrated) carry their model: inspect and export need
  /// no `--model`, and say the same as with it.
  @Test func storesMigrunWritesDescribeThemselves() throws {
    let folder = try TemporaryDirectory()
    let migrated = try copyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder)
    let run = try MigrunProcess.run(["migrate", migrated.path, "--model", Self.moody])
    #expect(run.status == 0, "\(run.stderr)")
    let created = folder.url.appendingPathComponent("created.sqlite")
    #expect(try MigrunProcess.run(["create", created.path, "--model", Self.moody]).status == 0)
    for store in [migrated, created] {
      let alone = try MigrunProcess.run(["inspect", store.path, "--json"])
      #expect(alone.status == 0, "\(alone.stderr)")
      let withModel = try MigrunProcess.run(["inspect", store.path, "--json", "--model", Self.moody])
      let (own, given) = (
        try JSONDecoder().decode(Inspection.self, from: Data(alone.stdout.utf8)),
        try JSONDecoder().decode(Inspection.self, from: Data(withModel.stdout.utf8))
      )
      #expect(own.entities.mapValues(\.count) == given.entities.mapValues(\.count))
      #expect(given.version == "Moody 6")
      let export = try MigrunProcess.run(["export", store.path])
      #expect(export.status == 0, "\(export.stderr)")
      #expect(export.stdout == (try MigrunProcess.run(["export", store.path, "--model", Self.moody]).stdout))
    }
  }

  @Test func inspectExplainsWhyNoVersionMatches() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder)
    let result = try MigrunProcess.run(["inspect", store.path, "--model", Self.moody + "/Moody 5.xcdatamodel"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("Version    none"))
    #expect(result.stdout.contains("GeographicRegion: in the store, not in the model"))
    #expect(result.stdout.contains("Mood: store hash Ge7Rg1sVl21lkI/vyC1FGEXHaUGJIkrqD2as1WAM8DY="))
  }

  @Test func createExportImportRoundTrip() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    let json = folder.url.appendingPathComponent("moody4.json")
    let export = try MigrunProcess.run(["export", store.path, "--model", Self.moody, "--out", json.path])
    #expect(export.status == 0, "\(export.stderr)")
    let copy = folder.url.appendingPathComponent("copy.sqlite")
    let imported = try MigrunProcess.run([
      "import", json.path, "--model", Self.moody, "--model-version", "Moody 4", "--out", copy.path,
    ])
    #expect(imported.status == 0, "\(imported.stderr)")
    let again = try MigrunProcess.run(["export", copy.path, "--model", Self.moody])
    #expect(again.stdout == (try String(contentsOf: json, encoding: .utf8)))
    let inspected = try MigrunProcess.run(["inspect", copy.path, "--model", Self.moody, "--json"])
    #expect(try JSONDecoder().decode(Inspection.self, from: Data(inspected.stdout.utf8)).version == "Moody 4")

    let empty = folder.url.appendingPathComponent("empty.sqlite")
    let created = try MigrunProcess.run(["create", empty.path, "--model", Self.moody, "--model-version", "Moody 2"])
    #expect(created.stdout == "created \(empty.path): Moody version Moody 2, 4 entities\n")
    let refused = try MigrunProcess.run(["create", empty.path, "--model", Self.moody])
    #expect(refused.status == 1)
    #expect(
      refused.errorLines == ["migrun: error: \(empty.path): a file is already there; migrun does not overwrite it"])
  }

  @Test func importIntoTheWrongVersionLeavesNothingBehind() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    let json = folder.url.appendingPathComponent("moody4.json")
    _ = try MigrunProcess.run(["export", store.path, "--model", Self.moody, "--out", json.path])
    let target = folder.url.appendingPathComponent("wrong.sqlite")
    let result = try MigrunProcess.run([
      "import", json.path, "--model", Self.moody, "--model-version", "Moody 5", "--out", target.path,
    ])
    #expect(result.status == 1)
    #expect(result.errorLines.count == 1)
    #expect(result.stderr.contains("the export was made with another model version"))
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
      !$0.hasPrefix(".") || $0.contains("migrun")
    }
    #expect(!left.contains { $0.contains("wrong") }, "\(left)")
  }

  /// A key the export format does not have is named (an attribute beside "pk" imported as NULL).
  @Test func importNamesAKeyTheFormatDoesNotHave() throws {
    let folder = try TemporaryDirectory()
    let json = folder.url.appendingPathComponent("moods.json")
    try #"{ "format": "migrun-store/1", "entities": { "Mood": [ { "pk": 1, "rating": 5 } ] } }"#.write(
      to: json, atomically: true, encoding: .utf8)
    let target = folder.url.appendingPathComponent("moods.sqlite")
    let result = try MigrunProcess.run([
      "import", json.path, "--model", Self.moody, "--model-version", "Moody 6", "--out", target.path,
    ])
    #expect(result.status == 1)
    #expect(
      result.stderr.contains(
        "entity 'Mood', object 1: an object has the key 'rating', an attribute: put it under \"attributes\""),
      "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: target.path))
  }

  @Test(arguments: [
    ("truncated", "not a SQLite database"), ("text", "not a SQLite database"),
  ])
  func damagedStoresGiveOneLineAndChangeNothing(kind: String, message: String) throws {
    let folder = try TemporaryDirectory()
    let store = try folder.folder("d").appendingPathComponent("bad.sqlite")
    if kind == "truncated" {
      let source = try Data(contentsOf: Fixtures.url("objcio-core-data-moody/stores/Moody 5.moody.sqlite"))
      try source.prefix(1000).write(to: store)
    } else {
      try Data(String(repeating: "hello ", count: 300).utf8).write(to: store)
    }
    let before = try Data(contentsOf: store)
    for command in [["inspect", store.path], ["export", store.path], ["inspect", store.path, "--model", Self.moody]] {
      let result = try MigrunProcess.run(command)
      #expect(result.status == 1, "\(command)")
      #expect(result.errorLines.count == 1, "\(command): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(command): \(result.stderr)")
    }
    #expect(try Data(contentsOf: store) == before)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path) == ["bad.sqlite"])
  }
}
