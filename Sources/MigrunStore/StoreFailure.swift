import Foundation
import GRDB
import MigrunModel

#if canImport(Glibc)
  import Glibc
#endif

/// What a failure was, read from the errors themselves — SQLite's result codes, the system's
/// `errno`, Foundation's codes, migrun's own codes — through every cause underneath
/// (``ErrorCause/chain(_:)``), never from the words of a message.
package enum StoreFailure {
  /// A full disk: SQLite's `SQLITE_FULL`, `ENOSPC`, Foundation's out-of-space, or a store error of
  /// code ``StoreError/Code/noSpace``.
  package static func isDiskFull(_ error: any Error) -> Bool {
    ErrorCause.chain(error).contains { cause in
      if let store = cause as? StoreError { return store.code == .noSpace }
      if let database = cause as? DatabaseError { return database.resultCode == .SQLITE_FULL }
      if let posix = cause as? POSIXError { return posix.code == .ENOSPC }
      if let cocoa = cause as? CocoaError { return cocoa.code == .fileWriteOutOfSpace }
      let nsError = cause as NSError
      return nsError.domain == NSPOSIXErrorDomain && nsError.code == Int(ENOSPC)
    }
  }

  /// A store another process holds: a store error of code ``StoreError/Code/inUse``, or SQLite's
  /// `SQLITE_BUSY` / `SQLITE_LOCKED`.
  package static func isInUse(_ error: any Error) -> Bool {
    ErrorCause.chain(error).contains { cause in
      if let store = cause as? StoreError { return store.code == .inUse }
      if let database = cause as? DatabaseError {
        return database.resultCode == .SQLITE_BUSY || database.resultCode == .SQLITE_LOCKED
      }
      return false
    }
  }

  /// `error` in words for a person: SQLite's message and at most the first 200 characters of the
  /// statement it ran (a statement can be megabytes — a predicate's list of values, a row's blob).
  package static func words(_ error: any Error) -> String {
    guard let database = error as? DatabaseError else { return "\(error)" }
    let message = database.message ?? "SQLite error \(database.resultCode.rawValue)"
    guard let sql = database.sql else { return message }
    let shown = sql.count > 200 ? "\(sql.prefix(200))… (\(sql.count) characters)" : sql
    return "\(message) (in `\(shown)`)"
  }
}
