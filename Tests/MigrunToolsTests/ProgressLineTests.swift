import Foundation
import MigrunTools
import Testing

@testable import MigrunKit

/// The progress lines a running job shows (the command line draws them on a terminal): a step's
/// bar, and a fleet's tally as each store ends.
struct ProgressLineTests {
  final class Lines: ProgressLine, @unchecked Sendable {
    var shown: [String] = []
    func show(_ line: String) { shown.append(line) }
    func finish() {}
  }

  @Test func aStepsBarFillsWithWhatIsDone() {
    let half = MigrationProgress(step: "V1 → V2", stage: .instances, mapping: "MoodToMood", done: 2, total: 4)
    #expect(half.line == "  V1 → V2 instances MoodToMood [############------------] 2/4")
    let none = MigrationProgress(step: nil, stage: .validation, mapping: "model rules", done: 0, total: 0)
    #expect(none.line.hasSuffix("[########################] 0/0"))
  }

  @Test func aFleetsTallyCountsStoresFailuresAndObjects() throws {
    let tally = FleetTally(total: 3)
    let lines = Lines()
    tally.record(Fleet.Outcome(path: "a", status: .migrated, objects: 10), on: lines)
    tally.record(Fleet.Outcome(path: "b", status: .failed, error: "no"), on: lines)
    tally.record(Fleet.Outcome(path: "c", status: .current, objects: 5), on: nil)
    #expect(lines.shown.count == 2)
    #expect(lines.shown[0].hasPrefix("  1/3 stores, 0 failed, "), "\(lines.shown)")
    #expect(lines.shown[1].hasPrefix("  2/3 stores, 1 failed, ") && lines.shown[1].hasSuffix(" s left"))
  }
}
