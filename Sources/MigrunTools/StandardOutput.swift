import Foundation

/// Standard output, every write checked: a full disk or device behind it is a failure (exit 12,
/// `ExitStatus`), with a message on standard error — never a crash, never output lost with exit 0.
///
/// ```swift
/// try StandardOutput.line("created Moody.sqlite")
/// ```
package enum StandardOutput {
  /// Writes `data` whole, or throws.
  package static func write(_ data: Data) throws {
    do {
      try FileHandle.standardOutput.write(contentsOf: data)
    } catch {
      throw failure(error)
    }
  }

  /// Writes one line of text and its newline.
  package static func line(_ text: String) throws { try write(Data((text + "\n").utf8)) }

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
/// left to say so — but never crashes the command, whose exit status still says how it ended.
package enum StandardError {
  package static func write(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
  }
}
