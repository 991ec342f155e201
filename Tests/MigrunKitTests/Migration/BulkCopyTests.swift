import Foundation
import TestSupport
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore

/// An inferred step run as SQL gives the same store as the same step run object by object, through
/// hierarchies, ordered to-many, many-to-many and reflexive join tables, removed subentities and renames.
@Suite struct BulkCopyTests {
  /// Gallery 2: Square is gone, Tag is Label (and Shape.tags is labels), Person.email is mail,
  /// Circle gains an optional color with a default, Canvas.title becomes required with a default.
  static let gallery2 = SampleModels.gallery
    .replacingOccurrences(
      of:
        #"<entity name="Square" parentEntity="Shape">\#n    <attribute name="side" attributeType="Float" defaultValueString="1"/>\#n  </entity>\#n"#,
      with: ""
    )
    .replacingOccurrences(
      of: #"<attribute name="radius" attributeType="Double" defaultValueString="1"/>"#,
      with:
        #"<attribute name="radius" attributeType="Double" defaultValueString="1"/><attribute name="color" optional="YES" attributeType="String" defaultValueString="red"/>"#
    )
    .replacingOccurrences(
      of: #"<attribute name="title" optional="YES" attributeType="String"/>"#,
      with: #"<attribute name="title" attributeType="String" defaultValueString="untitled"/>"#
    )
    .replacingOccurrences(
      of: #"<entity name="Tag">"#, with: #"<entity name="Label" elementID="Tag">"#
    )
    .replacingOccurrences(
      of:
        #"<relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="shapes" inverseEntity="Tag"/>"#,
      with:
        #"<relationship name="labels" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Label" inverseName="shapes" inverseEntity="Label" elementID="tags"/>"#
    )
    .replacingOccurrences(of: #"inverseName="tags""#, with: #"inverseName="labels""#)
    .replacingOccurrences(
      of: #"<attribute name="email" optional="YES" attributeType="String"/>"#,
      with: #"<attribute name="mail" optional="YES" attributeType="String" elementID="email"/>"#
    )
    .replacingOccurrences(of: #"<constraint value="email"/>"#, with: #"<constraint value="mail"/>"#)

  static func id(_ entity: String, _ key: Int64) -> ObjectID { ObjectID(entity: entity, primaryKey: key) }

  /// A Gallery store with every kind of relationship filled, some pointing at squares.
  static func makeStore(at url: URL, model: ObjectModel) throws {
    let store = try SQLiteStore.create(at: url, model: model)
    try store.write { writer in
      try writer.insert(StoredObject(id: id("Canvas", 1), attributes: ["title": .string("study")]))
      try writer.insert(StoredObject(id: id("Canvas", 2)))  // no title: gets the default
      for key in Int64(1)...6 {
        let entity = key % 2 == 0 ? "Square" : "Circle"
        let attributes: [String: StoreValue] =
          entity == "Circle"
          ? ["z": .integer(key), "radius": .double(Double(key))] : ["z": .integer(key), "side": .double(1.5)]
        try writer.insert(StoredObject(id: id(entity, key), attributes: attributes))
      }
      try writer.setToMany(id("Canvas", 1), "shapes", [id("Circle", 5), id("Square", 2), id("Circle", 1)])
      try writer.setToMany(id("Canvas", 2), "shapes", [id("Square", 4), id("Circle", 3)])
      for (key, name) in [(1, "red"), (2, "blue")] as [(Int64, String)] {
        try writer.insert(StoredObject(id: id("Tag", key), attributes: ["name": .string(name)]))
      }
      try writer.setToMany(id("Tag", 1), "shapes", [id("Circle", 1), id("Square", 2), id("Circle", 3)])
      try writer.setToMany(id("Tag", 2), "shapes", [id("Square", 6)])
      try writer.insert(StoreBehaviourTests.ada)
      try writer.insert(StoredObject(id: id("Person", 2), attributes: ["email": .string("grace@example.org")]))
      try writer.insert(StoredObject(id: id("Person", 3)))
      try writer.setToMany(id("Person", 1), "friends", [id("Person", 2), id("Person", 3)])
    }
    try store.close()
  }

  @Test func bothPathsGiveTheSameStore() throws {
    let folder = try TemporaryDirectory()
    let v1 = try SampleModels.galleryModel()
    let v2 = try XcdatamodelReader.parse(
      Data(Self.gallery2.utf8), file: "Gallery 2.xcdatamodel/contents", versionName: "Gallery 2")
    let mapping = try MappingModel.inferred(from: v1, to: v2)
    let step = MigrationStep(
      from: "Gallery", to: "Gallery 2", kind: .inferred, inferredMapping: mapping, source: v1, destination: v2)
    let plan = MigrationPlan(
      sourceVersion: "Gallery", destinationVersion: "Gallery 2", steps: [step], rule: .directInferred)
    var exports: [String] = []
    for bulkCopy in [true, false] {
      let url = folder.url.appendingPathComponent("gallery-\(bulkCopy).sqlite")
      try Self.makeStore(at: url, model: v1)
      let report = try StoreMigrator(
        store: url, plan: plan, options: .init(keepBackup: false, bulkCopy: bulkCopy)
      ).run()
      #expect(report.steps.first?.bulkCopy == bulkCopy)
      let migrated = try SQLiteStore(url: url, model: v2, access: .readWrite)
      // Each run's source store has its own UUID; everything else must match.
      exports.append(try StoreJSON.export(migrated).split(separator: "\n").filter { !$0.contains("\"uuid\"") }.joined())
      if bulkCopy {
        #expect(
          try migrated.object(Self.id("Canvas", 1))?.toMany["shapes"] == [Self.id("Circle", 5), Self.id("Circle", 1)])
        #expect(try migrated.object(Self.id("Canvas", 2))?.attributes["title"] == .string("untitled"))
        #expect(try migrated.object(Self.id("Circle", 3))?.attributes["color"] == .string("red"))
        #expect(
          try migrated.object(Self.id("Label", 1))?.toMany["shapes"] == [Self.id("Circle", 1), Self.id("Circle", 3)])
        #expect(try migrated.object(Self.id("Label", 2))?.toMany["shapes"] == [])
        #expect(try migrated.object(Self.id("Person", 1))?.attributes["mail"] == .string("ada@example.org"))
        #expect(try migrated.object(Self.id("Person", 3))?.toMany["friends"] == [Self.id("Person", 1)])
        #expect(try migrated.count(of: "Shape", includingSubentities: true) == 3)
        // Keys continue above the source's: a new shape does not reuse a square's key.
        let key = try migrated.write { try $0.newPrimaryKey(for: "Circle") }
        #expect(key == 7)
      }
      try migrated.close()
    }
    #expect(exports[0] == exports[1])
  }

