import GRDB

/// What an existing store's file says of its own layout, read when it is opened: its tables'
/// columns and its entity numbers — the two facts ``StoreSchema`` takes from a store rather than
/// from Core Data's rules.
extension SQLiteStore {
  /// Every table's columns (`PRAGMA table_info`), by table name.
  static func readTables(_ queue: DatabaseQueue, file: String) throws -> [String: [String]] {
    do {
      return try queue.read { db in
        var tables: [String: [String]] = [:]
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
          let quoted = name.replacingOccurrences(of: "\"", with: "\"\"")
          tables[name] = try Row.fetchAll(db, sql: "PRAGMA table_info(\"\(quoted)\")").map {
            try $0.required("name", as: String.self)
          }
        }
        return tables
      }
    } catch {
      throw StoreError(.sqlite, file: file, reason: "cannot read the store's tables (\(error))", underlying: error)
    }
  }

  /// The store's own entity numbers (`Z_PRIMARYKEY`: name → `Z_ENT`); none when the table cannot
  /// be read, and the layout then numbers as Core Data does (`check` names a broken table).
  static func readNumbers(_ queue: DatabaseQueue) -> [String: Int] {
    let rows = try? queue.read { db in
      try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE typeof(Z_NAME) = 'text'")
    }
    var numbers: [String: Int] = [:]
    for row in rows ?? [] {
      guard let number = row["Z_ENT"] as Int?, let name = row["Z_NAME"] as String? else { continue }
      numbers[name] = number
    }
    return numbers
  }
}
