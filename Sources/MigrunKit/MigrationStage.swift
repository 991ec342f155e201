import MigrunContext

/// A step's custom stage — SwiftData's `MigrationStage.custom(fromVersion:toVersion:willMigrate:didMigrate:)`,
/// Core Data's `NSCustomMigrationStage`: handlers given a whole context on the store, `willMigrate`
/// before the step (on the source version's model) and `didMigrate` after it (on the destination's).
/// They run on migrun's working copy, never on the original; what they change is saved by them and
/// reported (``StageChanges``).
package protocol MigrationStageHandlers: AnyObject {
  /// The handlers the stage has.
  var hooks: Set<StageHook> { get }
  /// Runs `hook` on `context`; returns what it saved.
  func run(_ hook: StageHook, on context: ObjectContext, step: MigrationStep) throws -> StageChanges
}

package enum StageHook: String, Sendable, Hashable, CaseIterable {
  case willMigrate, didMigrate
}

/// Objects a step's custom stage saved: inserted, changed and deleted (delete rules' cascades
/// included), read from ``MigrationReport/Step/willMigrate`` and ``MigrationReport/Step/didMigrate``.
public struct StageChanges: Sendable, Hashable {
  public package(set) var inserted = 0
  public package(set) var updated = 0
  public package(set) var deleted = 0

  package init(inserted: Int = 0, updated: Int = 0, deleted: Int = 0) {
    self.inserted = inserted
    self.updated = updated
    self.deleted = deleted
  }

  /// Whether the stage saved nothing.
  public var isEmpty: Bool { inserted == 0 && updated == 0 && deleted == 0 }

  package mutating func add(_ changes: ChangeSet) {
    inserted += changes.inserted.count
    updated += changes.updated.count
    deleted += changes.deleted.count
  }
}

/// What a step's stage did (``MigrationReport/Step/stage``).
package struct StageReport: Sendable, Hashable {
  package var willMigrate: StageChanges?
  package var didMigrate: StageChanges?

  package init(willMigrate: StageChanges? = nil, didMigrate: StageChanges? = nil) {
    self.willMigrate = willMigrate
    self.didMigrate = didMigrate
  }
}
