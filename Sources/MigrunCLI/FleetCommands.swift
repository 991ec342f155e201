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
      try checkOutputs()
    } catch let error as CLIError {
      throw ValidationError(error.message)
    }
  }

  /// Whether the arguments are a run over many stores (several, a folder, or a fleet option).
  func isFleet(_ arguments: [String]) -> Bool {
    if arguments.count > 1 || jobs != nil || shard != nil || report != nil || junit != nil { return true }
    var isFolder: ObjCBool = false
    return arguments.first.map { FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) } == true
      && isFolder.boolValue
  }

  /// The stores of this run (searched, sharded) and the arguments that are not stores.
  func stores(_ arguments: [String]) throws -> Fleet.Found {
    var found = Fleet.stores(in: arguments)
    // A report written over a store of the run (of any shard) would replace it.
    try checkOutputs(inputs: arguments + found.stores.map(\.path))
    // A CI job whose folder or glob found nothing must not go green by accident.
    if found.stores.isEmpty, found.refused.isEmpty, !allowEmpty {
      throw CLIError(
        message:
          "no store in \(arguments.joined(separator: ", ")): folders are searched for SQLite files with Core Data's "
          + "Z_METADATA table (give --allow-empty when a run over none is fine)")
    }
    if let shard {
      guard let (index, count) = Fleet.parseShard(shard) else {
        throw CLIError(message: "--shard: give K/N with 0 ≤ K < N (e.g. 0/4), not '\(shard)'")
      }
      found.stores = Fleet.shard(found.stores, index: index, of: count)
    }
    return found
  }

  /// The report and JUnit files as outputs (`OutputFile`): a report of a run before is replaced,
  /// one of `inputs` never.
  func checkOutputs(inputs: [String] = []) throws {
    for (option, path) in [("--report", report), ("--junit", junit)] {
      if let path { try OutputFile.check(path, option: option, force: true, inputs: inputs) }
    }
  }

  /// `--jobs`, else the project file's `jobs:`, else one per processor.
  func jobCount(_ project: ProjectConfig?) -> Int {
    max(1, jobs ?? project?.jobs ?? ProcessInfo.processInfo.activeProcessorCount)
  }

  func validateJobs() throws {
    if let jobs, jobs < 1 { throw CLIError(message: "--jobs: give 1 or more") }
  }

  /// Writes the report and the JUnit file where asked.
  func write(_ report: Fleet.Report, suite: String) throws {
    try report.write(suite: suite, json: self.report, junit: junit)
  }

}

/// `status` and `migrate` over many stores: the model is read once, the stores run `--jobs` at a
/// time, each keeping every guarantee it has alone (``MigrationJobs``).
enum FleetRun {
  static func status(
    _ arguments: [String], chain: ChainOptions, fleet: FleetOptions, json: Bool, readWait: Double,
    project: ProjectConfig?
  ) throws {
    try fleet.validateJobs()
    let report = try chain.jobs(project, readWait: readWait).status(
      of: fleet.stores(arguments), jobs: fleet.jobCount(project))
    let output = try report.statusOutput(json: json)
    try write(output)
    try fleet.write(report, suite: "migrun status")
    if output.status != 0 { throw ExitCode(output.status) }
  }

  static func migrate(_ arguments: [String], command: MigrateCommand, project: ProjectConfig?) throws {
    let fleet = command.fleet
    try fleet.validateJobs()
    let found = try fleet.stores(arguments)
    let json = command.json
    let progress = FleetProgress(total: found.stores.count, enabled: !json && isatty(STDERR_FILENO) != 0)
    let started = Date()
    let report = try command.jobs(project).migrate(
      found, jobs: fleet.jobCount(project), options: command.options,
      started: { url in if json { try? JSONLines.emit("start", encoding: StartLine(store: found.name(of: url))) } },
      done: { outcome in
        progress.record(outcome)
        if json { try? JSONLines.emit("result", encoding: Fleet.ResultLine(outcome)) }
      })
    progress.finish()
    let output = try report.migrateOutput(
      json: json, seconds: Date().timeIntervalSince(started), dryRun: command.dryRun)
    try write(output)
    try fleet.write(report, suite: "migrun migrate")
    if output.status != 0 { throw ExitCode(output.status) }
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

/// One line on standard error for a whole run: stores done and failed, objects per second, time left.
final class FleetProgress: @unchecked Sendable {
  private let lock = NSLock()
  private let total: Int
  private let enabled: Bool
  private let start = Date()
  private var done = 0
  private var failed = 0
  private var objects = 0

  init(total: Int, enabled: Bool) {
    self.total = total
    self.enabled = enabled
  }

  func record(_ outcome: Fleet.Outcome) {
    lock.lock()
    defer { lock.unlock() }
    done += 1
    if outcome.status == .failed { failed += 1 }
    objects += outcome.objects ?? 0
    guard enabled else { return }
    let elapsed = max(Date().timeIntervalSince(start), 0.001)
    let left = Double(total - done) * elapsed / Double(done)
    let line =
      "  \(done)/\(plural(total, "store")), \(failed) failed, \(Int(Double(objects) / elapsed)) objects/s, ~\(Int(left.rounded())) s left"
    StandardError.write("\r\u{1B}[K\(line)")
  }

  func finish() {
    if enabled { StandardError.write("\r\u{1B}[K") }
  }
}
