import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// The relationship shapes whose layout the fixtures do not show, named as Core Data names them.
@Suite struct RelationshipLayoutTests {
  static func model(_ entities: String) throws -> ObjectModel {
    let xml = """
      <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
      \(entities)
      </model>
      """
    return try XcdatamodelReader.parse(Data(xml.utf8), file: "Test.xcdatamodel/contents", versionName: "Test")
  }

  static func columns(_ schema: StoreSchema, _ table: String) -> [String]? {
    schema.tables.first { $0.name == table }?.columns.map(\.name)
  }

  /// A to-many without an inverse is a hidden foreign key `Z<ent><NAME>` on the destination's table,
  /// indexed — never a join table.
  @Test func aToManyWithoutInverseIsAHiddenColumnOnTheDestination() throws {
    let model = try Self.model(
      """
      <entity name="Folder">
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item"/>
        <relationship name="pinned" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Item"/>
      </entity>
      <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/></entity>
      <entity name="SmartFolder" parentEntity="Folder"/>
      """)
    let schema = StoreSchema(model: model)
    // Folder 1, SmartFolder 2, Item 3; Folder has a subentity, so the hidden key has an entity column.
    // The statement lists the integer columns before the text (Core Data's sortColumnsByType).
    #expect(
      Self.columns(schema, "ZITEM")
        == ["Z_PK", "Z_ENT", "Z_OPT", "Z1ITEMS", "Z1_1ITEMS", "Z1PINNED", "Z1_1PINNED", "Z_FOK_1PINNED", "ZTITLE"])
    #expect(schema.tables.map(\.name).sorted() == ["ZFOLDER", "ZITEM"])
    #expect(schema.indexes.contains { $0.name == "ZITEM_Z1ITEMS_INDEX" })
    #expect(
      schema.layout(of: "Folder")?.properties["items"] == .toManyThroughInverse(destination: "Item", inverse: "1items"))
  }

  /// Two many-to-manys whose join columns would have the same name: the second gets `1`.
  @Test func collidingJoinColumnsGetCoreDatasSuffix() throws {
    let model = try Self.model(
      """
      <entity name="Group">
        <relationship name="boards" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Board" inverseName="groupItems" inverseEntity="Board"/>
        <relationship name="cards" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Card" inverseName="groupItems" inverseEntity="Card"/>
      </entity>
      <entity name="Board">
        <relationship name="groupItems" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Group" inverseName="boards" inverseEntity="Group"/>
      </entity>
      <entity name="Card">
        <relationship name="groupItems" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Group" inverseName="cards" inverseEntity="Group"/>
      </entity>
      """)
    // Board 1, Card 2, Group 3. Board is met first: its table is named from its side.
    let schema = StoreSchema(model: model)
    #expect(Self.columns(schema, "Z_1GROUPITEMS") == ["Z_1BOARDS", "Z_3GROUPITEMS"])
    #expect(Self.columns(schema, "Z_2GROUPITEMS") == ["Z_2CARDS", "Z_3GROUPITEMS1"])
    #expect(schema.indexes.contains { $0.name == "Z_2GROUPITEMS_Z_3GROUPITEMS1_INDEX" })
  }

  /// A self-referential many-to-many between two relationships, written both ways: as Core Data
  /// names it (from the side its relationships dictionary meets first: `blocking`, as a real
  /// TodoItem store shows), and named from the other side, which a store may still be read with.
  @Test(arguments: [false, true]) func aSelfReferentialManyToManyIsReadWhicheverSideNamedIt(otherSide: Bool) throws {
    let model = try Self.model(
      """
      <entity name="Task">
        <attribute name="title" optional="YES" attributeType="String"/>
        <relationship name="blockedBy" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Task" inverseName="blocking" inverseEntity="Task"/>
        <relationship name="blocking" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Task" inverseName="blockedBy" inverseEntity="Task"/>
      </entity>
      """)
    let created = StoreSchema(model: model)
    #expect(Self.columns(created, "Z_1BLOCKING") == ["Z_1BLOCKEDBY", "Z_1BLOCKING"])
    #expect(
      created.indexes.contains {
        $0.name == "Z_1BLOCKING_Z_1BLOCKING_INDEX" && $0.columns == ["Z_1BLOCKING", "Z_1BLOCKEDBY"]
      })
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("tasks.sqlite")
    let store = try SQLiteStore.create(at: url, model: model)
    try store.write { writer in
      for key in 1...3 {
        try writer.insert(StoredObject(id: ObjectID(entity: "Task", primaryKey: Int64(key)), attributes: [:]))
      }
      // Task 1 is blocked by 2 and 3.
      try writer.setToMany(
        ObjectID(entity: "Task", primaryKey: 1), "blockedBy",
        [ObjectID(entity: "Task", primaryKey: 2), ObjectID(entity: "Task", primaryKey: 3)])
    }
    try store.close()
    if otherSide {
      // The table named from `blockedBy`: Z_1BLOCKEDBY (Z_1BLOCKING, Z_1BLOCKEDBY).
      try makeDatabase(
        url,
        [
          "CREATE TABLE Z_1BLOCKEDBY (Z_1BLOCKING INTEGER, Z_1BLOCKEDBY INTEGER, PRIMARY KEY (Z_1BLOCKING, Z_1BLOCKEDBY))",
          "INSERT INTO Z_1BLOCKEDBY SELECT Z_1BLOCKING, Z_1BLOCKEDBY FROM Z_1BLOCKING", "DROP TABLE Z_1BLOCKING",
        ])
    }
    let opened = try SQLiteStore(url: url, model: model)
    let blocked = try #require(try opened.object(ObjectID(entity: "Task", primaryKey: 1)))
    #expect(blocked.toMany["blockedBy"]?.map(\.primaryKey) == [2, 3])
    #expect(blocked.toMany["blocking"] == [])
    let blocker = try #require(try opened.object(ObjectID(entity: "Task", primaryKey: 2)))
    #expect(blocker.toMany["blocking"]?.map(\.primaryKey) == [1])
  }

  /// Join tables of real stores written by Core Data (their apps' models are not in `../shared`):
  /// shapes with the same entity numbers and relationships. Each is named from the side that
  /// comes first in the entity's relationships dictionary (``CFHashOrder``), not by name order.
  @Test func joinTablesFollowCoreDatasDictionaryOrder() throws {
    // An ordered self-referential pair (a bookmarks store): `favorites` is met before `favoriteFolders`.
    let bookmarks = StoreSchema(
      model: try Self.model(
        """
        <entity name="BookmarkEntity">
          <relationship name="favoriteFolders" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="BookmarkEntity" inverseName="favorites" inverseEntity="BookmarkEntity"/>
          <relationship name="favorites" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="BookmarkEntity" inverseName="favoriteFolders" inverseEntity="BookmarkEntity"/>
        </entity>
        """))
    #expect(Self.columns(bookmarks, "Z_1FAVORITES") == ["Z_1FAVORITEFOLDERS", "Z_1FAVORITES", "Z_FOK_1FAVORITES"])
    #expect(bookmarks.indexes.contains { $0.name == "Z_1FAVORITES_Z_1FAVORITES_INDEX" })
    // Artwork (3) with three many-to-manys: Album (1) is met first by entity name; within Artwork,
    // `shows` comes before `locations`, so its column takes the suffix 1 and `locations`' takes 2.
    // Other entities around them, so the numbers are the real store's: Album 1, Artwork 3,
    // Location 10, Show 14.
    let filler = ["Alias", "Author", "Bio", "Canvas", "Dealer", "Edition", "Fair", "Medium", "Note", "Partner"]
      .map { "<entity name=\"\($0)\"/>" }.joined(separator: "\n")
    let artworks = try Self.model(
      """
      <entity name="Album">
        <relationship name="artworks" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Artwork" inverseName="collections" inverseEntity="Artwork"/>
      </entity>
      <entity name="Artwork">
        <relationship name="collections" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Album" inverseName="artworks" inverseEntity="Album"/>
        <relationship name="locations" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Location" inverseName="artworks" inverseEntity="Location"/>
        <relationship name="shows" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Show" inverseName="artworks" inverseEntity="Show"/>
      </entity>
      <entity name="Location">
        <relationship name="artworks" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Artwork" inverseName="locations" inverseEntity="Artwork"/>
      </entity>
      <entity name="Show">
        <relationship name="artworks" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Artwork" inverseName="shows" inverseEntity="Artwork"/>
      </entity>
      \(filler)
      """)
    let art = StoreSchema(model: artworks)
    let number = { (name: String) in art.layout(of: name)?.number }
    #expect([number("Album"), number("Artwork"), number("Location"), number("Show")] == [1, 3, 10, 14])
    #expect(Self.columns(art, "Z_1ARTWORKS") == ["Z_1COLLECTIONS", "Z_3ARTWORKS"])
    #expect(Self.columns(art, "Z_3SHOWS") == ["Z_3ARTWORKS1", "Z_14SHOWS"])
    #expect(Self.columns(art, "Z_3LOCATIONS") == ["Z_3ARTWORKS2", "Z_10LOCATIONS"])
  }

  /// Relationships are paired in entity-name order, not entity-number order: a subentity that
  /// sorts after another root is met after it.
  @Test func joinTablesAreNamedInEntityNameOrder() throws {
    let model = try Self.model(
      """
      <entity name="Asset"/>
      <entity name="Zine" parentEntity="Asset">
        <relationship name="buyers" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Buyer" inverseName="zines" inverseEntity="Buyer"/>
      </entity>
      <entity name="Buyer">
        <relationship name="zines" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Zine" inverseName="buyers" inverseEntity="Zine"/>
      </entity>
      """)
    // Asset 1, Zine 2, Buyer 3 — but Buyer's name comes first, so the table is named from its side.
    let schema = StoreSchema(model: model)
    #expect(Self.columns(schema, "Z_3ZINES") == ["Z_3BUYERS", "Z_2ZINES"])
  }

  /// A store whose tables are not the model's layout is refused at open, in one line naming the
  /// table and the column — never a SQL error in the middle of a read.
  @Test func aLayoutMismatchIsOneLineAtOpen() throws {
    let folder = try TemporaryDirectory()
    let url = try copyOfFixture("bignerdranch-coredatastack/Sample Model/Deprecated/TestModel.sqlite", into: folder)
    let bundle = try ModelBundle(
      contentsOf: Fixtures.url("bignerdranch-coredatastack/Sample Model/Deprecated/Sample.xcdatamodeld"))
    try makeDatabase(url, ["ALTER TABLE ZBOOK RENAME COLUMN ZTITLE TO ZHEADING"])
    let error = try #require(throws: StoreError.self) {
      try SQLiteStore(url: url, model: try bundle.model(named: "TestModel"))
    }
    #expect(error.code == .layoutMismatch)
    #expect(!error.description.contains("\n"))
    #expect(error.description.contains("table ZBOOK has no column ZTITLE (it has ZHEADING instead)"), "\(error)")
  }
}
