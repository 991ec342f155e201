import Foundation
import GRDB
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// Every fetch-index kind Core Data writes, written as it writes them (public decompilation of
/// `NSSQLBinaryIndex` and `NSSQLRTreeIndex`), kept current by the store itself and carried by every
/// migration path; what migrun cannot write is refused by name.
@Suite struct FetchIndexTests {
  static func notes(_ extra: String = "", index: String? = nil) -> String {
    let rtree =
      index
      ?? #"<fetchIndex name="rt"><fetchIndexElement property="latitude" type="R-Tree" order="ascending"/><fetchIndexElement property="longitude" type="R-Tree" order="ascending"/></fetchIndex>"#
    return """
      <model>
        <entity name="Folder">
          <attribute name="name" optional="YES" attributeType="String"/>
          <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
        </entity>
        <entity name="Note">
          <attribute name="latitude" optional="YES" attributeType="Double"/>
          <attribute name="longitude" optional="YES" attributeType="Double"/>
          <attribute name="title" optional="YES" attributeType="String"/>\(extra)
          <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
          \(rtree)
        </entity>
      </model>
      """
  }

  static func rtree(_ url: URL) throws -> [String] {
    try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try Row.fetchAll(db, sql: "SELECT * FROM Z_Note_rt ORDER BY Z_PK").map { "\($0)" }
    }
  }

  @Test func anRTreeIndexIsCoreDatasVirtualTableKeptCurrentByItsTriggers() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    let model = try Migrations.model(Self.notes(), "Notes")
    try SQLiteStore.create(at: url, model: model).close()
    let queue = try DatabaseQueue(path: url.path)
    let objects = try queue.read { db in
      try String.fetchAll(
        db, sql: "SELECT type || ' ' || name FROM sqlite_master WHERE name LIKE 'Z_Note_rt%' ORDER BY 1")
    }
    #expect(
      objects == [
        "table Z_Note_rt", "table Z_Note_rt_node", "table Z_Note_rt_parent", "table Z_Note_rt_rowid",
        "trigger Z_Note_rt_DELETE", "trigger Z_Note_rt_INSERT", "trigger Z_Note_rt_UPDATE",
      ])
    let sql = try queue.read { db in
      try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'Z_Note_rt'")
    }
    #expect(
      sql
        == "CREATE VIRTUAL TABLE Z_Note_rt USING RTREE (Z_PK INTEGER PRIMARY KEY, ZLATITUDE_MIN, ZLATITUDE_MAX, ZLONGITUDE_MIN, ZLONGITUDE_MAX)"
    )
    // Plain SQL, as another process would write: the store keeps its index current.
    try queue.write { db in
      try db.execute(sql: "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZLATITUDE, ZLONGITUDE) VALUES (1, 2, 1, 48.5, 2.25)")
      try db.execute(sql: "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZLATITUDE, ZLONGITUDE) VALUES (2, 2, 1, 10, 20)")
      try db.execute(sql: "UPDATE ZNOTE SET ZLATITUDE = 49 WHERE Z_PK = 1")
      try db.execute(sql: "DELETE FROM ZNOTE WHERE Z_PK = 2")
    }
    try queue.close()
    #expect(
      try Self.rtree(url) == ["[Z_PK:1 ZLATITUDE_MIN:49.0 ZLATITUDE_MAX:49.0 ZLONGITUDE_MIN:2.25 ZLONGITUDE_MAX:2.25]"])
  }

  @Test func aStoreWithAnRTreeMigratesEveryWayWithItsIndexRebuilt() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    let v1 = try Migrations.model(Self.notes(), "Notes")
    let v2 = try Migrations.model(
      Self.notes(#"<attribute name="body" optional="YES" attributeType="String"/>"#), "Notes 2")
    let store = try SQLiteStore.create(at: url, model: v1)
    try store.write { writer in
      for key in Int64(1)...3 {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Note", primaryKey: key),
            attributes: [
              "latitude": .double(Double(key)), "longitude": .double(Double(key) * 2), "title": .string("n"),
            ]))
      }
      try writer.insert(
        StoredObject(id: ObjectID(entity: "Note", primaryKey: 4), attributes: ["title": .string("nowhere")]))
    }
    try store.close()
    // The insert trigger (Core Data's, with no condition) put the note without coordinates in the
    // index too; a rebuild fills it as Core Data's own does, from the rows whose columns are set.
    let original = try Self.rtree(url)
    #expect(original.count == 4)
    let expected = Array(original.prefix(3))
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    for (method, result) in results {
      #expect(try Self.rtree(result) == expected, "\(method)")
    }
  }

  @Test func binaryIndexesFollowCoreDatasRules() throws {
    let index = #"""
      <fetchIndex name="byFolderAndTitle"><fetchIndexElement property="folder" type="Binary" order="ascending"/><fetchIndexElement property="title" type="Binary" order="descending"/></fetchIndex>
      <fetchIndex name="byFolder"><fetchIndexElement property="folder" type="Binary" order="ascending"/></fetchIndex>
      """#
    let schema = StoreSchema(model: try Migrations.model(Self.notes(index: index), "Notes"))
    let fetchIndexes = schema.indexes.filter { $0.name.hasPrefix("Z_Note_") }.map(\.createStatement)
    // A to-one alone gets no index of its own (its key column has one), as Core Data writes it.
    #expect(
      fetchIndexes == [
        "CREATE INDEX Z_Note_byFolderAndTitle ON ZNOTE (ZFOLDER COLLATE BINARY ASC, ZTITLE COLLATE BINARY DESC)"
      ])
    // A to-many (with its inverse) has no column: left out, as Core Data leaves it.
    let folderIndex = StoreSchema(
      model: try Migrations.model(
        Self.notes().replacingOccurrences(
          of: #"<attribute name="name" optional="YES" attributeType="String"/>"#,
          with:
            #"<attribute name="name" optional="YES" attributeType="String"/><fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/><fetchIndexElement property="notes" type="Binary" order="ascending"/></fetchIndex>"#
        ), "Notes"))
    #expect(
      folderIndex.indexes.contains {
        $0.createStatement == "CREATE INDEX Z_Folder_byName ON ZFOLDER (ZNAME COLLATE BINARY ASC)"
      })
    #expect(folderIndex.unsupported.isEmpty)
    // A transient property has no column: left out, as Core Data leaves it.
    let transient = StoreSchema(
      model: try Migrations.model(
        Self.notes(
          #"<attribute name="draft" optional="YES" transient="YES" attributeType="String"/>"#,
          index:
            #"<fetchIndex name="byTitle"><fetchIndexElement property="title" type="Binary" order="ascending"/><fetchIndexElement property="draft" type="Binary" order="ascending"/></fetchIndex>"#
        ), "Notes"))
    #expect(transient.unsupported.isEmpty)
    #expect(
      transient.indexes.contains {
        $0.createStatement == "CREATE INDEX Z_Note_byTitle ON ZNOTE (ZTITLE COLLATE BINARY ASC)"
      })
  }

  static let expressionIndexes = #"""
    <fetchIndex name="byLower"><fetchIndexElement expression="lowercase:(title)" expressionType="String" type="Binary" order="ascending"/></fetchIndex>
    <fetchIndex name="byArea"><fetchIndexElement property="folder" type="Binary" order="ascending"/><fetchIndexElement expression="latitude * longitude" expressionType="Double" type="Binary" order="descending"/></fetchIndex>
    <fetchIndex name="byDistance"><fetchIndexElement expression="abs:(from:subtract:(latitude, 48.5))" expressionType="Double" type="Binary" order="ascending"/><fetchIndexElement expression="length:(title)" expressionType="Integer 64" type="Binary" order="ascending"/><fetchIndexElement expression="SELF" expressionType="Integer 64" type="Binary" order="ascending"/></fetchIndex>
    """#

  static func indexSQL(_ url: URL) throws -> [String] {
    try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try String.fetchAll(
        db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'Z_Note_%' ORDER BY name")
    }
  }

  @Test func expressionElementsAreWrittenAsCoreDataWritesThem() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    let model = try Migrations.model(Self.notes(index: Self.expressionIndexes), "Notes")
    let note = try #require(model.entity(named: "Note"))
    #expect(
      note.fetchIndexes.map { $0.elements.map { $0.expression?.description ?? $0.property } } == [
        ["lowercase:(title)"], ["folder", "latitude * longitude"],
        ["abs:(latitude - 48.5)", "length:(title)", "SELF"],
      ])
    let store = try SQLiteStore.create(at: url, model: model)
    try store.write { writer in
      for (key, title) in [(Int64(1), "Hello"), (2, "hello"), (3, "Other")] {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Note", primaryKey: key),
            attributes: ["title": .string(title), "latitude": .double(Double(key)), "longitude": .double(2)]))
      }
    }
    try store.close()
    // NSSQLIndexIntermediate's statement, each element through NSSQLFunctionExpressionIntermediate.
    #expect(
      try Self.indexSQL(url) == [
        "CREATE INDEX Z_Note_byArea ON ZNOTE (ZFOLDER COLLATE BINARY ASC, (ZLATITUDE * ZLONGITUDE) COLLATE BINARY DESC)",
        "CREATE INDEX Z_Note_byDistance ON ZNOTE (abs((ZLATITUDE - 48.5)) COLLATE BINARY ASC, length(ZTITLE) COLLATE BINARY ASC, Z_PK COLLATE BINARY ASC)",
        "CREATE INDEX Z_Note_byLower ON ZNOTE (NSCoreDataToLower(ZTITLE) COLLATE BINARY ASC)",
      ])
    // The index holds what Core Data's function computes, and SQLite uses it.
    let queue = try DatabaseQueue(path: url.path, configuration: SQLiteStore.configuration(readOnly: false))
    let found = try queue.read { db in
      try Int64.fetchAll(
        db,
        sql: "SELECT Z_PK FROM ZNOTE INDEXED BY Z_Note_byLower WHERE NSCoreDataToLower(ZTITLE) = 'hello' ORDER BY Z_PK")
    }
    #expect(found == [1, 2])
    try queue.write { db in try db.execute(sql: "UPDATE ZNOTE SET ZTITLE = 'HELLO' WHERE Z_PK = 3") }
    try queue.close()
    #expect(try StoreCheck.sqliteProblems(of: url, full: true).isEmpty)
    // The store's own model keeps the elements as expressions (NSIndexedProperty).
    let cached = try #require(try SQLiteStore.cachedModel(at: url)?.entity(named: "Note"))
    #expect(cached.fetchIndexes.sorted { $0.name < $1.name } == note.fetchIndexes.sorted { $0.name < $1.name })
  }

  @Test func aStoreWithExpressionIndexesMigratesEveryWayWithThemRebuilt() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    let v1 = try Migrations.model(Self.notes(index: Self.expressionIndexes), "Notes")
    let v2 = try Migrations.model(
      Self.notes(#"<attribute name="body" optional="YES" attributeType="String"/>"#, index: Self.expressionIndexes),
      "Notes 2")
    try SQLiteStore.create(at: url, model: v1).close()
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    for (method, result) in results {
      #expect(try Self.indexSQL(result).count == 3, "\(method)")
      #expect(try StoreCheck.sqliteProblems(of: result, full: true).isEmpty, "\(method)")
    }
  }

  /// The notes model whose `byTitle` index holds only the rows `predicate` selects (a partial index
  /// is made in code: `NSFetchIndexDescription.partialIndexPredicate`; a model file has no spelling).
  static func partial(_ predicate: String, _ version: String = "Notes", extra: String = "") throws -> ObjectModel {
    let index =
      #"<fetchIndex name="byTitle"><fetchIndexElement property="title" type="Binary" order="ascending"/></fetchIndex>"#
    let model = try Migrations.model(Self.notes(extra, index: index), version)
    let entities = model.entities.map { entity in
      var entity = entity
      for position in entity.fetchIndexes.indices { entity.fetchIndexes[position].partialPredicate = predicate }
      return entity
    }
    return try ObjectModel(entities: entities, versionName: version)
  }

  @Test func aPartialIndexHoldsTheRowsItsPredicateSelects() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    let model = try Self.partial("title != nil AND latitude > 10")
    try SQLiteStore.create(at: url, model: model).close()
    #expect(
      try Self.indexSQL(url) == [
        "CREATE INDEX Z_Note_byTitle ON ZNOTE (ZTITLE COLLATE BINARY ASC) WHERE (ZTITLE IS NOT NULL AND ZLATITUDE > 10)"
      ])
    // The store's own model keeps the predicate (NSPartialIndexPredicate), and lays out the same index.
    let cached = try #require(try SQLiteStore.cachedModel(at: url))
    let predicate = cached.entity(named: "Note")?.fetchIndexes.first?.partialPredicate
    #expect(predicate == "(title != nil) AND (latitude > 10)")
    #expect(StoreSchema(model: cached).indexes == StoreSchema(model: model).indexes)
    // Migrated every way, the index is rebuilt with its condition.
    let v2 = try Self.partial(
      "title != nil AND latitude > 10", "Notes 2",
      extra: #"<attribute name="body" optional="YES" attributeType="String"/>"#)
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(model, v2), destination: v2, in: folder, expectDDL: true)
    for (method, result) in results {
      #expect(try Self.indexSQL(result) == (try Self.indexSQL(url)), "\(method)")
    }
    // What migrun cannot write is refused by name.
    let refused = [
      ("title BEGINSWITH 'a'", "uses BEGINSWITH"), ("latitude < nil", "orders against nil"),
      ("folder.name == 'x'", "goes through a relationship"), ("ANY folder.notes.title == 'x'", "ANY, ALL, NONE"),
      ("title ==", "which migrun cannot read"),
    ]
    for (format, reason) in refused {
      let schema = StoreSchema(model: try Self.partial(format))
      #expect(schema.unsupported.count == 1, "\(format)")
      #expect(schema.unsupported.first?.contains("fetch index 'byTitle'") == true, "\(format)")
      #expect(schema.unsupported.first?.contains(reason) == true, "\(schema.unsupported)")
    }
  }

  @Test func expressionsParseAndPrintAsNSExpressionDoes() throws {
    let cases = [
      ("lowercase:(title)", "lowercase:(title)"), ("lowercase(title)", "lowercase:(title)"),
      ("add:to:(a, 1)", "a + 1"), ("(a + b) * c", "(a + b) * c"), ("now()", "now()"),
      ("abs:(-2.5)", "abs:(-2.5)"), ("SELF", "SELF"), ("'x'", "\"x\""), ("folder.name", "folder.name"),
    ]
    for (text, printed) in cases {
      #expect(try IndexExpression.parse(text).description == printed, "\(text)")
    }
    for bad in ["lowercase:(title", "a +", "add:to(a)", "1 2"] {
      #expect(throws: FormatPredicateError.self, "\(bad)") { try IndexExpression.parse(bad) }
    }
  }

  @Test func whatMigrunCannotWriteIsRefusedByName() throws {
    func expression(_ text: String, _ type: String = "Binary") -> String {
      #"<fetchIndex name="byExpression"><fetchIndexElement expression="\#(text)" expressionType="String" type="\#(type)" order="ascending"/></fetchIndex>"#
    }
    let cases = [
      (expression("max:(title)"), "calls max:, an aggregate, which Core Data does not allow in an index"),
      (expression("now()"), "calls now(), which Core Data does not allow in an index"),
      (expression("canonical:(title)"), "calls canonical:, a function Core Data does not allow in an index"),
      (expression("lowercase:(folder.name)"), "goes through a relationship ('folder.name')"),
      (expression("lowercase:(body)"), "names 'body', which Note has no stored property called"),
      (expression("add:to:(latitude, nil)"), "holds nil"),
      (expression("lowercase:(title"), "'lowercase:(title', which migrun cannot read"),
      (expression("lowercase:(title)", "R-Tree"), "is an R-tree index over the expression lowercase:(title)"),
      (
        #"<fetchIndex name="byNothing"><fetchIndexElement property="nothing" type="Binary" order="ascending"/></fetchIndex>"#,
        "fetch index 'byNothing' names 'nothing'"
      ),
      (
        #"<fetchIndex name="rt"><fetchIndexElement property="folder" type="R-Tree" order="ascending"/></fetchIndex>"#,
        "fetch index 'rt' is an R-tree index over 'folder', which is not an attribute"
      ),
    ]
    for (index, message) in cases {
      let folder = try TemporaryDirectory()
      let url = folder.url.appendingPathComponent("Notes.sqlite")
      let model = try Migrations.model(Self.notes(index: index), "Notes")
      #expect(throws: StoreError.self) { try SQLiteStore.create(at: url, model: model) }
      do {
        try SQLiteStore.create(at: url, model: model).close()
      } catch {
        #expect("\(error)".contains("entity Note: fetch index '"), "\(error)")
        #expect("\(error)".contains(message), "\(error)")
      }
      #expect(!FileManager.default.fileExists(atPath: url.path))
    }
  }
}
