import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// A generated recipe store: version 1, and version 2 whose photo format changed (a version hash
/// modifier forces the step; a Lua transform rewrites the bytes).
@Suite struct ScriptedMigrationTests {
  static let v1 = """
    <model><entity name="Recipe">
      <attribute name="n" attributeType="Integer 64" defaultValueString="0"/>
      <attribute name="name" optional="YES" attributeType="String"/>
      <attribute name="photo" optional="YES" attributeType="Binary"/>
    </entity></model>
    """
  static let v2 = """
    <model><entity name="Recipe">
      <attribute name="n" attributeType="Integer 64" defaultValueString="0"/>
      <attribute name="name" optional="YES" attributeType="String"/>
      <attribute name="photo" optional="YES" attributeType="Binary" versionHashModifier="PHO1"/>
    </entity></model>
    """

  /// A folder with Recipes.xcdatamodeld (two versions), a store of `count` recipes at version 1,
  /// and a policies folder holding `script` as the 1→2 mapping.
  static func setUp(_ folder: TemporaryDirectory, count: Int, script: String) throws -> (
    store: URL, bundle: URL, policies: URL
  ) {
    try folder.write(v1, to: "Recipes.xcdatamodeld/Recipes.xcdatamodel/contents")
    try folder.write(v2, to: "Recipes.xcdatamodeld/Recipes 2.xcdatamodel/contents")
    let policies = try folder.folder("policies")
    try folder.write(script, to: "policies/Recipes-Recipes 2.lua")
    let bundleURL = folder.url.appendingPathComponent("Recipes.xcdatamodeld")
    let store = try folder.folder("data").appendingPathComponent("recipes.sqlite")
    let created = try SQLiteStore.create(
      at: store, model: try ModelBundle(modelOrStoreAt: bundleURL).model(named: "Recipes"))
    try created.write { writer in
      for index in 1...count {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Recipe", primaryKey: Int64(index)),
            attributes: [
              "n": .integer(Int64(index)), "name": .string("recipe \(index)"),
              "photo": .data([0, UInt8(index % 256), 0xFF]),
            ]))
      }
    }
    try created.close()
    return (store, bundleURL, policies)
  }

  /// `bulkCopy`: let attribute-only policies run as a row loop (the default) or force object by object.
  @discardableResult
  static func migrate(
    _ store: URL, bundle bundleURL: URL, policies: URL, bulkCopy: Bool = true, limits: LuaLimits = LuaLimits()
  ) throws -> StoreMigrator.Report {
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try SQLiteStore.metadata(at: store).versionHashes,
      order: VersionOrder(names: bundle.versionNames, origin: "test"),
      script: { from, to in [policies.appendingPathComponent("\(from)-\(to).lua")] })
    let migrator = StoreMigrator(store: store, plan: plan, options: .init(bulkCopy: bulkCopy))
    migrator.scripts = LuaScripts(policyFolders: [policies], limits: limits)
    return try migrator.run()
  }

  @Test(arguments: [true, false]) func aOneLineBlobTransformRunsEndToEnd(bulkCopy: Bool) throws {
    let folder = try TemporaryDirectory()
    let (store, bundleURL, policies) = try Self.setUp(
      folder, count: 300,
      script: #"return { Recipe = { attributes = { photo = function(src) return "PHO1" .. src.photo end } } }"#)
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    #expect(
      try bundle.model(named: "Recipes").entityVersionHashes != bundle.model(named: "Recipes 2").entityVersionHashes)
    let report = try Self.migrate(store, bundle: bundleURL, policies: policies, bulkCopy: bulkCopy)
    #expect(report.steps.map(\.bulkCopy) == [bulkCopy])
    let migrated = try SQLiteStore(url: store, model: try bundle.model(named: "Recipes 2"))
    var checked = 0
    try migrated.forEachObject(of: "Recipe", includingSubentities: false) { recipe in
      let index = UInt8(recipe.id.primaryKey % 256)
      #expect(recipe.attributes["photo"] == .data(Array("PHO1".utf8) + [0, index, 0xFF]))
      #expect(recipe.attributes["name"] == .string("recipe \(recipe.id.primaryKey)"))
      checked += 1
    }
    #expect(checked == 300)
  }

  @Test(arguments: [true, false]) func aScriptErrorAtObject500LeavesTheOriginalByteIdentical(bulkCopy: Bool) throws {
    let folder = try TemporaryDirectory()
    let script = """
      return {
        Recipe = {
          attributes = {
            photo = function(src)
              if src.n == 500 then error("cannot convert photo of recipe " .. src.n) end
              return "PHO1" .. src.photo
            end,
          },
        },
      }
      """
    let (store, bundleURL, policies) = try Self.setUp(folder, count: 1000, script: script)
    let before = try Data(contentsOf: store)
    let error = try #require(throws: MigrationError.self) {
      try Self.migrate(store, bundle: bundleURL, policies: policies, bulkCopy: bulkCopy)
    }
    #expect(error.code == .policy)
    #expect(
      error.description.contains("policies/Recipes-Recipes 2.lua:5: cannot convert photo of recipe 500"), "\(error)")
    #expect(error.description.contains("RecipeToRecipe") && error.description.contains("Recipe/p500"), "\(error)")
    #expect(try Data(contentsOf: store) == before)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path) == [
        store.lastPathComponent
      ])
  }

  @Test(arguments: [true, false]) func aRunawayScriptIsStoppedByItsLimitsAndNamed(bulkCopy: Bool) throws {
    let folder = try TemporaryDirectory()
    let (store, bundleURL, policies) = try Self.setUp(
      folder, count: 10, script: "return { Recipe = { attributes = { name = function(src) while true do end end } } }")
    let before = try Data(contentsOf: store)
    let error = try #require(throws: MigrationError.self) {
      try Self.migrate(store, bundle: bundleURL, policies: policies, bulkCopy: bulkCopy)
    }
    #expect(error.description.contains("instruction limit"), "\(error)")
    #expect(error.description.contains("Recipe/p1"), "\(error)")
    #expect(try Data(contentsOf: store) == before)
  }

  /// A `begin` hook earns for the objects its `m:fetch` returns, as a stage's walk does (issue 72):
  /// a fetch past the base runs; fetch after fetch earns for two passes over the entity, then stops.
  @Test func aHookEarnsForTheObjectsItsFetchReturns() throws {
    func hook(passes: Int) -> String {
      """
      return { Recipe = { begin = function(m)
        local total = 0
        for pass = 1, \(passes) do
          for _, recipe in ipairs(m:fetch("Recipe", nil, { source = true })) do
            for i = 1, 200 do total = total + i end
          end
        end
      end } }
      """
    }
    var limits = LuaLimits()
    limits.instructions = 100_000
    let folder = try TemporaryDirectory()
    // ~240,000 instructions a pass over the 300 recipes.
    let (store, bundleURL, policies) = try Self.setUp(folder, count: 300, script: hook(passes: 1))
    try Self.migrate(store, bundle: bundleURL, policies: policies, limits: limits)
    let again = try TemporaryDirectory()
    let (second, secondBundle, secondPolicies) = try Self.setUp(again, count: 300, script: hook(passes: 1000))
    let error = try #require(throws: MigrationError.self) {
      try Self.migrate(second, bundle: secondBundle, policies: secondPolicies, limits: limits)
    }
    #expect(
      "\(error)".contains("instruction limit of 6100000 exceeded (100000, and 10000 for each of the 600 objects"),
      "\(error)")
  }

  @Test func mappingFileMistakesAreReportedBeforeAnythingRuns() throws {
    let cases: [(String, String)] = [
      ("return 42", "must return a table of entity mappings"),
      ("return { Recipe = { atributes = {} } }", "unknown field 'atributes'"),
      ("return { Recipes = {} }", "the destination model (Recipes 2) has no entity 'Recipes'"),
      (
        "return { Recipe = { attributes = { title = 'name' } } }",
        "attributes: the destination entity has no such attribute"
      ),
      (
        "return { Recipe = { attributes = { name = 'title' } } }", "the source entity 'Recipe' has no attribute 'title'"
      ),
      ("return { Recipe = { begin = 3 } }", "begin must be a function"),
      ("return {", "unexpected symbol near <eof>"),
    ]
    for (script, message) in cases {
      let folder = try TemporaryDirectory()
      let (store, bundleURL, policies) = try Self.setUp(folder, count: 3, script: script)
      let before = try Data(contentsOf: store)
      do {
        try Self.migrate(store, bundle: bundleURL, policies: policies)
        Issue.record("\(script): not refused")
      } catch {
        #expect("\(error)".contains(message), "\(script): \(error)")
      }
      #expect(try Data(contentsOf: store) == before)
    }
  }
}
