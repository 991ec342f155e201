import Foundation
import GRDB
import GRDBSQLite
import MigrunModel
import MigrunStore
import Testing

/// A binding SQLite refuses is an error, never a quiet reuse of the last row's value: a statement
/// run again keeps its bindings, so a failed bind wrote the row before's value in its place.
@Suite struct RawStatementTests {
  @Test func aValueLongerThanSQLiteTakesIsAnErrorNotTheLastRowsValue() throws {
    let queue = try DatabaseQueue()
    try queue.inDatabase { db in
      try db.execute(sql: "CREATE TABLE t (v)")
      let connection = try #require(db.sqliteConnection)
      let statement = try db.makeStatement(sql: "INSERT INTO t (v) VALUES (?)")
      let raw = RawStatement(handle: statement.sqliteStatement, connection: connection)
      try raw.bind(StoreValue.string("short"), at: 1)
      try raw.run()
      // Values of at most 100 bytes from now on.
      sqlite3_limit(connection, SQLITE_LIMIT_LENGTH, 100)
      for long in [StoreValue.string(String(repeating: "x", count: 200)), .data(Array(repeating: 7, count: 200))] {
        #expect(throws: StoreError.self) { try raw.bind(long, at: 1) }
      }
      #expect(try String.fetchAll(db, sql: "SELECT v FROM t") == ["short"])
    }
  }
}
