import Foundation
import GRDB
import TestSupport
import Testing

@testable import MigrunStore

/// Issue 69's hostile round, continued: a schema's text read as SQL's tokens and never evaluated,
/// a row too wide for any table kept aside, and the files beside the store — a hot journal that
/// names a super-journal, sidecars of any size — read as SQLite reads them, in bounded memory.
@Suite struct HostileSalvageSchemaTests {
  static let moody = HostileStoreTests.moody

  /// A column added with a literal default holding `, )` (older rows shorter), an app's table whose
  /// `CHECK (… <> ')')` and string default hold a parenthesis and a comma, a column whose default
  /// is an expression: counting commas NULLed the columns after them, and every default was
  /// evaluated (a crafted one held salvage seven minutes). Each column is read as SQLite reads it;
  /// a default that is an expression is not evaluated — SQLite reads NULL there too — and is named.
  @Test func columnsAreReadByTokensAndDefaultsAreOnlyLiterals() throws {
    let folder = try TemporaryDirectory()
    let store = try HostileSalvageTests.store(in: folder) { db in
      try db.execute(sql: "ALTER TABLE ZMOOD ADD COLUMN ZNOTE VARCHAR DEFAULT 'x, y)'")
      try db.execute(
        sql: """
          CREATE TABLE APPNOTES (id INTEGER PRIMARY KEY, label VARCHAR CHECK (label <> ')'), \
          note VARCHAR DEFAULT 'a, (b', "n, m" INTEGER, [w] BLOB)
          """)
      try db.execute(sql: "INSERT INTO APPNOTES VALUES (1, 'one', 'first', 7, x'0102')")
      try db.execute(sql: "INSERT INTO APPNOTES (id, label, \"n, m\") VALUES (2, 'two', 8)")
      // A column whose default is an expression, added behind SQLite's back (older rows shorter).
      try db.execute(sql: "CREATE TABLE APPCOUNTS (id INTEGER PRIMARY KEY, n INTEGER)")
      try db.execute(sql: "INSERT INTO APPCOUNTS VALUES (1, 5)")
      try db.execute(sql: "PRAGMA writable_schema = ON")
      try db.execute(
        sql: """
          UPDATE sqlite_master SET sql = 'CREATE TABLE APPCOUNTS (id INTEGER PRIMARY KEY, n INTEGER, \
          later DEFAULT (hex(zeroblob(900000))), fixed DEFAULT -3)' WHERE name = 'APPCOUNTS'
          """)
    }
    let notes =
      "SELECT group_concat(quote(id) || quote(label) || quote(note) || quote(\"n, m\") || quote(w)) FROM APPNOTES"
    let counts = "SELECT quote(n), quote(later), quote(fixed) FROM APPCOUNTS"
    let moods = "SELECT count(*), count(DISTINCT ZNOTE), min(ZNOTE) FROM ZMOOD"
    let expected = try [notes, counts, moods].map { try HostileSalvageTests.sqlite(store, $0) }
    #expect(expected[1] == ["5", "NULL", "-3"], "the premise: SQLite reads NULL for an expression: \(expected)")
    let (out, result) = try SalvageProofTests.salvaged(store, in: folder, ["--model", Self.moody])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(try [notes, counts, moods].map { try HostileSalvageTests.sqlite(out, $0) } == expected, "\(result.stdout)")
    #expect(
      result.stdout.contains(
        "defaults that are expressions not evaluated (a row written before such a column was "
          + "added reads NULL there): APPCOUNTS.later"), "\(result.stdout)")
  }

  /// The parser's columns are SQLite's own for every `CREATE TABLE` of the fixture stores and for
  /// statements whose quotes and parentheses hold commas.
  @Test func columnsAreSQLitesOwn() throws {
    var statements = [
      "CREATE TABLE t (a INTEGER PRIMARY KEY, b CHECK (b <> ')'), c VARCHAR DEFAULT 'x, (y', \"d, e\" INT, [f,] BLOB)",
      "CREATE TABLE t (a /* ), */ TEXT -- , b\n, `g``h` DEFAULT (1), PRIMARY KEY (a), CHECK (a <> ','))",
      "CREATE TABLE \"t\" (a INT, b VARCHAR(10, 2) NOT NULL DEFAULT X'00ff' REFERENCES x(y) ON DELETE SET DEFAULT)",
    ]
    let fixtures = Fixtures.url("")
    let stores = FileManager.default.enumerator(at: fixtures, includingPropertiesForKeys: nil)?.compactMap {
      ($0 as? URL).flatMap { $0.pathExtension == "sqlite" ? $0 : nil }
    }
    for url in stores ?? [] {
      statements += try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
        try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL")
      }
    }
    for sql in Set(statements) {
      let sqlite = try DatabaseQueue().write { db in
        try db.execute(sql: sql)
        let name = try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") ?? ""
        return try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info(?)", arguments: [name])
      }
      let parsed = try #require(CreateTableStatement(sql: sql), "\(sql)")
      #expect(parsed.columns.map(\.name) == sqlite.map { $0[0] as String }, "\(sql)")
      // The declared type's words (a size in parentheses is not part of what salvage compares).
      let types = sqlite.map {
        ($0[1] as String).uppercased().prefix { $0 != "(" }.trimmingCharacters(in: .whitespaces)
      }
      #expect(parsed.columns.map(\.type) == types, "\(sql)")
    }
    #expect(statements.count > 40)
  }
}
