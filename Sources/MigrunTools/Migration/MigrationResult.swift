import Foundation
import MigrunKit

/// A store's `result` line of `migrate --json` (docs/json.md): what each step did — counts, method,
/// drops, carried damage, CloudKit and history rewrites, the stage's changes, each mapping's reads
/// and writes — where the original was kept, and the external files removed.
package struct MigrationResult: Encodable {
  package let store: String
  /// `migrated`, `dry-run` or `current`.
  package let result: String
  package let from: String
  package let to: String
  package let report: StoreMigrator.Report?

  private enum Keys: String, CodingKey {
    case store, result, from, to, objects, steps, backup, externalFilesRemoved
  }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(store, forKey: .store)
    try container.encode(result, forKey: .result)
    try container.encode(from, forKey: .from)
    try container.encode(to, forKey: .to)
    guard let report else { return }
    try container.encode(report.steps.last?.counts.values.reduce(0, +) ?? 0, forKey: .objects)
    try container.encode(report.steps.map(StepResult.init), forKey: .steps)
    try container.encode(report.backup?.path, forKey: .backup)
    try container.encode(report.externalFilesRemoved, forKey: .externalFilesRemoved)
  }
}

/// One step of a ``MigrationResult``.
private struct StepResult: Encodable {
  let step: StoreMigrator.Report.Step

  private enum Keys: String, CodingKey {
    case step, counts, method, bulkCopy, merged, dropped, cloudKit, history, stage, damageCarried, mappings
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(step.name, forKey: .step)
    try container.encode(step.counts, forKey: .counts)
    try container.encode(step.method.rawValue, forKey: .method)
    try container.encode(step.bulkCopy, forKey: .bulkCopy)
    try container.encode(step.merged, forKey: .merged)
    try container.encode(step.drops.map(DroppedJSON.init), forKey: .dropped)
    try container.encode(
      ["renumbered": step.cloudKit.renumbered, "removed": step.cloudKit.removed], forKey: .cloudKit)
    let history = step.history
    try container.encode(
      [
        "updatesRewritten": history.updates, "updatesLosingProperties": history.updatesLosingProperties,
        "unreadable": history.unreadable, "tombstonesMoved": history.tombstones,
        "tombstoneValuesCleared": history.tombstoneValuesCleared, "removedChanges": history.removedChanges,
      ], forKey: .history)
    try container.encode(step.stage.map(StageJSON.init), forKey: .stage)
    try container.encode(step.damage.map(DamageJSON.init), forKey: .damageCarried)
    try container.encode(step.mappings.map(CountJSON.init), forKey: .mappings)
  }
}

/// A property a step leaves behind (`dropped`, in `plan`, `diff` and `migrate` alike).
package struct DroppedJSON: Encodable {
  let drop: DroppedProperty

  package init(_ drop: DroppedProperty) { self.drop = drop }

  private enum Keys: String, CodingKey { case entity, property, values, certain }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(drop.entity, forKey: .entity)
    try container.encode(drop.property, forKey: .property)
    try container.encode(drop.values, forKey: .values)
    try container.encode(drop.isCertain, forKey: .certain)
  }
}

/// A step's stage: what each handler saved.
package struct StageJSON: Encodable {
  let stage: StageReport

  package init(_ stage: StageReport) { self.stage = stage }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: DynamicKey.self)
    for (hook, changes) in [("willMigrate", stage.willMigrate), ("didMigrate", stage.didMigrate)] {
      guard let changes else { continue }
      try container.encode(
        ["inserted": changes.inserted, "updated": changes.updated, "deleted": changes.deleted],
        forKey: DynamicKey(hook))
    }
  }
}

private struct DamageJSON: Encodable {
  let damage: CarriedDamage

  init(_ damage: CarriedDamage) { self.damage = damage }

  private enum Keys: String, CodingKey { case kind, entity, property, read, written }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(damage.kind.rawValue, forKey: .kind)
    try container.encode(damage.entity, forKey: .entity)
    try container.encode(damage.property, forKey: .property)
    try container.encode(damage.read, forKey: .read)
    try container.encode(damage.written, forKey: .written)
  }
}

private struct CountJSON: Encodable {
  let count: MappingCount

  init(_ count: MappingCount) { self.count = count }

  private enum Keys: String, CodingKey { case mapping, read, written, note, links }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(count.mapping, forKey: .mapping)
    try container.encode(count.read, forKey: .read)
    try container.encode(count.written, forKey: .written)
    try container.encode(count.note, forKey: .note)
    try container.encode(count.edges, forKey: .links)
  }
}

/// A key named at run time.
struct DynamicKey: CodingKey {
  let stringValue: String
  var intValue: Int? { nil }

  init(_ name: String) { stringValue = name }
  init?(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}
