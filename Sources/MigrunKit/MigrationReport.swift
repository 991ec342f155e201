import Foundation
import MigrunStore

/// What a migration did: each step's method, counts, drops and stage results (``steps``), where the
/// original was kept (``backup``), and the external files no value refers to any more that were
/// removed.
///
/// ```swift
/// for step in report.steps {
///   print(step.name, step.method, step.counts, step.drops.map(\.description))
/// }
/// ```
public struct MigrationReport: Sendable {
  /// What one step did: how it ran and why, the objects it wrote per entity, what its mapping left
  /// behind, and what its custom stage saved.
  public struct Step: Sendable {
    /// The step's versions, `"Moody 2 → Moody 3"`.
    public let name: String
    package let kind: MigrationStep.Kind
    /// Destination entity → objects after the step.
    public let counts: [String: Int]
    /// How the step ran.
    public let method: StepMethod
    /// Why the step did not run as DDL, the fastest way (nil when it did): "Lua policies run per
    /// object, or per row where they only compute attributes", "DDL is turned off", …
    public package(set) var reason: String?
    /// Whether the step ran in SQL — DDL or a bulk copy — rather than object by object.
    public var bulkCopy: Bool { method != .objects }
    /// The step's script files, in the order they ran; empty when the step was inferred.
    public var scripts: [URL] { if case .scripted(let files) = kind { files } else { [] } }
    /// Each entity mapping's objects read from the source and written to the destination, in the
    /// order the step ran them: what `migrun migrate` prints per mapping.
    public var objectsByMapping: [(mapping: String, read: Int, written: Int)] {
      mappings.map { ($0.mapping, $0.read, $0.written) }
    }
    /// Destination objects folded into another by a merge rule (uniqueness collisions).
    public package(set) var merged = 0
    /// Per entity mapping: objects and relationship links read and written (`MappingCount`).
    package var mappings: [MappingCount] = []
    /// What the step's mapping left behind that held values in its source.
    public package(set) var drops: [DroppedProperty] = []
    /// Damage the step's source already had, carried (`CarriedDamage`).
    package var damage: [CarriedDamage] = []
    /// CloudKit's record metadata the step renumbered, and deleted with the entities it removes.
    package var cloudKit = CloudKitRenumbering()
    /// What the step rewrote in persistent history (`HistoryRewrite`).
    package var history = HistoryRewritten()
    /// What the step's custom stage saved before and after it (`MigrationStageHandlers`).
    package var stage: StageReport?
    /// What the step's custom stage saved in `willMigrate` (on the source version), if it has one.
    public var willMigrate: StageChanges? { stage?.willMigrate }
    /// What the step's custom stage saved in `didMigrate` (on the destination version), if it has one.
    public var didMigrate: StageChanges? { stage?.didMigrate }

    package init(name: String, kind: MigrationStep.Kind, counts: [String: Int], method: StepMethod) {
      self.name = name
      self.kind = kind
      self.counts = counts
      self.method = method
    }
  }

  /// Each step that ran, in order.
  public package(set) var steps: [Step] = []
  /// Where the original store was kept (`NAME~.EXT`), unless ``StoreMigrator/Options/keepBackup`` was off.
  public package(set) var backup: URL?
  /// Files of external binary data no value refers to after the migration, removed after the swap.
  public package(set) var externalFilesRemoved = 0

  package init() {}
}
