import Foundation
import GRDB
import TestSupport
import Testing

@testable import MigrunStore

/// `StoreEdit`'s one reader of a file's `sqlite_master`: every view of the schema (indexes,
/// derived-attribute triggers, triggers and views, tables' statements, what a file holds beyond its
/// model) reads the same objects, and a name that is not text is an error naming it, never "".
@Suite struct StoreEditSchemaTests {
  static func file(in folder: TemporaryDirectory) throws -> DatabaseQueue {
    let url = folder.url.appendingPathComponent("s.sqlite")
    try makeDatabase(
      url,
      [
        "CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, ZTITLE VARCHAR, UNIQUE (ZTITLE))",
        "CREATE INDEX ZNOTE_ZTITLE_INDEX ON ZNOTE (ZTITLE)",
        "CREATE TRIGGER Z_DA_ZNOTE_x AFTER INSERT ON ZNOTE BEGIN SELECT 1; END",
        "CREATE TRIGGER z_da_lower AFTER INSERT ON ZNOTE BEGIN SELECT 1; END",
        "CREATE VIEW titles AS SELECT ZTITLE FROM ZNOTE",
      ])
    return try DatabaseQueue(path: url.path)
  }

  @Test func everyViewOfTheSchemaReadsTheSameObjects() throws {
    let folder = try TemporaryDirectory()
    let queue = try Self.file(in: folder)
    try queue.read { db in
      let edit = StoreEdit(db)
      let objects = try edit.schemaObjects()
      #expect(objects.map(\.name).sorted() == ["ZNOTE", "ZNOTE_ZTITLE_INDEX", "Z_DA_ZNOTE_x", "titles", "z_da_lower"])
      #expect(try edit.indexNames().map(\.name) == ["ZNOTE_ZTITLE_INDEX"])
      #expect(try edit.indexNames().map(\.table) == ["ZNOTE"])
    }
    try queue.write { db in
      try StoreEdit(db).dropDerivedAttributeTriggers()
      #expect(try StoreEdit(db).schemaObjects().filter { $0.type == "trigger" }.isEmpty, "Z_DA_ in either case")
    }
  }

  /// A name written around SQLite (a blob, by `writable_schema`): said by its row, not read as "".
  @Test func aNameThatIsNotTextIsAnError() throws {
    let folder = try TemporaryDirectory()
    let queue = try Self.file(in: folder)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA writable_schema = ON")
      try db.execute(sql: "UPDATE sqlite_master SET name = CAST(name AS BLOB) WHERE name = 'titles'")
      try db.execute(sql: "PRAGMA writable_schema = OFF")
    }
    try queue.close()
    let reopened = try DatabaseQueue(path: folder.url.appendingPathComponent("s.sqlite").path)
    let error = try #require(throws: StoreError.self) {
      try reopened.read { db in try StoreEdit(db).schemaObjects() }
    }
    #expect(error.reason.contains("sqlite_master, row 6) holds a name that is not text (Data(6 bytes))"), "\(error)")
  }
}
