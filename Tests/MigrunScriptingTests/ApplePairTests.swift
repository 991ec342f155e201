import Foundation
import LuaHost
import MigrunKit
import MigrunScripting
import TestSupport
import Testing

/// Wherever the fixtures hold Apple stores of two consecutive versions of one model, migrating the
/// earlier one a step gives Apple's later store: its layout, its hashes and its objects. Pairs are
/// found from `expected_store_hashes.json`, so new fixtures are picked up without edits.
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

  /// Mapping files for the fixtures' scripted steps, by bundle name.
  static let policies = ["Moody": Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")]

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
      let bundle = try ModelBundle(contentsOf: bundleURL)
      let folders = policies[bundle.name].map { [$0] } ?? []
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
    let bundle = try ModelBundle(contentsOf: pair.bundle)
    let folders = Self.policies[bundle.name].map { [$0] } ?? []
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try SQLiteStore.metadata(at: url).versionHashes, destination: pair.to,
      order: VersionOrder(names: [pair.from, pair.to], origin: "test"),
      script: { from, to in
        folders.map { $0.appendingPathComponent("\(from)-\(to).lua") }.first {
          FileManager.default.fileExists(atPath: $0.path)
        }
      })
    let migrator = StoreMigrator(store: url, plan: plan)
    migrator.scriptedStep = { step in
      guard case .scripted(let file) = step.kind else { throw MigrationError(.badMapping, reason: "not scripted") }
      return try LuaMappingFile.load(step, file: file, policyFolders: folders)
    }
    try migrator.run()

    let later = try bundle.model(named: pair.to)
    #expect(try SQLiteStore.metadata(at: url).versionHashes == SQLiteStore.metadata(at: apple).versionHashes)
    let ours = try SchemaSnapshot(of: url)
    let theirs = try SchemaSnapshot(of: apple, excluding: isPersistentHistory)
    #expect(ours.tables == theirs.tables, "\(pair.testDescription)\nours:\n\(ours)\napple:\n\(theirs)")
    #expect(ours.uniqueness == theirs.uniqueness, "\(pair.testDescription)")
    #expect(
      ours.indexes.filter { !$0.contains("UNIQUE") } == theirs.indexes.filter { !$0.contains("UNIQUE") },
      "\(pair.testDescription)")
    let migrated = try Self.contents(try SQLiteStore(url: url, model: later))
    let expected = try Self.contents(try SQLiteStore(url: apple, model: later))
    #expect(migrated.mapValues(\.count) == expected.mapValues(\.count), "\(pair.testDescription)")
    for (entity, objects) in expected {
      #expect(migrated[entity] == objects, "\(pair.testDescription): \(entity)")
    }
  }
}
