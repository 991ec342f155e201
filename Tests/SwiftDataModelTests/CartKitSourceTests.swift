import Foundation
import MigrunModel
import MigrunStore
import SwiftDataModel
import TestSupport
import Testing

/// CartKit (in `../shared`): its SwiftData sources, and a store SwiftData wrote from an earlier
/// state of them. The model read from the sources must be the one SwiftData built then, but for what
/// the sources changed since (CartModel gained `sessionId` and `promotionKindsJSON`).
@Suite struct CartKitSourceTests {
  static let root = "karim-ezzedine-cartkit/Sources/CartKitStorageSwiftData"
  static let store =
    "karim-ezzedine-cartkit/Tests/CartKitStorageSwiftDataTests/LegacySwiftData/CartKitSwiftData_v1.sqlite"

  @Test func theSourcesAreOneVersionNamedByItsIdentifier() throws {
    let bundle = try SwiftDataSources.bundle(at: Fixtures.url(Self.root))
    #expect(bundle.versionNames == ["1.0.0"])
    let model = try bundle.model(named: "1.0.0")
    #expect(model.entities.map(\.name) == ["CartItemModel", "CartItemModifierModel", "CartModel"])
    #expect(model.versionIdentifiers == ["1.0.0"])
  }

  /// Every entity the sources did not change since the store was written hashes as SwiftData
  /// stored it; CartModel does once the two attributes added since are left out.
  @Test func hashesEqualTheOnesSwiftDataStored() throws {
    let fromSource = try SwiftDataSources.bundle(at: Fixtures.url(Self.root)).currentModel
    let stored = try ModelBundle(modelOrStoreAt: Fixtures.url(Self.store)).currentModel
    let storedHashes = try SQLiteStore.metadata(at: Fixtures.url(Self.store)).versionHashes
    #expect(stored.entityVersionHashes == storedHashes)
    for entity in ["CartItemModel", "CartItemModifierModel"] {
      #expect(fromSource.entityVersionHashes[entity] == storedHashes[entity], "\(entity)")
    }
    #expect(fromSource.entityVersionHashes["CartModel"] != storedHashes["CartModel"])
    var cart = try #require(fromSource.entities.first { $0.name == "CartModel" })
    let added: Set = ["sessionId", "promotionKindsJSON"]
    #expect(cart.attributes.filter { added.contains($0.name) }.count == 2)
    cart.attributes.removeAll { added.contains($0.name) }
    let then = try ObjectModel(entities: fromSource.entities.map { $0.name == "CartModel" ? cart : $0 })
    #expect(then.entityVersionHashes == storedHashes)
  }

  /// Property by property, the model equals the one SwiftData archived in the store
  /// (types, optionality, relationships and their inverses, delete rules, uniqueness).
  @Test func propertiesEqualTheStoresOwnModel() throws {
    let fromSource = try SwiftDataSources.bundle(at: Fixtures.url(Self.root)).currentModel
    let stored = try ModelBundle(modelOrStoreAt: Fixtures.url(Self.store)).currentModel
    for entity in stored.entities {
      let mine = try #require(fromSource.entities.first { $0.name == entity.name })
      #expect(mine.uniquenessConstraints == entity.uniquenessConstraints, "\(entity.name)")
      for attribute in entity.attributes {
        let other = try #require(
          mine.attributes.first { $0.name == attribute.name }, "\(entity.name).\(attribute.name)")
        #expect(other.type == attribute.type, "\(entity.name).\(attribute.name)")
        #expect(other.isOptional == attribute.isOptional, "\(entity.name).\(attribute.name)")
      }
      for relationship in entity.relationships {
        let other = try #require(mine.relationships.first { $0.name == relationship.name })
        #expect(other.destinationEntity == relationship.destinationEntity)
        #expect(other.inverseName == relationship.inverseName, "\(entity.name).\(relationship.name)")
        #expect(other.isOptional == relationship.isOptional, "\(entity.name).\(relationship.name)")
        #expect(other.maxCount == relationship.maxCount)
        #expect(other.deleteRule == relationship.deleteRule, "\(entity.name).\(relationship.name)")
      }
    }
  }
}
