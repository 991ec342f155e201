import Foundation
import GRDB
import TestSupport
import Testing

@testable import MigrunStore

/// Stores crafted against `migrun salvage` (issue 69's hostile round): salvage reads a damaged
/// file without SQLite, and nothing in the file's content — a blob, a row of another table, the
/// schema's text — may make it read something that is not there, run or evaluate SQL of the file's,
/// or fail the whole salvage over one row.
@Suite struct HostileSalvageTests {
  static let moody = HostileStoreTests.moody

  /// Moody 2's store with `change` made to it by SQLite.
  static func store(in folder: TemporaryDirectory, _ change: (Database) throws -> Void) throws -> URL {
    try HostileStoreTests.store(in: folder, change)
  }

  /// What SQLite reads of `store`: `sql`'s one row, as text.
  static func sqlite(_ store: URL, _ sql: String) throws -> [String?] {
    let queue = try DatabaseQueue(path: store.path)
    defer { try? queue.close() }
    return try queue.read { db in
      let row = try Row.fetchOne(db, sql: sql)
      return row.map { row in
        (0..<row.count).map { index -> String? in
          switch (row[index] as DatabaseValue).storage {
          case .null: nil
          case .int64(let number): "\(number)"
          case .double(let number): "\(number)"
          case .string(let text): text
          case .blob(let data): data.map { String(format: "%02x", $0) }.joined()
          }
        }
      } ?? []
    }
  }

  /// `bytes` written at `offset` of `file`.
  static func write(_ bytes: [UInt8], at offset: Int, of file: URL) throws {
    let handle = try FileHandle(forWritingTo: file)
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
  }

  /// A table leaf page of `size` bytes holding `cells` (each a rowid and a record's payload).
  static func leaf(size: Int, cells: [(rowid: Int64, payload: [UInt8])]) -> [UInt8] {
    var page = [UInt8](repeating: 0, count: size)
    page[0] = 13
    var end = size
    for (index, cell) in cells.enumerated() {
      let bytes = varint(Int64(cell.payload.count)) + varint(cell.rowid) + cell.payload
      end -= bytes.count
      page.replaceSubrange(end..<end + bytes.count, with: bytes)
      page[8 + 2 * index] = UInt8(end >> 8)
      page[9 + 2 * index] = UInt8(end & 0xFF)
    }
    page[3] = UInt8(cells.count >> 8)
    page[4] = UInt8(cells.count & 0xFF)
    page[5] = UInt8(end >> 8)
    page[6] = UInt8(end & 0xFF)
    return page
  }

  /// A record of `values` (NULL; 0 and 1 as SQLite stores them, in the header alone; other small
  /// integers, 2–127, one byte each).
  static func record(_ values: [Int?]) -> [UInt8] {
    let types = values.flatMap { value -> [UInt8] in
      switch value {
      case nil: [0]
      case 0?: [8]
      case 1?: [9]
      default: [1]
      }
    }
    var headerSize = types.count + 1
    if varint(Int64(headerSize)).count > 1 { headerSize += varint(Int64(headerSize + 1)).count - 1 }
    return varint(Int64(headerSize)) + types + values.compactMap { $0.flatMap { $0 > 1 ? UInt8($0) : nil } }
  }

  static func varint(_ value: Int64) -> [UInt8] {
    var value = UInt64(bitPattern: value)
    var bytes = [UInt8(value & 0x7F)]
    value >>= 7
    while value > 0 {
      bytes.insert(UInt8(value & 0x7F) | 0x80, at: 0)
      value >>= 7
    }
    return bytes
  }
}

