import Foundation
import MigrunKit
import MigrunModel
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
}
