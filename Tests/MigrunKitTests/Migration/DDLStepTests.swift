import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// An inferred step done as DDL on a copy gives the store the other two paths write: the same
/// layout (tables, columns, indexes, uniqueness) and every value — on every fixture store and
/// every version its bundle can infer a step to, and on models made to exercise each edit.
@Suite struct DDLStepTests {
  struct Expected: Decodable {
    let model: String?
  }

  @Test func everyFixtureStepThatCanBeInferredGivesTheSameStoreEachWay() throws {
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    var ddlSteps: [String] = []
    var otherSteps: [String] = []
    for (store, expected) in try JSONDecoder().decode([String: Expected].self, from: data).sorted(by: {
      $0.key < $1.key
    }) {
      guard let contents = expected.model else { continue }
      let bundleURL = Fixtures.url(contents).deletingLastPathComponent().deletingLastPathComponent()
      let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
      let hashes = try SQLiteStore.metadata(at: Fixtures.url(store)).versionHashes
      for target in bundle.versionNames {
        // Every version the store can reach by one inferred step (Core Data's path).
        guard
          let plan = try? MigrationPlanner.plan(bundle: bundle, storeHashes: hashes, destination: target),
          plan.rule == .directInferred,
          plan.needsMigration
        else { continue }
        let folder = try TemporaryDirectory()
        let source = try SQLiteStore(url: Fixtures.url(store), model: try bundle.model(named: plan.sourceVersion))
        let first = try #require(plan.steps.first)
        let planned = try StepMethod.planned(
          for: first, mapping: StepMapping(mapping: try #require(first.inferredMapping)), store: source)
        try source.close()
        let ddl = planned.method == .ddl
        try Migrations.migrateEveryWay(
          Fixtures.url(store), plan: plan, destination: try bundle.model(named: target), in: folder,
          expectDDL: ddl && plan.steps.count == 1)
        let name = "\(store): \(plan.sourceVersion) → \(target)"
        if ddl { ddlSteps.append(name) } else { otherSteps.append("\(name) (\(planned.reason ?? ""))") }
      }
    }
    // The fixtures hold steps of both kinds: Moody 1 → 2 (a rename and a new attribute), BNR's new
    // entity; SampleModel's entity rename copies rows.
    #expect(ddlSteps.count >= 2, "DDL: \(ddlSteps)")
    #expect(otherSteps.count >= 1, "rows copied: \(otherSteps)")
  }

  /// Item and Food share a table; Shelf holds items (to-one / to-many with inverse); Tag ↔ Item is
  /// many-to-many; Item.related is a to-many without inverse (a hidden column on Item's table).
  static let shop1 = """
    <model>
      <entity name="Item">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="code" optional="YES" attributeType="String"/>
        <attribute name="price" optional="YES" attributeType="Double"/>
        <attribute name="note" optional="YES" attributeType="String" indexed="YES"/>
        <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>
        <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/>
        <relationship name="related" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item"/>
      </entity>
      <entity name="Food" parentEntity="Item">
        <attribute name="calories" optional="YES" attributeType="Integer 32"/>
      </entity>
      <entity name="Shelf">
        <attribute name="label" optional="YES" attributeType="String"/>
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="shelf" inverseEntity="Item"/>
      </entity>
      <entity name="Tag">
        <attribute name="word" optional="YES" attributeType="String"/>
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/>
      </entity>
    </model>
    """

  /// Every edit at once: name and code swap columns (renaming identifiers), price becomes required
  /// with a default, note (indexed) is removed, Food gains a required vegan flag with a default,
  /// Shelf.label gets an index and a hash modifier, tags is renamed labels (a join table renamed),
  /// related is renamed similar (a hidden column renamed), Item gains a to-one to a new entity.
  static let shop2 =
    shop1
    .replacingOccurrences(
      of: #"<attribute name="name" optional="YES" attributeType="String"/>"#,
      with: #"<attribute name="name" optional="YES" attributeType="String" elementID="code"/>"#
    )
    .replacingOccurrences(
      of: #"<attribute name="code" optional="YES" attributeType="String"/>"#,
      with: #"<attribute name="code" optional="YES" attributeType="String" elementID="name"/>"#
    )
    .replacingOccurrences(
      of: #"<attribute name="price" optional="YES" attributeType="Double"/>"#,
      with: #"<attribute name="price" attributeType="Double" defaultValueString="1.5"/>"#
    )
    .replacingOccurrences(
      of: #"<attribute name="note" optional="YES" attributeType="String" indexed="YES"/>"#,
      with:
        #"<relationship name="vendor" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Vendor"/>"#
    )
    .replacingOccurrences(
      of:
        #"<relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/>"#,
      with:
        #"<relationship name="labels" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag" elementID="tags"/>"#
    )
    .replacingOccurrences(of: #"inverseName="tags""#, with: #"inverseName="labels""#)
    .replacingOccurrences(
      of:
        #"<relationship name="related" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item"/>"#,
      with:
        #"<relationship name="similar" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" elementID="related"/>"#
    )
    .replacingOccurrences(
      of: #"<attribute name="calories" optional="YES" attributeType="Integer 32"/>"#,
      with:
        #"<attribute name="calories" optional="YES" attributeType="Integer 32"/><attribute name="vegan" attributeType="Boolean" defaultValueString="YES"/>"#
    )
    .replacingOccurrences(
      of: #"<attribute name="label" optional="YES" attributeType="String"/>"#,
      with: #"<attribute name="label" optional="YES" attributeType="String" indexed="YES" versionHashModifier="2"/>"#
    )
    .replacingOccurrences(
      of: "</model>",
      with: #"<entity name="Vendor"><attribute name="city" optional="YES" attributeType="String"/></entity></model>"#)

  /// Every row of every table but Core Data's metadata, as text.
  static func rows(of store: URL) throws -> [String] {
    let queue = try DatabaseQueue(path: StoreFiles.immutableURI(store))
    defer { try? queue.close() }
    return try queue.read { db in
      var rows: [String] = []
      let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      for table in tables where !["Z_METADATA", "Z_MODELCACHE"].contains(table) {
        rows += try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY rowid").map { "\(table) \($0)" }
      }
      return rows
    }
  }

  static func id(_ entity: String, _ key: Int64) -> ObjectID { ObjectID(entity: entity, primaryKey: key) }

  static func makeShop(at url: URL, model: ObjectModel) throws {
    let store = try SQLiteStore.create(at: url, model: model)
    try store.write { writer in
      try writer.insert(StoredObject(id: id("Shelf", 1), attributes: ["label": .string("top")]))
      try writer.insert(StoredObject(id: id("Tag", 1), attributes: ["word": .string("fresh")]))
      for key in Int64(1)...6 {
        let entity = key % 2 == 0 ? "Food" : "Item"
        var attributes: [String: StoreValue] = [
          "name": .string("item \(key)"), "code": .string("C\(key)"), "note": .string("note \(key)"),
        ]
        if key != 3 { attributes["price"] = .double(Double(key)) }  // item 3 has none: gets 1.5
        if entity == "Food" { attributes["calories"] = .integer(key * 100) }
        try writer.insert(StoredObject(id: id(entity, key), attributes: attributes, toOne: ["shelf": id("Shelf", 1)]))
      }
      try writer.setToMany(id("Tag", 1), "items", [id("Item", 1), id("Food", 2), id("Food", 4)])
      try writer.setToMany(id("Item", 1), "related", [id("Item", 3), id("Food", 6)])
    }
    try store.close()
  }

  @Test func everyKindOfEditAtOnceGivesTheSameStoreEachWay() throws {
    let folder = try TemporaryDirectory()
    let v1 = try Migrations.model(Self.shop1, "Shop")
    let v2 = try Migrations.model(Self.shop2, "Shop 2")
    let store = folder.url.appendingPathComponent("Shop.sqlite")
    try Self.makeShop(at: store, model: v1)
    let results = try Migrations.migrateEveryWay(
      store, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    let migrated = try SQLiteStore(url: try #require(results[.ddl]), model: v2, access: .readWrite)
    defer { try? migrated.close() }
    let item1 = try #require(try migrated.object(Self.id("Item", 1)))
    #expect(item1.attributes["name"] == .string("C1"), "name continues code")
    #expect(item1.attributes["code"] == .string("item 1"), "code continues name")
    #expect(item1.attributes["note"] == nil)
    #expect(item1.toMany["labels"] == [Self.id("Tag", 1)])
    #expect(Set(item1.toMany["similar"] ?? []) == [Self.id("Item", 3), Self.id("Food", 6)])
    #expect(try migrated.object(Self.id("Item", 3))?.attributes["price"] == .double(1.5))
    #expect(try migrated.object(Self.id("Item", 5))?.attributes["price"] == .double(5))
    #expect(try migrated.object(Self.id("Food", 2))?.attributes["vegan"] == .boolean(true))
    let filled = try DatabaseQueue(path: StoreFiles.immutableURI(try #require(results[.ddl]))).read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM ZITEM WHERE ZVEGAN IS NOT NULL")
    }
    #expect(filled == 3, "only Food rows are filled")
    #expect(try migrated.object(Self.id("Item", 1))?.toOne["shelf"] == Self.id("Shelf", 1))
    #expect(try migrated.count(of: "Vendor", includingSubentities: true) == 0)
    // A new vendor gets key 1 and the hierarchy's keys continue.
    let key = try migrated.write { try $0.newPrimaryKey(for: "Vendor") }
    #expect(key == 1)
    #expect(try migrated.write { try $0.newPrimaryKey(for: "Food") } == 7)
  }

  @Test func aHashModifierAloneChangesOnlyTheMetadata() throws {
    let folder = try TemporaryDirectory()
    let v1 = try Migrations.model(Self.shop1, "Shop")
    let v2 = try Migrations.model(
      Self.shop1.replacingOccurrences(
        of: #"<attribute name="word" optional="YES" attributeType="String"/>"#,
        with: #"<attribute name="word" optional="YES" attributeType="String" versionHashModifier="x"/>"#), "Shop 2")
    let store = folder.url.appendingPathComponent("Shop.sqlite")
    try Self.makeShop(at: store, model: v1)
    let before = try Self.rows(of: store)
    let results = try Migrations.migrateEveryWay(
      store, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    let migrated = try #require(results[.ddl])
    #expect(try Self.rows(of: migrated) == before, "every table but the metadata as it was")
    #expect(try SQLiteStore.metadata(at: migrated).isCompatible(with: v2))
  }

  @Test func whatDDLCannotDoCopiesRowsAndThePlanSaysWhy() throws {
    let v1 = try Migrations.model(Self.shop1, "Shop")
    let cases: [(String, String, String)] = [
      // to-one ↔ to-many
      (
        #"<relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>"#,
        #"<relationship name="shelf" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>"#,
        "changes between"
      ),
      // an entity renamed: its rows move to another table
      (#"<entity name="Tag">"#, #"<entity name="Label" elementID="Tag">"#, "renumbered"),
      // a new uniqueness constraint
      (
        #"<attribute name="word" optional="YES" attributeType="String"/>"#,
        #"<attribute name="word" optional="YES" attributeType="String"/><uniquenessConstraints><uniquenessConstraint><constraint value="word"/></uniquenessConstraint></uniquenessConstraints>"#,
        "uniqueness constraint"
      ),
    ]
    for (old, new, reason) in cases {
      var xml = Self.shop1.replacingOccurrences(of: old, with: new)
      if new.contains("Label") {
        // References follow the rename; the renaming identifier keeps the old name.
        xml = xml.replacingOccurrences(of: #"="Tag""#, with: #"="Label""#)
          .replacingOccurrences(of: #"elementID="Label""#, with: #"elementID="Tag""#)
      }
      let v2 = try Migrations.model(xml, "Shop 2")
      let plan = try Migrations.plan(v1, v2)
      let step = try #require(plan.steps.first)
      let planned = try StepMethod.planned(
        for: step, mapping: StepMapping(mapping: try #require(step.inferredMapping)), store: nil)
      #expect(planned.method != .ddl, "\(new)")
      #expect(planned.reason?.contains(reason) == true, "\(reason): \(planned.reason ?? "nil")")
      let folder = try TemporaryDirectory()
      let store = folder.url.appendingPathComponent("Shop.sqlite")
      try Self.makeShop(at: store, model: v1)
      try Migrations.migrateEveryWay(store, plan: plan, destination: v2, in: folder, expectDDL: false)
    }
  }

  /// The step as `migrun plan` shows it, and a WAL store (its -wal holding rows) migrated by DDL on
  /// the snapshot: the original's files untouched, every row in the result.
  @Test func thePlanSaysDDLAndAWALStoreIsEditedOnItsSnapshot() throws {
    let folder = try TemporaryDirectory()
    let bundle = try folder.folder("Shop.xcdatamodeld")
    for (version, xml) in [("Shop", Self.shop1), ("Shop 2", Self.shop2)] {
      try folder.write(xml, to: "Shop.xcdatamodeld/\(version).xcdatamodel/contents")
    }
    let store = folder.url.appendingPathComponent("Shop.sqlite")
    try Self.makeShop(at: store, model: try Migrations.model(Self.shop1, "Shop"))
    let plan = try MigrunProcess.run(["plan", store.path, "--model", bundle.path])
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("runs as DDL on a copy of the store: no row copied"), "\(plan.stdout)")
    let json = try MigrunProcess.run(["plan", store.path, "--model", bundle.path, "--json"])
    #expect(json.stdout.contains(#""method":"DDL""#) || json.stdout.contains(#""method" : "DDL""#), "\(json.stdout)")

    // A row changed only in the -wal (a sqlite3 process that committed and was killed), as in a
    // store copied off a device while its app ran.
    try SQLiteShell.commitIntoWAL(store, "UPDATE ZITEM SET ZCODE = 'W5' WHERE Z_PK = 5;")
    let device = store
    #expect(StoreFiles.hasWALContent(device))
    let before = storeFileBytes(device)
    let result = try MigrunProcess.run(["migrate", device.path, "--model", bundle.path, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains(#""method":"DDL""#), "\(result.stdout)")
    let backup = StoreFiles.backupURL(for: device)
    #expect(storeFileBytes(backup) == before, "the original's three files are kept byte for byte")
    let migrated = try SQLiteStore(url: device, model: try Migrations.model(Self.shop2, "Shop 2"))
    defer { try? migrated.close() }
    #expect(try migrated.object(Self.id("Item", 5))?.attributes["name"] == .string("W5"), "the -wal's row is in")
  }

  static let chats1 = """
    <model>
      <entity name="Chat">
        <attribute name="isSilenced" optional="YES" attributeType="Boolean" defaultValueString="NO"/>
        <attribute name="score" optional="YES" attributeType="Double"/>
        <attribute name="small" optional="YES" attributeType="Integer 64"/>
        <attribute name="level" optional="YES" attributeType="Integer 16"/>
      </entity>
    </model>
    """
  /// A Boolean renamed by its renaming identifier into a required Integer 32 that keeps the
  /// Boolean's `defaultValueString="NO"` (as a real messaging app's model did), a Double made an
  /// Integer 16, an Integer 64 narrowed and an Integer 16 widened to a Double.
  static let chats2 = """
    <model>
      <entity name="Chat">
        <attribute name="mutedStatus" attributeType="Integer 32" defaultValueString="NO" elementID="isSilenced"/>
        <attribute name="score" optional="YES" attributeType="Integer 16"/>
        <attribute name="small" optional="YES" attributeType="Integer 16"/>
        <attribute name="level" optional="YES" attributeType="Double"/>
      </entity>
    </model>
    """

  static func makeChats(at url: URL, model: ObjectModel, small: Int64) throws {
    let store = try SQLiteStore.create(at: url, model: model)
    try store.write { writer in
      try writer.insert(
        StoredObject(
          id: id("Chat", 1),
          attributes: [
            "isSilenced": .boolean(true), "score": .double(3.9), "small": .integer(small), "level": .integer(4),
          ]
        ))
      try writer.insert(StoredObject(id: id("Chat", 2), attributes: ["score": .double(-2.5)]))
    }
    try store.close()
  }

  @Test func numericTypeChangesAreInferredAndConvertedTheSameEveryWay() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Migrations.model(Self.chats1, "Chats"), try Migrations.model(Self.chats2, "Chats 2"))
    let plan = try Migrations.plan(v1, v2)
    let mapping = try #require(plan.steps.first?.inferredMapping?.entityMappings.first)
    let boolToInt = try #require(AttributeConversion(from: .boolean, to: .integer32))
    #expect(mapping.attributes["mutedStatus"] == .converted("isSilenced", boolToInt, orDefault: .integer(0)))
    #expect(AttributeConversion(from: .integer16, to: .string) == nil, "only numeric types convert")
    let store = folder.url.appendingPathComponent("Chats.sqlite")
    try Self.makeChats(at: store, model: v1, small: 7)
    let results = try Migrations.migrateEveryWay(store, plan: plan, destination: v2, in: folder, expectDDL: false)
    let migrated = try SQLiteStore(url: try #require(results[.objects]), model: v2)
    defer { try? migrated.close() }
    let chat1 = try #require(try migrated.object(Self.id("Chat", 1)))
    #expect(chat1.attributes["mutedStatus"] == .integer(1))
    #expect(chat1.attributes["score"] == .integer(3), "truncated toward zero")
    #expect(chat1.attributes["small"] == .integer(7))
    #expect(chat1.attributes["level"] == .double(4))
    let chat2 = try #require(try migrated.object(Self.id("Chat", 2)))
    #expect(chat2.attributes["mutedStatus"] == .integer(0), "NULL takes the default 'NO', read as 0")
    #expect(chat2.attributes["score"] == .integer(-2))
    #expect(chat2.attributes["small"] == .null)
  }

  @Test func aValueTheNarrowerTypeCannotHoldFailsTheStepNamingTheObject() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Migrations.model(Self.chats1, "Chats"), try Migrations.model(Self.chats2, "Chats 2"))
    let store = folder.url.appendingPathComponent("Chats.sqlite")
    try Self.makeChats(at: store, model: v1, small: 70_000)
    let before = try Data(contentsOf: store)
    let error = try #require(throws: MigrationError.self) {
      try StoreMigrator(store: store, plan: try Migrations.plan(v1, v2)).run()
    }
    #expect(error.code == .validation)
    #expect(error.description.contains("Chat/p1: 'small' 70000 does not fit Integer 16"), "\(error)")
    #expect(try Data(contentsOf: store) == before)
  }
}
