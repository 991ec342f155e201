import Foundation
import GRDB
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// Every derivation migrun writes is kept current by the store itself, as Core Data's triggers keep
/// it: plain SQL inserts and updates (another process's writes) change the derived values, a
/// migration fills them on every path, and the model cache records them.
@Suite struct DerivedAttributeTests {
  static let xml = """
    <model>
      <entity name="Folder">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="noteCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="notes.@count"/>
        <attribute name="wordCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="notes.@sum.words"/>
        <attribute name="shortest" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="notes.@min.words"/>
        <attribute name="longest" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="notes.@max.words"/>
        <attribute name="pinnedCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="notes.@count.pinned"/>
        <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
      </entity>
      <entity name="Note">
        <attribute name="title" optional="YES" attributeType="String"/>
        <attribute name="words" optional="YES" attributeType="Integer 64"/>
        <attribute name="pinned" optional="YES" attributeType="Boolean"/>
        <attribute name="titleCopy" optional="YES" attributeType="String" derived="YES" derivationExpression="title"/>
        <attribute name="titleLower" optional="YES" attributeType="String" derived="YES" derivationExpression="lowercase:(title)"/>
        <attribute name="titleSearch" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(title)"/>
        <attribute name="touched" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()"/>
        <attribute name="folderName" optional="YES" attributeType="String" derived="YES" derivationExpression="folder.name"/>
        <attribute name="folderUpper" optional="YES" attributeType="String" derived="YES" derivationExpression="uppercase:(folder.name)"/>
        <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
        <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
      </entity>
      <entity name="Tag">
        <attribute name="word" optional="YES" attributeType="String"/>
        <attribute name="noteCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="notes.@count"/>
        <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
      </entity>
    </model>
    """

  static func values(_ queue: DatabaseQueue) throws -> [String] {
    try queue.read { db in
      try Row.fetchAll(
        db,
        sql:
          "SELECT ZTITLECOPY, ZTITLELOWER, ZTITLESEARCH, ZTOUCHED IS NOT NULL, ZFOLDERNAME, ZFOLDERUPPER FROM ZNOTE ORDER BY Z_PK"
      ).map { "\($0)" }
        + Row.fetchAll(db, sql: "SELECT ZNAME, ZNOTECOUNT FROM ZFOLDER ORDER BY Z_PK").map { "\($0)" }
        + Row.fetchAll(db, sql: "SELECT ZWORDCOUNT, ZSHORTEST, ZLONGEST, ZPINNEDCOUNT FROM ZFOLDER ORDER BY Z_PK").map {
          "\($0)"
        }
        + Row.fetchAll(db, sql: "SELECT ZWORD, ZNOTECOUNT FROM ZTAG ORDER BY Z_PK").map { "\($0)" }
    }
  }

