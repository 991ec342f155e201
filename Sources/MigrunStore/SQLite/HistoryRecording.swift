import Foundation
import GRDB
import MigrunModel

/// A context save recorded in a store's persistent history, as Core Data records one in a store
/// with history tracking (the tables `ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`, numbered in
/// `Z_PRIMARYKEY` under `TRANSACTION`, `CHANGE`, `TRANSACTIONSTRING`):
///
/// - one `ATRANSACTION` row: `ZTIMESTAMP` (seconds since 2001), and the strings it names —
///   `ZBUNDLEIDTS` and `ZPROCESSIDTS` (the process, `migrun`), `ZAUTHORTS` and `ZCONTEXTNAMETS` (the
///   context's `transactionAuthor` and `name`, when set) — as rows of
///   `ATRANSACTIONSTRING` (`ZNAME` unique, shared by transactions), `Z_OPT` and the text columns
///   NULL, as the stores we have show them;
/// - one `ACHANGE` row per object: `ZCHANGETYPE` 0 insert, 1 update, 2 delete; `ZENTITY` and
///   `ZENTITYPK` the object; `ZTRANSACTIONID` the transaction; an update's `ZCOLUMNS` the mask of
///   the properties it wrote (the bit order `HistoryRewrite` reads, most significant bit first);
///   a delete's `ZTOMBSTONE<n>` the values of its `preserveAfterDeletion` attributes in their slots
///   (columns Core Data would have added are added, `BLOB` — a guess, as in `HistoryRewrite`).
///
/// Which columns an update's bits name for a to-one (its key, entity and order columns all) and
/// the tombstone values' form (the attribute's column value) are guesses: no store we have holds an
/// update or a tombstone. Inserts and the transaction row are as the stores show them.
extension SQLiteObjectWriter {
  func recordHistory(_ save: SavedChanges) throws {
    guard !save.isEmpty, let tables = try store.historyTables(db) else { return }
    let transaction = try recordTransaction(save, tables)
    try recordChanges(save, tables, transaction: transaction)
  }

  typealias HistoryTables = (
    change: SQLiteStore.HistoryTable, transaction: SQLiteStore.HistoryTable, string: SQLiteStore.HistoryTable
  )

  /// The save's `ATRANSACTION` row, with the strings it names in `ATRANSACTIONSTRING`; returns its key.
  private func recordTransaction(_ save: SavedChanges, _ tables: HistoryTables) throws -> Int64 {
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
    return transaction
  }

  /// An `ACHANGE` row per object the save inserted, updated or deleted.
  private func recordChanges(_ save: SavedChanges, _ tables: HistoryTables, transaction: Int64) throws {
    // Keys for every change at once; each entity's bits and tombstone slots worked out once.
    let count = save.inserted.count + save.updated.count + save.deleted.count
    var key = try reserveKeys(tables.change, count) - Int64(count)
    var bits: [String: [HistoryLayout.Key]] = [:]
    var slots: [String: [String]] = [:]
    for (id, _) in save.deleted where slots[id.entity] == nil {
      slots[id.entity] = HistoryLayout.tombstoneSlots(of: id.entity, in: store.model)
    }
    try addTombstoneColumns(slots.values.map(\.count).max() ?? 0)
    func change(_ type: Int, _ id: ObjectID, columns: DatabaseValue = .null, tombstones: [DatabaseValue] = []) throws {
      guard let layout = store.schema.layout(of: id.entity) else {
        throw StoreError(.unknownEntity, entity: id.entity, reason: "the model has no such entity")
      }
      key += 1
      let names = tombstones.indices.map { "ZTOMBSTONE\($0)" }
      try db.cachedStatement(
        sql: """
          INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\
          \(names.map { ", " + $0 }.joined()))
          VALUES (?, ?, NULL, ?, ?, ?, ?, ?\(String(repeating: ", ?", count: names.count)))
          """
      ).execute(
        arguments: StatementArguments(
          [
            key.databaseValue, tables.change.number.databaseValue, type.databaseValue, layout.number.databaseValue,
            id.primaryKey.databaseValue, transaction.databaseValue, columns,
          ] + tombstones))
    }
    for id in save.inserted { try change(0, id) }
    for (id, properties) in save.updated {
      if bits[id.entity] == nil { bits[id.entity] = HistoryLayout.updateBits(of: id.entity, in: store.schema) }
      try change(1, id, columns: Self.mask(bits[id.entity] ?? [], properties))
    }
    for (id, row) in save.deleted {
      let values = (slots[id.entity] ?? []).map { name in
        row?.attributes[name].map(StoreValueCoding.databaseValue) ?? .null
      }
      try change(2, id, tombstones: values)
    }
  }

  /// Raises a history table's `Z_PRIMARYKEY.Z_MAX` by `count`: the keys up to the returned one are this save's.
  private func reserveKeys(_ table: SQLiteStore.HistoryTable, _ count: Int) throws -> Int64 {
    try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ?", arguments: [count, table.number])
    return try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [table.number])
      ?? Int64(count)
  }

  private func nextKey(_ table: SQLiteStore.HistoryTable) throws -> Int64 {
    try reserveKeys(table, 1)
  }

  /// An update's `ZCOLUMNS`: one bit per property it wrote, in ``HistoryLayout/updateBits(of:in:)``'s
  /// order, the first bit the most significant of the first byte.
  private static func mask(_ bits: [HistoryLayout.Key], _ properties: Set<String>) -> DatabaseValue {
    guard !bits.isEmpty else { return .null }
    var bytes = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
    for (index, key) in bits.enumerated() {
      // A composite's elements (`origin.place`) are written with it.
      let owner = key.name.split(separator: ".").first.map(String.init) ?? key.name
      guard properties.contains(key.name) || properties.contains(owner) else { continue }
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
  /// `ATRANSACTIONSTRING` with Core Data's columns, each numbered in `Z_PRIMARYKEY`; nil when the
  /// store has none of them. History tables of another shape are an error naming what is missing:
  /// a save is never left out of a history migrun cannot write.
  func historyTables(_ db: Database) throws -> (change: HistoryTable, transaction: HistoryTable, string: HistoryTable)?
  {
    let expected: [(table: String, columns: [String])] = [
      ("ACHANGE", ["ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]),
      ("ATRANSACTION", ["ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP"]),
      ("ATRANSACTIONSTRING", ["ZNAME"]),
    ]
    let stored = Dictionary(
      storedTables.map { ($0.key.uppercased(), Set($0.value.map { $0.uppercased() })) },
      uniquingKeysWith: { first, _ in first })
    guard expected.contains(where: { stored[$0.table] != nil }) else { return nil }
    func refuse(_ what: String) -> StoreError {
      StoreError(
        .badValue, file: url.lastPathComponent,
        reason: "the store's persistent history is not Core Data's (\(what)): migrun cannot record this save in it")
    }
    for (table, columns) in expected {
      guard let found = stored[table] else { throw refuse("no table \(table)") }
      if let missing = columns.first(where: { !found.contains($0) }) { throw refuse("\(table) has no \(missing)") }
    }
    func number(_ name: String) throws -> HistoryTable {
      guard
        let number = try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?", arguments: [name])
      else { throw refuse("Z_PRIMARYKEY has no row \(name)") }
      return HistoryTable(number: number)
    }
    return (try number("CHANGE"), try number("TRANSACTION"), try number("TRANSACTIONSTRING"))
  }
}
