import Foundation
import LuaHost
import TestSupport
import Testing

@Suite struct LuaErrorTests {
  @Test func syntaxErrorNamesScriptAndLine() throws {
    let vm = try LuaVM()
    let error = try #require(throws: LuaError.self) {
      try vm.run(source: "local a = 1\nlocal b = = 2\n", name: "policies/bad.lua")
    }
    #expect(error.kind == .syntax)
    #expect(error.script == "policies/bad.lua")
    #expect(error.line == 2)
    #expect(error.description.hasPrefix("policies/bad.lua:2: unexpected symbol near '='"))
  }

  @Test func runtimeErrorHasMessagePositionAndTraceback() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: "local function inner(x)\n  return x.field\nend\nreturn function(v) local r = inner(v) return r end",
      name: "p.lua")
    let outer = try #require(results.first?.functionValue)
    let error = try #require(throws: LuaError.self) { try vm.call(outer, [.nil]) }
    #expect(error.kind == .runtime)
    #expect(error.description == "p.lua:2: attempt to index a nil value (local 'x')")
    #expect(error.traceback?.contains("p.lua:2: in upvalue 'inner'") == true, "\(error.traceback ?? "none")")
    #expect(error.traceback?.contains("p.lua:4:") == true)
  }

  @Test func errorValuesThatAreNotStringsAreDescribed() throws {
    let vm = try LuaVM()
    let table = try #require(throws: LuaError.self) { try vm.run(source: "error({ code = 1 })", name: "t.lua") }
    #expect(table.message == "(error object is a table value)")
    let levelZero = try #require(throws: LuaError.self) { try vm.run(source: "error('plain', 0)", name: "t.lua") }
    #expect(levelZero.description == "t.lua: plain")
  }

  @Test func scriptFilesAreNamedAsGivenAndUnreadableOnesAreFileErrors() throws {
    let folder = try TemporaryDirectory()
    let file = try folder.write("return ...", to: "policy.lua")
    let vm = try LuaVM()
    #expect(try vm.run(file: file, name: "policies/policy.lua").isEmpty)
    let missing = try #require(throws: LuaError.self) {
      try vm.run(file: folder.url.appendingPathComponent("absent.lua"), name: "absent.lua")
    }
    #expect(missing.kind == .file)
    #expect(missing.script == "absent.lua")
  }

  @Test func longScriptNamesAreKeptWhole() throws {
    let name = "policies/" + String(repeating: "long-folder-name/", count: 5) + "Recipes 2-Recipes 3.lua"
    let error = try #require(throws: LuaError.self) { try LuaVM().run(source: "\n\nerror('boom')", name: name) }
    #expect(error.script == name)
    #expect(error.line == 3)
  }
}
