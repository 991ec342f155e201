import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Apple's stores are the judge: migrun reads them, identifies their models, and lays out new
/// stores the way Core Data did.
@Suite struct StoreConformanceTests {
  struct Expected: Decodable {
    let NSStoreModelVersionHashes: [String: String]
    let Z_UUID: String
    let model: String?
  }

  static func expected() throws -> [(store: String, expected: Expected)] {
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    return try JSONDecoder().decode([String: Expected].self, from: data).sorted { $0.key < $1.key }.map {
      ($0.key, $0.value)
    }
  }

  static func bundle(for contents: String) throws -> (ModelBundle, String) {
    let version = Fixtures.url(contents).deletingLastPathComponent()
    return (
      try ModelBundle(modelOrStoreAt: version.deletingLastPathComponent()),
      version.deletingPathExtension().lastPathComponent
    )
  }

  @Test func metadataOfEveryStoreIsReadExactly() throws {
    let folder = try TemporaryDirectory()
    let stores = try Self.expected()
    #expect(stores.count >= 11)
    for (store, expected) in stores {
      let url = try copyOfFixture(store, into: folder)
      let metadata = try SQLiteStore.metadata(at: url)
      #expect(metadata.uuid == expected.Z_UUID, "\(store)")
      #expect(metadata.versionHashes.mapValues(\.base64) == expected.NSStoreModelVersionHashes, "\(store)")
    }
  }

  @Test func everyStoresModelCacheHasTheStoresHashes() throws {
    let folder = try TemporaryDirectory()
    var withCache = 0
    var read = 0
    for (store, expected) in try Self.expected() {
      let url = try copyOfFixture(store, into: folder)
      // Core Data before iOS 8 wrote no cache (the 2011 store): every store that has the table is read.
      if try Fixtures.store(url, hasTable: "Z_MODELCACHE") { withCache += 1 }
      guard let model = try SQLiteStore.cachedModel(at: url) else { continue }
      read += 1
      #expect(model.entityVersionHashes.mapValues(\.base64) == expected.NSStoreModelVersionHashes, "\(store)")
    }
    #expect(read == withCache && read > 0)
  }

  @Test func everyStoreIsIdentifiedAndEveryObjectIsRead() throws {
    let folder = try TemporaryDirectory()
    for (store, expected) in try Self.expected() {
      let url = try copyOfFixture(store, into: folder)
      var model: ObjectModel?
      if let contents = expected.model {
        let (bundle, versionName) = try Self.bundle(for: contents)
        let metadata = try SQLiteStore.metadata(at: url)
        let matching = bundle.models.filter { metadata.isCompatible(with: $0) }
        #expect(matching.map(\.versionName) == [versionName], "\(store)")
        model = try bundle.model(named: versionName)
      }
      let opened = try SQLiteStore(url: url, model: model)
      let counts = try opened.entityCounts()
      let queue = try DatabaseQueue(path: url.path)
      for layout in opened.schema.entities {
        let expectedCount = try queue.read { db in
          try Int.fetchOne(db, sql: "SELECT count(*) FROM \(layout.table) WHERE Z_ENT = \(layout.number)") ?? -1
        }
        var read = 0
        try opened.forEachObject(of: layout.name, includingSubentities: false) { object in
          #expect(object.id.entity == layout.name)
          read += 1
        }
        #expect(counts[layout.name] == expectedCount, "\(store) \(layout.name)")
        #expect(read == expectedCount, "\(store) \(layout.name)")
      }
    }
  }

  @Test func newStoresHaveApplesLayout() throws {
    let folder = try TemporaryDirectory()
    var compared = 0
    for (store, expected) in try Self.expected() {
      let url = try copyOfFixture(store, into: folder)
      let model: ObjectModel
      if let contents = expected.model {
        let (bundle, versionName) = try Self.bundle(for: contents)
        model = try bundle.model(named: versionName)
      } else {
        model = try #require(try SQLiteStore.cachedModel(at: url))
      }
      let created = folder.url.appendingPathComponent("created-\(compared).sqlite")
      try SQLiteStore.create(at: created, model: model)
      let apple = try SchemaSnapshot(of: url, excluding: isPersistentHistory).withoutInPlaceLeftovers(of: model)
      var ours = try SchemaSnapshot(of: created)
      // Frameworks before iOS 8 wrote no Z_MODELCACHE; a store made today has one.
      if apple.tables["Z_MODELCACHE"] == nil { ours.tables["Z_MODELCACHE"] = nil }
      let era = FrameworkEra(try SQLiteStore.metadata(at: url))
      #expect(ours.tables == apple.tables, "\(store)\nours:\n\(ours)\napple:\n\(apple)")
      // A new store has today's indexes; Apple's store has those of the framework that wrote it.
      #expect(ours.indexes == Set(StoreSchema(model: model).indexes.map(\.name)), "\(store)")
      #expect(era.comparableIndexes(era.written(model)) == era.comparableIndexes(apple), "\(store)")
      #expect(ours.uniqueness == apple.uniqueness, "\(store)")
      // A store created here carries the model's hashes and is recognised.
      #expect(try SQLiteStore.metadata(at: created).isCompatible(with: model))
      compared += 1
    }
    #expect(compared == (try Self.expected().count))
  }
}

extension FrameworkEra {
  /// The names of the indexes this era's framework writes for `model` (legacy indexes in its form).
  func written(_ model: ObjectModel) -> Set<String> {
    Set(StoreSchema(model: model, framework: version == 0 ? nil : Int64(version)).indexes.map(\.name))
  }
}

/// What older Core Data frameworks wrote differently from today's, in one place: a store of that era
/// is compared with a new store leaving these out. Snapshots are sets; `CoreDataSQLTests` compares
/// the statements themselves (column order included), as the store's own framework writes them.
struct FrameworkEra {
  /// `NSPersistenceFrameworkVersion`, 0 when the store does not say.
  let version: Int

  init(_ metadata: StoreMetadata) {
    version = Int(metadata.frameworkVersion ?? 0)
  }

  /// Index names to compare. Uniqueness is compared by constrained columns elsewhere (637 spells it
  /// `CONSTRAINT … UNIQUE` inside CREATE TABLE); frameworks 419–519 (iOS 6–8) wrote no join-table
  /// indexes.
  func comparableIndexes(_ snapshot: SchemaSnapshot) -> Set<String> {
    comparableIndexes(snapshot.indexes)
  }

  func comparableIndexes(_ names: Set<String>) -> Set<String> {
    names.filter { name in
      !name.contains("UNIQUE") && !(version > 0 && version < 600 && name.hasPrefix("Z_") && name.hasSuffix("_INDEX"))
    }
  }
}
