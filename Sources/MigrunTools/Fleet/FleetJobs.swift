import Foundation
import MigrunKit

extension MigrationJobs {
  /// `status` of every store found, `jobs` at a time; arguments that are not stores fail on their own.
  package func status(of found: Fleet.Found, jobs: Int) -> Fleet.Report {
    Fleet.Report(
      Fleet.refusals(found)
        + Fleet.run(found.stores, jobs: jobs) { url in
          let start = Date()
          do {
            let plan = try plan(for: url)
            return Fleet.Outcome(
              path: found.name(of: url), from: plan.sourceVersion, to: plan.destinationVersion,
              status: plan.needsMigration ? .needsMigrating : .current, seconds: Date().timeIntervalSince(start))
          } catch {
            return Fleet.Outcome(
              path: found.name(of: url), status: .failed, seconds: Date().timeIntervalSince(start),
              error: Fleet.message(error))
          }
        })
  }

  /// `migrate` of every store found, `jobs` at a time, each as it runs alone; `started` and `done`
  /// are told of each store as it starts and ends (from the worker threads).
  package func migrate(
    _ found: Fleet.Found, jobs: Int, options: StoreMigrator.Options, started: @escaping @Sendable (URL) -> Void,
    done: @escaping @Sendable (Fleet.Outcome) -> Void
  ) -> Fleet.Report {
    Fleet.Report(
      Fleet.refusals(found)
        + Fleet.run(
          found.stores, jobs: jobs,
          work: { url in
            started(url)
            return outcome(of: url, named: found.name(of: url), options: options)
          }, done: done))
  }

  /// One store of a fleet, as `migrate` does it alone.
  func outcome(of url: URL, named name: String, options: StoreMigrator.Options) -> Fleet.Outcome {
    let start = Date()
    var outcome = Fleet.Outcome(path: name, status: .failed)
    do {
      let migrated = try migrate(url, options: options)
      (outcome.from, outcome.to) = (migrated.plan.sourceVersion, migrated.plan.destinationVersion)
      outcome.objects = migrated.report.map { $0.steps.last?.counts.values.reduce(0, +) ?? 0 }
      outcome.status = migrated.report == nil ? .current : .migrated
    } catch {
      outcome.error = Fleet.message(error)
    }
    outcome.seconds = (Date().timeIntervalSince(start) * 1000).rounded() / 1000
    return outcome
  }
}

extension Fleet {
  /// Arguments that are not stores: failures of their own.
  static func refusals(_ found: Found) -> [Outcome] {
    found.refused.map { Outcome(path: $0.path, status: .failed, error: $0.reason) }
  }

  /// A store's `result` line (docs/json.md): its outcome under `result`, as one store's run writes
  /// it; keys without a value are left out.
  package struct ResultLine: Encodable {
    let result: String
    let store: String
    let seconds: Double
    let from: String?
    let to: String?
    let objects: Int?
    let error: String?

    package init(_ outcome: Outcome) {
      result = outcome.status.rawValue
      store = outcome.path
      seconds = outcome.seconds
      from = outcome.from
      to = outcome.to
      objects = outcome.objects
      error = outcome.error
    }
  }

  /// An error as one line of a report.
  package static func message(_ error: any Error) -> String {
    let text =
      switch error {
      case let error as ToolError: error.message
      case let error as CustomStringConvertible: error.description
      default: "\(error)"
      }
    return CommandLineWords.flags(in: text)
  }
}

extension Fleet.Report {
  /// What a fleet's `status` prints: a line per store and a summary (exit 1 on a failure, 10 when a
  /// store needs migrating).
  package func statusOutput(json: Bool) throws -> JobOutput {
    var out = JobOutput()
    if json {
      for outcome in stores { try out.emit("status", encoding: StatusReport(outcome)) }
      try out.emit(
        "summary",
        encoding: StatusSummary(stores: stores.count, current: current, needsMigrating: needsMigrating, failed: failed))
    } else {
      for outcome in stores {
        switch outcome.status {
        case .current: out.say("\(outcome.path): at \(outcome.to ?? "?"); no migration needed")
        case .needsMigrating:
          out.say("\(outcome.path): at \(outcome.from ?? "?"); needs migrating to \(outcome.to ?? "?")")
        default: out.say("\(outcome.path): failed: \(outcome.error ?? "")")
        }
      }
      out.say(
        "\(plural(stores.count, "store")): \(current) current, \(needsMigrating) need migrating, \(failed) failed")
    }
    out.status = failed > 0 ? 1 : needsMigrating > 0 ? 10 : 0
    return out
  }

  /// What a fleet's `migrate` prints after its stores: the failures and a summary (exit 1 on a failure).
  package func migrateOutput(json: Bool, seconds: Double, dryRun: Bool) throws -> JobOutput {
    var out = JobOutput()
    if json {
      try out.emit(
        "summary",
        encoding: MigrateSummary(
          stores: stores.count, migrated: migrated, current: current, failed: failed, seconds: seconds))
    } else {
      for outcome in stores where outcome.status == .failed {
        out.say("\(outcome.path): failed: \(outcome.error ?? "")")
      }
      let objects = stores.compactMap(\.objects).reduce(0, +)
      out.say(
        "\(plural(stores.count, "store")) in \(String(format: "%.1f", seconds)) s: \(migrated) migrated (\(plural(objects, "object"))), \(current) current, \(failed) failed"
          + (dryRun ? " (dry run: nothing changed)" : ""))
    }
    out.status = failed > 0 ? 1 : 0
    return out
  }
}

/// A fleet's closing `status` line.
struct StatusSummary: Encodable {
  let command = "status"
  let stores: Int
  let current: Int
  let needsMigrating: Int
  let failed: Int
}

/// A fleet's closing `migrate` line.
struct MigrateSummary: Encodable {
  let command = "migrate"
  let stores: Int
  let migrated: Int
  let current: Int
  let failed: Int
  let seconds: Double
}

/// A store's `start` line.
package struct StartLine: Encodable {
  let store: String

  package init(store: String) { self.store = store }
}

/// The `result` line of a store whose migration failed.
package struct FailedLine: Encodable {
  let store: String
  let result = "failed"
  let error: String

  package init(store: String, error: String) {
    self.store = store
    self.error = error
  }
}
