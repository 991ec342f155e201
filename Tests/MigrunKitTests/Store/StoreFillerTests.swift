import Foundation
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// The made-up objects `migrun verify` migrates: valid under each version's rules, every
/// relationship used, the same for the same seed.
@Suite struct StoreFillerTests {
  @Test func everyFixtureVersionGetsAValidStoreWithEveryRelationshipUsed() throws {
    let folder = try TemporaryDirectory()
    var checked = 0
    for url in try Fixtures.modelBundles() + [
      Fixtures.repositoryRoot.appendingPathComponent("policies/examples/recipes/Recipes.xcdatamodeld")
    ] {
      let bundle = try ModelBundle(modelOrStoreAt: url)
      for version in bundle.versionNames {
        let model = try bundle.model(named: version)
        let objects = StoreFiller.objects(for: model, perEntity: 6, seed: 7)
        #expect(objects == StoreFiller.objects(for: model, perEntity: 6, seed: 7), "the same seed, the same objects")
        let store = try SQLiteStore.create(
          at: try folder.folder(UUID().uuidString).appendingPathComponent("s.sqlite"), model: model)
        try StoreFiller.fill(store, with: objects)
        #expect(try store.ruleViolations(limit: 5) == [], "\(url.lastPathComponent) \(version)")
        for entity in model.entities where !entity.isAbstract {
          #expect(try store.count(of: entity.name, includingSubentities: false) == 6, "\(version): \(entity.name)")
          for relationship in entity.relationships where !relationship.isTransient {
            let used = objects.contains { object in
              object.toOne[relationship.name] != nil || !(object.toMany[relationship.name] ?? []).isEmpty
            }
            #expect(used, "\(url.lastPathComponent) \(version): \(entity.name).\(relationship.name) is never used")
          }
        }
        try store.close()
        checked += 1
      }
    }
    #expect(checked >= 10)
    let model = try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
      .model(named: "Moody 6")
    #expect(
      StoreFiller.objects(for: model, perEntity: 6, seed: 1) != StoreFiller.objects(for: model, perEntity: 6, seed: 2))
  }
}
