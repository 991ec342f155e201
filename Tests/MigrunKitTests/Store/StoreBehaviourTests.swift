import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// The same behaviour from every store kind.
@Suite struct StoreBehaviourTests {
  enum Kind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, memory
    var testDescription: String { rawValue }
  }

  /// A fresh empty store of `kind` (the folder keeps the SQLite file alive for the test).
  static func store(_ kind: Kind, _ folder: TemporaryDirectory) throws -> any ObjectStore {
    let model = try SampleModels.galleryModel()
    switch kind {
    case .sqlite: return try SQLiteStore.create(at: folder.url.appendingPathComponent("gallery.sqlite"), model: model)
    case .memory: return InMemoryStore(model: model)
    }
  }

  static let ada = StoredObject(
    id: ObjectID(entity: "Person", primaryKey: 1),
    attributes: [
      "email": .string("ada@example.org"), "age": .integer(36), "big": .integer(.max), "active": .boolean(true),
      "salary": .double(1234.5), "born": .date(-5_000_000_000.25), "photo": .data([0, 1, 0, 255]),
      "settings": .data(Array("bplist00".utf8)), "id": .uuid(Array(repeating: 7, count: 16)),
      "homepage": .string("https://example.org/ada"),
    ])

  @Test(arguments: Kind.allCases)
  func everyAttributeTypeRoundTrips(_ kind: Kind) throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(kind, folder)
    try store.write { try $0.insert(Self.ada) }
    let read = try #require(try store.object(Self.ada.id))
    var expected = Self.ada
    expected.toMany = ["friends": []]
    #expect(read == expected)
    #expect(read.attributes["scratch"] == nil, "transient attributes are not stored")
  }

  @Test(arguments: Kind.allCases)
  func updatesBumpTheVersionAndDeletesRemove(_ kind: Kind) throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(kind, folder)
    try store.write { try $0.insert(Self.ada) }
    var changed = try #require(try store.object(Self.ada.id))
    changed.attributes["age"] = .integer(37)
    try store.write { try $0.update(changed) }
    let updated = try #require(try store.object(Self.ada.id))
    #expect(updated.version == 2)
    #expect(updated.attributes["age"] == .integer(37))
    try store.write { try $0.delete(Self.ada.id) }
    #expect(try store.object(Self.ada.id) == nil)
    #expect(try store.count(of: "Person", includingSubentities: true) == 0)
  }

  @Test(arguments: Kind.allCases)
  func aHierarchySharesOneKeySequenceAndCountsBySubentity(_ kind: Kind) throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(kind, folder)
    let keys = try store.write { writer in
      let circle = try writer.newPrimaryKey(for: "Circle")
      let square = try writer.newPrimaryKey(for: "Square")
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Circle", primaryKey: circle), attributes: ["z": .integer(1), "radius": .double(2)]))
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Square", primaryKey: square), attributes: ["z": .integer(2), "side": .double(3)]))
      return [circle, square]
    }
    #expect(keys == [1, 2])
    #expect(try store.count(of: "Shape", includingSubentities: true) == 2)
    #expect(try store.count(of: "Shape", includingSubentities: false) == 0)
    #expect(try store.count(of: "Circle", includingSubentities: false) == 1)
    var seen: [ObjectID] = []
    try store.forEachObject(of: "Shape", includingSubentities: true) { seen.append($0.id) }
    #expect(seen == [ObjectID(entity: "Circle", primaryKey: 1), ObjectID(entity: "Square", primaryKey: 2)])
  }

  @Test(arguments: Kind.allCases)
  func relationshipsOfEveryKindReadBackFromBothSides(_ kind: Kind) throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(kind, folder)
    let canvas = ObjectID(entity: "Canvas", primaryKey: 1)
    let circle = ObjectID(entity: "Circle", primaryKey: 1)
    let square = ObjectID(entity: "Square", primaryKey: 2)
    let red = ObjectID(entity: "Tag", primaryKey: 1)
    let ada = Self.ada.id
    let grace = ObjectID(entity: "Person", primaryKey: 2)
    try store.write { writer in
      try writer.insert(StoredObject(id: canvas, attributes: ["title": .string("study")]))
      try writer.insert(StoredObject(id: circle, attributes: ["z": .integer(0), "radius": .double(1)]))
      try writer.insert(StoredObject(id: square, attributes: ["z": .integer(0), "side": .double(1)]))
      try writer.insert(StoredObject(id: red, attributes: ["name": .string("red")]))
      try writer.insert(Self.ada)
      try writer.insert(StoredObject(id: grace, attributes: ["email": .string("grace@example.org")]))
      try writer.setToMany(canvas, "shapes", [square, circle])  // ordered: square first
      try writer.setToMany(red, "shapes", [circle, square])
      try writer.setToMany(ada, "friends", [grace])
    }
    #expect(try store.object(canvas)?.toMany["shapes"] == [square, circle])
    #expect(try store.object(square)?.toOne["canvas"] == canvas)
    #expect(try store.object(red)?.toMany["shapes"] == [circle, square])
    #expect(try store.object(circle)?.toMany["tags"] == [red])
    #expect(try store.object(ada)?.toMany["friends"] == [grace])
    #expect(try store.object(grace)?.toMany["friends"] == [ada])
    // Deleting a member removes it from both sides.
    try store.write { try $0.delete(circle) }
    #expect(try store.object(canvas)?.toMany["shapes"] == [square])
    let redAfter = try store.object(red)
    #expect(redAfter?.toMany["shapes"] == [square], "\(String(describing: redAfter))")
  }

  @Test(arguments: Kind.allCases)
  func uniquenessViolationsAreConstraintErrorsAndRollBackTheTransaction(_ kind: Kind) throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(kind, folder)
    try store.write { try $0.insert(Self.ada) }
    let twin = StoredObject(
      id: ObjectID(entity: "Person", primaryKey: 2), attributes: ["email": .string("ada@example.org")])
    let other = StoredObject(
      id: ObjectID(entity: "Person", primaryKey: 3), attributes: ["email": .string("other@example.org")])
    let error = try #require(throws: StoreError.self) {
      try store.write { writer in
        try writer.insert(other)
        try writer.insert(twin)
      }
    }
    #expect(error.code == .constraint)
    #expect(
      try store.count(of: "Person", includingSubentities: false) == 1, "nothing of the failed transaction remains")
  }

  @Test(arguments: Kind.allCases)
  func jsonExportImportsIntoEitherKindAndExportsTheSame(_ kind: Kind) throws {
    let folder = try TemporaryDirectory()
    let source = try Self.store(.memory, folder)
    try source.write { writer in
      try writer.insert(Self.ada)
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Person", primaryKey: 2),
          attributes: [
            "email": .string("g\"r\\a\nce"), "salary": .double(.nan), "big": .integer(.min), "born": .date(.infinity),
          ]))
      try writer.setToMany(Self.ada.id, "friends", [ObjectID(entity: "Person", primaryKey: 2)])
      try writer.insert(StoredObject(id: ObjectID(entity: "Canvas", primaryKey: 1)))
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Circle", primaryKey: 1), attributes: ["z": .integer(3), "radius": .double(0.1)]))
      try writer.setToMany(
        ObjectID(entity: "Canvas", primaryKey: 1), "shapes", [ObjectID(entity: "Circle", primaryKey: 1)])
    }
    let first = try StoreJSON.export(source)
    let target = try Self.store(kind, folder)
    try StoreJSON.importObjects(Data(first.utf8), into: target)
    let second = try StoreJSON.export(target)
    #expect(second == first, "\(zip(first.split(separator: "\n"), second.split(separator: "\n")).filter { $0 != $1 })")
    #expect(first.contains("\"born\": -5000000000.25"))
    #expect(first.contains("\"id\": \"07070707-0707-0707-0707-070707070707\""))
    #expect(first.contains("\"born\": \"Infinity\""))
    #expect(!first.contains("NaN"), "a NaN is stored as NULL, as SQLite does")
  }
}

