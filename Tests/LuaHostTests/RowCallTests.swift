import LuaHost
import Testing

@Suite struct RowCallTests {
  @Test func valuesGoInAndComeOutByPosition() throws {
    let vm = try LuaVM()
    let policy = try #require(
      try vm.run(
        source: "return function(r) return { title = r.name:upper(), size = #r.photo, kept = r.note, extra = 1 } end",
        name: "row.lua"
      ).first?.functionValue)
    let row = try vm.prepareRowCall(
      policy, inputKeys: ["name", "photo", "note"], outputKeys: ["title", "size", "kept", "gone"])
    #expect(try vm.call(row, ["soup", .bytes([0, 1, 2]), .null]) == ["SOUP", 3, .null, .nil])
    // A nil value leaves its key out of the table.
    #expect(try vm.call(row, ["tea", .bytes([]), .nil]) == ["TEA", 0, .nil, .nil])
  }

  @Test func nothingReturnedIsNil() throws {
    let vm = try LuaVM()
    let skip = try #require(
      try vm.run(source: "return function(r) if r.skip then return end return { a = 1 } end", name: "s.lua").first?
        .functionValue)
    let row = try vm.prepareRowCall(skip, inputKeys: ["skip"], outputKeys: ["a"])
    #expect(try vm.call(row, [true]) == nil)
    #expect(try vm.call(row, [false]) == [1])
  }

  @Test func aNonTableResultIsABadValue() throws {
    let vm = try LuaVM()
    let wrong = try #require(try vm.run(source: "return function() return 42 end", name: "w.lua").first?.functionValue)
    let row = try vm.prepareRowCall(wrong, inputKeys: [], outputKeys: ["a"])
    let error = try #require(throws: LuaError.self) { try vm.call(row, []) }
    #expect(error.kind == .badValue)
    #expect(error.description == "w.lua: the function returned a number where a table of values was expected")
  }

  @Test func resultsAreReadRawSoNoMetamethodRunsOutsideTheLimits() throws {
    let vm = try LuaVM()
    let sneaky = try #require(
      try vm.run(
        source: "return function() return setmetatable({}, { __index = function() while true do end end }) end",
        name: "m.lua"
      )
      .first?.functionValue)
    let row = try vm.prepareRowCall(sneaky, inputKeys: [], outputKeys: ["a", "b"])
    #expect(try vm.call(row, []) == [.nil, .nil])
  }

  @Test func limitsAndErrorsApplyAsForAnyCall() throws {
    let vm = try LuaVM()
    let failing = try #require(
      try vm.run(
        source:
          "return function(r)\n  if r.n == 500 then error('object ' .. r.n .. ' is bad') end\n  return { n = r.n }\nend",
        name: "policies/p.lua"
      )
      .first?.functionValue)
    let row = try vm.prepareRowCall(failing, inputKeys: ["n"], outputKeys: ["n"])
    for n in 1..<500 { #expect(try vm.call(row, [.integer(Int64(n))]) == [.integer(Int64(n))]) }
    let error = try #require(throws: LuaError.self) { try vm.call(row, [500]) }
    #expect(error.description == "policies/p.lua:2: object 500 is bad")
    #expect(throws: LuaError.self) { try vm.call(row, [1, 2]) }
  }
}
