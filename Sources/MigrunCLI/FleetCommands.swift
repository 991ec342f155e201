import ArgumentParser
import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunTools

/// The options of a run over many stores (`status` and `migrate` with several stores or a folder).
struct FleetOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp("Stores run at a time (default: the machine's cores).", valueName: "n"))
  var jobs: Int?
  @Option(
    help: ArgumentHelp(
      "Take only part K of N disjoint parts of the store list (0 ≤ K < N; stable for a store whatever else is listed), so N machines split a fleet.",
      valueName: "K/N"))
  var shard: String?
  @Option(help: ArgumentHelp("Write the run's report as JSON to this file.", valueName: "file")) var report: String?
  @Option(help: ArgumentHelp("Write one JUnit test case per store to this file.", valueName: "file")) var junit: String?
  @Flag(help: "Succeed when the folders given hold no store (by default a run over none is an error, exit 1).")
  var allowEmpty = false

  /// Usage errors, before any store is touched (exit 64, as the README reserves for them): a job
  /// count below 1, a shard outside 0 ≤ K < N, a report or JUnit file that cannot be written — a
  /// folder not there or not writable, a link, a folder (it would be found only after every store
  /// was migrated, and the report lost). A report of a run before is replaced.
  func validate() throws {
    if let jobs, jobs < 1 { throw ValidationError("--jobs: give 1 or more") }
    if let shard, Fleet.parseShard(shard) == nil {
      throw ValidationError("--shard: give K/N with 0 ≤ K < N (e.g. 0/4), not '\(shard)'")
    }
    do {
      try settings().checkOutputs()
    } catch let error as CLIError {
      throw ValidationError(error.message)
    }
  }

  /// These options as the tools layer takes them (`jobs:` of the project file when given).
  func settings(_ project: ProjectConfig? = nil) -> FleetSettings {
    FleetSettings(
      jobs: jobs, projectJobs: project?.jobs, shard: shard, report: report, junit: junit, allowEmpty: allowEmpty)
  }
}

/// `migrun merge-reports`: the reports of a fleet's shards (or of re-runs) as one.
struct MergeReportsCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "merge-reports",
    abstract: "Merge the --report files of several runs (a fleet's shards) into one report.",
    discussion: HelpText.reflow(
      """
      Stores are listed once, sorted by path; a store in several reports keeps the outcome of the
      last report given (a re-run after a failure comes after the first run). Exit 1 when any store
      of the merged report failed.
      """))

  @Argument(help: "The reports (JSON files written by --report).") var reports: [String]
  @Option(help: ArgumentHelp("Write the merged report to this file (default: standard output).", valueName: "file"))
  var out: String?
  @Option(help: ArgumentHelp("Also write the merged report as JUnit XML to this file.", valueName: "file"))
  var junit: String?

  func execute() throws {
    let output = try Fleet.merge(reports: reports, out: out, junit: junit)
    if out == nil { try StandardOutput.write(try output.report.json() + Data("\n".utf8)) }
    try show(output.output)
  }

}
