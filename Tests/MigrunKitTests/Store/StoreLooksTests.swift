import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

@Suite struct StoreLooksTests {
  /// A hot `-journal` that appears beside a store during a command (a writer crashed part way
  /// through a transaction, its pages in the file) is noticed: the store is read again as SQLite's
  /// rollback leaves it, not through the connection the command's first look kept on the raw file.
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
    let read = try StoreLooks.during { () throws -> Int in
      // The first look: no journal yet, the file opened as it is.
      _ = try SQLiteStore.metadata(at: store)
      try FileManager.default.moveItem(at: aside, to: journal)
      return try SQLiteStore(url: store).count(of: "Page", includingSubentities: true)
    }
    #expect(read == pages, "the committed pages, not the crashed writer's: \(read) of \(pages)")
  }
}
