import Foundation
import MigrunKit

extension MigrationOutcome {
  /// The lines `migrate` prints for one store: each step's counts, drops, stage changes, carried
  /// damage, CloudKit and history rewrites and each mapping's reads and writes, then where the store is.
  package func lines(store: String, dryRun: Bool) -> [String] {
    guard let report else { return ["\(store): already at \(plan.destinationVersion)"] }
    var out: [String] = []
    for step in report.steps {
      let total = step.counts.values.reduce(0, +)
      out.append(
        "  \(step.name): \(plural(total, "object")), \(step.method.rawValue) (\(step.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))"
          + (step.merged > 0 ? ", \(step.merged) merged by merge rules" : "")
      )
      // What the mapping left behind, by name and count: never dropped without a word.
      for drop in step.drops { out.append("    dropped: \(drop)") }
      if let stage = step.stage {
        for (hook, changes) in [("willMigrate", stage.willMigrate), ("didMigrate", stage.didMigrate)] {
          guard let changes else { continue }
          out.append(
            "    stage \(hook): \(changes.inserted) inserted, \(changes.updated) changed, \(changes.deleted) deleted")
        }
      }
      // What was already wrong in the original: carried as Core Data carries it, and said.
      for damage in step.damage { out.append("    damage in the original: \(damage)") }
      // CloudKit's record metadata follows the renumbering; the store is marked for a zone refetch.
      if !step.cloudKit.isEmpty {
        out.append(
          "    CloudKit: \(step.cloudKit.renumbered) record metadata row(s) renumbered"
            + (step.cloudKit.removed > 0 ? ", \(step.cloudKit.removed) of removed entities deleted" : "")
            + "; the store asks for a zone refetch at the next sync, as Core Data's migration does")
      }
      // Persistent history follows the step's properties (ZCOLUMNS, tombstones), as Core Data's does.
      if !step.history.isEmpty { out.append("    history: \(Self.describe(step.history))") }
      // What each entity mapping read and wrote; equal unless the note says why not.
      for count in step.mappings {
        let links = count.edges.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value[0]) → \($0.value[1])" }
        out.append(
          "    \(padded(count.mapping, 32)) \(count.read) → \(count.written)"
            + (links.isEmpty ? "" : "; links: \(links.joined(separator: ", "))")
            + (count.note.map { " (\($0))" } ?? ""))
      }
    }
    if dryRun {
      out.append("Dry run: every step ran on scratch files, now deleted; \(store) is unchanged.")
    } else {
      out.append(
        "Done: \(store) is at \(plan.destinationVersion)."
          + (report.backup.map { " The original is kept as \($0.lastPathComponent)." } ?? "")
          + (report.externalFilesRemoved > 0
            ? " \(report.externalFilesRemoved) file(s) of external binary data no value refers to any more were removed"
              + (report.backup != nil ? " (the backup keeps them)." : ".") : ""))
    }
    return out
  }

  /// One line for what a step rewrote in persistent history.
  static func describe(_ history: HistoryRewritten) -> String {
    var parts: [String] = []
    if history.removedChanges > 0 {
      parts.append("\(plural(history.removedChanges, "change")) of removed entities deleted (--partial-history)")
    }
    if history.updates > 0 {
      parts.append(
        "\(plural(history.updates, "update")) re-pointed at the new properties"
          + (history.updatesLosingProperties > 0
            ? " (\(history.updatesLosingProperties) named a property the step removes)" : ""))
    }
    if history.unreadable > 0 { parts.append("\(plural(history.unreadable, "update")) with an unreadable mask kept") }
    if history.tombstones > 0 { parts.append("\(plural(history.tombstones, "tombstone")) moved to the new slots") }
    if history.tombstoneValuesCleared > 0 {
      parts.append(
        "\(plural(history.tombstoneValuesCleared, "tombstone value")) of attributes no longer preserved cleared")
    }
    return parts.joined(separator: ", ")
  }
}
