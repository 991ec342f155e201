import Testing

@testable import MigrunKit

/// The columns a `CREATE TABLE` statement's table constraints name, as the DDL decision reads them
/// from the file's `sqlite_master` (outside input).
@Suite struct TableConstraintColumnsTests {
  @Test func theColumnsOfUniquePrimaryKeyAndCheckListsAreRead() {
    let sql = """
      CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR, ZCOUNT INTEGER,
        UNIQUE (ZNAME, zCount), CHECK (ZCOUNT > 0), PRIMARY KEY\t(Z_PK))
      """
    #expect(DDLStep.tableConstraintColumns(sql) == ["ZNAME", "ZCOUNT", "Z_PK", "0"])
    #expect(DDLStep.tableConstraintColumns("CREATE TABLE T (A, B UNIQUE, CHECK (A))") == ["A"])
    #expect(DDLStep.tableConstraintColumns("CREATE TABLE T (A CHECK (") == [])
  }

  /// A statement repeating `CHECK (` in a string literal — 340 kB of it, never closed or closed
  /// once at the end — searched from each keyword to the end of the text: hours. Each part is read
  /// once now.
  @Test func aStatementOfNestedOpenListsIsReadOnce() {
    let open = "CREATE TABLE T (A DEFAULT '" + String(repeating: "CHECK (UNIQUE (A ", count: 20_000)
    #expect(DDLStep.tableConstraintColumns(open) == [])
    #expect(DDLStep.tableConstraintColumns(open + "')") == ["UNIQUE", "A", "CHECK"])
  }
}
