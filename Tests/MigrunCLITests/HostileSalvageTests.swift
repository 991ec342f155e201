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
