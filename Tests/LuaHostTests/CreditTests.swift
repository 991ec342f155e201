import LuaHost
import Testing

/// A call's budget grows with the objects the host hands it (`LuaVM.credit(objects:)`, issue 72):
/// instructions and time for each, and time without progress measured from the last one.
@Suite struct CreditTests {
  /// A VM whose scripts call `give(n)` to be handed `n` objects.
  static func machine(_ limits: LuaLimits) throws -> LuaVM {
    let vm = try LuaVM(limits: limits)
    vm.register("give") { [unowned vm] arguments in
      vm.credit(objects: Int(arguments.first?.integerValue ?? 0))
      return []
    }
    return vm
  }

  static func stopped(_ source: String, _ limits: LuaLimits) throws -> LuaError {
    let vm = try machine(limits)
    return try #require(throws: LuaError.self) { try vm.run(source: source, name: "walk.lua") }
  }

  @Test func eachObjectHandedOverAddsItsInstructions() throws {
    var limits = LuaLimits()
    limits.instructions = 100_000
    limits.instructionsPerObject = 1_000
    // 300,000 instructions' work: past the base, within it and what 250 objects add.
    let work = "local s = 0\nfor i = 1, 100000 do s = s + i end\nreturn s"
    #expect(throws: LuaError.self) { try Self.machine(limits).run(source: work, name: "walk.lua") }
    #expect(try Self.machine(limits).run(source: "give(250)\n" + work, name: "walk.lua") == [5_000_050_000])
    // A loop after the objects is stopped once the base and the grants are spent, and says so.
    let error = try Self.stopped("give(100)\nwhile true do end", limits)
    #expect(error.kind == .instructionLimit)
    #expect(
      error.description
        == "walk.lua:2: instruction limit of 200000 exceeded (100000, and 1000 for each of the 100 objects "
        + "handed over)")
  }

  @Test func aCallHandedNoObjectKeepsItsFixedBudget() throws {
    var limits = LuaLimits()
    limits.instructions = 100_000
    let error = try Self.stopped("give(0)\nwhile true do end", limits)
    #expect(error.description == "walk.lua:2: instruction limit of 100000 exceeded")
  }

  /// Time is measured from the last object handed over: a loop that stops being handed new objects
  /// is stopped `seconds` later, however big its instruction grants.
  @Test func aLoopWithoutProgressIsStoppedByTheClock() throws {
    var limits = LuaLimits()
    limits.seconds = 0.2
    limits.instructionsPerObject = 1 << 40
    let error = try Self.stopped("give(1000)\nwhile true do end", limits)
    #expect(error.kind == .deadline)
    #expect(error.message == "time limit of 0.2 s without a new object exceeded (1000 objects handed over until then)")
  }

  /// Progress does not keep a call alive forever: its whole run has `seconds` and
  /// `secondsPerObject` for each object handed over.
  @Test func theWholeRunHasItsTimeToo() throws {
    var limits = LuaLimits()
    limits.seconds = 0.2
    limits.instructions = .max
    limits.secondsPerObject = 0
    let error = try Self.stopped("while true do give(1) end", limits)
    #expect(error.kind == .deadline)
    #expect(error.message.hasPrefix("time limit of 0.2 s exceeded (0.2 s, and 0 s for each of the "), "\(error)")
  }
}
