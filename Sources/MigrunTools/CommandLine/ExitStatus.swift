import LuaHost
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore

/// The exit status of a command that failed, and the line it prints — the one place they are
/// decided, for every error a job can throw, from what the failure was (its kind, or the kind of a
/// cause underneath it), never from its words.
///
/// | status | failure |
/// |---|---|
/// | 11 | a store another process holds (``StoreFailure/isInUse(_:)``) |
/// | 12 | a full disk (``StoreFailure/isDiskFull(_:)``) |
/// | 1 | anything else: a bad model, store, script or mapping, a failed check |
///
/// 0 (success), 10 (`status`: the store needs migrating) and 64 (a bad command line) are not
/// failures of a job and are the command line's own.
package enum ExitStatus {
  /// What a command prints (after `migrun: error: `) and the status it exits with when a job
  /// threw `error`.
  package struct Failure: Equatable, Sendable {
    package let message: String
    package let status: Int32

    package init(message: String, status: Int32) {
      self.message = message
      self.status = status
    }
  }

  package static func of(_ error: any Error) -> Int32 {
    if StoreFailure.isInUse(error) { return 11 }
    if StoreFailure.isDiskFull(error) { return 12 }
    return 1
  }

  /// The failure `error` is: migrun's own errors (``ModelError``, ``StoreError``, ``ContextError``,
  /// ``MigrationError``, `LuaError`, `ToolError`) say it in their own words; any other error under
  /// which a disk is full is said plainly (SQLite's or Foundation's words alone do not tell what to do).
  package static func failure(_ error: any Error) -> Failure {
    let status = of(error)
    let ownWords =
      error is ModelError || error is StoreError || error is ContextError || error is MigrationError
      || error is LuaError || error is ToolError
    if status == 12 && !ownWords {
      return Failure(message: "no space left on the disk (\(error)); free some space and run it again", status: status)
    }
    return Failure(message: "\(error)", status: status)
  }
}
