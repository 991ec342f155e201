import Foundation
import MigrunKit

// What a running job says of its progress, one line at a time: the facts and their words are here;
// where the line goes (redrawn in place on a terminal, or nowhere) is the command line's.

/// Where a running job's progress line goes (the command line's: one line redrawn in place on a
/// terminal), and where it is let go before the job's own output.
package protocol ProgressLine: Sendable {
  func show(_ line: String)
  func finish()
}

extension MigrationProgress {
  /// `  STEP STAGE MAPPING [#####-------] DONE/TOTAL`
  package var line: String {
    let width = 24
    let filled = total > 0 ? width * done / total : width
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    return "  \(step ?? "") \(stage.rawValue) \(mapping) [\(bar)] \(done)/\(total)"
  }
}

/// A whole run over many stores, counted as each store ends (from the worker threads): stores done
/// and failed, objects per second, time left.
package final class FleetTally: @unchecked Sendable {
  private let lock = NSLock()
  private let total: Int
  private let start = Date()
  private var done = 0
  private var failed = 0
  private var objects = 0

  package init(total: Int) { self.total = total }

  /// Counts `outcome` and shows the run's line after it on `progress`, one store at a time.
  package func record(_ outcome: Fleet.Outcome, on progress: (any ProgressLine)?) {
    lock.lock()
    defer { lock.unlock() }
    done += 1
    if outcome.status == .failed { failed += 1 }
    objects += outcome.objects ?? 0
    guard let progress else { return }
    let elapsed = max(Date().timeIntervalSince(start), 0.001)
    let left = Double(total - done) * elapsed / Double(done)
    progress.show(
      "  \(done)/\(plural(total, "store")), \(failed) failed, \(Int(Double(objects) / elapsed)) objects/s, ~\(Int(left.rounded())) s left"
    )
  }
}
