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

  /// A model's rules are outside input: bounds past Int64's range and a minimum length of a
  /// terabyte trapped (Int64(1e30)) or tried to allocate it. Each is now a value breaking the rule,
  /// which the default or NULL replaces.
  @Test func boundsNoValueCanKeepGiveAValueNotATrap() throws {
    let xml = """
      <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="A">
          <attribute name="low" optional="YES" attributeType="Integer 64" minValueString="1e30"/>
          <attribute name="high" optional="YES" attributeType="Integer 32" maxValueString="-1e300"/>
          <attribute name="odd" optional="YES" attributeType="Integer 16" minValueString="nan"/>
          <attribute name="long" optional="YES" attributeType="String" minValueString="1000000000000"/>
          <attribute name="blob" optional="YES" attributeType="Binary" minValueString="1000000000000"/>
        </entity>
      </model>
      """
    let model = try XcdatamodelReader.parse(Data(xml.utf8), file: "Bounds.xcdatamodel/contents")
    for seed: UInt64 in [1, 2] {
      let objects = StoreFiller.objects(for: model, perEntity: 3, seed: seed)
      #expect(objects.count == 3)
      for object in objects {
        #expect(object.attributes["low"] ?? .null == .null)
        #expect(object.attributes["long"] ?? .null == .null)
        #expect(object.attributes["blob"] ?? .null == .null)
      }
    }
    #expect(StoreFiller.integer(1e30) == .max)
    #expect(StoreFiller.integer(-1e300) == .min)
    #expect(StoreFiller.integer(.nan) == 0)
    #expect(StoreFiller.integer(-9.223_372_036_854_775_808e18) == .min)
    #expect(StoreFiller.integer(42) == 42)
  }
}
