import Foundation
import GRDB
import MigrunModel
import TestSupport
import Testing

@testable import MigrunStore

/// Join rows are never read as entity rows (issue 68). A join table's row — two keys and the
/// order — holds its first key in the record, where an entity's row holds NULL (its `Z_PK` is the
/// rowid); its second number is the other object's key, never a `Z_ENT`. With the join table's
/// root page destroyed, its leaves are read without a tree leading to them: every row goes back to
/// the join table, none into `ZNOTE` or `ZTAG` though their keys 1 and 2 are those entities' numbers.
@Suite struct SalvageJoinRowTests {
  static let model = """
    <entity name="Note">
      <attribute name="title" optional="YES" attributeType="String"/>
      <relationship name="tags" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
    </entity>
    <entity name="Tag">
      <attribute name="name" optional="YES" attributeType="String"/>
      <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
    </entity>
    """

  @Test func joinRowsOnLeavesNoTreeReachesGoBackToTheJoinTable() throws {
    let folder = try TemporaryDirectory()
    let bundle = folder.url.appendingPathComponent("Notes.xcdatamodeld")
    try writeModelVersion("Notes", of: bundle, entities: Self.model)
    let model = try ModelBundle(modelOrStoreAt: bundle).model(named: "Notes")
    let url = folder.url.appendingPathComponent("notes.sqlite")
    try SQLiteStore.create(at: url, model: model).close()
    let schema = StoreSchema(model: model)
    let join = try #require(schema.tables.first { !$0.primaryKey.isEmpty })
    #expect(join.columns.count == 3, "an ordered many-to-many: two keys and the order")
    let (note, tag) = (try #require(schema.layout(of: "Note")), try #require(schema.layout(of: "Tag")))
    let queue = try DatabaseQueue(path: url.path)
    let root = try queue.write { db -> Int in
      try db.execute(sql: "PRAGMA journal_mode = DELETE")
      for key in 1...300 {
        try db.execute(
          sql: "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (?, ?, 1, ?)",
          arguments: [key, note.number, "note \(key)"])
      }
      for key in 1...20 {
        try db.execute(
          sql: "INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)",
          arguments: [key, tag.number, "tag \(key)"])
      }
      let names = join.columns.map(\.name).joined(separator: ", ")
      for noteKey in 1...300 {
        for tagKey in 1...20 {
          // The table's first column is the side that named it; the values are keys either way.
          try db.execute(
            sql: "INSERT INTO \(join.name) (\(names)) VALUES (?, ?, ?)", arguments: [noteKey, tagKey, tagKey])
        }
      }
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 300 WHERE Z_ENT = ?", arguments: [note.number])
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 20 WHERE Z_ENT = ?", arguments: [tag.number])
      return try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [join.name]) ?? 0
    }
    try queue.close()
    var bytes = Array(try Data(contentsOf: url))
    let size = SQLiteFileImage(bytes: bytes).pageSize
    #expect(bytes.count / size > root + 10, "the join table spans many leaves below its root")
    for offset in (root - 1) * size..<root * size { bytes[offset] = 0 }
    let damaged = folder.url.appendingPathComponent("damaged.sqlite")
    try Data(bytes).write(to: damaged)

    let given = try ModelBundle(modelOrStoreAt: bundle)
    let (version, read) = try Salvage.read(damaged, bundle: given)
    let out = folder.url.appendingPathComponent("salvaged.sqlite")
    let report = try Salvage.write(read, model: version, to: out)
    let counts = try DatabaseQueue(path: out.path).read { db in
      (
        try Int.fetchOne(db, sql: "SELECT count(*) FROM ZNOTE") ?? -1,
        try Int.fetchOne(db, sql: "SELECT count(*) FROM ZTAG") ?? -1,
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(join.name)") ?? -1,
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'MIGRUN_SETASIDE%'")
      )
    }
    #expect(counts.0 == 300 && counts.1 == 20, "no join row taken for a note or a tag: \(counts)")
    #expect(counts.2 == 6_000, "every join row on the leaves below the lost root is back: \(counts.2) of 6000")
    #expect(read.deletedRowsLeftOut == 0, "no join row taken for a deleted note or tag")
    #expect(counts.3.isEmpty, "nothing set aside: \(counts.3)")
    #expect(report.entities["Note"]?.setAside ?? 0 == 0 && report.entities["Tag"]?.setAside ?? 0 == 0)
  }
}
