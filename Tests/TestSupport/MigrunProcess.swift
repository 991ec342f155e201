import Foundation

/// Runs the built `migrun` executable, as a user would.
public enum MigrunProcess {
  public struct Result: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Standard error's non-empty lines.
    public var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// Standard output read as `--json` output (docs/json.md): every line one object with an
    /// `event` string and `schema` 2, or an error naming the line that is not.
    public func jsonLines() throws -> [[String: Any]] {
      try stdout.split(separator: "\n").enumerated().map { number, line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
          object["event"] is String, object["schema"] as? Int == 2
        else { throw NotJSONLines(line: number + 1, text: String(line)) }
        return object
      }
    }

    /// The one line of `event` (an error when there is none or several).
    public func jsonLine(_ event: String) throws -> [String: Any] {
      let lines = try jsonLines().filter { $0["event"] as? String == event }
      guard lines.count == 1, let line = lines.first else {
        throw NotJSONLines(line: 0, text: "\(lines.count) '\(event)' lines in: \(stdout)")
      }
      return line
    }
  }

  public struct NotJSONLines: Error, CustomStringConvertible {
    public let line: Int
    public let text: String
    public var description: String { "output line \(line) is not a JSON line with event and schema: \(text)" }
  }

  /// The `migrun` binary: `$MIGRUN_BIN`, else beside the running test bundle (SwiftPM builds both
  /// into the same products folder).
  public static var executable: URL {
    if let override = ProcessInfo.processInfo.environment["MIGRUN_BIN"] {
      return URL(fileURLWithPath: override)
    }
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return testBinary.deletingLastPathComponent().appendingPathComponent("migrun")
  }

  /// Runs `migrun arguments…` (or another of the package's programs beside it) to completion;
  /// `standardOutput` (e.g. `/dev/full`) in place of the pipe read into `stdout`.
  public static func run(
    _ arguments: [String], in directory: URL? = nil, program: String = "migrun", environment: [String: String] = [:],
    standardOutput: FileHandle? = nil
  ) throws -> Result {
    let process = Process()
    process.executableURL =
      program == "migrun"
      ? executable
      : program.hasPrefix("/")
        ? URL(fileURLWithPath: program) : executable.deletingLastPathComponent().appendingPathComponent(program)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
    }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = standardOutput ?? output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    if standardOutput != nil { try output.fileHandleForWriting.close() }
    // Read both pipes at once before waiting: a child that fills one pipe while the other is read
    // would block on it (more than 64 KiB on standard error while standard output was read first).
    let errorRead = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var errData = Data()
    Thread {
      errData = error.fileHandleForReading.readDataToEndOfFile()
      errorRead.signal()
    }.start()
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    errorRead.wait()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: errData, as: UTF8.self))
  }
}
