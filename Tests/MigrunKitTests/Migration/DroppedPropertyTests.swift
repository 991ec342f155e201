import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// What a step leaves behind, as `plan` and `migrate` report it.
@Suite struct DroppedPropertyTests {
  static func model(_ type: AttributeType, _ version: String) throws -> ObjectModel {
    try ObjectModel(
      entities: [
        Entity(
          name: "Item",
          attributes: [Attribute(name: "name", type: .string), Attribute(name: "count", type: type, isOptional: true)])
      ], versionName: version)
  }

  /// An attribute whose type changes (Integer 64 → String) is no value to drop when the step's
  /// script writes it: the report says what the step does with it.
  @Test func anAttributeWhoseTypeChangesIsReportedAsSuch() throws {
    let v1 = try Self.model(.integer64, "V1")
    let v2 = try Self.model(.string, "V2")
    // What a scripted step's mapping file declares: `name` copied, `count` left to its script.
    let mapping = MappingModel(
      source: v1, destination: v2,
      entityMappings: [
        EntityMapping(
          name: "ItemToItem", kind: .transform, sourceEntity: "Item", destinationEntity: "Item",
          attributes: ["name": .property("name")])
      ])
    let scripted = mapping.drops(scripted: ["ItemToItem"])
    #expect(
      scripted.map(\.description) == [
        "Item.count (its type changes, Integer 64 → String: the mapping's script writes the new value from it)"
      ])
    #expect(
      mapping.drops().map(\.description) == [
        "Item.count (its type changes, Integer 64 → String, and nothing converts it)"
      ])
  }

  /// An attribute the script computes under the same name: said so, not "unless it reads it".
  @Test func anAttributeTheScriptComputesIsSaidToBeComputed() throws {
    let v1 = try Self.model(.integer64, "V1")
    let v2 = try Self.model(.integer64, "V2")
    let mapping = MappingModel(
      source: v1, destination: v2,
      entityMappings: [
        EntityMapping(
          name: "ItemToItem", kind: .transform, sourceEntity: "Item", destinationEntity: "Item",
          attributes: ["name": .property("name"), "count": .computed])
      ])
    #expect(
      mapping.drops(scripted: ["ItemToItem"]).map(\.description) == [
        "Item.count (the mapping's script computes count in its place and may read it)"
      ])
  }

  /// Each dropped attribute counts the values its entity's own objects hold (a subentity's in the
  /// same table are not its own), the entity's attributes counted together in one pass.
  @Test func eachDroppedAttributeCountsItsOwnObjectsSetValues() throws {
    let attributes = [
      Attribute(name: "name", type: .string, isOptional: true),
      Attribute(name: "count", type: .integer64, isOptional: true),
      Attribute(name: "note", type: .string, isOptional: true),
    ]
    let v1 = try ObjectModel(
      entities: [Entity(name: "Item", attributes: attributes), Entity(name: "Special", parentName: "Item")],
      versionName: "V1")
    let v2 = try ObjectModel(
      entities: [
        Entity(name: "Item", attributes: [attributes[0]]), Entity(name: "Special", parentName: "Item"),
      ], versionName: "V2")
    let folder = try TemporaryDirectory()
    let store = try SQLiteStore.create(at: folder.url.appendingPathComponent("drops.sqlite"), model: v1)
    // Items 1…5: count set on 1…3, note on 5; one Special with both set, in the same table.
    let items = (1...5).map { key -> [String: StoreValue] in
      [
        "name": .string("item \(key)"), "count": key <= 3 ? .integer(Int64(key)) : .null,
        "note": key == 5 ? .string("kept") : .null,
      ]
    }
    let objects =
      items.enumerated().map { StoredObject(id: ObjectID(entity: "Item", primaryKey: Int64($0 + 1)), attributes: $1) }
      + [
        StoredObject(
          id: ObjectID(entity: "Special", primaryKey: 6),
          attributes: ["name": .string("special"), "count": .integer(6), "note": .string("its own")])
      ]
    try store.write { writer in try objects.forEach(writer.insert) }
    let mapping = MappingModel(
      source: v1, destination: v2,
      entityMappings: ["Item", "Special"].map { (entity: String) in
        EntityMapping(
          name: "\(entity)To\(entity)", kind: .copy, sourceEntity: entity, destinationEntity: entity,
          attributes: ["name": .property("name")])
      })
    #expect(
      try store.counting(mapping.drops()).map(\.description) == [
        "Item.count — 3 values", "Item.note — 1 value", "Special.count — 1 value", "Special.note — 1 value",
      ])
  }
}
