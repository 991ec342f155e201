import Foundation
import GRDB

extension SQLiteStore {
  /// Why SQLite could not open the store at `url`, in the store's words: in use (another process's
  /// commit), a full disk, another kind of Core Data store, a file that is not SQLite — or, for a
  /// SQLite file, SQLite's own words (never "not SQLite" for a file with SQLite's header).
  static func openFailure(_ error: any Error, url: URL, waited: Double) -> StoreError {
    // A writer in the middle of its commit (SQLite's EXCLUSIVE lock): the store is in use, not damaged.
    if StoreFailure.isInUse(error) {
      return StoreUse.inUseError(url, cause: error, waited: waited)
    }
    let detail = (error as? DatabaseError)?.message ?? "\(error)"
    // A SQLite file SQLite could not open is not "not SQLite": a full disk (no room for the
    // -shm a WAL store needs) is said as one (exit 12), any other failure as SQLite words it.
    let code = (error as? DatabaseError)?.resultCode
    if StoreType.of(url) == .sqlite, code != .SQLITE_NOTADB, code != .SQLITE_CORRUPT {
      if StoreFailure.isDiskFull(error) || StoreFiles.hasNoFreeSpace(beside: url) {
        return StoreError(
          .noSpace, file: url.path,
          reason: "not enough free space on its disk to open the store (SQLite: \(detail)); free some space",
          underlying: error)
      }
      return StoreError(.io, file: url.path, reason: "cannot open the store (SQLite: \(detail))", underlying: error)
    }
    if let type = StoreType.of(url), type != .sqlite {
      return StoreError(
        .notSQLite, file: url.path,
        reason:
          "a Core Data \(type.label) store, not SQLite: SQLiteStore reads SQLite stores (convert it to StoreType.sqlite first)",
        underlying: error)
    }
    return StoreError(.notSQLite, file: url.path, reason: "not a SQLite database (\(detail))", underlying: error)
  }
}
