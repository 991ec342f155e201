import Foundation
import GRDB

/// A context save recorded in a store's persistent history, as Core Data records one in a store
/// with history tracking (the tables `ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`, numbered in
/// `Z_PRIMARYKEY` under `TRANSACTION`, `CHANGE`, `TRANSACTIONSTRING`):
///
/// - one `ATRANSACTION` row: `ZTIMESTAMP` (seconds since 2001), and the strings it names —
///   `ZBUNDLEIDTS` and `ZPROCESSIDTS` (the process, `migrun`), `ZAUTHORTS` and `ZCONTEXTNAMETS` (the
///   context's ``ObjectContext/transactionAuthor`` and ``ObjectContext/name``, when set) — as rows of
///   `ATRANSACTIONSTRING` (`ZNAME` unique, shared by transactions), `Z_OPT` and the text columns
///   NULL, as the stores we have show them;
/// - one `ACHANGE` row per object: `ZCHANGETYPE` 0 insert, 1 update, 2 delete; `ZENTITY` and
///   `ZENTITYPK` the object; `ZTRANSACTIONID` the transaction; an update's `ZCOLUMNS` the mask of
///   the properties it wrote (the bit order ``HistoryRewrite`` reads, most significant bit first);
///   a delete's `ZTOMBSTONE<n>` the values of its `preserveAfterDeletion` attributes in their slots
///   (columns Core Data would have added are added, `BLOB` — a guess, as in ``HistoryRewrite``).
///
/// Which columns an update's bits name for a to-one (its key, entity and order columns all) and
/// the tombstone values' form (the attribute's column value) are guesses: no store we have holds an
/// update or a tombstone. Inserts and the transaction row are as the stores show them.
extension SQLiteObjectWriter {
  func recordHistory(_ save: SavedChanges) throws {
    guard !save.isEmpty, let tables = try store.historyTables(db) else { return }
    let transaction = try nextKey(tables.transaction)
    var strings: [String: Int64] = [:]
    func string(_ name: String?) throws -> DatabaseValue {
      guard let name else { return .null }
      if let known = strings[name] { return known.databaseValue }
      let key =
        try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", arguments: [name])
        ?? {
          let key = try nextKey(tables.string)
          try db.execute(
            sql: "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, NULL, ?)",
            arguments: [key, tables.string.number, name])
          return key
        }()
      strings[name] = key
      return key.databaseValue
    }
    let process = ProcessInfo.processInfo.processName
    try db.execute(
      sql: """
        INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
        VALUES (?, ?, NULL, ?, ?, ?, ?, ?)
        """,
      arguments: [
        transaction, tables.transaction.number, try string(save.author), try string("migrun"),
        try string(save.contextName), try string(process), Date().timeIntervalSinceReferenceDate,
      ])
    func change(_ type: Int, _ id: ObjectID, columns: DatabaseValue = .null, tombstones: [DatabaseValue] = []) throws {
      guard let layout = store.schema.layout(of: id.entity) else { return }
      let slots = tombstones.indices.map { "ZTOMBSTONE\($0)" }
      try db.execute(
        sql: """
          INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\
          \(slots.map { ", " + $0 }.joined()))
          VALUES (?, ?, NULL, ?, ?, ?, ?, ?\(String(repeating: ", ?", count: slots.count)))
          """,
        arguments: StatementArguments(
          [
            try nextKey(tables.change).databaseValue, tables.change.number.databaseValue, type.databaseValue,
            layout.number.databaseValue, id.primaryKey.databaseValue, transaction.databaseValue, columns,
          ] + tombstones))
    }
    for id in save.inserted { try change(0, id) }
    for (id, properties) in save.updated { try change(1, id, columns: mask(of: id.entity, properties)) }
    for (id, row) in save.deleted {
      let slots = HistoryRewrite.tombstoneSlots(of: id.entity, in: store.model)
      try addTombstoneColumns(slots.count)
      try change(
        2, id, tombstones: slots.map { name in row?.attributes[name].map(StoreValueCoding.databaseValue) ?? .null })
    }
  }

  /// The next primary key of a history table's row (its `Z_PRIMARYKEY.Z_MAX` raised).
  private func nextKey(_ table: SQLiteStore.HistoryTable) throws -> Int64 {
    try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_ENT = ?", arguments: [table.number])
    return try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [table.number])
      ?? 1
  }

  /// An update's `ZCOLUMNS`: one bit per property it wrote, in ``HistoryRewrite/updateBits(of:in:)``'s
  /// order, the first bit the most significant of the first byte.
  private func mask(of entity: String, _ properties: Set<String>) -> DatabaseValue {
    let bits = HistoryRewrite.updateBits(of: entity, in: store.schema)
    guard !bits.isEmpty else { return .null }
    // A composite's elements are written with it.
    let leaves = Set(properties.flatMap { name in [name] + bits.map(\.name).filter { $0.hasPrefix(name + ".") } })
    var bytes = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
    for (index, key) in bits.enumerated() where leaves.contains(key.name) {
      bytes[index / 8] |= 0x80 >> UInt8(index % 8)
    }
    return Data(bytes).databaseValue
  }

  /// `ZTOMBSTONE0…` up to `count` columns, added as Core Data adds them when a model preserves more.
  private func addTombstoneColumns(_ count: Int) throws {
    guard count > 0 else { return }
    let existing = Set(
      try Row.fetchAll(db, sql: "PRAGMA table_info(ACHANGE)").compactMap { row -> String? in
        (row["name"] as String?)?.uppercased()
      })
    for slot in 0..<count where !existing.contains("ZTOMBSTONE\(slot)") {
      try db.execute(sql: "ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(slot) BLOB")
    }
  }
}

extension SQLiteStore {
  /// A history table's entity number in `Z_PRIMARYKEY`.
  struct HistoryTable: Sendable {
    let number: Int
  }

  /// The history tables, when the store keeps persistent history: `ACHANGE`, `ATRANSACTION` and
  /// `ATRANSACTIONSTRING` with Core Data's columns, each numbered in `Z_PRIMARYKEY`.
  func historyTables(_ db: Database) throws -> (change: HistoryTable, transaction: HistoryTable, string: HistoryTable)?
  {
    func has(_ table: String, _ columns: [String]) -> Bool {
      guard let stored = storedTables.first(where: { $0.key.uppercased() == table })?.value else { return false }
      let names = Set(stored.map { $0.uppercased() })
      return columns.allSatisfy(names.contains)
    }
    guard has("ACHANGE", ["ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]),
      has("ATRANSACTION", ["ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP"]),
      has("ATRANSACTIONSTRING", ["ZNAME"])
    else { return nil }
    func number(_ name: String) throws -> HistoryTable? {
      try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?", arguments: [name]).map(
        HistoryTable.init(number:))
    }
    guard let change = try number("CHANGE"), let transaction = try number("TRANSACTION"),
      let string = try number("TRANSACTIONSTRING")
    else { return nil }
    return (change, transaction, string)
  }
}
