import LuaHost
import Testing

@Suite struct SmokeTests {
  @Test func runsAndCalls() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: "return function(x) return x .. '!', math.type(1), math.type(1.0), NULL end, 42", name: "smoke.lua")
    #expect(results.count == 2)
    let f = try #require(results[0].functionValue)
    let out = try vm.call(f, ["hi"])
    #expect(out == ["hi!", "integer", "float", .null])
    do {
      try vm.run(source: "while true do end", name: "loop.lua")
    } catch {
      print("ERR", error.kind, error)
    }
    do {
      try vm.run(source: "local x = nope", name: "g.lua")
    } catch {
      print("ERR", error.kind, error, error.traceback ?? "")
    }
  }
}
