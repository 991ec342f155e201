import Foundation
import GRDB
import Testing

@testable import MigrunContext
@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// A context's saves are recorded in a store's persistent history as Core Data records them (one
/// `ATRANSACTION` per save, one `ACHANGE` per object: inserts, updates with the mask of what they
/// wrote, deletes with their preserved values), so an app that reads history — or CloudKit's mirror,
/// which exports from it — sees what a stage or a tool changed. A store without history gets none.
@Suite struct HistoryRecordingTests {
  static func changes(_ url: URL, after key: Int64) throws -> [Row] {
    try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS, ZTOMBSTONE0, ZTOMBSTONE1
          FROM ACHANGE WHERE Z_PK > ? ORDER BY Z_PK
          """, arguments: [key])
    }
  }

  @Test func savesAreRecordedInTheStoresHistory() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("History.sqlite")
    let fixture = Fixtures.url(PersistentHistoryTests.store)
    let model = try PersistentHistoryTests.source(fixture, preserving: ["Feedback": ["authorAlias", "comment"]])
    try PersistentHistoryTests.makeStore(at: url, model: model, historyFrom: fixture)
    let before = try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      (
        try Int64.fetchOne(db, sql: "SELECT max(Z_PK) FROM ACHANGE") ?? 0,
        try Int64.fetchOne(db, sql: "SELECT max(Z_PK) FROM ATRANSACTION") ?? 0
      )
    }
    let store = try SQLiteStore(url: url, model: model, access: .readWrite)
    let context = StoreCoordinator(store: store).newContext()
    context.transactionAuthor = "tests"
    context.name = "cleanup"
    let book = try context.insert(
      "Feedback",
      [
        "comment": StoreValue.string("Dune"), "authorAlias": .string("fh"), "rating": .double(4),
        "bookID": .uuid(Array(repeating: 7, count: 16)),
      ])
    try context.save()
    try book.set("comment", .string("Dune Messiah"))
    try context.save()
    try context.delete(book)
    try context.save()
    try store.close()

    let number = try #require(StoreSchema(model: model).layout(of: "Feedback")?.number)
    let rows = try Self.changes(url, after: before.0)
    #expect(rows.map { $0["ZCHANGETYPE"] as Int64 } == [0, 1, 2])
    #expect(rows.allSatisfy { ($0["ZENTITY"] as Int) == number && ($0["ZENTITYPK"] as Int64) == book.id.primaryKey })
    #expect(rows.map { $0["ZTRANSACTIONID"] as Int64 } == [before.1 + 1, before.1 + 2, before.1 + 3])
    // The update names the one property it wrote, in the bit order history's rewrite reads.
    let bits = HistoryLayout.updateBits(of: "Feedback", in: StoreSchema(model: model))
    let mask = try #require(rows[1]["ZCOLUMNS"] as Data?)
    #expect(PersistentHistoryTests.names(mask, bits) == [HistoryRewrite.Key(kind: .attribute, name: "comment")])
    #expect(rows[0]["ZCOLUMNS"] as Data? == nil)
    // The delete keeps the preserved attributes' values in their slots (authorAlias, comment).
    #expect(rows[2]["ZTOMBSTONE0"] as String? == "fh")
    #expect(rows[2]["ZTOMBSTONE1"] as String? == "Dune Messiah")
    // The transactions name their author, context and process through ATRANSACTIONSTRING.
    let named = try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT a.ZNAME AS author, c.ZNAME AS context, b.ZNAME AS bundle FROM ATRANSACTION t
          LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
          LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS WHERE t.Z_PK > ? ORDER BY t.Z_PK
          """, arguments: [before.1]
      ).map { "\($0["author"] as String? ?? "-") \($0["context"] as String? ?? "-") \($0["bundle"] as String? ?? "-")" }
    }
    #expect(named == Array(repeating: "tests cleanup migrun", count: 3))
    #expect(try StoreCheck.sqliteProblems(of: url, full: true).isEmpty)
    // Z_PRIMARYKEY covers the rows written.
    let maxima = try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'CHANGE') = (SELECT max(Z_PK) FROM ACHANGE),
          (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'TRANSACTION') = (SELECT max(Z_PK) FROM ATRANSACTION),
          (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'TRANSACTIONSTRING') = (SELECT max(Z_PK) FROM ATRANSACTIONSTRING)
          """
      ).first.map { [$0[0] as Bool, $0[1] as Bool, $0[2] as Bool] }
    }
    #expect(maxima == [true, true, true])
  }

  /// History tables migrun does not know are an error naming what is missing; nothing is saved
  /// without its history.
  @Test func historyOfAnotherShapeIsRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Odd.sqlite")
    let model = try Migrations.model(FetchIndexTests.notes(), "Notes")
    try SQLiteStore.create(at: url, model: model).close()
    try DatabaseQueue(path: url.path).write { db in
      try db.execute(sql: "CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, ZENTITY INTEGER)")
    }
    let store = try SQLiteStore(url: url, model: model, access: .readWrite)
    let context = StoreCoordinator(store: store).newContext()
    _ = try context.insert("Note", ["title": .string("x")])
    let error = try #require(throws: ContextError.self) { try context.save() }
    #expect(
      error.description.contains("persistent history is not Core Data's (ACHANGE has no ZCHANGETYPE)"), "\(error)")
    #expect(try store.count(of: "Note", includingSubentities: true) == 0)
    try store.close()
  }

  @Test func aStoreWithoutHistoryGetsNone() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Plain.sqlite")
    let model = try Migrations.model(FetchIndexTests.notes(), "Notes")
    let store = try SQLiteStore.create(at: url, model: model)
    let context = StoreCoordinator(store: store).newContext()
    _ = try context.insert("Note", ["title": .string("x")])
    try context.save()
    try store.close()
    let tables = try SQLiteStore.tableNames(at: url)
    #expect(!tables.contains("ACHANGE") && !tables.contains("ATRANSACTION"))
  }
}
