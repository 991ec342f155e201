import Foundation
import LuaHost
import TestSupport
import Testing

/// The probes of a security review (issue 49) against the VM: work the count hook never sees, crashes
/// a script could cause, and values that expand on their way to the host. Each one ends in a clear
/// error naming its file and line, and the VM answers after it.
@Suite struct HostileScriptTests {
  /// Limits small enough that a probe that escapes them shows in seconds, not minutes.
  static var limits: LuaLimits {
    var limits = LuaLimits()
    limits.seconds = 5
    return limits
  }

  static func stopped(_ source: String, limits: LuaLimits = Self.limits) throws -> LuaError {
    try LimitTests.stopped(source, limits: limits)
  }

  // MARK: Hangs

  @Test func aCloseHandlerAfterALimitTrippedInACoroutineDoesNotRun() throws {
    let error = try Self.stopped(
      """
      local co = coroutine.create(function()
        local g <close> = setmetatable({}, { __close = function() while true do end end })
        while true do end
      end)
      coroutine.resume(co)
      coroutine.close(co)
      """)
    #expect(error.kind == .instructionLimit)
  }

  @Test func aWrappedCoroutineThatTripsALimitDoesNotRunItsCloseHandlers() throws {
    let error = try Self.stopped(
      """
      local f = coroutine.wrap(function()
        local g <close> = setmetatable({}, { __close = function() while true do end end })
        while true do end
      end)
      pcall(f)
      while true do end
      """)
    #expect(error.kind == .instructionLimit)
  }

