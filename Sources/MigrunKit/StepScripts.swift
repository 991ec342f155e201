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
