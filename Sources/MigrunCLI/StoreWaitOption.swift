import ArgumentParser
import MigrunStore

/// `--wait SECONDS` of the commands that read or migrate stores: how long a read waits for another
/// process holding the store's write lock (a commit under way), and a migration for every other
/// process to let the store go, before the in-use answer (exit 11).
struct StoreWaitOption: ParsableArguments {
  @Option(
    name: .customLong("wait"),
    help: ArgumentHelp(
      "Wait up to this many seconds for another process holding the store (default: refuse at once, exit 11).",
      valueName: "seconds"))
  var seconds: Double?

  /// A wait that is no number of seconds, or longer than SQLite's busy handler counts
  /// (`SQLiteStore.maximumWait`), is a bad command line (exit 64), found before any work.
  func validate() throws {
    if let seconds, !(seconds >= 0 && seconds <= SQLiteStore.maximumWait) {
      throw ValidationError("--wait: give a number of seconds from 0 to \(Int(SQLiteStore.maximumWait)) (24 days)")
    }
  }

  /// The wait in seconds (0: refuse at once), handed to the job that reads the stores.
  var wait: Double { seconds ?? 0 }
}