  @Test func wrappedCoroutinesStillWork() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: """
        local f = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
        local first = f(1)
        local second = f(10)
        local closed = false
        local g = coroutine.wrap(function()
          local x <close> = setmetatable({}, { __close = function() closed = true end })
          error('boom')
        end)
        local ok, message = pcall(g)
        return first, second, ok, message, closed
        """, name: "wrap.lua")
    #expect(results == [2, 20, false, "wrap.lua:7: boom", true])
  }

  @Test func stringRepOfAnEmptyStringEndsAtOnce() throws {
    let vm = try LuaVM()
    #expect(try vm.run(source: "return #string.rep('', math.maxinteger)", name: "rep.lua") == [0])
    let error = try Self.stopped("return string.rep('ab', math.maxinteger)")
    #expect(error.kind == .memoryLimit)
    #expect(error.message.contains("string.rep would make a"))
  }

  @Test func tableMoveOfAHugeRangeIsRefusedBeforeItStarts() throws {
    let error = try Self.stopped("table.move({}, 1, 1e15, 1)")
    #expect(error.kind == .instructionLimit)
    #expect(error.description.hasPrefix("runaway.lua:1: table.move would take"))
  }

  /// Lua's table functions loop in C, where the count hook never fires: over C-function
  /// metamethods and a `__len` near math.maxinteger they ran ~2^63 steps (issue 55). Each is priced
  /// by its length, read once, before it starts.
  @Test func tableFunctionsOverCMetamethodsArePricedBeforeTheyStart() throws {
    let proxy =
      "setmetatable({}, { __len = function() return math.maxinteger - 1 end, __index = type, __newindex = rawequal })"
    for (call, name) in [
      ("table.remove(t, 1)", "table.remove"), ("table.insert(t, 1, 'x')", "table.insert"),
      ("table.concat(t)", "table.concat"), ("table.concat(t, '', 1, math.maxinteger)", "table.concat"),
    ] {
      let error = try Self.stopped("local t = \(proxy)\n\(call)")
      #expect(error.kind == .instructionLimit, "\(call): \(error)")
      #expect(error.description.hasPrefix("runaway.lua:2: \(name) would take"), "\(call): \(error)")
    }
    // A __len that answers small when priced and huge when sorting: sort refuses such a table.
    let sorted = try Self.stopped(
      "local n = 0\nlocal t = setmetatable({}, { __len = function() n = n + 1 return n == 1 and 2 or 2^31 - 2 end })\n"
        + "table.sort(t)")
    #expect(sorted.message.contains("table.sort: the table has a __len metamethod; use a plain list"), "\(sorted)")
    // Insert and remove refuse such a table too, once priced: Lua's own functions would ask again.
    for call in ["table.insert(t, 1, 'x')", "table.insert(t, 'x')", "table.remove(t, 1)", "table.remove(t)"] {
      let error = try Self.stopped(
        "local t = setmetatable({}, { __len = function() return 2 end })\n\(call)")
      #expect(error.message.contains("the table has a __len metamethod; use a plain list"), "\(call): \(error)")
    }
    // Everyday lists are unchanged.
    let vm = try LuaVM()
    #expect(
      try vm.run(
        source: """
          local t = { 'a', 'b', 'c' }
          table.insert(t, 1, 'z') table.insert(t, 'y')
          local removed = table.remove(t, 2)
          return table.concat(t, ','), removed, table.remove(t), table.concat(t, '-', 2, 3), #t
          """, name: "lists.lua") == ["z,b,c,y", "a", "y", "b-c", 3])
  }

  /// A pattern's literal length and its sets' size are its work at each position: a 30,000-character
  /// pattern on a long string was priced as if it were one character (issue 55).
  @Test func aLongPatternIsPricedByItsLength() throws {
    let error = try Self.stopped("local s = ('a'):rep(1e6) return s:find(('a'):rep(30000) .. 'b.')")
    #expect(error.kind == .inputLimit, "\(error)")
    let set = try Self.stopped("return (('a'):rep(1e7)):find('[' .. ('b'):rep(5000) .. ']c')")
    #expect(set.kind == .inputLimit, "\(set)")
  }

  /// The clock is read after each priced call in C: a loop of pattern calls, each under the price but
  /// long, is stopped after the deadline, not a thousand instructions' worth of calls later (issue 55).
  @Test func theClockIsReadAfterEachPatternCall() throws {
    var limits = LuaLimits()
    limits.instructions = .max
    limits.seconds = 0.1
    let vm = try LuaVM(limits: limits)
    let functions = try vm.run(
      source: """
        local calls = 0
        local s = ('a'):rep(1e6)
        local pattern = ('a'):rep(100) .. 'b.'
        return function() while true do s:find(pattern) calls = calls + 1 end end, function() return calls end
        """, name: "clock.lua")
    let (loop, calls) = (try #require(functions.first?.functionValue), try #require(functions.last?.functionValue))
    let error = try #require(throws: LuaError.self) { try vm.call(loop) }
    #expect(error.kind == .deadline, "\(error)")
    // Each call is ~10^8 steps; a thousand instructions hold ~150 of them.
    let made = try #require(try vm.call(calls).first?.integerValue)
    #expect(made < 50, "\(made) calls ran before the clock was read")
  }

  @Test func plainFindOfALongNeedleInALongStringIsRefused() throws {
    let error = try Self.stopped(
      "local s = ('a'):rep(20e6) local needle = ('a'):rep(10e6) .. 'b' return s:find(needle, 1, true)")
    #expect(error.kind == .inputLimit)
  }

  @Test func optionalItemsAndBalancesCountInThePatternCost() throws {
    let optional = try Self.stopped("return string.match(('a'):rep(40), ('a?'):rep(40) .. ('a'):rep(40))")
    #expect(optional.kind == .inputLimit)
    let balance = try Self.stopped("return (('('):rep(1e6)):find('%b()')")
    #expect(balance.kind == .inputLimit)
    // Everyday patterns still run.
    let vm = try LuaVM()
    #expect(
      try vm.run(source: "return ('key = value'):match('^(%w+)%s*=%s*(%w+)$')", name: "p.lua") == ["key", "value"])
    #expect(try vm.run(source: "return ('colour'):find('colou?r')", name: "p.lua") == [1, 6])
  }

  @Test func sortingManyReferencesToAHugeStringIsRefused() throws {
    let error = try Self.stopped(
      "local s = ('x'):rep(30e6) local t = {} for i = 1, 1e5 do t[i] = s end table.sort(t)")
    #expect(error.kind == .instructionLimit)
    let vm = try LuaVM()
    #expect(
      try vm.run(source: "local t = {'b', 'c', 'a'} table.sort(t) return table.concat(t)", name: "s.lua") == ["abc"])
  }

  @Test func aPropertyListWhoseObjectsAreSharedDecodesInLinearTime() throws {
    // 40 arrays, each holding the next twice: 2^40 paths, 41 objects.
    var objects: [[UInt8]] = []
    for index in 0..<40 { objects.append([0xA2, UInt8(index + 1), UInt8(index + 1)]) }
    objects.append([0x10, 0x07])
    let file = BinaryPropertyLists.file(objects)
    let vm = try LuaVM(limits: Self.limits)
    let source = "local bytes = ... return plist.decode(bytes)"
    let function = try #require(
      try vm.run(source: "return function(...) \(source) end", name: "dag.lua").first?.functionValue)
    let error = try #require(throws: LuaError.self) { try vm.call(function, [.bytes(file)]) }
    #expect(error.message.contains("plist.decode: the result would hold more than"), "\(error)")
  }

  // MARK: Crashes

  @Test func deeplyNestedClosesAreAnError() throws {
    let error = try Self.stopped(
      """
      local previous
      for i = 1, 20000 do
        local inner = previous
        previous = coroutine.create(function()
          local x <close> = setmetatable({}, { __close = function()
            if inner then
              local ok, message = coroutine.close(inner)
              if not ok then error(message, 0) end
            end
          end })
          coroutine.yield()
        end)
        coroutine.resume(previous)
      end
      local ok, message = coroutine.close(previous)
      error(message, 0)
      """)
    #expect(error.message.contains("coroutine.close nested more than 64 deep"), "\(error)")
  }

  @Test func anUnpairedSurrogateIsAJSONError() throws {
    let error = try Self.stopped(#"return json.decode('"\\ud800\\u0041"')"#)
    #expect(error.message.contains("unpaired surrogate"), "\(error)")
  }

  @Test func aTableSharingSubtablesIsRefusedOnItsWayToTheHost() throws {
    for call in ["json.encode(t)", "print(t)", "return t"] {
      let error = try Self.stopped("local t = {} for i = 1, 30 do t = { t, t } end \(call)")
      #expect(error.message.contains("exceed the memory limit"), "\(call): \(error)")
    }
  }

  @Test func libraryViewsCannotBeChangedThroughPairs() throws {
    let error = try Self.stopped(
      """
      local _, real = pairs(string)
      if type(real) == 'table' then real.upper = function() return 'owned' end end
      local ok = pcall(function() for k, v in pairs(string) do end end)
      error(string.upper('a') .. tostring(ok))
      """)
    #expect(error.message.hasSuffix("Atrue"), "\(error)")
  }

  /// Host helpers hold their VM weakly: a VM let go is freed (the fuzzer found VMs piling up when
  /// `plist.decode` held its VM, 4 GB after 50,000 inputs).
  @Test func aVMLetGoIsFreed() throws {
    weak var released: LuaVM?
    do {
      let vm = try LuaVM()
      released = vm
      _ = try vm.run(source: "return plist.decode", name: "held.lua")
    }
    #expect(released == nil)
  }
}