  /// Keys at both ends of Int64 (a store file is outside input): the copy stepped through key ranges
  /// of 50,000 from the smallest to the largest key — 10^14 statements, a hang — and `low + chunk`
  /// would have overflowed at the end. Ranges of rows now: every object copied, keys kept.
  @Test func keysAsSparseAsInt64AllowsAreCopiedInRangesOfRows() throws {
    let folder = try TemporaryDirectory()
    let v1 = try SampleModels.galleryModel()
    let v2 = try XcdatamodelReader.parse(
      Data(Self.gallery2.utf8), file: "Gallery 2.xcdatamodel/contents", versionName: "Gallery 2")
    let step = MigrationStep(
      from: "Gallery", to: "Gallery 2", kind: .inferred, inferredMapping: try MappingModel.inferred(from: v1, to: v2),
      source: v1, destination: v2)
    let plan = MigrationPlan(
      sourceVersion: "Gallery", destinationVersion: "Gallery 2", steps: [step], rule: .directInferred)
    let url = folder.url.appendingPathComponent("sparse.sqlite")
    try Self.makeStore(at: url, model: v1)
    let store = try SQLiteStore(url: url, model: v1, access: .readWrite)
    let far: [Int64] = [.max, .max - 1, .min + 1, -7]
    try store.write { writer in
      for key in far { try writer.insert(StoredObject(id: Self.id("Person", key))) }
    }
    try store.close()
    let report = try StoreMigrator(store: url, plan: plan, options: .init(keepBackup: false, bulkCopy: true)).run()
    #expect(report.steps.first?.bulkCopy == true)
    let migrated = try SQLiteStore(url: url, model: v2)
    #expect(try migrated.count(of: "Person", includingSubentities: true) == 3 + far.count)
    for key in far { #expect(try migrated.object(Self.id("Person", key)) != nil, "Person \(key)") }
    try migrated.close()
  }

  /// Changes stored differently on the two sides (to-one ↔ to-many) take the object path.
  @Test func aToOneBecomingToManyTakesTheObjectPath() throws {
    let v1 = try SampleModels.galleryModel()
    let changed = SampleModels.gallery.replacingOccurrences(
      of:
        #"<relationship name="canvas" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Canvas" inverseName="shapes" inverseEntity="Canvas"/>"#,
      with:
        #"<relationship name="canvas" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Canvas" inverseName="shapes" inverseEntity="Canvas"/>"#
    )
    #expect(changed != SampleModels.gallery)
    let v2 = try XcdatamodelReader.parse(Data(changed.utf8), file: "G.xcdatamodel/contents", versionName: "Gallery 2")
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("gallery.sqlite")
    try Self.makeStore(at: url, model: v1)
    let step = MigrationStep(
      from: "Gallery", to: "Gallery 2", kind: .inferred, inferredMapping: try MappingModel.inferred(from: v1, to: v2),
      source: v1, destination: v2)
    let plan = MigrationPlan(
      sourceVersion: "Gallery", destinationVersion: "Gallery 2", steps: [step], rule: .directInferred)
    // Refused with the reason, named where it is found: plan shows it.
    guard case .objects(let why) = try BulkCopy.decide(mapping: try #require(step.inferredMapping)) else {
      Issue.record("a to-one becoming to-many was copied as rows")
      return
    }
    #expect(why.hasPrefix("Canvas.shapes") || why.hasPrefix("Circle.canvas") || why.hasPrefix("Shape.canvas"), "\(why)")
    #expect(why.contains("stored another way"), "\(why)")
    let predicted = try StepMethod.planned(
      for: step, mapping: StepMapping(mapping: try #require(step.inferredMapping)), store: nil)
    #expect(predicted.method == .objects)
    #expect(predicted.reason?.contains(why) == true, "\(predicted.reason ?? "")")
    let report = try StoreMigrator(store: url, plan: plan, options: .init(keepBackup: false)).run()
    #expect(report.steps.first?.bulkCopy == false)
    let migrated = try SQLiteStore(url: url, model: v2)
    #expect(try migrated.object(Self.id("Circle", 3))?.toMany["canvas"] == [Self.id("Canvas", 2)])
  }
}
