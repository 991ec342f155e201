import Foundation
import MigrunModel

/// One mapping model of a step that runs several (Core Data's "migrating in chunks": the app calls
/// `NSMigrationManager.migrateStore(…)` once per mapping model, all into one destination store).
///
/// Each pass runs Core Data's three stages over its own entity mappings only — every
/// `createDestinationInstances`, then every `createRelationships`, then validation — before the
/// next pass starts, so a later pass finds the earlier passes' objects in the destination
/// (`m:fetch`). Associations are the pass's own: `reset()`-like, a later pass does not see which
/// source object became which destination object in an earlier one.
///
/// That last rule is a reading, not a measurement: Apple documents `reset()` as clearing the
/// association tables and `migrateStore` as adding to an existing destination, and apps that
/// migrate in chunks fetch earlier passes' objects rather than asking the manager — which they would
/// not need to if associations carried over. Where a mapping model would depend on the other
/// reading (a relationship mapped from objects only another pass creates), the step is refused up
/// front, by name (``StepMapping/init(passes:)``), rather than run on a guess.
package struct MappingPass: Sendable, Hashable {
  /// The file the pass's mapping came from.
  package let name: String
  /// Its entity mappings' names, in the mapping model's order.
  package let mappings: [String]
}

extension StepScripts {
  /// The mapping of a scripted step with `files`: its one file's, or — several — their mappings run
  /// one after another (``MappingPass``).
  package func mapping(for step: MigrationStep, files: [URL]) throws -> StepMapping {
    if files.count == 1, let file = files.first { return try mapping(for: step, file: file) }
    return try StepMapping(passes: files.map { file in (file.lastPathComponent, try mapping(for: step, file: file)) })
  }
}

extension StepMapping {
  /// One step's mapping made of several mapping models run in turn: their entity mappings in order,
  /// each pass named, policies and merge rules together. Refused by name: an entity mapping name in
  /// two passes (its objects would be made twice), and a relationship whose targets only another
  /// pass creates (it would be filled by one reading of Core Data's rule and left empty by the
  /// other; see ``MappingPass``).
  package init(passes parts: [(name: String, mapping: StepMapping)]) throws {
    guard let first = parts.first else {
      throw MigrationError(.badMapping, reason: "a step run in passes needs at least one mapping")
    }
    var entityMappings: [EntityMapping] = []
    var passes: [MappingPass] = []
    var policies: [String: any EntityMigrationPolicy] = [:]
    var mergeRules: [any MigrationMergeRule] = []
    var passOf: [String: String] = [:]
    // A destination entity another pass fills from the source is not "added" (made with no source
    // objects) by this one: a mapping model converted whole names every destination entity.
    let filled = Set(
      parts.flatMap { part in
        part.mapping.mapping.entityMappings.filter { $0.kind != .add && $0.sourceEntity != nil }.compactMap(
          \.destinationEntity)
      })
    for (name, whole) in parts {
      var part = whole
      part.mapping.entityMappings.removeAll { mapping in
        whole.filledIn.contains(mapping.name)
          || (mapping.kind == .add && filled.contains(mapping.destinationEntity ?? ""))
      }
      for entityMapping in part.mapping.entityMappings {
        if let earlier = passOf[entityMapping.name] {
          throw MigrationError(
            .badMapping,
            reason: "entity mapping \(entityMapping.name) is in both \(earlier) and \(name): run in passes, "
              + "its objects would be made twice; keep it in one of them")
        }
        passOf[entityMapping.name] = name
      }
      entityMappings += part.mapping.entityMappings
      passes.append(MappingPass(name: name, mappings: part.mapping.entityMappings.map(\.name)))
      policies.merge(part.policies) { own, _ in own }
      mergeRules += part.mergeRules
    }
    var mapping = MappingModel(
      source: first.mapping.mapping.source, destination: first.mapping.mapping.destination,
      entityMappings: entityMappings)
    mapping.passes = passes
    try mapping.refuseSourcesNoPassMaps()
    try mapping.refuseRelationshipsAcrossPasses()
    self.init(mapping: mapping, policies: policies, mergeRules: mergeRules)
  }
}

extension MappingModel {
  /// The entity mappings of each pass, in order: one pass of all of them when the step runs one
  /// mapping model.
  package var entityMappingsByPass: [[EntityMapping]] {
    guard !passes.isEmpty else { return [entityMappings] }
    let byName = Dictionary(entityMappings.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    return passes.map { pass in pass.mappings.compactMap { byName[$0] } }
  }

  /// Refuses a step in passes that leaves a source entity to no pass: its objects would not reach
  /// the destination (each mapping model maps only the entity mappings it has; what none has is
  /// lost, and Core Data loses it without a word).
  func refuseSourcesNoPassMaps() throws(MigrationError) {
    let mapped = Set(entityMappings.compactMap(\.sourceEntity))
    let missing = source.entities.filter { !$0.isAbstract && !mapped.contains($0.name) }.map(\.name)
    guard !missing.isEmpty else { return }
    throw MigrationError(
      .wouldDrop, entity: missing[0],
      reason: "no mapping model of the step (\(passes.map(\.name).joined(separator: ", "))) maps "
        + "\(missing.joined(separator: ", ")): run in passes, each maps only its own entity mappings, and these "
        + "objects would be lost; map them in one of the files (in a Lua file, `Name = \"remove\"` drops them on purpose)"
    )
  }

  /// Refuses a relationship mapping (destination relationship ← source relationship) in one pass
  /// whose source targets are made into destination objects only by other passes' mappings.
  func refuseRelationshipsAcrossPasses() throws(MigrationError) {
    let byPass = entityMappingsByPass
    guard byPass.count > 1 else { return }
    for (index, pass) in byPass.enumerated() {
      let own = Set(pass.compactMap(\.sourceEntity))
      for entityMapping in pass {
        guard let from = entityMapping.sourceEntity.flatMap(source.entity(named:)) else { continue }
        for (destinationRelationship, sourceRelationship) in entityMapping.relationships.sorted(by: { $0.key < $1.key })
        {
          guard let relationship = source.relationships(of: from).first(where: { $0.name == sourceRelationship }),
            let target = source.entity(named: relationship.destinationEntity)
          else { continue }
          let kinds = source.entities.filter { source.entity($0, isKindOf: target.name) }.map(\.name)
          guard !kinds.contains(where: own.contains) else { continue }
          let others = byPass.enumerated().filter { $0.offset != index }
            .filter { $0.element.contains { kinds.contains($0.sourceEntity ?? "") } }.map { passes[$0.offset].name }
          guard let other = others.first else { continue }
          throw MigrationError(
            .badMapping, entity: entityMapping.destinationEntity, property: destinationRelationship,
            reason: "\(passes[index].name): \(entityMapping.name) maps relationship \(destinationRelationship) from "
              + "\(sourceRelationship), whose \(target.name) objects are made in another mapping model (\(other)); "
              + "each mapping model runs with its own associations (Core Data's migration in chunks), so the "
              + "relationship would be left empty: set it in a policy that fetches the \(target.name) "
              + "(m:fetch), or put both entity mappings in one mapping model")
        }
      }
    }
  }
}
