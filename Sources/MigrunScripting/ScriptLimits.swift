import LuaHost

/// The limits every Lua script of a migration runs under — mapping files, policies, custom stages,
/// merge rules — per call into Lua (loading a script counts as a call). A script that exceeds one is
/// stopped, and the step fails naming it. The defaults suit a migration: generous for per-object
/// code, small enough that a runaway script stops in seconds.
///
/// ```swift
/// var limits = ScriptLimits()
/// limits.seconds = 30
/// ```
public struct ScriptLimits: Sendable, Hashable {
  /// Lua instructions per call (counted in steps of 1,000).
  public var instructions: Int64
  /// Bytes one script's VM may hold: its code, modules and data.
  public var memoryBytes: Int
  /// Wall-clock seconds per call.
  public var seconds: Double
  /// Nested Lua calls.
  public var callDepth: Int
  /// Instructions a stage handler (or a policy hook's `m:fetch`) earns for each object migrun hands
  /// it, for at most two passes over each entity's objects: its budget grows with its work.
  public var instructionsPerObject: Int64
  /// Seconds its whole run earns likewise; it may also run ``seconds`` at most without being handed
  /// a new object.
  public var secondsPerObject: Double

  /// The defaults: 50 million instructions, 64 MiB, 10 seconds and 500 nested calls per call; 10,000
  /// instructions and 1 ms more for each object a stage or hook is handed.
  public init() { self.init(LuaLimits()) }

  // MARK: - Non public

  /// The limits only the command line sets (pattern cost, random seed), and the VM's defaults.
  private var others: LuaLimits

  package init(_ lua: LuaLimits) {
    instructions = lua.instructions
    memoryBytes = lua.memoryBytes
    seconds = lua.seconds
    callDepth = lua.callDepth
    instructionsPerObject = lua.instructionsPerObject
    secondsPerObject = lua.secondsPerObject
    others = lua
  }

  /// The VM's own value.
  package var lua: LuaLimits {
    var lua = others
    lua.instructions = instructions
    lua.memoryBytes = memoryBytes
    lua.seconds = seconds
    lua.callDepth = callDepth
    lua.instructionsPerObject = instructionsPerObject
    lua.secondsPerObject = secondsPerObject
    return lua
  }
}
