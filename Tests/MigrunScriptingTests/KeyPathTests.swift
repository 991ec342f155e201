import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// `obj:valueForKeyPath(path)`: key-value coding's key paths, as mapping models write them.
@Suite struct KeyPathTests {
  static let v1 = """
    <model>
      <entity name="Shop">
        <attribute name="name" optional="YES" attributeType="String"/>
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="shop" inverseEntity="Item"/>
      </entity>
      <entity name="Item">
        <attribute name="price" optional="YES" attributeType="Double"/>
        <attribute name="tag" optional="YES" attributeType="String"/>
        <relationship name="shop" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shop" inverseName="items" inverseEntity="Shop"/>
        <relationship name="parts" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Part" inverseName="item" inverseEntity="Part"/>
      </entity>
      <entity name="Part">
        <attribute name="code" optional="YES" attributeType="String"/>
        <relationship name="item" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Item" inverseName="parts" inverseEntity="Item"/>
      </entity>
    </model>
    """
  /// Version 2: every Shop and Item gains the attributes the key paths fill.
  static let v2 = v1.replacingOccurrences(
    of: #"<attribute name="name" optional="YES" attributeType="String"/>"#,
    with: #"""
      <attribute name="name" optional="YES" attributeType="String"/>
      <attribute name="count" optional="YES" attributeType="Integer 64"/>
      <attribute name="total" optional="YES" attributeType="Double"/>
      <attribute name="average" optional="YES" attributeType="Double"/>
      <attribute name="cheapest" optional="YES" attributeType="Double"/>
      <attribute name="dearest" optional="YES" attributeType="Double"/>
      <attribute name="tags" optional="YES" attributeType="String"/>
      <attribute name="allTags" optional="YES" attributeType="String"/>
      <attribute name="codes" optional="YES" attributeType="String"/>
      """#
  ).replacingOccurrences(
    of: #"<attribute name="tag" optional="YES" attributeType="String"/>"#,
    with: #"""
      <attribute name="tag" optional="YES" attributeType="String"/>
      <attribute name="shopName" optional="YES" attributeType="String"/>
      <attribute name="partCount" optional="YES" attributeType="Integer 64"/>
      """#)

  static let script = """
    local function joined(list) table.sort(list); return table.concat(list, ",") end
    return {
      Shop = {
        attributes = {
          count = function(src) return src:valueForKeyPath("items.@count") end,
          total = function(src) return src:valueForKeyPath("items.@sum.price") end,
          average = function(src) return src:valueForKeyPath("items.@avg.price") end,
          cheapest = function(src) return src:valueForKeyPath("items.@min.price") end,
          dearest = function(src) return src:valueForKeyPath("items.@max.price") end,
          tags = function(src) return joined(src:valueForKeyPath("items.@distinctUnionOfObjects.tag")) end,
          allTags = function(src) return joined(src:valueForKeyPath("items.@unionOfObjects.tag")) end,
          codes = function(src) return joined(src:valueForKeyPath("items.@distinctUnionOfSets.parts.code")) end,
        },
      },
      Item = {
        attributes = {
          shopName = function(src) return src:valueForKeyPath("shop.name") end,
          partCount = function(src) return #src:valueForKeyPath("parts.code") end,
        },
      },
    }
    """

  @Test func keyPathsThroughRelationshipsAndCollectionOperators() throws {
    let folder = try TemporaryDirectory()
    try folder.write(Self.v1, to: "Shops.xcdatamodeld/Shops.xcdatamodel/contents")
    try folder.write(Self.v2, to: "Shops.xcdatamodeld/Shops 2.xcdatamodel/contents")
    let policies = try folder.folder("policies")
    try folder.write(Self.script, to: "policies/Shops-Shops 2.lua")
    let bundleURL = folder.url.appendingPathComponent("Shops.xcdatamodeld")
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let store = folder.url.appendingPathComponent("shops.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "Shops"))
    try created.write { writer in
      let shop = ObjectID(entity: "Shop", primaryKey: 1)
      let empty = ObjectID(entity: "Shop", primaryKey: 2)
      try writer.insert(StoredObject(id: shop, attributes: ["name": .string("corner")]))
      try writer.insert(StoredObject(id: empty, attributes: ["name": .string("empty")]))
      let items: [(Double, String, [String])] = [(2.5, "b", ["x", "y"]), (1.5, "a", ["y"]), (4.0, "b", [])]
      var part: Int64 = 0
      for (index, item) in items.enumerated() {
        let id = ObjectID(entity: "Item", primaryKey: Int64(index + 1))
        try writer.insert(
          StoredObject(id: id, attributes: ["price": .double(item.0), "tag": .string(item.1)], toOne: ["shop": shop]))
        for code in item.2 {
          part += 1
          try writer.insert(
            StoredObject(
              id: ObjectID(entity: "Part", primaryKey: part), attributes: ["code": .string(code)], toOne: ["item": id]))
        }
      }
      // An item without a shop: its shop's name is NULL.
      try writer.insert(StoredObject(id: ObjectID(entity: "Item", primaryKey: 4), attributes: ["price": .double(9)]))
    }
    try created.close()

    try ScriptedRun.migrate(store, bundle: bundleURL, folders: [policies])

    let after = try SQLiteStore(url: store, model: try bundle.model(named: "Shops 2"))
    defer { try? after.close() }
    let shop = try #require(try after.object(ObjectID(entity: "Shop", primaryKey: 1)))
    #expect(shop.attributes["count"] == .integer(3))
    #expect(shop.attributes["total"] == .double(8))
    #expect(shop.attributes["average"] == .double(8.0 / 3))
    #expect(shop.attributes["cheapest"] == .double(1.5))
    #expect(shop.attributes["dearest"] == .double(4))
    #expect(shop.attributes["tags"] == .string("a,b"))
    #expect(shop.attributes["allTags"] == .string("a,b,b"))
    #expect(shop.attributes["codes"] == .string("x,y"))
    let empty = try #require(try after.object(ObjectID(entity: "Shop", primaryKey: 2)))
    #expect(empty.attributes["count"] == .integer(0))
    #expect(empty.attributes["total"] == .double(0))
    #expect(empty.attributes["average"] == .null)
    #expect(empty.attributes["cheapest"] == .null)
    #expect(empty.attributes["tags"] == .string(""))
    let first = try #require(try after.object(ObjectID(entity: "Item", primaryKey: 1)))
    #expect(first.attributes["shopName"] == .string("corner"))
    #expect(first.attributes["partCount"] == .integer(2))
    let orphan = try #require(try after.object(ObjectID(entity: "Item", primaryKey: 4)))
    #expect(orphan.attributes["shopName"] == .null)
    #expect(orphan.attributes["partCount"] == .integer(0))
  }
}
