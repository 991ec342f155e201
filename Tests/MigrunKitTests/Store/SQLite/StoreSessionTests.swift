import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

@Suite struct StoreSessionTests {
  /// A hot `-journal` that appears beside a store during a job (a writer crashed part way through a
  /// transaction, its pages in the file) is noticed: the store is read again as SQLite's rollback
  /// leaves it, not through the connection the session's first look kept on the raw file.
  @Test func aJournalThatAppearsDuringACommandIsNoticed() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(
      "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: folder)
    let pages = try DatabaseQueue(path: store.path).read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM ZPAGE") ?? 0
    }
    try SQLiteShell.crashMidTransaction(
      store, "DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE;\nDELETE FROM ZPAGE WHERE Z_PK % 2 = 0;")
    let journal = URL(fileURLWithPath: store.path + "-journal")
    let aside = folder.url.appendingPathComponent("journal-aside")
    try FileManager.default.moveItem(at: journal, to: aside)
    let session = StoreSession(store)
    // The first look: no journal yet, the file opened as it is (and its connection kept).
    _ = try session.metadata()
    try FileManager.default.moveItem(at: aside, to: journal)
    let read = try SQLiteStore(url: store, model: nil, access: .readOnly, fastWrites: false, session: session)
      .count(of: "Page", includingSubentities: true)
    #expect(read == pages, "the committed pages, not the crashed writer's: \(read) of \(pages)")
  }

  /// One look at a store answers every question a job asks before it works: its type, whether it is
  /// held, its metadata, its tables and its model cache — all through one connection, which the
  /// store the job opens then takes (scripts/opens counts the opens of a whole command).
  @Test func aSessionReadsTheStoreOnce() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(
      "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: folder)
    let session = StoreSession(store)
    #expect(session.type == .sqlite)
    #expect(!session.isHeld)
    let metadata = try session.metadata()
    #expect(try session.tableNames().contains("Z_METADATA"))
    let cached = try #require(try session.cachedModel())
    #expect(metadata.differences(from: cached).isEmpty)
    #expect(session.holdsConnection, "an immutable connection, kept")
    let opened = try SQLiteStore(url: store, model: nil, access: .readOnly, fastWrites: false, session: session)
    defer { try? opened.close() }
    #expect(try opened.count(of: "Page", includingSubentities: true) > 0)
    #expect(!session.holdsConnection, "the store took the session's connection")
  }

  /// What a session read is forgotten when the store's files change under it (its stamp): a later
  /// question reads the store again.
  @Test func aSessionForgetsWhatItReadWhenTheFileChanges() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(
      "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: folder)
    let session = StoreSession(store)
    let before = try session.tableNames()
    try DatabaseQueue(path: store.path).write { db in try db.execute(sql: "CREATE TABLE ZMIGRUNEXTRA (Z_PK INTEGER)") }
    let after = try session.tableNames()
    #expect(!before.contains("ZMIGRUNEXTRA"))
    #expect(after.contains("ZMIGRUNEXTRA"), "read again once the file changed")
  }
}