  @Test func theStoreKeepsEveryDerivedValueCurrentThroughPlainSQL() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    let model = try Migrations.model(Self.xml, "Notes")
    try SQLiteStore.create(at: url, model: model).close()
    // migrun's own connection has Core Data's functions, as Core Data's has.
    let queue = try DatabaseQueue(path: url.path, configuration: SQLiteStore.configuration(readOnly: false))
    let schema = StoreSchema(model: model)
    let (folderNumber, noteNumber, tagNumber) = (
      try #require(schema.layout(of: "Folder")).number, try #require(schema.layout(of: "Note")).number,
      try #require(schema.layout(of: "Tag")).number
    )
    let join = try #require(schema.tables.first { $0.primaryKey.count == 2 })
    try queue.write { db in
      try db.execute(sql: "INSERT INTO ZFOLDER (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, \(folderNumber), 1, 'Work')")
      try db.execute(
        sql:
          "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZFOLDER, ZWORDS, ZPINNED) VALUES (1, \(noteNumber), 1, 'Héllo Wörld', 1, 5, 1)"
      )
      try db.execute(
        sql: "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZFOLDER, ZWORDS) VALUES (2, \(noteNumber), 1, 'Two', 1, 9)"
      )
      try db.execute(sql: "INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZWORD) VALUES (1, \(tagNumber), 1, 'red')")
      try db.execute(sql: "INSERT INTO \(join.name) VALUES (1, 1)")
    }
    let two = "[ZTITLECOPY:\"Two\" ZTITLELOWER:\"two\" ZTITLESEARCH:\"two\" ZTOUCHED IS NOT NULL:1 ZFOLDERNAME:"
    #expect(
      try Self.values(queue) == [
        "[ZTITLECOPY:\"Héllo Wörld\" ZTITLELOWER:\"héllo wörld\" ZTITLESEARCH:\"hello world\" ZTOUCHED IS NOT NULL:1 ZFOLDERNAME:\"Work\" ZFOLDERUPPER:\"WORK\"]",
        two + "\"Work\" ZFOLDERUPPER:\"WORK\"]",
        "[ZNAME:\"Work\" ZNOTECOUNT:2]", "[ZWORDCOUNT:14 ZSHORTEST:5 ZLONGEST:9 ZPINNEDCOUNT:1]",
        "[ZWORD:\"red\" ZNOTECOUNT:1]",
      ])
    try queue.write { db in
      try db.execute(sql: "UPDATE ZFOLDER SET ZNAME = 'Home' WHERE Z_PK = 1")
      try db.execute(sql: "UPDATE ZNOTE SET ZTITLE = 'Ça va', Z_OPT = 2 WHERE Z_PK = 1")
      try db.execute(sql: "UPDATE ZNOTE SET ZWORDS = 1 WHERE Z_PK = 2")
      try db.execute(sql: "DELETE FROM \(join.name)")
    }
    #expect(
      try Self.values(queue) == [
        "[ZTITLECOPY:\"Ça va\" ZTITLELOWER:\"ça va\" ZTITLESEARCH:\"ca va\" ZTOUCHED IS NOT NULL:1 ZFOLDERNAME:\"Home\" ZFOLDERUPPER:\"HOME\"]",
        two + "\"Home\" ZFOLDERUPPER:\"HOME\"]",
        "[ZNAME:\"Home\" ZNOTECOUNT:2]", "[ZWORDCOUNT:6 ZSHORTEST:1 ZLONGEST:5 ZPINNEDCOUNT:1]",
        "[ZWORD:\"red\" ZNOTECOUNT:0]",
      ])
    // The smallest goes: the minimum is found again among the rest.
    try queue.write { db in try db.execute(sql: "DELETE FROM ZNOTE WHERE Z_PK = 2") }
    #expect(
      try Self.values(queue).suffix(3) == [
        "[ZNAME:\"Home\" ZNOTECOUNT:1]", "[ZWORDCOUNT:5 ZSHORTEST:5 ZLONGEST:5 ZPINNEDCOUNT:1]",
        "[ZWORD:\"red\" ZNOTECOUNT:0]",
      ])
    try queue.close()
    // The store's own model records every derivation as written.
    let cached = try #require(try SQLiteStore.cachedModel(at: url))
    let derivations = cached.entities.flatMap { $0.attributes.compactMap { $0.derivation?.expression } }.sorted()
    #expect(
      derivations == [
        "canonical:(title)", "count:(notes)", "count:(notes)", "count:(notes.pinned)", "folder.name",
        "lowercase:(title)", "max:(notes.words)",
        "min:(notes.words)", "now()", "sum:(notes.words)", "title", "uppercase:(folder.name)",
      ])
    #expect(cached.entityVersionHashes == model.entityVersionHashes)
  }

  @Test func aMigrationFillsEveryDerivedValueOnEveryPath() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    // (now() aside: each path fills it at its own moment.)
    let xml = Self.xml.replacingOccurrences(
      of:
        #"<attribute name="touched" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()"/>"#,
      with: "")
    let v1 = try Migrations.model(xml, "Notes")
    let v2 = try Migrations.model(
      xml.replacingOccurrences(
        of: #"<attribute name="word" optional="YES" attributeType="String"/>"#,
        with:
          #"<attribute name="word" optional="YES" attributeType="String"/><attribute name="color" optional="YES" attributeType="String"/>"#
      ), "Notes 2")
    let store = try SQLiteStore.create(at: url, model: v1)
    try store.write { writer in
      try writer.insert(
        StoredObject(id: ObjectID(entity: "Folder", primaryKey: 1), attributes: ["name": .string("Work")]))
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Note", primaryKey: 1), attributes: ["title": .string("Dear Diary")],
          toOne: ["folder": ObjectID(entity: "Folder", primaryKey: 1)]))
    }
    try store.close()
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    for (method, result) in results {
      let queue = try DatabaseQueue(path: StoreFiles.immutableURI(result))
      let row = try queue.read { db in
        try Row.fetchOne(db, sql: "SELECT ZTITLECOPY, ZTITLELOWER, ZFOLDERNAME, ZFOLDERUPPER FROM ZNOTE")
      }
      #expect(
        row.map { "\($0)" }
          == "[ZTITLECOPY:\"Dear Diary\" ZTITLELOWER:\"dear diary\" ZFOLDERNAME:\"Work\" ZFOLDERUPPER:\"WORK\"]",
        "\(method)")
      try queue.close()
    }
  }
}
