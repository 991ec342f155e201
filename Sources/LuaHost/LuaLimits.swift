/// The limits a script runs under, per call into Lua (loading a script counts as a call).
///
/// A script that exceeds one is stopped with a ``LuaError`` of the matching kind; the limits are
/// sticky within a call, so a script's own `pcall` cannot swallow them. The defaults suit a
/// migration: generous for per-object code, small enough that a runaway script stops in seconds.
///
/// ```swift
/// var limits = LuaLimits()
/// limits.instructions = 1_000_000
/// let vm = try LuaVM(limits: limits)
/// ```
package struct LuaLimits: Sendable, Hashable {
  /// Lua VM instructions per call (counted in steps of 1,000).
  package var instructions: Int64 = 50_000_000
  /// Bytes the whole VM may hold (scripts, modules and their data).
  package var memoryBytes: Int = 64 << 20
  /// Nested Lua calls.
  package var callDepth: Int = 500
  /// Wall-clock seconds per call.
  package var seconds: Double = 10
  /// Instructions a call earns for each object the host hands it (``LuaVM/credit(objects:)``): a
  /// stage's walk over a million objects is given the budget its work needs, not a fixed one.
  package var instructionsPerObject: Int64 = 10_000
  /// Seconds a call's whole run earns for each object the host hands it. A call handed objects may
  /// also run ``seconds`` at most after the last one (time without progress).
  package var secondsPerObject: Double = 0.001
  /// The worst-case steps a pattern match (`string.find/match/gmatch/gsub`) may take, estimated from
  /// the subject's length and the pattern's backtracking items. Pattern matching runs in C, where
  /// neither the instruction count nor the deadline can stop it, so it is refused up front.
  package var patternCost: Double = 1e9
  /// The seed of `math.random`, so runs repeat.
  package var randomSeed: Int64 = 20_010_101

  package init() {}
}
