import ArgumentParser
import Foundation
import MigrunKit

@main
struct Migrun: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "migrun",
    abstract: "Core Data–compatible models, stores and migrations, with policies in Lua.",
    discussion: HelpText.reflow(
      """
      Exit codes: 0 success, 1 failure (the message says why), 10 the store needs migrating
      (status), 11 the store is in use by another process, 12 not enough free space, 64 bad command
      line.
      """),
    version: "0.1.0",
    subcommands: [
      HashCommand.self, InspectCommand.self, CreateCommand.self, ExportCommand.self, ImportCommand.self,
      StatusCommand.self, PlanCommand.self, DiffCommand.self, MigrateCommand.self, ConvertCommand.self,
      TestCommand.self, MergeReportsCommand.self, DiagramCommand.self, LintCommand.self, VerifyCommand.self,
      CheckCommand.self,
    ]
  )
}

/// A subcommand whose failures print one line on standard error and exit 1.
protocol MigrunCommand: ParsableCommand {
  func execute() throws
}

extension MigrunCommand {
  func run() throws {
    do {
      try execute()
    } catch let error as ModelError {
      fail(error.description)
    } catch let error as StoreError {
      fail(error.description, status: Self.exitStatus(error.code))
    } catch let error as MigrationError {
      fail(error.description)
    } catch let error as CLIError {
      fail(error.message)
    }
  }

  /// 11 for a store in use, 12 for a full disk, else 1.
  static func exitStatus(_ code: StoreError.Code) -> Int32 {
    switch code {
    case .inUse: 11
    case .noSpace: 12
    default: 1
    }
  }

  private func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("migrun: error: \(message)\n".utf8))
    Foundation.exit(status)
  }
}

/// A failure found by the command line itself (a bad combination of arguments, an unwritable file).
struct CLIError: Error {
  let message: String
}

/// Prints `value` as JSON with sorted keys and a final newline.
func printJSON(_ value: some Encodable) throws {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
  let data = try encoder.encode(value)
  FileHandle.standardOutput.write(data + Data("\n".utf8))
}
