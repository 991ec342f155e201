import Foundation
import PropertyList

/// Standard output, every write checked: a full disk or device behind it is a failure (exit 12,
/// `ExitStatus`), with a message on standard error — never a crash, never output lost with exit 0.
///
/// The one door text takes to a terminal: a line's control characters — an escape sequence, a
/// return, a line feed inside a name — are written as `\u{1B}` (`TerminalText`), whatever the
/// command and wherever the name came from (a file, a store, a model, a script). Only
/// ``write(_:)`` passes bytes as they are, for formats that escape their own text (JSON).
///
/// ```swift
/// try StandardOutput.line("created Moody.sqlite")
/// ```
package enum StandardOutput {
  /// Writes `data` whole, or throws: bytes of a format that escapes its own text (JSON lines, an
  /// export), never text made of names.
  package static func write(_ data: Data) throws {
    do {
      try FileHandle.standardOutput.write(contentsOf: data)
    } catch {
      throw failure(error)
    }
  }

  /// Writes one line of text and its newline, its control characters escaped (a line feed too).
  package static func line(_ text: String) throws { try write(Data((TerminalText.safe(text) + "\n").utf8)) }

  /// Writes lines of text, each escaped as ``line(_:)`` escapes one.
  package static func lines(_ lines: [String]) throws {
    try write(Data(lines.map { TerminalText.safe($0) + "\n" }.joined().utf8))
  }

  /// Writes migrun's own text of several lines (help), line feeds kept, other controls escaped.
  package static func text(_ text: String) throws {
    try write(Data((TerminalText.safe(text, keepingLineBreaks: true) + "\n").utf8))
  }

  /// A writer of text in blocks to standard output (a long export), failing as ``write(_:)`` does.
  package static func blocks() -> BlockWriter { BlockWriter(FileHandle.standardOutput) { failure($0) } }

  /// The failure to write standard output, its cause kept (a full disk: exit 12).
  static func failure(_ error: any Error) -> any Error {
    ToolError(
      message: "cannot write to standard output: \(OutputFile.reason(error)); the output is incomplete — "
        + "free some space, or send it elsewhere", underlying: error)
  }
}

/// Text written to a file in blocks of 64 KiB, every write checked: what cannot be written throws
/// (through `failure`, which words it for the file written), nothing is dropped.
package final class BlockWriter {
  private let handle: FileHandle
  private let failure: (any Error) -> any Error
  private var buffer = Data()

  package init(_ handle: FileHandle, failure: @escaping (any Error) -> any Error = { $0 }) {
    self.handle = handle
    self.failure = failure
  }

  package func write(_ text: String) throws {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= 1 << 16 { try flush() }
  }

  package func write(_ data: Data) throws {
    buffer.append(data)
    if buffer.count >= 1 << 16 { try flush() }
  }

  /// Writes what is held; call it once at the end.
  package func flush() throws {
    guard !buffer.isEmpty else { return }
    do {
      try handle.write(contentsOf: buffer)
    } catch {
      throw failure(error)
    }
    buffer.removeAll(keepingCapacity: true)
  }
}

/// Standard error: messages, notes and progress. A write that fails is let go — there is nowhere
/// left to say so — but never crashes the command, whose exit status still says how it ended. Text
/// is escaped as on standard output (line feeds kept: a message may take several lines).
package enum StandardError {
  package static func write(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(TerminalText.safe(text, keepingLineBreaks: true).utf8))
  }

  /// `text` as one line: its line feeds escaped too, so text from elsewhere (a script's log line)
  /// cannot forge the line after it.
  package static func line(_ text: String) { write(TerminalText.safe(text) + "\n") }

  /// Draws `line` over the line the cursor is on (a progress line): migrun's own return and
  /// erase, then the line escaped.
  package static func redraw(_ line: String) {
    try? FileHandle.standardError.write(contentsOf: Data(("\r\u{1B}[K" + TerminalText.safe(line)).utf8))
  }
}
