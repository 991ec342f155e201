import LuaHost
import Testing

/// Runaway scripts are stopped by the right limit, even inside their own pcall, and the VM goes on.
@Suite struct LimitTests {
  static func stopped(_ source: String, limits: LuaLimits = LuaLimits(), _ vm: LuaVM? = nil) throws -> LuaError {
    let machine = try vm ?? LuaVM(limits: limits)
    let error = try #require(throws: LuaError.self) { try machine.run(source: source, name: "runaway.lua") }
    #expect(try machine.run(source: "return 1 + 1", name: "after.lua") == [2], "the VM answers after: \(error)")
    return error
  }

  @Test func infiniteLoopHitsTheInstructionLimit() throws {
    let error = try Self.stopped("local n = 0\nwhile true do n = n + 1 end")
    #expect(error.kind == .instructionLimit)
    #expect(error.description == "runaway.lua:2: instruction limit of 50000000 exceeded")
  }

  @Test func pcallCannotSwallowTheInstructionLimit() throws {
    let error = try Self.stopped(
      """
      local caught = 0
      for i = 1, 1e9 do
        local ok = pcall(function() while true do end end)
        if not ok then caught = caught + 1 end
      end
      return caught
      """)
    #expect(error.kind == .instructionLimit)
  }

  @Test func nestedPcallsAndErrorHandlersCannotSwallowItEither() throws {
    let error = try Self.stopped(
      "while true do xpcall(function() pcall(function() while true do end end) end, function() while true do end end) end"
    )
    #expect(error.kind == .instructionLimit)
  }

  @Test func tableBombHitsTheMemoryLimit() throws {
    var limits = LuaLimits()
    limits.memoryBytes = 16 << 20
    let vm = try LuaVM(limits: limits)
    let baseline = vm.memoryUsed
    let error = try Self.stopped("local t = {} while true do t[#t + 1] = { i = #t } end", vm)
    #expect(error.kind == .memoryLimit)
    #expect(error.message == "memory limit of 16777216 bytes exceeded")
    vm.collectGarbage()
    #expect(vm.memoryUsed < baseline + (1 << 20), "memory returns after the bomb is stopped")
  }

  /// The allocator cannot read the stack: a memory error names the script's line the count hook saw
  /// last, not the host's Lua that called it (issue 55).
  @Test func aMemoryErrorNamesTheScriptsLine() throws {
    var limits = LuaLimits()
    limits.memoryBytes = 4 << 20
    let vm = try LuaVM(limits: limits)
    let grow = try #require(
      try vm.run(
        source: "return function()\n  local t = {}\n  while true do t[#t + 1] = { #t } end\nend", name: "grow.lua"
      ).first?.functionValue)
    let error = try #require(throws: LuaError.self) { try vm.call(grow) }
    #expect(error.kind == .memoryLimit)
    #expect(error.description == "grow.lua:3: memory limit of 4194304 bytes exceeded", "\(error)")
  }

  @Test func pcallCannotSwallowTheMemoryLimit() throws {
    var limits = LuaLimits()
    limits.memoryBytes = 16 << 20
    let error = try Self.stopped(
      """
      local kept = {}
      while true do
        pcall(function() local t = {} while true do t[#t + 1] = ('x'):rep(64) .. #t end end)
        kept[#kept + 1] = 'survived'
      end
      """, limits: limits)
    #expect(error.kind == .memoryLimit)
  }

  @Test func deepRecursionHitsTheCallDepthLimit() throws {
    let error = try Self.stopped("local function f(n) return f(n + 1) + 1 end\nreturn f(1)")
    #expect(error.kind == .recursionLimit)
    #expect(error.description.hasPrefix("runaway.lua:1: call depth limit of 500 exceeded"))
  }

  @Test func pathologicalPatternIsRefusedBeforeItRuns() throws {
    let error = try Self.stopped("return string.rep('a', 1e6):find('.-.-.-b')")
    #expect(error.kind == .inputLimit)
    #expect(error.description.contains("runaway.lua:1: pattern '.-.-.-b' on a 1000000-byte string"))
  }

  @Test func patternsOnLargeStringsStillWorkWhenTheirWorstCaseIsLinear() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: """
        local s = string.rep('word ', 200000)
        local squeezed = s:gsub('%s+', '_')
        return #squeezed, s:find('b', 1, true), select(2, s:gsub('word', 'w')), s:match('^(%a+)')
        """, name: "big.lua")
    #expect(results == [1_000_000, .nil, 200_000, "word"])
  }

  @Test func wallClockDeadlineStopsLongCalls() throws {
    var limits = LuaLimits()
    limits.instructions = .max
    limits.seconds = 0.2
    let error = try Self.stopped("while true do local s = ('x'):rep(100) end", limits: limits)
    #expect(error.kind == .deadline)
    #expect(error.message == "time limit of 0.2 s exceeded")
  }

  @Test func limitsApplyPerCallAndCanBeChanged() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: "return function(n) local s = 0 for i = 1, n do s = s + i end return s end", name: "sum.lua")
    let sum = try #require(results.first?.functionValue)
    // Many calls, each well under the budget: the budget is per call, not per VM.
    for _ in 0..<50 { #expect(try vm.call(sum, [100_000]) == [5_000_050_000]) }
    vm.limits.instructions = 10_000
    let error = try #require(throws: LuaError.self) { try vm.call(sum, [100_000]) }
    #expect(error.kind == .instructionLimit)
    #expect(error.script == "sum.lua")
    #expect(try vm.call(sum, [10]) == [55])
  }
}
