import LuaHost
import Testing

@Suite struct LuaValueTests {
  static func roundTrip(_ values: [LuaValue]) throws -> [LuaValue] {
    let vm = try LuaVM()
    let identity = try #require(
      try vm.run(source: "return function(...) return ... end", name: "id.lua").first?.functionValue)
    return try vm.call(identity, values)
  }

  @Test func everyScalarKindRoundTrips() throws {
    let values: [LuaValue] = [
      .nil, true, false, 0, 1, -1, .integer(.max), .integer(.min), 0.5, -2.25, .number(1e300), .number(-.infinity),
      "", "text", .text("ünïcødé ☕"), .bytes([0, 0, 0]), .bytes([0xFF, 0x00, 0xFE, 0x80]), .null,
    ]
    #expect(try Self.roundTrip(values) == values)
  }

  @Test func integersAndFloatsStayDistinct() throws {
    let vm = try LuaVM()
    let types = try #require(
      try vm.run(source: "return function(a, b) return math.type(a), math.type(b), a == b end", name: "t.lua").first?
        .functionValue)
    #expect(try vm.call(types, [1, 1.0]) == ["integer", "float", true])
    #expect(try vm.run(source: "return 3 // 2, 3 / 2, 2^2, 7 % 3", name: "n.lua") == [1, 1.5, 4.0, 1])
  }

  @Test func stringsKeepZeroBytes() throws {
    let vm = try LuaVM()
    let f = try #require(
      try vm.run(source: "return function(s) return #s, s:byte(2), s .. '\\0' end", name: "z.lua").first?.functionValue)
    #expect(try vm.call(f, [.bytes([1, 0, 2])]) == [3, 0, .bytes([1, 0, 2, 0])])
  }

  @Test func tablesRoundTripWithArraysFieldsAndNULL() throws {
    let nested: LuaValue = [
      "name": "soup", "tags": ["hot", "red"], "photo": .bytes([0, 1]), "missing": .null,
      "nested": ["deep": ["deeper": [1, 2.5, "three"]]],
    ]
    var mixed = LuaTable(array: [10, 20])
    mixed.fields[.integer(5)] = "five"
    mixed.fields[.boolean(true)] = "yes"
    mixed.fields[.number(1.5)] = "one and a half"
    let values: [LuaValue] = [nested, .table(mixed), .table(LuaTable())]
    #expect(try Self.roundTrip(values) == values)
  }

  @Test func tableBuiltInLuaArrivesWithArrayAndFields() throws {
    let vm = try LuaVM()
    let results = try vm.run(source: "return { 'a', 'b', nil, 'd', x = NULL, [10] = true }", name: "t.lua")
    let table = try #require(results.first?.tableValue)
    #expect(table.array == ["a", "b"])
    #expect(table.fields == [.integer(4): "d", .text("x"): .null, .integer(10): true])
  }

  @Test func functionsCrossAndComeBack() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: "return function(x) return x * 2 end, function(f, v) return f(v) + 1 end", name: "f.lua")
    let double = try #require(results[0].functionValue)
    let apply = try #require(results[1].functionValue)
    #expect(try vm.call(apply, [.function(double), 20]) == [41])
    vm.release(double)
  }

  @Test func valuesThatCannotCrossAreABadValueError() throws {
    let vm = try LuaVM()
    let cyclic = try #require(throws: LuaError.self) {
      try vm.run(source: "local t = {} t.self = t return t", name: "c.lua")
    }
    #expect(cyclic.kind == .badValue)
    #expect(cyclic.message.contains("nested more than 64 deep"))
    let thread = try #require(throws: LuaError.self) {
      try vm.run(source: "return coroutine.create(function() end)", name: "co.lua")
    }
    #expect(thread.kind == .badValue)
    #expect(thread.message.contains("a thread value cannot be passed to the host"))
    #expect(try vm.run(source: "return 'still fine'", name: "ok.lua") == ["still fine"])
  }

  @Test func hostFunctionsAreCallableAndTheirErrorsAreLuaErrors() throws {
    let vm = try LuaVM()
    vm.register("add", in: "host") { arguments in
      guard arguments.count == 2, let a = arguments[0].integerValue, let b = arguments[1].integerValue else {
        throw HostError("host.add expects two integers")
      }
      return [.integer(a + b)]
    }
    vm.register("echo") { $0 }
    #expect(try vm.run(source: "return host.add(2, 3), echo(NULL, 'x', { 1 })", name: "h.lua") == [5, .null, "x", [1]])
    let error = try #require(throws: LuaError.self) { try vm.run(source: "\nreturn host.add('a')", name: "h.lua") }
    #expect(error.description == "h.lua:2: host.add expects two integers")
    let caught = try vm.run(source: "return pcall(host.add)", name: "p.lua")
    #expect(caught.first == false)
    #expect(caught.last?.stringValue?.contains("host.add expects two integers") == true)
  }
}
