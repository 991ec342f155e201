import ArgumentParser
import Foundation
import MigrunKit

@main
struct Migrun: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "migrun",
    abstract: "Core Data–compatible models, stores and migrations, with policies in Lua.",
    discussion: """
      Exit codes: 0 success, 1 failure (the message says why), 10 the store needs migrating
      (status), 64 bad command line.
      """,
    version: "0.1.0",
    subcommands: [
      HashCommand.self, InspectCommand.self, CreateCommand.self, ExportCommand.self, ImportCommand.self,
      StatusCommand.self, PlanCommand.self, DiffCommand.self, MigrateCommand.self, TestCommand.self,
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
      fail(error.description)
    } catch let error as MigrationError {
      fail(error.description)
    } catch let error as CLIError {
      fail(error.message)
    }
  }

  private func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("migrun: error: \(message)\n".utf8))
    Foundation.exit(1)
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
