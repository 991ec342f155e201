import Foundation
import GRDB
import PropertyList
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// Every store migrun writes describes itself (`Z_MODELCACHE`), archived the way Core Data archives
/// its model: Apple's caches are the judge of what is written, and what is written reads back as the
/// same model with the same hashes.
@Suite struct ModelCacheWritingTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")

  /// The parts of a model a cache carries, in a form that compares regardless of property order.
  struct Described: Equatable, CustomStringConvertible {
    let entities: [String: Entity]
    let hashes: [String: String]

    init(_ model: ObjectModel) {
      entities = Dictionary(
        model.entities.map { entity in
          var sorted = entity
          sorted.attributes = entity.attributes.sorted { $0.name < $1.name }.map { attribute in
            var kept = attribute
            // Not archived (see ModelCacheArchive): validation rules, property user info, a
            // transformable's custom class.
            kept.validation = [:]
            kept.userInfo = [:]
            kept.customClassName = nil
            return kept
          }
          sorted.relationships = entity.relationships.sorted { $0.name < $1.name }.map { relationship in
            var kept = relationship
            kept.userInfo = [:]
            kept.inverseEntity = nil
            return kept
          }
          sorted.fetchedProperties = entity.fetchedProperties.sorted { $0.name < $1.name }.map {
            FetchedProperty(name: $0.name, fetchEntity: $0.fetchEntity)
          }
          return (entity.name, sorted)
        }, uniquingKeysWith: { first, _ in first })
      hashes = model.entityVersionHashes.mapValues(\.base64)
    }

    var description: String { entities.keys.sorted().joined(separator: ", ") }

    /// The entities that differ, for a failure's message.
    func difference(from other: Described) -> String {
      Set(entities.keys).union(other.entities.keys).sorted().filter { entities[$0] != other.entities[$0] }.map {
        "\($0): \(String(describing: entities[$0])) vs \(String(describing: other.entities[$0]))"
      }.joined(separator: "\n") + (hashes == other.hashes ? "" : "hashes differ")
    }
  }

  static func rewritten(_ model: ObjectModel) throws -> ObjectModel {
    try ObjectModel.decodingModelCache(compressed: try model.modelCache())
  }

  /// Every cached model in `../shared`, read, written by migrun and read again: the same entities,
  /// properties and hashes, and the hashes Apple stored in the store's metadata.
  @Test func everyAppleCacheRoundTrips() throws {
    var checked = 0
    for (store, expected) in try StoreConformanceTests.expected() {
      let blob = try SQLiteStore.rawModelCache(at: Fixtures.url(store))
      guard let blob, !blob.isEmpty else { continue }
      let apple = try ObjectModel.decodingModelCache(compressed: blob)
      let ours = try Self.rewritten(apple)
      #expect(Described(ours) == Described(apple), "\(store)")
      #expect(ours.entityVersionHashes.mapValues(\.base64) == expected.NSStoreModelVersionHashes, "\(store)")
      #expect(ours.versionIdentifiers == apple.versionIdentifiers, "\(store)")
      checked += 1
    }
    #expect(checked >= 11)
  }

  /// Every version of every model in `../shared` (Xcode's own model files) survives the cache.
  @Test func everyFixtureModelVersionRoundTrips() throws {
    var checked = 0
    for url in try Fixtures.modelBundles() {
      let bundle = try ModelBundle(modelOrStoreAt: url)
      for version in bundle.versionNames {
        let model = try bundle.model(named: version)
        let ours = try Self.rewritten(model)
        #expect(
          Described(ours) == Described(model),
          "\(url.lastPathComponent) \(version): \(Described(ours).difference(from: Described(model)))")
        checked += 1
      }
    }
    #expect(checked >= 10)
  }

  /// The archive is made of what Apple's are made of: every class it writes appears in some fixture
  /// cache with the same superclasses, and every field it writes for a class is a field Apple writes
  /// for that class.
  @Test func writesOnlyWhatApplesArchivesHold() throws {
    var appleFields: [String: Set<String>] = [:]
    var appleClasses: [String: [String]] = [:]
    func survey(
      _ archive: PropertyListValue, into fields: inout [String: Set<String>], classes: inout [String: [String]]
    ) {
      let objects = archive["$objects"]?.arrayValue ?? []
      for object in objects {
        guard case .dictionary(let entries) = object, case .uid(let reference)? = entries["$class"],
          Int(reference) < objects.count, let name = objects[Int(reference)]["$classname"]?.stringValue
        else { continue }
        fields[name, default: []].formUnion(entries.keys)
        classes[name] = objects[Int(reference)]["$classes"]?.arrayValue?.compactMap(\.stringValue)
      }
    }
    for (store, _) in try StoreConformanceTests.expected() {
      guard let blob = try SQLiteStore.rawModelCache(at: Fixtures.url(store)), !blob.isEmpty else { continue }
      survey(
        try PropertyListValue(decoding: try ObjectModel.inflateModelCache(blob)), into: &appleFields,
        classes: &appleClasses)
    }
    var ourFields: [String: Set<String>] = [:]
    var ourClasses: [String: [String]] = [:]
    for url in try Fixtures.modelBundles() {
      let bundle = try ModelBundle(modelOrStoreAt: url)
      for version in bundle.versionNames {
        let archive = try PropertyListValue(
          decoding: try ObjectModel.inflateModelCache(try bundle.model(named: version).modelCache()))
        survey(archive, into: &ourFields, classes: &ourClasses)
      }
    }
    #expect(ourClasses.count >= 10)
    for (name, fields) in ourFields.sorted(by: { $0.key < $1.key }) {
      #expect(appleClasses[name] == ourClasses[name], "\(name)")
      #expect(
        fields.subtracting(appleFields[name] ?? []).isEmpty,
        "\(name): \(fields.subtracting(appleFields[name] ?? []).sorted())")
    }
  }

  /// A new store describes itself: opened, inspected and exported with no model.
  @Test func aCreatedStoreCarriesItsModel() throws {
    let folder = try TemporaryDirectory()
    let model = try ModelBundle(modelOrStoreAt: Self.moody).model(named: "Moody 6")
    let url = folder.url.appendingPathComponent("new.sqlite")
    try SQLiteStore.create(at: url, model: model).close()
    let cached = try #require(try SQLiteStore.cachedModel(at: url))
    #expect(Described(cached) == Described(model))
    let described = try SQLiteStore(url: url)
    defer { try? described.close() }
    #expect(described.model.entityVersionHashes == model.entityVersionHashes)
  }

  /// Every migration path leaves the destination's model in the cache (an old store's cache
  /// described the source).
  @Test func everyPathWritesTheDestinationsModel() throws {
    let folder = try TemporaryDirectory()
    let url = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let bundle = try ModelBundle(modelOrStoreAt: Self.moody)
    let (v1, v2) = (try bundle.model(named: "Moody"), try bundle.model(named: "Moody 2"))
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    #expect(results.count == 3)
    for (method, migrated) in results {
      let cached = try #require(try SQLiteStore.cachedModel(at: migrated), "\(method)")
      #expect(cached.entityVersionHashes == v2.entityVersionHashes, "\(method)")
      #expect(Described(cached) == Described(v2), "\(method)")
    }
  }
}
