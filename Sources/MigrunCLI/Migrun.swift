import ArgumentParser
import FileDoors
import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import MigrunTools

@main
struct Migrun: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "migrun",
    abstract: "Core Data–compatible models, stores and migrations, with policies in Lua.",
    discussion: HelpText.reflow(
      """
      Exit codes: 0 success, 1 failure (the message says why; a .migrun.yml that cannot be read is
      one), 10 the store needs migrating (status), 11 the store is in use by another process, 12 not
      enough free space, 64 bad command line.

      migrun --version prints migrun's version and the commit it was built from (after any command
      too); the man pages are made from any built migrun by scripts/manpages MIGRUN FOLDER.
      """),
    subcommands: [
      HashCommand.self, InspectCommand.self, CreateCommand.self, ExportCommand.self, ImportCommand.self,
      CopyCommand.self, SalvageCommand.self,
      StatusCommand.self, PlanCommand.self, DiffCommand.self, MigrateCommand.self, ConvertCommand.self,
      TestCommand.self, MergeReportsCommand.self, DiagramCommand.self, LintCommand.self, VerifyCommand.self,
      CheckCommand.self, ConfigCommand.self, ReviewCommand.self, PortCommand.self,
    ]
  )

  /// Runs the command line; a first word that names no command, but nearly names one, is a usage
  /// error that says which (exit 64), not ArgumentParser's "unexpected arguments".
  static func main() {
    // Before any connection: no global mutex per SQLite allocation (see SQLiteProcess).
    SQLiteProcess.turnOffMemoryStatistics()
    // Scripts' lines (`print`, `m:log`, `ctx:log`) through the one door to the terminal.
    MigrationScripts.sendScriptLines { StandardError.line($0) }
    let arguments = Array(CommandLine.arguments.dropFirst())
    let names = configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
    // Here, not as ArgumentParser's `version:`, which lists --version in every command's help,
    // beside --model-version, as if it were a model's.
    if arguments.prefix(while: { $0 != "--" }).contains("--version") {
      printAndExit(BuildInfo.versionLine)
    }
    // `migrun help NAME` for a NAME that is no command: ArgumentParser prints the general help and
    // exits 0, which reads as success in a script.
    if arguments.count >= 2, arguments[0] == "help", !arguments[1].hasPrefix("-"), !names.contains(arguments[1]) {
      StandardError.write("migrun: error: no command '\(arguments[1])' (migrun --help lists them)\n")
      Foundation.exit(64)
    }
    if let first = arguments.first, !first.hasPrefix("-") {
      if !names.contains(first), let near = names.min(by: { Text.distance(first, $0) < Text.distance(first, $1) }),
        Text.distance(first, near) <= max(2, first.count / 3)
      {
        StandardError.write(
          "migrun: error: unknown command '\(first)'. Did you mean '\(near)'? (migrun --help lists them)\n")
        Foundation.exit(64)
      }
    }
    // Every path the command line names is an input, unless it is the output it names: the door out
    // refuses to write over one (ReadFiles).
    ReadFiles.noteArguments(arguments, besideEachFile: StoreFiles.sideFileSuffixes)
    do {
      var command = try parseAsRoot()
      try command.run()
    } catch {
      // ArgumentParser's own words, in migrun's one error format ("migrun: error: …").
      let code = exitCode(for: error)
      var text = fullMessage(for: error)
      if text.hasPrefix("Error: ") { text = "migrun: error: " + text.dropFirst("Error: ".count) }
      if code == .success { printAndExit(text) }
      StandardError.write(text.hasSuffix("\n") ? text : text + "\n")
      Foundation.exit(code.rawValue)
    }
  }

  /// Prints `text` (help, the version) and exits 0 — or, when standard output cannot take it, says
  /// so and exits with the failure's status (12 for a full disk).
  private static func printAndExit(_ text: String) -> Never {
    do {
      if !text.isEmpty { try StandardOutput.text(text) }
    } catch {
      StandardError.write("migrun: error: \(error)\n")
      Foundation.exit(ExitStatus.of(error))
    }
    Foundation.exit(0)
  }
}

/// A subcommand whose failures print one line on standard error and exit 1.
protocol MigrunCommand: ParsableCommand {
  func execute() throws
}

/// A subcommand that falls back on the project file (`.migrun.yml`) for the options not given: the
/// file is read once, before any work — a broken one is a failure (exit 1), never an option silently
/// not in force — and handed down to the job.
protocol ProjectCommand: MigrunCommand {
  func execute(_ project: ProjectConfig?) throws
}

extension ProjectCommand {
  func execute() throws { try execute(ProjectConfig.inWorkingFolder()) }
}

extension MigrunCommand {
  func run() throws {
    do {
      // What a job reads of a store before working on it is read once: its session (StoreSession).
      try execute()
    } catch let error as ValidationError {
      // Found while running (a --model neither given nor in .migrun.yml): this command's help is
      // named, not the top-level usage ArgumentParser would print for an error outside parsing.
      fail("\(error.message); migrun \(Self._commandName) --help lists the options", status: 64)
    } catch let error where error is ExitCode || error is CleanExit {
      throw error
    } catch {
      let failure = ExitStatus.failure(error)
      fail(failure.message, status: failure.status)
    }
  }

  /// Writes what a job printed and ends with its status.
  func show(_ output: JobOutput) throws {
    try output.write()
    if output.status != 0 { throw ExitCode(output.status) }
  }

  private func fail(_ message: String, status: Int32) -> Never {
    StandardError.write("migrun: error: \(CommandLineWords.flags(in: message))\n")
    Foundation.exit(status)
  }
}

/// The command line's own failures are the tools layer's (`ToolError`): one type, one message form.
typealias CLIError = ToolError
