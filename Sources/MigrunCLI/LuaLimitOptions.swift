import ArgumentParser
import LuaHost
import MigrunTools

/// The Lua limits a run may raise (a `begin` or `finish` hook on a big store can need more than the
/// defaults): per call for time and instructions, per VM for memory. A stage handler's (or a hook's
/// `m:fetch`) time and instructions are the base its budget grows from, with each object it is handed.
struct LuaLimitOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "Seconds a Lua call may run (default: 10); a stage handler: + 1 ms per object it is handed, "
        + "and at most this without a new one.",
      valueName: "seconds"))
  var luaTime: Double?
  @Option(
    help: ArgumentHelp("MiB a policy's Lua VM may hold (default: 64).", valueName: "MiB"))
  var luaMemory: Int?
  @Option(
    help: ArgumentHelp(
      "Lua instructions per call (default: 50000000); a stage handler: + 10000 per object it is handed.",
      valueName: "count"))
  var luaInstructions: Int64?

  func validate() throws {
    // The ranges of .migrun.yml's lua: keys, in the same words.
    if let problem = luaTime.flatMap(ProjectConfig.luaTimeProblem) { throw ValidationError("--lua-time \(problem)") }
    if let problem = luaMemory.flatMap(ProjectConfig.luaMemoryProblem) {
      throw ValidationError("--lua-memory \(problem)")
    }
    if let problem = luaInstructions.flatMap(ProjectConfig.luaInstructionsProblem) {
      throw ValidationError("--lua-instructions \(problem)")
    }
  }

  /// The limits in force: the flags, else the project file's (`project`), else the defaults.
  func limits(_ project: ProjectConfig?) -> LuaLimits {
    ProjectConfig.luaLimits(seconds: luaTime, mebibytes: luaMemory, instructions: luaInstructions, project: project)
  }
}
