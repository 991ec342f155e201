import Foundation
import LuaHost
import MigrunKit

/// The Lua runtime's answers to what a migration asks of a step's scripts (``StepScripts``): a
/// scripted step's file loaded (a Lua mapping file, or an Xcode mapping model converted), the
/// step's custom stage `<From>-<To>.stage.lua` in the policy folders, and the merge rules of a
/// `--merge-rules` file for every step — each Lua VM under `limits`.
///
/// A step's file is loaded once per value: the plan that weighs a walk through the step files and
/// the run that then runs them share one value (``MigrationJobs``), so both see the same mapping,
/// loaded under the job's limits.
package struct LuaScripts: StepScripts {
  /// The policy folders, walked once for the job: its plan looks up every step's files in this value.
  package let files: PolicyFiles
  package var policyFolders: [URL] { files.folders }
  package let limits: LuaLimits
  package let mergeRulesFile: URL?
  private let loaded = LoadedSteps()
  /// `m.userInfo`, shared by every file the job loads.
  private let userInfo = ManagerUserInfo()

  /// The step mappings loaded so far, by step and file. Not shared between threads: one job's.
  private final class LoadedSteps {
    var mappings: [String: StepMapping] = [:]
  }

  package init(policyFolders: [URL], limits: LuaLimits = LuaLimits(), mergeRules: URL? = nil) {
    files = PolicyFiles(policyFolders)
    self.limits = limits
    mergeRulesFile = mergeRules
  }

  package func mapping(for step: MigrationStep, file: URL) throws -> StepMapping {
    let key = "\(step.name)\u{0}\(file.path)"
    if let known = loaded.mappings[key] { return known }
    let mapping = try ScriptedStep.load(step, file: file, policyFolders: policyFolders, limits: limits)
    for policy in mapping.policies.values { (policy as? LuaEntityPolicy)?.bridge.sharedUserInfo = userInfo }
    loaded.mappings[key] = mapping
    return mapping
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

/// A Lua error says whether one of the script's limits stopped it: a migration fails with
/// `.scriptLimit`, not `.policy`, for those.
extension LuaError: ScriptFailure {
  package var stoppedByLimit: Bool {
    [.instructionLimit, .memoryLimit, .deadline, .recursionLimit, .inputLimit].contains(kind)
  }
}
