import LuaHost

/// What a script's call earns for the objects migrun hands it: a stage handler's walks and fetches,
/// a policy hook's `m:fetch`. Each object handed over adds ``ScriptLimits/instructionsPerObject``
/// instructions and ``ScriptLimits/secondsPerObject`` seconds to the call's budget and starts its
/// time without progress again (``LuaVM/credit(objects:)``) — for at most ``passes`` times each
/// entity's objects in the call. A handler walking the same objects again and again earns nothing
/// past those, so it is stopped once its base and its last grants are spent, or after
/// ``ScriptLimits/seconds`` without a new object, whichever comes first.
///
/// ```swift
/// var handed = HandedObjects()
/// vm.credit(objects: try handed.earning(batch.count, of: "Item") { try context.count("Item", matching: nil) })
/// ```
struct HandedObjects {
  /// Passes over an entity's objects that earn: one to walk it, one more for a stage that walks it
  /// twice (counts first, then acts).
  static let passes = 2

  /// How many of `count` objects of `entity` handed over now earn: the rest of `passes` × the
  /// entity's objects, `total()` (asked once per entity and call, when first needed).
  mutating func earning(_ count: Int, of entity: String, total: () throws -> Int) rethrows -> Int {
    guard count > 0 else { return 0 }
    let allowed: Int
    if let known = allowance[entity] {
      allowed = known
    } else {
      allowed = Self.passes * max(0, try total())
      allowance[entity] = allowed
    }
    let earned = min(count, max(0, allowed - (credited[entity] ?? 0)))
    credited[entity, default: 0] += earned
    return earned
  }

  // MARK: - Non public

  /// Objects credited so far, by entity.
  private var credited: [String: Int] = [:]
  /// What may be credited in all, by entity.
  private var allowance: [String: Int] = [:]
}
