import Foundation
import PropertyList
import TestSupport
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore

#if canImport(Glibc)
  import Glibc
#endif

/// ``CFHashOrder`` against Core Foundation: known answers (read off Core Foundation), and the same
/// orders as Core Foundation itself for random key sets — the copy of Core Foundation inside the
/// Swift toolchain's Foundation on Linux, called through its exported C functions.
@Suite struct CFHashOrderTests {
  @Test func hashesAreCoreFoundations() {
    #expect(CFHashOrder.hash("blocking") == 1_458_340_411_118_256_721)
    #expect(CFHashOrder.hash("blockedBy") == 2_272_135_459_950_294_680)
    #expect(CFHashOrder.hash("shows") == 19_476_544_093_017)
    #expect(CFHashOrder.hash("favoriteFolders") == 4_553_255_057_664_451_646)
    #expect(CFHashOrder.hash("é") == 1470)
    #expect(
      CFHashOrder.hash(
        "A string over ninety-six characters long, so that only its first, middle and last thirty-two units are hashed by Core Foundation"
      ) == 1_958_685_038_451_145_034)
  }

  @Test func ordersAreCoreFoundations() {
    #expect(CFHashOrder.order(of: ["blockedBy", "blocking"]) == ["blocking", "blockedBy"])
    #expect(
      CFHashOrder.order(of: ["a", "b", "c", "d", "e", "f", "g", "h"]) == ["g", "c", "h", "d", "e", "a", "f", "b"])
    let seven = ["name", "date", "items", "owner", "tags", "parent", "children"]
    #expect(CFHashOrder.order(of: seven) == ["owner", "tags", "parent", "children", "date", "name", "items"])
    #expect(
      CFHashOrder.order(of: seven, growing: true) == ["parent", "owner", "name", "children", "date", "tags", "items"])
  }

  /// Core Foundation's own dictionary, through the C functions Foundation on Linux exports.
  struct CoreFoundation {
    typealias Create =
      @convention(c) (
        UnsafeRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<UnsafeRawPointer?>?, Int,
        UnsafeRawPointer?, UnsafeRawPointer?
      ) -> UnsafeRawPointer?
    typealias CreateString = @convention(c) (UnsafeRawPointer?, UnsafePointer<CChar>, UInt32) -> UnsafeRawPointer?
    typealias GetKeys =
      @convention(c) (
        UnsafeRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<UnsafeRawPointer?>?
      ) -> Void
    let create: Create
    let createString: CreateString
    let getKeys: GetKeys
    let keyCallBacks: UnsafeRawPointer
    let valueCallBacks: UnsafeRawPointer

    init?() {
      guard let handle = dlopen(nil, RTLD_NOW),
        let create = dlsym(handle, "CFDictionaryCreate"),
        let createString = dlsym(handle, "CFStringCreateWithCString"),
        let getKeys = dlsym(handle, "CFDictionaryGetKeysAndValues"),
        let keyCallBacks = dlsym(handle, "kCFTypeDictionaryKeyCallBacks"),
        let valueCallBacks = dlsym(handle, "kCFTypeDictionaryValueCallBacks")
      else { return nil }
      self.create = unsafeBitCast(create, to: Create.self)
      self.createString = unsafeBitCast(createString, to: CreateString.self)
      self.getKeys = unsafeBitCast(getKeys, to: GetKeys.self)
      self.keyCallBacks = UnsafeRawPointer(keyCallBacks)
      self.valueCallBacks = UnsafeRawPointer(valueCallBacks)
    }

    /// The order Core Foundation's `CFDictionaryCreate` enumerates `keys` in (the test leaks them).
    func order(of keys: [String]) -> [String] {
      var strings: [UnsafeRawPointer?] = keys.map { key in key.withCString { createString(nil, $0, 0x0800_0100) } }
      let dictionary = strings.withUnsafeMutableBufferPointer { buffer in
        create(nil, buffer.baseAddress, buffer.baseAddress, keys.count, keyCallBacks, valueCallBacks)
      }
      var out = [UnsafeRawPointer?](repeating: nil, count: keys.count)
      getKeys(dictionary, &out, nil)
      return out.compactMap { pointer in strings.firstIndex(of: pointer).map { keys[$0] } }
    }
  }

  @Test func randomKeySetsGiveCoreFoundationsOrder() throws {
    // Foundation is linked (this file imports it); its Core Foundation is the reference.
    _ = NSString(string: "load Foundation")
    let reference = try #require(CoreFoundation(), "Core Foundation's C functions are not exported here")
    var generator = SystemRandomNumberGenerator()
    let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_éü")
    for _ in 0..<500 {
      var keys: Set<String> = []
      let count = Int.random(in: 1...90, using: &generator)
      while keys.count < count {
        let length = Int.random(in: 1...120, using: &generator)
        keys.insert(String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? "a" }))
      }
      let list = Array(keys)
      #expect(CFHashOrder.order(of: list) == reference.order(of: list), "\(list)")
    }
  }

  /// How Core Data fills its dictionaries, read off its own archives: the `NSProperties` dictionary
  /// of every entity in every fixture store's `Z_MODELCACHE` is archived in the order of a table
  /// made with room for all its keys, filled with the attributes then the relationships, inherited
  /// ones first, each in the model's order.
  @Test func appleArchivesEntityPropertiesInThisOrder() throws {
    struct Expected: Decodable { let model: String? }
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    var checked = 0
    for (store, expected) in try JSONDecoder().decode([String: Expected].self, from: data).sorted(by: {
      $0.key < $1.key
    }) {
      guard let contents = expected.model else { continue }
      let version = Fixtures.url(contents).deletingLastPathComponent()
      let model = try ModelBundle(modelOrStoreAt: version.deletingLastPathComponent())
        .model(named: version.deletingPathExtension().lastPathComponent)
      let blob = try SQLiteStore.rawModelCache(at: Fixtures.url(store))
      guard let blob, !blob.isEmpty else { continue }
      let archive = try PropertyListValue(decoding: try ObjectModel.inflateModelCache(blob))
      let objects = archive["$objects"]?.arrayValue ?? []
      func object(_ value: PropertyListValue?) -> PropertyListValue? {
        guard case .uid(let index)? = value, Int(index) < objects.count else { return nil }
        return objects[Int(index)]
      }
      for item in objects {
        guard object(item["$class"])?["$classname"]?.stringValue == "NSEntityDescription",
          let name = object(item["NSEntityName"])?.stringValue, let entity = model.entity(named: name),
          let keys = object(item["NSProperties"])?["NS.keys"]?.arrayValue
        else { continue }
        let archived = keys.compactMap { object($0)?.stringValue }
        let attributes = model.attributes(of: entity).map(\.name)
        let relationships = model.relationships(of: entity).map(\.name)
        #expect(CFHashOrder.order(of: attributes + relationships) == archived, "\(store): \(name)")
        checked += 1
      }
    }
    #expect(checked >= 20, "entities checked: \(checked)")
  }

  /// The join tables Core Data wrote in 80 real stores of a messaging app and one store of a
  /// 19-version model (`../shared/fixtures/facts/join-pairing.json`: each version's entity with all
  /// its properties, and Apple's tables): the rule in `StoreSchema.Builder` (Core Data's own Leopard
  /// and Tiger tables, ``CoreDataDictionaryOrder``) gives every one of them — the table's name, and
  /// for a table made fresh its columns with their suffixes (`Z_3ARTWORKS1` for `shows`,
  /// `Z_3ARTWORKS2` for `locations`: the order the entity's pairs were met in). A table Core Data's
  /// own migration renamed in place keeps its older column order, so only its name and its columns
  /// are compared there.
  @Test func everyJoinTableFactFits() throws {
    let data = try Data(contentsOf: Fixtures.facts("join-pairing.json"))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let facts = try #require(root["facts"] as? [[String: Any]])
    var fits: [String] = []
    var misses: [String] = []
    for fact in facts {
      let entityName = try #require(fact["entity"] as? String)
      let versions = try #require(fact["versions"] as? [String])
      let relationships = try #require(fact["relationships"] as? [[String: Any]])
      let attributes = try #require(fact["attributes"] as? [String])
      var entity = Entity(name: entityName)
      entity.attributes = attributes.map { Attribute(name: $0, type: .string, isOptional: true) }
      var others: [String: Entity] = [:]
      // Apple's join tables whose two columns are the entity's own pairs, and the pairs'
      // relationship sides, read off the table's name and columns.
      var expected: [String: [String]] = [:]
      var renamed: Set<String> = []
      for table in try #require(fact["applesTables"] as? [[String: Any]]) {
        let name = String(try #require(table["table"] as? String).drop { $0 == "Z" || $0 == "_" || $0.isNumber })
        expected[name] = try #require(table["columns"] as? [String]).map {
          String($0.drop { $0 == "Z" || $0 == "_" || $0.isNumber })
        }
        if (table["made"] as? String) != "fresh" { renamed.insert(name) }
      }
      func base(_ column: String) -> String { String(column.reversed().drop(while: \.isNumber).reversed()) }
      for relationship in relationships {
        let name = try #require(relationship["name"] as? String)
        let destination = try #require(relationship["destination"] as? String)
        let inverse = relationship["inverse"] as? String
        let toMany = relationship["toMany"] as? Bool ?? false
        entity.relationships.append(
          Relationship(
            name: name, destinationEntity: destination, inverseName: inverse, maxCount: toMany ? 0 : 1,
            isOptional: true))
        guard destination != entityName, let inverse else { continue }
        // The other side: to-many where Apple made a join table of it.
        let joined = expected.values.contains {
          $0.map(base).contains(inverse.uppercased()) && $0.map(base).contains(name.uppercased())
        }
        var other = others[destination] ?? Entity(name: destination)
        other.relationships.append(
          Relationship(
            name: inverse, destinationEntity: entityName, inverseName: name, maxCount: joined ? 0 : 1, isOptional: true)
        )
        others[destination] = other
      }
      let model = try ObjectModel(entities: [entity] + others.values)
      let schema = StoreSchema(model: model)
      let ours = Dictionary(
        schema.tables.filter { $0.primaryKey.count == 2 }.map { table in
          (
            String(table.name.drop { $0 == "Z" || $0 == "_" || $0.isNumber }),
            table.columns.prefix(2).map { String($0.name.drop { $0 == "Z" || $0 == "_" || $0.isNumber }) }
          )
        }, uniquingKeysWith: { first, _ in first })
      let agrees = expected.allSatisfy { name, columns in
        renamed.contains(name) ? ours[name]?.sorted() == columns.sorted() : ours[name] == columns
      }
      if agrees { fits.append(versions[0]) } else { misses.append(versions[0]) }
    }
    #expect(misses == [])
    #expect(fits.count == facts.count && facts.count >= 11)
  }
}
