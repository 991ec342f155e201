import ArgumentParser
import LuaHost
import MigrunTools

/// The Lua limits a run may raise (a `begin` or `finish` hook on a big store can need more than the
/// defaults): per call for time and instructions, per VM for memory.
struct LuaLimitOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp("Seconds a Lua call may run (default: 10).", valueName: "seconds"))
  var luaTime: Double?
  @Option(
    help: ArgumentHelp("MiB a policy's Lua VM may hold (default: 64).", valueName: "MiB"))
  var luaMemory: Int?
  @Option(
    help: ArgumentHelp("Lua instructions per call (default: 50000000).", valueName: "count"))
  var luaInstructions: Int64?

  func validate() throws {
    try ProjectConfig.check()
    if let luaTime, !(luaTime > 0) { throw ValidationError("--lua-time must be more than 0 seconds") }
    if let luaMemory, luaMemory < 1 || luaMemory > 1 << 20 {
      throw ValidationError("--lua-memory must be between 1 and 1048576 MiB")
    }
    if let luaInstructions, luaInstructions < 1 { throw ValidationError("--lua-instructions must be at least 1") }
  }

  /// The limits in force: the flags, else the project file's (``ProjectConfig``), else the defaults.
  var limits: LuaLimits {
    let project = (try? ProjectConfig.current()) ?? nil
    var limits = LuaLimits()
    if let seconds = luaTime ?? project?.luaTime { limits.seconds = seconds }
    if let mebibytes = luaMemory ?? project?.luaMemory { limits.memoryBytes = mebibytes << 20 }
    if let count = luaInstructions ?? project?.luaInstructions { limits.instructions = count }
    return limits
  }
}
