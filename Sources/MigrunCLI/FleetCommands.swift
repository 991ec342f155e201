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
  /// count below 1, a shard outside 0 ≤ K < N, a report or JUnit file whose folder is not there to
  /// write in (it would be found only after every store was migrated, and the report lost).
  func validate() throws {
    try ProjectConfig.check()
    if let jobs, jobs < 1 { throw ValidationError("--jobs: give 1 or more") }
    if let shard, Fleet.parseShard(shard) == nil {
      throw ValidationError("--shard: give K/N with 0 ≤ K < N (e.g. 0/4), not '\(shard)'")
    }
    for (option, path) in [("--report", report), ("--junit", junit)] {
      guard let path else { continue }
      let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue,
        FileManager.default.isWritableFile(atPath: folder.path)
      else {
        throw ValidationError("\(option) \(path): there is no folder \(folder.path) to write it in")
      }
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

  var jobCount: Int {
    max(1, jobs ?? ((try? ProjectConfig.current()) ?? nil)?.jobs ?? ProcessInfo.processInfo.activeProcessorCount)
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
/// time, each keeping every guarantee it has alone.
enum FleetRun {
  static func status(_ arguments: [String], chain: ChainOptions, fleet: FleetOptions, json: Bool) throws {
    try fleet.validateJobs()
    let found = try fleet.stores(arguments)
    let jobs = try chain.jobs()
    let outcomes =
      refusals(found)
      + Fleet.run(found.stores, jobs: fleet.jobCount) { url in
        let start = Date()
        do {
          let plan = try jobs.plan(for: url)
          return Fleet.Outcome(
            path: url.path, from: plan.sourceVersion, to: plan.destinationVersion,
            status: plan.needsMigration ? .needsMigrating : .current, seconds: Date().timeIntervalSince(start))
        } catch {
          return Fleet.Outcome(
            path: url.path, status: .failed, seconds: Date().timeIntervalSince(start), error: message(error))
        }
      }
    let report = Fleet.Report(outcomes)
    if json {
      for outcome in report.stores {
        try JSONLines.emit(
          "status",
          [
            "store": outcome.path, "version": outcome.from ?? NSNull(), "destination": outcome.to ?? NSNull(),
            "needsMigration": outcome.status != .current, "reason": outcome.error ?? NSNull(),
          ])
      }
      try JSONLines.emit(
        "summary",
        [
          "command": "status", "stores": report.stores.count, "current": report.current,
          "needsMigrating": report.needsMigrating, "failed": report.failed,
        ])
    }
    for outcome in report.stores where !json {
      switch outcome.status {
      case .current: print("\(outcome.path): at \(outcome.to ?? "?"); no migration needed")
      case .needsMigrating: print("\(outcome.path): at \(outcome.from ?? "?"); needs migrating to \(outcome.to ?? "?")")
      default: print("\(outcome.path): failed: \(outcome.error ?? "")")
      }
    }
    if !json {
      print(
        "\(plural(report.stores.count, "store")): \(report.current) current, \(report.needsMigrating) need migrating, \(report.failed) failed"
      )
    }
    try fleet.write(report, suite: "migrun status")
    if report.failed > 0 { throw ExitCode(1) }
    if report.needsMigrating > 0 { throw ExitCode(10) }
  }

  static func migrate(_ arguments: [String], command: MigrateCommand) throws {
    let fleet = command.fleet
    try fleet.validateJobs()
    let found = try fleet.stores(arguments)
    let jobs = try command.jobs()
    let json = command.json
    let progress = FleetProgress(
      total: found.stores.count, enabled: !json && isatty(STDERR_FILENO) != 0)
    let started = Date()
    let outcomes =
      refusals(found)
      + Fleet.run(
        found.stores, jobs: fleet.jobCount,
        work: { url in
          if json { try? JSONLines.emit("start", ["store": url.path]) }
          return migrate(url, jobs: jobs, options: command.options)
        },
        done: { outcome in
          progress.record(outcome)
          if json { try? JSONLines.emit("result", result(outcome)) }
        })
    progress.finish()
    let report = Fleet.Report(outcomes)
    let seconds = Date().timeIntervalSince(started)
    if json {
      try JSONLines.emit(
        "summary",
        [
          "command": "migrate", "stores": report.stores.count, "migrated": report.migrated, "current": report.current,
          "failed": report.failed, "seconds": seconds,
        ])
    } else {
      for outcome in report.stores where outcome.status == .failed {
        print("\(outcome.path): failed: \(outcome.error ?? "")")
      }
      let objects = report.stores.compactMap(\.objects).reduce(0, +)
      print(
        "\(plural(report.stores.count, "store")) in \(String(format: "%.1f", seconds)) s: \(report.migrated) migrated (\(plural(objects, "object"))), \(report.current) current, \(report.failed) failed"
          + (command.dryRun ? " (dry run: nothing changed)" : ""))
    }
    try fleet.write(report, suite: "migrun migrate")
    if report.failed > 0 { throw ExitCode(1) }
  }

  /// One store, as `migrate` does it alone (``MigrationJobs/migrate(_:options:swapCompleted:progress:willStart:)``).
  static func migrate(_ url: URL, jobs: MigrationJobs, options: StoreMigrator.Options) -> Fleet.Outcome {
    let start = Date()
    var outcome = Fleet.Outcome(path: url.path, status: .failed)
    do {
      let migrated = try jobs.migrate(url, options: options)
      (outcome.from, outcome.to) = (migrated.plan.sourceVersion, migrated.plan.destinationVersion)
      outcome.objects = migrated.report.map { $0.steps.last?.counts.values.reduce(0, +) ?? 0 }
      outcome.status = migrated.report == nil ? .current : .migrated
    } catch {
      outcome.error = message(error)
    }
    outcome.seconds = (Date().timeIntervalSince(start) * 1000).rounded() / 1000
    return outcome
  }

  /// Arguments that are not stores: failures of their own.
  static func refusals(_ found: Fleet.Found) -> [Fleet.Outcome] {
    found.refused.map { Fleet.Outcome(path: $0.path, status: .failed, error: $0.reason) }
  }

  /// A store's `result` line (docs/json.md): its outcome under `result`, as one store's run writes it.
  static func result(_ outcome: Fleet.Outcome) -> [String: Any] {
    var line: [String: Any] = [
      "result": outcome.status.rawValue, "store": outcome.path, "seconds": outcome.seconds,
    ]
    if let from = outcome.from { line["from"] = from }
    if let to = outcome.to { line["to"] = to }
    if let objects = outcome.objects { line["objects"] = objects }
    if let error = outcome.error { line["error"] = error }
    return line
  }

  static func message(_ error: any Error) -> String {
    switch error {
    case let error as CLIError: error.message
    case let error as CustomStringConvertible: error.description
    default: "\(error)"
    }
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
    guard !reports.isEmpty else { throw CLIError(message: "give the reports to merge") }
    var read: [Fleet.Report] = []
    for path in reports {
      do {
        read.append(try JSONDecoder().decode(Fleet.Report.self, from: Data(contentsOf: URL(fileURLWithPath: path))))
      } catch {
        throw CLIError(message: "\(path): not a migrun report (\(error.localizedDescription))")
      }
    }
    let merged = Fleet.Report.merged(read)
    try merged.write(suite: "migrun", json: out, junit: junit)
    if out == nil {
      FileHandle.standardOutput.write(try merged.json() + Data("\n".utf8))
    } else {
      // Written to files: say what the merged report holds, and where it went.
      print(
        "merged \(plural(read.count, "report")): \(plural(merged.stores.count, "store")), \(merged.migrated) migrated, \(merged.current) current, \(merged.failed) failed → "
          + ([out, junit].compactMap { $0 }.joined(separator: ", ")))
    }
    if merged.failed > 0 { throw ExitCode(1) }
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
    FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
  }

  func finish() {
    if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
  }
}
