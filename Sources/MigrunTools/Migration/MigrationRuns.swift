import Foundation
import MigrunKit

/// What a run over many stores is given besides its stores — `--jobs`, `--shard`, `--report`,
/// `--junit`, `--allow-empty` — and what it makes of them.
package struct FleetSettings: Sendable {
  package var jobs: Int?
  /// The project file's `jobs:`, taken when `--jobs` is not given.
  package var projectJobs: Int?
  package var shard: String?
  package var report: String?
  package var junit: String?
  package var allowEmpty = false

  package init(jobs: Int?, projectJobs: Int?, shard: String?, report: String?, junit: String?, allowEmpty: Bool) {
    self.jobs = jobs
    self.projectJobs = projectJobs
    self.shard = shard
    self.report = report
    self.junit = junit
    self.allowEmpty = allowEmpty
  }

  /// Whether the arguments are a run over many stores (several, a folder, or a fleet option).
  package func isFleet(_ arguments: [String]) -> Bool {
    if arguments.count > 1 || jobs != nil || shard != nil || report != nil || junit != nil { return true }
    var isFolder: ObjCBool = false
    return arguments.first.map { FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) } == true
      && isFolder.boolValue
  }

  /// The stores of this run (searched, sharded) and the arguments that are not stores.
  package func stores(_ arguments: [String]) throws -> Fleet.Found {
    var found = Fleet.stores(in: arguments)
    // A report written over a store of the run (of any shard) would replace it.
    try checkOutputs(inputs: arguments + found.stores.map(\.path))
    // A CI job whose folder or glob found nothing must not go green by accident.
    if found.stores.isEmpty, found.refused.isEmpty, !allowEmpty {
      throw ToolError(
        message:
          "no store in \(arguments.joined(separator: ", ")): folders are searched for SQLite files with Core Data's "
          + "Z_METADATA table (give --allow-empty when a run over none is fine)")
    }
    if let shard {
      guard let (index, count) = Fleet.parseShard(shard) else {
        throw ToolError(message: "--shard: give K/N with 0 ≤ K < N (e.g. 0/4), not '\(shard)'")
      }
      found.stores = Fleet.shard(found.stores, index: index, of: count)
    }
    return found
  }

  /// The report and JUnit files as outputs (`OutputFile`): a report of a run before is replaced,
  /// one of `inputs` never.
  package func checkOutputs(inputs: [String] = []) throws {
    for (option, path) in [("--report", report), ("--junit", junit)] {
      if let path { try OutputFile.check(path, option: option, force: true, inputs: inputs) }
    }
  }

  /// Stores run at a time: `--jobs`, else the project file's `jobs`, else the machine's cores.
  package var jobCount: Int {
    max(1, jobs ?? projectJobs ?? ProcessInfo.processInfo.activeProcessorCount)
  }

  func validateJobs() throws {
    if let jobs, jobs < 1 { throw ToolError(message: "--jobs: give 1 or more") }
  }
}

/// `status` and `migrate` over many stores: the model is read once, the stores run `--jobs` at a
/// time, each keeping every guarantee it has alone (``MigrationJobs``); each writes its output, its
/// report and JUnit file where asked, and returns the status the command ends with.
extension MigrationJobs {
  package func status(of arguments: [String], fleet: FleetSettings, json: Bool) throws -> Int32 {
    try fleet.validateJobs()
    let report = try status(of: fleet.stores(arguments), jobs: fleet.jobCount)
    let output = try report.statusOutput(json: json)
    try output.write()
    try report.write(suite: "migrun status", json: fleet.report, junit: fleet.junit)
    return output.status
  }

