import Foundation

/// What a migration asks of the layer that knows a step's scripts, handed to the migrator up front
/// as one value (``StoreMigrator``'s `scripts`): the core names no file and looks none up — which
/// files a step has, how they are named and what language they are in is that layer's business
/// (MigrunScripting's `LuaScripts`: Lua mapping files, Xcode mapping models, custom stages, merge
/// rules).
package protocol StepScripts {
  /// The mapping, policies and merge rules of a scripted step, from its `file`.
  func mapping(for step: MigrationStep, file: URL) throws -> StepMapping
  /// The step's custom stage (`willMigrate`/`didMigrate`), if it has one.
  func stage(for step: MigrationStep) throws -> (any MigrationStageHandlers)?
  /// Merge rules for every step, after the step's own.
  func mergeRules(for step: MigrationStep) throws -> [any MigrationMergeRule]
}

/// What one step runs: its mapping model, the policies of its entity mappings and its merge rules
/// (a Lua mapping file gives all three).
package struct StepMapping {
  package var mapping: MappingModel
  package var policies: [String: any EntityMigrationPolicy]
  package var mergeRules: [any MigrationMergeRule]
  /// The entity mappings the script did not name, filled in by inference (a Lua mapping file's
  /// unmentioned entities): left out when the step runs several scripts in passes, where each maps
  /// only what it names (``MappingPass``).
  package var filledIn: Set<String> = []

  package init(
    mapping: MappingModel, policies: [String: any EntityMigrationPolicy] = [:],
    mergeRules: [any MigrationMergeRule] = []
  ) {
    self.mapping = mapping
    self.policies = policies
    self.mergeRules = mergeRules
  }
}
