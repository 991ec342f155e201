import Foundation
import LuaHost
import MigrunKit

/// The Lua runtime's answers to what a migration asks of a step's scripts (``StepScripts``): a
/// scripted step's file loaded (a Lua mapping file, or an Xcode mapping model converted), the
/// step's custom stage `<From>-<To>.stage.lua` in the policy folders, and the merge rules of a
/// `--merge-rules` file for every step — each Lua VM under `limits`.
package struct LuaScripts: StepScripts {
  package let policyFolders: [URL]
  package let limits: LuaLimits
  package let mergeRulesFile: URL?

  package init(policyFolders: [URL], limits: LuaLimits = LuaLimits(), mergeRules: URL? = nil) {
    self.policyFolders = policyFolders
    self.limits = limits
    mergeRulesFile = mergeRules
  }

  package func mapping(for step: MigrationStep, file: URL) throws -> StepMapping {
    try ScriptedStep.load(step, file: file, policyFolders: policyFolders, limits: limits)
  }

  package func stage(for step: MigrationStep) throws -> (any MigrationStageHandlers)? {
    try LuaStage.find(for: step, in: policyFolders, limits: limits)
  }

  package func mergeRules(for step: MigrationStep) throws -> [any MigrationMergeRule] {
    guard let mergeRulesFile else { return [] }
    return [
      try LuaMigrationMergeRules(
        file: mergeRulesFile, destination: step.destination, policyFolders: policyFolders, limits: limits)
    ]
  }
}
