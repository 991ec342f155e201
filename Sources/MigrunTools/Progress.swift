import Foundation
import MigrunKit

// The lines a running job redraws in place on standard error while it works (a terminal's only:
// the command line turns them off for --json and when standard error is no terminal).

/// A one-line progress bar on standard error, redrawn in place.
package final class ProgressBar {
  package let enabled: Bool
  private var drawn = false

  package init(enabled: Bool) { self.enabled = enabled }

  package func show(_ progress: MigrationProgress) {
    guard enabled else { return }
    let width = 24
    let filled = progress.total > 0 ? width * progress.done / progress.total : width
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    let line =
      "  \(progress.step ?? "") \(progress.stage.rawValue) \(progress.mapping) [\(bar)] \(progress.done)/\(progress.total)"
    StandardError.write("\r\u{1B}[K\(line)")
    drawn = true
  }

  package func finish() {
    if drawn { StandardError.write("\r\u{1B}[K") }
  }
}

/// One line on standard error for a whole run: stores done and failed, objects per second, time left.
package final class FleetProgress: @unchecked Sendable {
  private let lock = NSLock()
  private let total: Int
  private let enabled: Bool
  private let start = Date()
  private var done = 0
  private var failed = 0
  private var objects = 0

  package init(total: Int, enabled: Bool) {
    self.total = total
    self.enabled = enabled
  }

  package func record(_ outcome: Fleet.Outcome) {
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

  package func finish() {
    if enabled { StandardError.write("\r\u{1B}[K") }
  }
}
