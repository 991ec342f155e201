import Foundation

/// Runs the built `migrun` executable, as a user would.
public enum MigrunProcess {
  public struct Result: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Standard error's non-empty lines.
    public var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }
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

  /// Runs `migrun arguments…` (or another of the package's programs beside it) to completion.
  public static func run(_ arguments: [String], in directory: URL? = nil, program: String = "migrun") throws
    -> Result
  {
    let process = Process()
    process.executableURL =
      program == "migrun" ? executable : executable.deletingLastPathComponent().appendingPathComponent(program)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes before waiting, so a large output cannot block the child.
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    let errData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: errData, as: UTF8.self))
  }
}
