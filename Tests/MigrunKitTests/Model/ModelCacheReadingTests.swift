import Foundation
import GRDB
import PropertyList
import Testing

@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// Model caches as Core Data writes them: subentities holding their inherited properties as
/// `_NSPropertyDescriptionProxy` objects (Core Data's `_flattenProperties` makes them when the model
/// is marked so; a team-chat store at framework 1145 and a social app's at 1340 have them) read as
/// the model they archive; an archived property migrun does not know is named the same in every
/// run; external storage is read from the flag Core Data writes; a cache whose hashes disagree with
/// the store's metadata is reported saying what differs.
@Suite struct ModelCacheReadingTests {
  /// Every Apple cache in `../shared` with subentities, its inherited properties archived as proxies:
  /// the same model as Apple's own cache, the hashes of the store's metadata, and a store holding it
  /// opens with no model given.
  @Test func inheritedPropertiesArchivedAsProxiesReadAsTheirDeclarations() throws {
    let folder = try TemporaryDirectory()
    var proxied = 0
    for (store, expected) in try StoreConformanceTests.expected() {
      guard let blob = try SQLiteStore.rawModelCache(at: Fixtures.url(store)), !blob.isEmpty else { continue }
      let archive = try PropertyListValue(decoding: try ObjectModel.inflateModelCache(blob))
      let (withProxies, count) = try Self.inheritedAsProxies(archive)
      guard count > 0 else { continue }
      let apple = try ObjectModel.decodingModelCache(compressed: blob)
      let read = try ObjectModel.decodingModelCache(archive: withProxies.binaryEncoded())
      #expect(
        ModelCacheWritingTests.Described(read) == ModelCacheWritingTests.Described(apple),
        "\(store): \(ModelCacheWritingTests.Described(read).difference(from: .init(apple)))")
      #expect(read.entityVersionHashes.mapValues(\.base64) == expected.NSStoreModelVersionHashes, "\(store)")
      let copy = try writableCopyOfFixture(store, into: folder)
      let queue = try DatabaseQueue(path: copy.path)
      let content = try ModelCacheArchive.deflate(withProxies.binaryEncoded())
      try queue.write { try $0.execute(sql: "UPDATE Z_MODELCACHE SET Z_CONTENT = ?", arguments: [Data(content)]) }
      try queue.close()
      let opened = try SQLiteStore(url: copy)
      #expect(opened.model.entityVersionHashes == apple.entityVersionHashes, "\(store)")
      try opened.close()
      proxied += count
    }
    #expect(proxied >= 10)
  }

  /// Two properties of a class migrun does not know: the error names the first in name order (the
  /// archive's dictionary order changed from run to run).
  /// 270 kB of DEFLATE data inflating to 300 MB (a store file is outside input): stopped at the
  /// limit and named as too large, not as damaged data.
  @Test func aCacheInflatingPastTheLimitIsNamedAsTooLarge() throws {
    let bomb = try ModelCacheArchive.deflate([UInt8](repeating: 0, count: 300 << 20))
    #expect(bomb.count < 1 << 20)
    let error = try #require(throws: ModelCacheError.self) { try ObjectModel.decodingModelCache(compressed: bomb) }
    #expect(error.reason.contains("inflates to more than 256 MB"), "\(error)")
  }

  @Test func anUnknownPropertyIsNamedInNameOrder() throws {
    let blob = try #require(
      try SQLiteStore.rawModelCache(
        at: Fixtures.url("coredataplus-samplemodels/SampleModel/Fixtures/SampleModel_V2.sqlite")))
    let archive = try PropertyListValue(decoding: try ObjectModel.inflateModelCache(blob))
    let changed = try Self.replacingClass(
      of: ["numberPlate", "maker", "model"], in: archive, with: "NSFutureDescription")
    #expect {
      _ = try ObjectModel.decodingModelCache(archive: changed.binaryEncoded())
    } throws: { error in
      "\(error)".contains("property 'maker' is a NSFutureDescription, which migrun does not know")
    }
  }

  @Test func aProxyHoldingNoPropertyIsNamed() throws {
    let blob = try #require(
      try SQLiteStore.rawModelCache(
        at: Fixtures.url("coredataplus-samplemodels/SampleModel/Fixtures/SampleModel_V2.sqlite")))
    let archive = try PropertyListValue(decoding: try ObjectModel.inflateModelCache(blob))
    let (withProxies, _) = try Self.inheritedAsProxies(archive, underlying: { _ in .uid(0) })
    #expect {
      _ = try ObjectModel.decodingModelCache(archive: withProxies.binaryEncoded())
    } throws: { error in
      "\(error)".contains(
        "is an _NSPropertyDescriptionProxy (an inherited property) that holds no property description")
    }
  }

  /// An attribute kept in external storage is archived with `NSFlagsKey` 0x04, as Core Data's
  /// `encodeWithCoder:` writes it, and read back so: its entity's hash is the model's (read as 0x01,
  /// Core Data's "a maximum value follows", the hash left the external byte out and disagreed with
  /// the store's metadata). An archive migrun wrote before, 0x01 with no maximum value, still reads
  /// as external storage.
  @Test func externalStorageIsReadFromTheFlagsCoreDataWrites() throws {
    let attachment = Entity(
      name: "ChatAttachment",
      attributes: [
        Attribute(name: "data", type: .binary, isOptional: true, allowsExternalBinaryDataStorage: true),
        Attribute(name: "name", type: .string, isOptional: true),
      ])
    let model = try ObjectModel(entities: [attachment])
    let archive = ModelCacheArchive.archive(model)
    let objects = try #require(archive["$objects"]?.arrayValue)
    let data = try #require(objects.first { $0["NSAttributeType"]?.integerValue == 1000 })
    #expect(data["NSFlagsKey"]?.integerValue == 4)
    let read = try ObjectModel.decodingModelCache(archive: archive.binaryEncoded())
    #expect(read.entityVersionHashes == model.entityVersionHashes)
    #expect(
      read.entity(named: "ChatAttachment")?.attributes.first { $0.name == "data" }?.allowsExternalBinaryDataStorage
        == true)
    func flags(_ word: Int64, maxValue: Bool) throws -> Bool {
      var changed = objects
      for index in changed.indices where changed[index]["NSAttributeType"]?.integerValue == 1000 {
        guard case .dictionary(var fields) = changed[index] else { continue }
        fields["NSFlagsKey"] = .integer(word)
        if maxValue { fields["NSMaxValueName"] = .integer(1 << 20) }
        changed[index] = .dictionary(fields)
      }
      let model = try ObjectModel.decodingModelCache(
        archive: try Self.replacingObjects(of: archive, with: changed).binaryEncoded())
      return model.entity(named: "ChatAttachment")?.attributes.first { $0.name == "data" }?
        .allowsExternalBinaryDataStorage ?? false
    }
    #expect(try flags(0x04, maxValue: false))
    #expect(try flags(0x05, maxValue: true))
    #expect(try flags(0x01, maxValue: false), "an archive migrun wrote before")
    #expect(try !flags(0x01, maxValue: true), "Core Data's maximum value, not external storage")
  }

  /// `check` of a store whose cached model hashes an entity otherwise than its metadata: the finding
  /// names the entity, both hashes, and says Core Data opens the store by its metadata's hashes.
  @Test func aCacheDisagreeingWithTheMetadataIsExplained() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let own = try #require(try SQLiteStore.cachedModel(at: store))
    var entities = own.entities
    let mood = try #require(entities.firstIndex { $0.name == "Mood" })
    let stored = try #require(entities[mood].attributes.firstIndex { !$0.isTransient })
    entities[mood].attributes[stored].versionHashModifier = "built otherwise"
    let cache = try ObjectModel(entities: entities, versionIdentifiers: own.versionIdentifiers).modelCache()
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { try $0.execute(sql: "UPDATE Z_MODELCACHE SET Z_CONTENT = ?", arguments: [Data(cache)]) }
    try queue.close()
    let findings = try StoreCheck.findings(of: store)
    let finding = try #require(findings.first { $0.kind == "cache-disagrees-with-metadata" }, "\(findings)")
    let metadata = try #require(SQLiteStore.metadata(at: store).versionHashes["Mood"]).base64
    #expect(finding.message.hasPrefix("Mood: the hash migrun computes from the store's cached model ("))
    #expect(
      finding.message.contains(
        "is not the one in its metadata (\(metadata)). Core Data opens a store by its metadata's hashes"))
    #expect(finding.message.hasSuffix("Give the app's model (StoreCheck's bundle) to check against it"))
  }

  // MARK: - Archives as Core Data writes them

  struct ArchivedEntity {
    let slot: UInt64
    let superentity: UInt64?
    /// Property name → the slot of its description.
    let properties: [String: UInt64]
  }

  /// The entities of an archive's `$objects`, by slot.
  static func entities(_ objects: [PropertyListValue]) -> [UInt64: ArchivedEntity] {
    var entities: [UInt64: ArchivedEntity] = [:]
    for (index, object) in objects.enumerated() where className(object, objects) == "NSEntityDescription" {
      var properties: [String: UInt64] = [:]
      if let dictionary = object["NSProperties"]?.uidValue.map({ objects[Int($0)] }),
        let keys = dictionary["NS.keys"]?.arrayValue, let values = dictionary["NS.objects"]?.arrayValue
      {
        for (key, value) in zip(keys, values) {
          guard let name = key.uidValue.flatMap({ objects[Int($0)].stringValue }), let slot = value.uidValue
          else { continue }
          properties[name] = slot
        }
      }
      let parent = object["NSSuperentity"]?.uidValue.flatMap { $0 == 0 ? nil : $0 }
      entities[UInt64(index)] = ArchivedEntity(slot: UInt64(index), superentity: parent, properties: properties)
    }
    return entities
  }

  static func className(_ object: PropertyListValue, _ objects: [PropertyListValue]) -> String? {
    guard let reference = object["$class"]?.uidValue, Int(reference) < objects.count else { return nil }
    return objects[Int(reference)]["$classname"]?.stringValue
  }

  /// The archive with every inherited property of a subentity replaced by a proxy, as
  /// `-[_NSPropertyDescriptionProxy encodeWithCoder:]` writes one: `NSUnderlyingProperty` (the
  /// topmost ancestor's description), `NSReferenceID`, `NSEntityDescription` (the subentity).
  static func inheritedAsProxies(
    _ archive: PropertyListValue, underlying: (UInt64) -> PropertyListValue = { .uid($0) }
  ) throws -> (PropertyListValue, Int) {
    var objects = try #require(archive["$objects"]?.arrayValue)
    let entities = Self.entities(objects)
    objects.append(
      .dictionary([
        "$classname": .string("_NSPropertyDescriptionProxy"),
        "$classes": .array([.string("_NSPropertyDescriptionProxy"), .string("NSObject")]),
      ]))
    let proxyClass = PropertyListValue.uid(UInt64(objects.count - 1))
    var count = 0
    for entity in entities.values.sorted(by: { $0.slot < $1.slot }) {
      for (name, slot) in entity.properties.sorted(by: { $0.key < $1.key }) {
        var declaring: UInt64?
        var next = entity.superentity
        while let ancestor = next.flatMap({ entities[$0] }) {
          if let own = ancestor.properties[name] { declaring = own }
          next = ancestor.superentity
        }
        guard let declaring else { continue }
        objects[Int(slot)] = .dictionary([
          "$class": proxyClass, "NSUnderlyingProperty": underlying(declaring),
          "NSReferenceID": .integer(Int64(count)), "NSEntityDescription": .uid(entity.slot),
        ])
        count += 1
      }
    }
    return (try replacingObjects(of: archive, with: objects), count)
  }

  /// The archive with the named properties' descriptions (of every entity) of another class.
  static func replacingClass(of names: [String], in archive: PropertyListValue, with newClass: String) throws
    -> PropertyListValue
  {
    var objects = try #require(archive["$objects"]?.arrayValue)
    objects.append(.dictionary(["$classname": .string(newClass), "$classes": .array([.string(newClass)])]))
    let reference = PropertyListValue.uid(UInt64(objects.count - 1))
    for entity in entities(objects).values {
      for name in names {
        guard let slot = entity.properties[name], case .dictionary(var fields) = objects[Int(slot)] else { continue }
        fields["$class"] = reference
        objects[Int(slot)] = .dictionary(fields)
      }
    }
    return try replacingObjects(of: archive, with: objects)
  }

  static func replacingObjects(of archive: PropertyListValue, with objects: [PropertyListValue]) throws
    -> PropertyListValue
  {
    var top = try #require(archive.dictionaryValue)
    top["$objects"] = .array(objects)
    return .dictionary(top)
  }
}
