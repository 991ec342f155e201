import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// Wherever the fixtures hold Apple stores of two consecutive versions of one model, migrating the
/// earlier one a step gives Apple's later store: its layout and its hashes — and its objects where
/// Apple's later store is the earlier one migrated (the same store UUID: Core Data keeps it), which
/// the app may have added to since. Pairs are found from `expected_store_hashes.json`, and the
/// steps' scripts as `migrate` finds them (mapping models by their hashes), so new fixtures are
/// picked up without edits.
@Suite struct ApplePairTests {
  struct Expected: Decodable {
    let model: String?
  }

  struct Pair: CustomTestStringConvertible {
    let earlier: String
    let later: String
    let bundle: URL
    let from: String
    let to: String
    var testDescription: String { "\(from) → \(to)" }
  }

  /// Policy folders for the fixtures' scripted steps, by bundle name: migrun's Lua mapping files, or
  /// the app's own mapping models with the Lua port of the custom policy class they name.
  static let policies = [
    "Moody": [Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")],
    "CoreDataMigration_Example": [
      Fixtures.url("wibosco-coredatamigration-example/CoreDataMigration-Example/CoreData/Migration/Mappings"),
      Fixtures.repositoryRoot.appendingPathComponent("policies/examples/wibosco"),
    ],
  ]

  static func pairs() throws -> [Pair] {
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    var byBundle: [URL: [String: String]] = [:]  // bundle → version → store
    for (store, expected) in try JSONDecoder().decode([String: Expected].self, from: data) {
      guard let contents = expected.model else { continue }
      let version = Fixtures.url(contents).deletingLastPathComponent()
      byBundle[version.deletingLastPathComponent(), default: [:]][version.deletingPathExtension().lastPathComponent] =
        store
    }
    var pairs: [Pair] = []
    for (bundleURL, stores) in byBundle.sorted(by: { $0.key.path < $1.key.path }) {
      let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
      let folders = policies[bundle.name] ?? []
      let order =
        try MigrationPlanner.explicitOrder(bundle, policyFolders: folders, override: nil)?.names ?? bundle.versionNames
      for (a, b) in zip(order, order.dropFirst()) {
        guard let earlier = stores[a], let later = stores[b] else { continue }
        pairs.append(Pair(earlier: earlier, later: later, bundle: bundleURL, from: a, to: b))
      }
    }
    return pairs
  }

  @Test func theFixturesHoldPairs() throws {
    #expect(try Self.pairs().count >= 5)
  }

  /// Objects as a multiset of attribute values per entity: Apple's stores of consecutive versions
  /// hold the same objects under other keys.
  static func contents(_ store: SQLiteStore) throws -> [String: [String]] {
    var result: [String: [String]] = [:]
    for entity in store.model.entities {
      try store.forEachObject(of: entity.name, includingSubentities: false, withToMany: false) { object in
        let text = object.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ";")
        result[entity.name, default: []].append(text)
      }
    }
    return result.mapValues { $0.sorted() }
  }

  @Test(arguments: try pairs()) func migratingTheEarlierStoreGivesApplesLaterOne(_ pair: Pair) throws {
    let folder = try TemporaryDirectory()
    let url = try copyOfFixture(pair.earlier, into: folder)
    let apple = try copyOfFixture(pair.later, into: folder)
    let bundle = try ModelBundle(modelOrStoreAt: pair.bundle)
    let folders = Self.policies[bundle.name] ?? []
    let sameStore = try SQLiteStore.metadata(at: url).uuid == SQLiteStore.metadata(at: apple).uuid
    let plan = try ScriptedStep.plan(
      store: url, bundle: bundle, policyFolders: folders, chain: [pair.from, pair.to], destination: pair.to)
    #expect(plan.steps.map(\.name) == ["\(pair.from) → \(pair.to)"])
    let migrator = StoreMigrator(store: url, plan: plan)
    migrator.scripts = LuaScripts(policyFolders: folders)
    _ = try migrator.run()

    let earlier = try bundle.model(named: pair.from)
    let later = try bundle.model(named: pair.to)
    #expect(try SQLiteStore.metadata(at: url).versionHashes == SQLiteStore.metadata(at: apple).versionHashes)
    let ours = try SchemaSnapshot(of: url)
    let theirs = try SchemaSnapshot(of: apple, excluding: isPersistentHistory).withoutInPlaceLeftovers(of: later)
    #expect(ours.tables == theirs.tables, "\(pair.testDescription)\nours:\n\(ours)\napple:\n\(theirs)")
    #expect(ours.uniqueness == theirs.uniqueness, "\(pair.testDescription)")
    // Each store has the indexes of the framework that wrote it: Apple's those of its framework,
    // ours today's (and the older form a DDL edit leaves on a table it does not change, as Core
    // Data's migration in place does).
    func named(_ names: Set<String>) -> Set<String> { names.filter { !$0.contains("UNIQUE") } }
    let appleFramework = try SQLiteStore.metadata(at: apple).frameworkVersion
    let today = StoreSchema(model: later)
    #expect(
      named(Set(StoreSchema(model: later, framework: appleFramework).indexes.map(\.name))) == named(theirs.indexes),
      "\(pair.testDescription)")
    #expect(
      named(ours.indexes.subtracting(today.olderFormIndexes.map(\.name))) == named(Set(today.indexes.map(\.name))),
      "\(pair.testDescription)")
    guard sameStore else { return }
    // Apple's later store is this store migrated, perhaps added to since: every object migrated
    // here is one of Apple's, value for value (the same objects when the app added none). Entities
    // new in the later version hold what the step's script made (new IDs): they are counted.
    let migrated = try Self.contents(try SQLiteStore(url: url, model: later))
    let expected = try Self.contents(try SQLiteStore(url: apple, model: later))
    for (entity, objects) in migrated {
      let theirs = expected[entity] ?? []
      #expect(objects.count <= theirs.count, "\(pair.testDescription): \(entity)")
      guard earlier.entity(named: entity) != nil else { continue }
      var remaining = Dictionary(theirs.map { ($0, 1) }, uniquingKeysWith: +)
      let missing = objects.filter { object in
        guard let left = remaining[object], left > 0 else { return true }
        remaining[object] = left - 1
        return false
      }
      #expect(
        missing.isEmpty,
        "\(pair.testDescription): \(entity): \(missing.count) not in Apple's, e.g. \(missing.prefix(2))")
    }
    for entity in expected.keys { #expect(migrated[entity] != nil || expected[entity]?.isEmpty == true, "\(entity)") }
  }
}