  /// `progress`: where the run's line goes as each store ends (nil: nowhere).
  package func migrate(
    _ arguments: [String], fleet: FleetSettings, options: StoreMigrator.Options, json: Bool,
    progress: (any ProgressLine)?
  ) throws -> Int32 {
    try fleet.validateJobs()
    let found = try fleet.stores(arguments)
    let tally = FleetTally(total: found.stores.count)
    let started = Date()
    let report = migrate(
      found, jobs: fleet.jobCount, options: options,
      started: { url in if json { try? JSONLines.emit("start", encoding: StartLine(store: found.name(of: url))) } },
      done: { outcome in
        tally.record(outcome, on: progress)
        if json { try? JSONLines.emit("result", encoding: Fleet.ResultLine(outcome)) }
      })
    progress?.finish()
    let output = try report.migrateOutput(
      json: json, seconds: Date().timeIntervalSince(started), dryRun: options.dryRun)
    try output.write()
    try report.write(suite: "migrun migrate", json: fleet.report, junit: fleet.junit)
    return output.status
  }
}

extension MigrationJobs {
  /// `status` of one store, `store` as the command line named it, with the jobs `jobs` makes: its
  /// line, or its JSON line — a store that cannot be read (or a model that cannot) still gets one, as
  /// in a fleet, and the error is thrown on; the status the command ends with (1: newer than the
  /// model, nothing to migrate to and no migration should open it; 10: it needs migrating).
  package static func status(of store: String, json: Bool, jobs: () throws -> MigrationJobs) throws -> Int32 {
    let report: StatusReport
    do {
      report = try jobs().status(of: URL(fileURLWithPath: store), as: store)
    } catch {
      if json { try? JSONLines.emit("status", encoding: StatusReport.failed(store, error)) }
      throw error
    }
    if json { try JSONLines.emit("status", encoding: report) } else { try StandardOutput.line(report.line) }
    return report.isNewer ? 1 : report.needsMigration ? 10 : 0
  }

  /// `migrate` of one store, `store` as the command line named it, with the jobs `jobs` makes: under
  /// --json a `start` line first, and a gate reading JSON sees a failure as a `result` line too (the
  /// error is thrown on, its message and exit status unchanged).
  package static func migrate(
    _ store: String, options: StoreMigrator.Options, json: Bool, progress: (any ProgressLine)?,
    jobs: () throws -> MigrationJobs
  ) throws {
    do {
      if json { try JSONLines.emit("start", encoding: StartLine(store: store)) }
      try jobs().migrate(URL(fileURLWithPath: store), named: store, options: options, json: json, progress: progress)
    } catch {
      if json { try? JSONLines.emit("result", encoding: FailedLine(store: store, error: Fleet.message(error))) }
      throw error
    }
  }

  /// `migrate` of one store, `store` as the command line named it, shown as it goes: JSON lines
  /// (`progress`, then `result`), or the lines said during the run (a swap completed, the path,
  /// unused step files) with each progress line shown on `progress`, then the outcome's lines.
  package func migrate(
    _ url: URL, named store: String, options: StoreMigrator.Options, json: Bool, progress line: (any ProgressLine)?
  ) throws {
    let outcome = try migrate(
      url, options: options,
      swapCompleted: {
        guard !json else { return }
        // Lines said during the run cannot throw here; a standard output that fails fails the outcome's lines too.
        try? StandardOutput.line(
          "\(store): completed the swap of a migration that was interrupted while putting the new store in place")
      },
      progress: { progress in
        if json {
          try? JSONLines.emit(
            "progress",
            [
              "store": store, "step": progress.step ?? "", "stage": progress.stage.rawValue,
              "mapping": progress.mapping, "done": progress.done, "total": progress.total,
            ])
        } else {
          line?.show(progress.line)
        }
      },
      // Said once the store is the migration's: a store in use is refused (or waited for) first.
      willStart: { plan in
        guard !json else { return }
        try? StandardOutput.line(
          "Migrating \(url.lastPathComponent): \(([plan.sourceVersion] + plan.steps.map(\.to)).joined(separator: " → "))"
        )
        for file in unusedStepFiles(of: plan) {
          try? StandardOutput.line("Unused    \(file.file.path): \(file.reason)")
        }
      })
    line?.finish()
    let dryRun = options.dryRun
    if json { return try JSONLines.emit("result", encoding: outcome.result(store: store, dryRun: dryRun)) }
    for line in outcome.lines(store: store, dryRun: dryRun) { try StandardOutput.line(line) }
  }
}
