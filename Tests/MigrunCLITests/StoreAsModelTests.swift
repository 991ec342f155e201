import Foundation
import Testing

@testable import TestSupport

/// A store is a model (its Z_MODELCACHE): given as --model, and as the source when the model folder
/// no longer has the store's version.
@Suite struct StoreAsModelTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  @Test func aStoreGivenAsTheModelIsTheDestination() throws {
    let folder = try TemporaryDirectory()
    let old = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let new = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let reference = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let plan = try MigrunProcess.run(["plan", old.path, "--model", new.path])
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("Target  Moody 5.moody"))
    #expect(plan.stdout.contains("the store's own model (Z_MODELCACHE) is the source"))
    let migrated = try MigrunProcess.run(["migrate", old.path, "--model", new.path])
    #expect(migrated.status == 0, "\(migrated.stderr)")
    // The same store as Core Data's direct step with the model folder.
    let direct = try MigrunProcess.run(["migrate", reference.path, "--model", Self.moody, "--to", "Moody 5"])
    #expect(direct.status == 0, "\(direct.stderr)")
    let ours = try MigrunProcess.run(["export", old.path, "--model", Self.moody])
    let theirs = try MigrunProcess.run(["export", reference.path, "--model", Self.moody])
    #expect(ours.status == 0 && !ours.stdout.isEmpty, "\(ours.stderr)")
    #expect(ours.stdout == theirs.stdout)
  }

  @Test func aStoreWhoseVersionLeftTheModelMigratesFromItsOwnModel() throws {
    let folder = try TemporaryDirectory()
    let model = folder.url.appendingPathComponent("Moody.xcdatamodeld")
    try FileManager.default.copyItem(at: URL(fileURLWithPath: Self.moody), to: model)
    try FileManager.default.removeItem(at: model.appendingPathComponent("Moody 2.xcdatamodel"))
    let stores = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: stores)
    let plan = try MigrunProcess.run(["plan", store.path, "--model", model.path])
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("Step 1  Moody 2.moody's own model → Moody 6  inferred"), "\(plan.stdout)")
    let json = try MigrunProcess.run(["plan", store.path, "--model", model.path, "--json"])
    #expect(json.stdout.contains("store-model"))
    let migrated = try MigrunProcess.run(["migrate", store.path, "--model", model.path])
    #expect(migrated.status == 0, "\(migrated.stderr)")
    let status = try MigrunProcess.run(["status", store.path, "--model", model.path])
    #expect(status.status == 0, "\(status.stdout)")
    let export = try MigrunProcess.run(["export", store.path, "--model", model.path])
    #expect(export.stdout.contains("\"Mood\""))
  }

  @Test func aFileThatIsNotAModelIsNamedForWhatItIs() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try folder.write("hello", to: "notes.txt")
    let plain = folder.url.appendingPathComponent("plain.sqlite")
    try makeDatabase(plain, ["CREATE TABLE t (a)"])
    let noCache = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    try makeDatabase(noCache, ["DROP TABLE Z_MODELCACHE"])
    let cases: [(String, String)] = [
      (folder.url.appendingPathComponent("notes.txt").path, "a text file, not a model"),
      (plain.path, "a SQLite database, but not a Core Data store"),
      (noCache.path, "a Core Data store without a model cache"),
    ]
    for (path, expected) in cases {
      for command in [["plan", store.path, "--model", path], ["hash", path]] {
        let result = try MigrunProcess.run(command)
        #expect(result.status == 1)
        #expect(result.errorLines.first?.contains(expected) == true, "\(command): \(result.stderr)")
      }
    }
  }

  /// Two mapping models for one step (the compiled `.cdm` and its `.xcmappingmodel`) run one after
  /// another (migration in chunks) — but these two map the same entities, which would make every
  /// object twice: refused by name before any work, and the store untouched.
  @Test func twoMappingModelsForOneStepAreRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let samples = "coredataplus-samplemodels/SampleModel/"
    let store = try copyOfFixture(samples + "Fixtures/SampleModel_V2.sqlite", into: folder)
    let before = try Data(contentsOf: store)
    let compiled = Fixtures.url(samples + "Fixtures/V2toV3.cdm").path
    let source = Fixtures.url(samples + "MappingModels/V2toV3.xcmappingmodel").path
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/samplemodel").path
    for command in ["plan", "migrate"] {
      let result = try MigrunProcess.run([
        command, store.path, "--model", Fixtures.url(samples + "SampleModel.xcdatamodeld").path,
        "--mapping", compiled, "--mapping", source, "--policies", policies, "--to", "SampleModel3",
      ])
      #expect(result.status != 0, "\(command): \(result.stdout)")
      #expect(
        result.stderr.contains("is in both V2toV3.cdm and V2toV3.xcmappingmodel")
          && result.stderr.contains("its objects would be made twice"),
        "\(command): \(result.stderr)")
    }
    #expect(try Data(contentsOf: store) == before)
  }

  /// A store whose version left the model, with an Apple mapping model made for that version: the
  /// mapping model is found by its entity hashes and runs from the store's own model.
  @Test func aMappingModelMadeForTheStoresOwnVersionIsFoundByItsHashes() throws {
    let folder = try TemporaryDirectory()
    let samples = "coredataplus-samplemodels/SampleModel/"
    let model = folder.url.appendingPathComponent("SampleModel.xcdatamodeld")
    try FileManager.default.copyItem(at: Fixtures.url(samples + "SampleModel.xcdatamodeld"), to: model)
    try FileManager.default.removeItem(at: model.appendingPathComponent("SampleModel2.xcdatamodel"))
    let store = try copyOfFixture(samples + "Fixtures/SampleModel_V2.sqlite", into: folder)
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/samplemodel").path
    let arguments = [
      store.path, "--model", model.path, "--mapping", Fixtures.url(samples + "Fixtures/V2toV3.cdm").path,
      "--policies", policies, "--to", "SampleModel3",
    ]
    let plan = try MigrunProcess.run(["plan"] + arguments)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("Step 1  SampleModel_V2's own model → SampleModel3  scripted"), "\(plan.stdout)")
    let migrated = try MigrunProcess.run(["migrate"] + arguments)
    #expect(migrated.status == 0, "\(migrated.stderr)")
    let status = try MigrunProcess.run(["status", store.path, "--model", model.path, "--to", "SampleModel3"])
    #expect(status.status == 0, "\(status.stdout)")
  }
}
