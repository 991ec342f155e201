import Foundation
import PropertyList
import Synchronization

/// Where scripts' lines go — `print`, a mapping file's `m:log`, a stage's `ctx:log` — each already
/// prefixed with the file that said it: standard error, each line's control characters escaped
/// (`TerminalText`), unless a program sets a handler (the command line sends them through its
/// standard-error door; a library user to a logger, say). Process-wide, as standard error is.
package enum ScriptOutput {
  private static let handler = Mutex<(@Sendable (String) -> Void)?>(nil)

  /// The handler every later line goes to; nil: standard error.
  package static func setHandler(_ new: (@Sendable (String) -> Void)?) {
    handler.withLock { $0 = new }
  }

  /// Says `line` where lines go.
  package static func say(_ line: String) {
    if let handler = handler.withLock({ $0 }) {
      handler(line)
    } else {
      FileHandle.standardError.write(Data((TerminalText.safe(line) + "\n").utf8))
    }
  }
}
