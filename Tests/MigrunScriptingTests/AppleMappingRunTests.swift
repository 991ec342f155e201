import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// Mapping models made with Xcode, run as they are (through their Lua conversion) with Lua policies
/// for the custom classes they name, and converted to Lua mapping files.
@Suite struct AppleMappingRunTests {
  static let moodyBundle = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
  static let moodyMappings = Fixtures.url("objcio-core-data-moody/mappings")
  static let moodyPolicies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")
  static let sampleModel = "coredataplus-samplemodels/SampleModel"
  static let samplePolicies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/samplemodel")

  /// A folder holding the four Moody mapping models (copies: test data stays in the fixtures).
  static func moodyMappingFolder(in scratch: TemporaryDirectory) throws -> URL {
    let folder = try scratch.folder("mapping-models")
    for name in try FileManager.default.contentsOfDirectory(atPath: moodyMappings.path) {
      try FileManager.default.copyItem(
        at: moodyMappings.appendingPathComponent(name), to: folder.appendingPathComponent(name))
    }
    return folder
  }

  @Test(arguments: ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"])
  func moodyMappingModelsGiveWhatTheLuaMappingFilesGive(version: String) throws {
    let scratch = try TemporaryDirectory()
    let mappings = try Self.moodyMappingFolder(in: scratch)
    let fixture = "objcio-core-data-moody/stores/\(version).moody.sqlite"
    let byLua = try copyOfFixture(fixture, into: scratch)
    let byApple = try copyOfFixture(fixture, into: scratch)
    try ScriptedRun.migrate(byLua, bundle: Self.moodyBundle, folders: [Self.moodyPolicies])
    // The mapping models' folder first: its .xcmappingmodel files are found before the .lua files.
    try ScriptedRun.migrate(byApple, bundle: Self.moodyBundle, folders: [mappings, Self.moodyPolicies])
    let expected = try ScriptedRun.export(byLua, bundle: Self.moodyBundle, version: "Moody 6")
    #expect(try ScriptedRun.export(byApple, bundle: Self.moodyBundle, version: "Moody 6") == expected)
    #expect(expected.contains("\"Continent\""))
  }

  @Test func convertedMoodyMappingModelsGiveTheSameStores() throws {
    let scratch = try TemporaryDirectory()
    let bundle = try ModelBundle(modelOrStoreAt: Self.moodyBundle)
    let converted = try scratch.folder("converted")
    for name in ["Moody 2-Moody 3", "Moody 3-Moody 4", "Moody 4-Moody 5", "Moody 5-Moody 6"] {
      let versions = name.split(separator: "-").map(String.init)
      let step = MigrationStep(
        from: versions[0], to: versions[1], kind: .inferred, inferredMapping: nil,
        source: try bundle.model(named: versions[0]), destination: try bundle.model(named: versions[1]))
      let conversion = try ScriptedStep.convert(
        step, file: Self.moodyMappings.appendingPathComponent("\(name).xcmappingmodel"),
        policyFolders: [Self.moodyPolicies], missing: .fail)
      #expect(conversion.missingModules.isEmpty)
      try conversion.lua.write(to: converted.appendingPathComponent("\(name).lua"), atomically: true, encoding: .utf8)
    }
    let lua = try String(contentsOf: converted.appendingPathComponent("Moody 2-Moody 3.lua"), encoding: .utf8)
    #expect(lua.contains(#"src:valueForKeyPath("country.continent")"#), "\(lua)")
    #expect(lua.contains(#"src:valueForKeyPath("countries.@distinctUnionOfSets.moods")"#), "\(lua)")
    let fiveSix = try String(contentsOf: converted.appendingPathComponent("Moody 5-Moody 6.lua"), encoding: .utf8)
    #expect(fiveSix.contains(#"local Country5ToCountry6Policy = require "Country5ToCountry6Policy""#), "\(fiveSix)")
    for version in ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"] {
      let fixture = "objcio-core-data-moody/stores/\(version).moody.sqlite"
      let byLua = try copyOfFixture(fixture, into: scratch)
      let byConverted = try copyOfFixture(fixture, into: scratch)
      try ScriptedRun.migrate(byLua, bundle: Self.moodyBundle, folders: [Self.moodyPolicies])
      try ScriptedRun.migrate(byConverted, bundle: Self.moodyBundle, folders: [converted, Self.moodyPolicies])
      #expect(
        try ScriptedRun.export(byConverted, bundle: Self.moodyBundle, version: "Moody 6")
          == (try ScriptedRun.export(byLua, bundle: Self.moodyBundle, version: "Moody 6")), "\(version)")
    }
  }

  @Test func aMissingPolicyClassIsOneLineNamingTheMappingModelAndEntityMapping() throws {
    let scratch = try TemporaryDirectory()
    let mappings = try Self.moodyMappingFolder(in: scratch)
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: scratch)
    let before = try Data(contentsOf: store)
    #expect {
      try ScriptedRun.migrate(store, bundle: Self.moodyBundle, folders: [mappings])
    } throws: { error in
      let text = "\(error)"
      return !text.contains("\n") && text.contains("Moody 5-Moody 6.xcmappingmodel")
        && text.contains("Migrations.Country5ToCountry6Policy (entity mapping CountryToCountry)")
        && text.contains("Country5ToCountry6Policy.lua")
    }
    #expect(try Data(contentsOf: store) == before)
  }

  /// CoreDataPlus's SampleModel 2 store to SampleModel 3 through V2toV3, in both forms, with the
  /// Lua policy for its custom class V2to3MakerPolicy.
  @Test(arguments: ["MappingModels/V2toV3.xcmappingmodel", "Fixtures/V2toV3.cdm"])
  func sampleModelV2ReachesV3ThroughItsMappingModel(mapping: String) throws {
    let scratch = try TemporaryDirectory()
    let bundleURL = Fixtures.url("\(Self.sampleModel)/SampleModel.xcdatamodeld")
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let store = try copyOfFixture("\(Self.sampleModel)/Fixtures/SampleModel_V2.sqlite", into: scratch)
    // The step's script is found by name in a policy folder.
    let folder = try scratch.folder("mapping")
    let original = Fixtures.url("\(Self.sampleModel)/\(mapping)")
    try FileManager.default.copyItem(
      at: original, to: folder.appendingPathComponent("SampleModel2-SampleModel3.\(original.pathExtension)"))
    var makerOfCar: [String: String] = [:]
    var ownerOfCar: [String: String] = [:]
    let before = try SQLiteStore(url: store, model: try bundle.model(named: "SampleModel2"))
    var people: [ObjectID: String] = [:]
    try before.forEachObject(of: "Person", includingSubentities: true) { person in
      people[person.id] = "\(person.attributes["firstName"] ?? .null) \(person.attributes["lastName"] ?? .null)"
    }
    try before.forEachObject(of: "Car", includingSubentities: true) { car in
      guard case .string(let plate)? = car.attributes["numberPlate"] else { return }
      if case .string(let maker)? = car.attributes["maker"] { makerOfCar[plate] = maker }
      if let owner = car.toOne["owner"] { ownerOfCar[plate] = people[owner] }
    }
    try before.close()
    #expect(!makerOfCar.isEmpty)
    #expect(!ownerOfCar.isEmpty)

    try ScriptedRun.migrate(store, bundle: bundleURL, folders: [folder, Self.samplePolicies], to: "SampleModel3")

    let after = try SQLiteStore(url: store, model: try bundle.model(named: "SampleModel3"))
    defer { try? after.close() }
    var makers: [ObjectID: String] = [:]
    try after.forEachObject(of: "Maker", includingSubentities: false) { maker in
      if case .string(let name)? = maker.attributes["name"] { makers[maker.id] = name }
    }
    #expect(Set(makers.values) == Set(makerOfCar.values), "one Maker per maker name")
    #expect(makers.count == Set(makerOfCar.values).count)
    var peopleAfter: [ObjectID: String] = [:]
    try after.forEachObject(of: "Person", includingSubentities: true) { person in
      peopleAfter[person.id] = "\(person.attributes["firstName"] ?? .null) \(person.attributes["lastName"] ?? .null)"
    }
    var cars = 0
    try after.forEachObject(of: "Car", includingSubentities: true) { car in
      guard case .string(let plate)? = car.attributes["numberPlate"] else { return }
      cars += 1
      #expect(car.toOne["createdBy"].flatMap { makers[$0] } == makerOfCar[plate], "\(plate)")
      #expect(car.toOne["owner"].flatMap { peopleAfter[$0] } == ownerOfCar[plate], "\(plate)")
      // previousOwners: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:…", "PersonToPerson", $source.owner)
      #expect(
        (car.toMany["previousOwners"] ?? []).compactMap { peopleAfter[$0] } == ownerOfCar[plate].map { [$0] } ?? [])
    }
    #expect(cars > 0)
  }
}
