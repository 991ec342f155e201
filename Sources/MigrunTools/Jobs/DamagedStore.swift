import Foundation
import MigrunStore

/// A SQLite store file SQLite itself calls damaged, said as such by the commands that read it
/// (`inspect`, `export`) — never SQLite's raw error with its SQL, and never counts or objects given
/// as if the file were whole — with what to run next: `check` to see the damage, `salvage` to save
/// what the file still holds.
package struct DamagedStore {
  /// The path as the user gave it.
  package let store: String
  /// SQLite's quick check of the file: its first complaints.
  package let problems: [String]

  /// The damage of the SQLite file at `store`, or nil when SQLite finds none — or cannot open it
  /// at all (not there, not SQLite: the command's own error says so, in its words).
  /// `session`: the command's look at the store (its check reads through the session's connection).
  package static func of(_ store: String, session given: StoreSession? = nil) -> DamagedStore? {
    let url = URL(fileURLWithPath: store)
    let session = given ?? StoreSession(url)
    // A file only a copy can read unchanged (a -wal without its -shm, a hot journal) is left to the
    // command, which reads it through one.
    guard session.type == .sqlite, SQLiteStore.readOnlyPath(url, isHeld: session.isHeld) != nil,
      let problems = try? StoreCheck.sqliteProblems(of: session, limit: 3),
      !problems.isEmpty
    else { return nil }
    return DamagedStore(store: store, problems: problems)
  }

  /// What is wrong and what to do next, in one sentence.
  package var message: String {
    "\(store): the file is damaged (SQLite's check: \(problems.first ?? "damage")); `migrun check \(store)` says what is "
      + "wrong, `migrun salvage \(store) --out NEW.sqlite` writes what it still holds as a new store"
  }

  /// The failure a command that cannot read a damaged store ends with.
  package var error: ToolError { ToolError(message: message) }
}
