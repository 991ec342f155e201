import Foundation
import LuaHost
import MigrunKit
import MigrunScripting
import TestSupport
import Testing

/// Mixed steps: the entity mappings that can be copied as rows are, the others run object by object
/// after them. Each case runs both ways (mixed, and everything object by object) and compares.
@Suite struct MixedStepTests {
  static let recipes = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/recipes")
  static let library = Fixtures.repositoryRoot.appendingPathComponent("policies")
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
  static let moodyPolicies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")

  /// Both ways on copies of `store`; the methods of the mixed run.
  static func compare(
    _ store: URL, bundle: URL, folders: [URL], from: String?, to destination: String, in scratch: TemporaryDirectory
  ) throws -> [StepMethod] {
    let objects = try scratch.folder(UUID().uuidString).appendingPathComponent(store.lastPathComponent)
    try FileManager.default.copyItem(at: store, to: objects)
    let methods = try ScriptedRun.migrate(store, bundle: bundle, folders: folders, to: destination, mixed: true)
    let objectMethods = try ScriptedRun.migrate(
      objects, bundle: bundle, folders: folders, to: destination, mixed: false)
    #expect(!objectMethods.contains(.mixed))
    #expect(
      try ScriptedRun.export(store, bundle: bundle, version: destination)
        == (try ScriptedRun.export(objects, bundle: bundle, version: destination)))
    return methods
  }

  /// The recipe example's Recipes 3 → 4: Recipe's hook runs per object, Ingredient's attribute
  /// functions as a row loop; ingredients keep pointing at their recipes.
  @Test func theRecipeExampleGivesTheSameStoreMixedAsObjectByObject() throws {
    let scratch = try TemporaryDirectory()
    let bundle = Self.recipes.appendingPathComponent("Recipes.xcdatamodeld")
    let store = scratch.url.appendingPathComponent("recipes.sqlite")
    let made = try MigrunProcess.run(["example-store", store.path, "300", bundle.path], program: "migrun-bench")
    #expect(made.status == 0, "\(made.stderr)")
    let folders = [Self.recipes.appendingPathComponent("policies"), Self.library]
    try ScriptedRun.migrate(store, bundle: bundle, folders: folders, to: "Recipes 3")
    let methods = try Self.compare(
      store, bundle: bundle, folders: folders, from: "Recipes 3", to: "Recipes 4", in: scratch)
    #expect(methods == [.mixed])
  }

  /// Moody 2 → 3 (Mood's hook; Country and Continent copied) and 5 → 6 (Country's hook; Mood copied,
  /// and found by its key from the Country hook's side).
  @Test(arguments: ["Moody 2", "Moody 5"]) func moodyStepsGiveTheSameStoresMixed(version: String) throws {
    let scratch = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/\(version).moody.sqlite", into: scratch)
    let next = version == "Moody 2" ? "Moody 3" : "Moody 6"
    let methods = try Self.compare(
      store, bundle: Self.moody, folders: [Self.moodyPolicies], from: version, to: next, in: scratch)
    #expect(methods == [.mixed])
  }

  /// Not mixed when copied rows would point at objects made with other keys (a
  /// `createDestinationInstances` hook), or when a many-to-many joins the two sides.
  @Test func noMixedStepWhereKeysOrJoinsWouldNotMeet() throws {
    let scratch = try TemporaryDirectory()
    let folder = try scratch.folder("own-keys")
    _ = try scratch.write(
      """
      return {
        Country = {
          createDestinationInstances = function(src, m)
            local values = src:values()
            values.isoContinent = nil
            local made = m:insert("Country", values)
            m:associate(src, made)
          end,
        },
      }
      """, to: "own-keys/Moody 5-Moody 6.lua")
    let moody = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: scratch)
    let moodyMethods = try Self.compare(
      moody, bundle: Self.moody, folders: [folder], from: "Moody 5", to: "Moody 6", in: scratch)
    #expect(moodyMethods == [.objects])

    // CoreDataPlus V2 → V3: Car's policy runs per object, Person could be copied, but
    // previousOwners/previousCars join them.
    let sample = "coredataplus-samplemodels/SampleModel"
    let steps = try scratch.folder("steps")
    try FileManager.default.copyItem(
      at: Fixtures.url("\(sample)/Fixtures/V2toV3.cdm"),
      to: steps.appendingPathComponent("SampleModel2-SampleModel3.cdm"))
    let store = try copyOfFixture("\(sample)/Fixtures/SampleModel_V2.sqlite", into: scratch)
    let methods = try Self.compare(
      store, bundle: Fixtures.url("\(sample)/SampleModel.xcdatamodeld"),
      folders: [steps, Fixtures.repositoryRoot.appendingPathComponent("policies/examples/samplemodel")],
      from: "SampleModel2", to: "SampleModel3", in: scratch)
    #expect(methods == [.objects])
  }
}
