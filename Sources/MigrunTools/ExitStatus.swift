import MigrunStore

/// The exit status of a command that failed — the one place they are decided, from what the
/// failure was (its kind, or the kind of a cause underneath it), never from its words.
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
  package static func of(_ error: any Error) -> Int32 {
    if StoreFailure.isInUse(error) { return 11 }
    if StoreFailure.isDiskFull(error) { return 12 }
    return 1
  }
}