/// Model rules (required values, relationship counts) found the same way by every store kind:
/// SQLite answers by SQL, the in-memory store object by object.
@Suite struct ModelRuleTests {
  static let rules = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
      <entity name="Team">
        <attribute name="name" attributeType="String"/>
        <relationship name="players" optional="YES" toMany="YES" minCount="2" maxCount="3" deletionRule="Nullify" destinationEntity="Player" inverseName="team" inverseEntity="Player"/>
        <relationship name="sponsors" toMany="YES" minCount="1" deletionRule="Nullify" destinationEntity="Sponsor" inverseName="teams" inverseEntity="Sponsor"/>
        <relationship name="fans" toMany="YES" deletionRule="Nullify" destinationEntity="Fan" inverseName="teams" inverseEntity="Fan"/>
      </entity>
      <entity name="Fan">
        <relationship name="teams" toMany="YES" deletionRule="Nullify" destinationEntity="Team" inverseName="fans" inverseEntity="Team"/>
      </entity>
      <entity name="Player">
        <attribute name="number" optional="YES" attributeType="Integer 16"/>
        <relationship name="team" maxCount="1" deletionRule="Nullify" destinationEntity="Team" inverseName="players" inverseEntity="Team"/>
      </entity>
      <entity name="Sponsor">
        <relationship name="teams" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Team" inverseName="sponsors" inverseEntity="Team"/>
      </entity>
    </model>
    """

  @Test(arguments: StoreBehaviourTests.Kind.allCases)
  func everyBrokenRuleIsNamedWithItsObject(_ kind: StoreBehaviourTests.Kind) throws {
    let folder = try TemporaryDirectory()
    let model = try XcdatamodelReader.parse(Data(Self.rules.utf8), file: "Rules.xcdatamodel/contents")
    let store: any ObjectStore =
      kind == .sqlite
      ? try SQLiteStore.create(at: folder.url.appendingPathComponent("rules.sqlite"), model: model)
      : InMemoryStore(model: model)
    func id(_ entity: String, _ key: Int64) -> ObjectID { ObjectID(entity: entity, primaryKey: key) }
    try store.write { writer in
      // Team 1 keeps every rule; team 2 has no name, one player and no sponsor; team 3 has four players.
      // No team has a fan and the fan has no team: a non-optional to-many without a minimum may be
      // empty, as in Core Data's own stores.
      for (key, name) in [(1, "ok"), (2, nil), (3, "crowded")] as [(Int64, String?)] {
        try writer.insert(
          StoredObject(id: id("Team", key), attributes: ["name": name.map(StoreValue.string) ?? .null]))
      }
      try writer.insert(StoredObject(id: id("Sponsor", 1)))
      try writer.insert(StoredObject(id: id("Fan", 1)))
      for key in Int64(1)...8 { try writer.insert(StoredObject(id: id("Player", key))) }
      try writer.setToMany(id("Team", 1), "players", [id("Player", 1), id("Player", 2)])
      try writer.setToMany(id("Team", 2), "players", [id("Player", 3)])
      try writer.setToMany(id("Team", 3), "players", (4...7).map { id("Player", $0) })
      try writer.setToMany(id("Sponsor", 1), "teams", [id("Team", 1), id("Team", 3)])
    }
    let expected = [
      "Team/p2: 'name' is required but NULL",
      "Team/p2: 'players' has 1, at least 2 required",
      "Team/p2: 'sponsors' has 0, at least 1 required",
      "Team/p3: 'players' has 4, at most 3 allowed",
      "Player/p8: 'team' is required but empty",
    ]
    #expect(Set(try store.ruleViolations(limit: 20)) == Set(expected))
    #expect(try store.ruleViolations(limit: 2).count == 2)
  }
}