extension HostileSalvageTests {
  /// A 200 KB picture in a binary attribute, its bytes laid out as 512-byte b-tree pages (an
  /// interior page and six leaves of made-up moods in each of its overflow pages), the header
  /// overwritten: salvage took a 512-byte page size and wrote made-up objects. The page size is
  /// the one the schema's tree proves from page 1; the picture is a picture.
  @Test func aPictureLaidOutAsPagesIsNeitherThePageSizeNorRows() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(in: folder) { db in
      try db.execute(sql: "UPDATE ZMOOD SET ZCOLORS = zeroblob(200000) WHERE Z_PK = (SELECT min(Z_PK) FROM ZMOOD)")
    }
    let (overflow, entity) = try DatabaseQueue(path: store.path).read { db in
      (
        try Int.fetchAll(db, sql: "SELECT pageno FROM dbstat WHERE name = 'ZMOOD' AND pagetype = 'overflow'"),
        try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Mood'") ?? 0
      )
    }
    #expect(overflow.count > 40, "the premise: the picture spans overflow pages")
    var made = 0
    for page in overflow {
      // Slot k of the 4096-byte page is the 512-byte page (page - 1) * 8 + k + 1; slot 0 keeps
      // the overflow page's pointer to the next.
      let number = { (slot: Int) in (page - 1) * 8 + slot + 1 }
      var interior = [UInt8](repeating: 0, count: 512)
      interior[0] = 5
      interior[3] = 5
      interior.replaceSubrange(8..<12, with: withUnsafeBytes(of: UInt32(number(7)).bigEndian, Array.init))
      var end = 512
      for slot in 2...6 {
        let cell = withUnsafeBytes(of: UInt32(number(slot)).bigEndian, Array.init) + Self.varint(Int64(made + slot))
        end -= cell.count
        interior.replaceSubrange(end..<end + cell.count, with: cell)
        interior[12 + 2 * (slot - 2)] = UInt8(end >> 8)
        interior[13 + 2 * (slot - 2)] = UInt8(end & 0xFF)
      }
      interior[5] = UInt8(end >> 8)
      interior[6] = UInt8(end & 0xFF)
      try Self.write(interior, at: (page - 1) * 4096 + 512, of: store)
      for slot in 2...7 {
        made += 1
        let row = Self.record([nil, entity, 1, 0, 5, nil, nil, nil, nil, nil, nil, nil, nil])
        try Self.write(
          Self.leaf(size: 512, cells: [(Int64(10_000 + made), row)]), at: (page - 1) * 4096 + slot * 512, of: store)
      }
    }
    let moods = try Self.sqlite(store, "SELECT count(*), max(length(ZCOLORS)) FROM ZMOOD")
    try Self.write([UInt8](repeating: 0, count: 100), at: 0, of: store)
    #expect(SQLiteFileImage.guessedPageSize(try Data(contentsOf: store)) == (4096, .schema))
    let (out, result) = try SalvageProofTests.salvaged(store, in: folder, ["--model", Self.moody])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(
      result.stdout.contains("header damaged: page size 4096 proven by the schema's tree"), "\(result.stdout)")
    #expect(try Self.sqlite(out, "SELECT count(*), max(length(ZCOLORS)) FROM ZMOOD") == moods, "\(result.stdout)")
    #expect(
      try Self.sqlite(out, "SELECT count(*), group_concat(name) FROM sqlite_master WHERE name LIKE 'MIGRUN%'")
        == ["0", nil], "\(result.stdout)")
    // Page 1 overwritten too (no schema to prove a size): the picture's pages lie inside its row's
    // overflow chain read at 4096, and prove nothing.
    try Self.write([UInt8](repeating: 0, count: 4096), at: 0, of: store)
    #expect(SQLiteFileImage.guessPageSize(try Data(contentsOf: store)) == 4096)
  }

  /// The header's magic overwritten, its page size field intact: the field is taken where the
  /// file agrees with it.
  @Test func theHeadersOwnPageSizeFieldIsTakenWhereTheFileAgrees() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(HostileStoreTests.moodyStore, into: folder)
    try Self.write([UInt8](repeating: 0, count: 16), at: 0, of: store)
    #expect(SQLiteFileImage.guessedPageSize(try Data(contentsOf: store)) == (4096, .headerField))
  }

  /// An app's table of property lists, one row shaped as Z_METADATA's (NULL key, text, a binary
  /// plist) on a page before Z_METADATA's, the schema lost: its row was taken for the store's
  /// metadata (its UUID the app's). Z_METADATA is known by its table — a page that is a whole
  /// table of one row — never by a plist's look.
  @Test func anAppsPlistRowIsNeverTheStoresMetadata() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(in: folder) { db in
      let plist = try Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA") ?? Data()
      // Z_METADATA made again after the app's table: its page comes after the app's.
      try db.execute(sql: "CREATE TABLE APPSETTINGS (id INTEGER PRIMARY KEY, name VARCHAR, plist BLOB)")
      for key in 1...3 {
        try db.execute(
          sql: "INSERT INTO APPSETTINGS VALUES (?, ?, ?)",
          arguments: [key, "0BAD0BAD-0000-0000-0000-00000000000\(key)", plist])
      }
      try db.execute(sql: "CREATE TABLE Z_METADATA_KEPT AS SELECT * FROM Z_METADATA")
      try db.execute(sql: "DROP TABLE Z_METADATA")
      try db.execute(sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
      try db.execute(sql: "INSERT INTO Z_METADATA SELECT * FROM Z_METADATA_KEPT")
      try db.execute(sql: "DROP TABLE Z_METADATA_KEPT")
    }
    try DatabaseQueue(path: store.path).writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
    let (uuid, schema, app, own) = try DatabaseQueue(path: store.path).read { db in
      (
        try String.fetchOne(db, sql: "SELECT Z_UUID FROM Z_METADATA") ?? "",
        try Int.fetchAll(db, sql: "SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'"),
        try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'APPSETTINGS'") ?? 0,
        try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'Z_METADATA'") ?? 0
      )
    }
    #expect(app < own, "the premise: the app's rows come first")
    try SalvageProofTests.overwrite(schema, of: store)
    let (out, result) = try SalvageProofTests.salvaged(store, in: folder, ["--model", Self.moody])
    #expect(result.stdout.contains("the store's own metadata kept"), "\(result.stdout)\(result.stderr)")
    #expect(try Self.sqlite(out, "SELECT Z_UUID FROM Z_METADATA") == [uuid], "\(result.stdout)")
    #expect(
      result.stdout.contains("rows whose table's definition was lost"), "the app's rows kept aside: \(result.stdout)")
  }
}
