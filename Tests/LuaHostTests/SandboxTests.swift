import Foundation
import LuaHost
import TestSupport
import Testing

/// Escape and abuse attempts. Each must end in a clear error, and the VM must answer the next call.
@Suite struct SandboxTests {
  /// (what is tried, the script, the kind of error, a phrase its message must hold)
  static let attempts: [(String, String, LuaError.Kind, String)] = [
    ("io library", "return io.open('/etc/passwd')", .runtime, "undefined global 'io'"),
    ("os.execute", "return os.execute('id')", .runtime, "attempt to call a nil value (field 'execute')"),
    ("os.getenv", "return os.getenv('HOME')", .runtime, "attempt to call a nil value (field 'getenv')"),
    ("os.remove", "return os.remove('/tmp/x')", .runtime, "attempt to call a nil value (field 'remove')"),
    ("os.exit", "os.exit(1)", .runtime, "attempt to call a nil value (field 'exit')"),
    ("debug library", "return debug.getinfo(1)", .runtime, "undefined global 'debug'"),
    ("package.loadlib", "return package.loadlib('libc.so.6', 'system')", .runtime, "undefined global 'package'"),
    ("load", "return load('return 1')", .runtime, "undefined global 'load'"),
    ("loadfile", "return loadfile('/etc/passwd')", .runtime, "undefined global 'loadfile'"),
    ("dofile", "return dofile('/etc/passwd')", .runtime, "undefined global 'dofile'"),
    ("string.dump", "return string.dump(function() end)", .runtime, "attempt to call a nil value (field 'dump')"),
    ("binary chunk", "\u{1B}Lua\u{54}\u{00}", .syntax, "attempt to load a binary chunk"),
    ("collectgarbage stop", "collectgarbage('stop')", .runtime, "collectgarbage('stop') is not allowed"),
    ("replace a library function", "string.upper = nil", .runtime, "attempt to modify read-only table 'string'"),
    ("replace math.randomseed", "math.randomseed = print", .runtime, "attempt to modify read-only table 'math'"),
    ("string metatable", "getmetatable('').__index.upper = nil", .runtime, "attempt to index a boolean value"),
    ("library metatable", "return getmetatable(string).__index", .runtime, "attempt to index a boolean value"),
    ("setmetatable(_G)", "setmetatable(_G, {})", .runtime, "cannot change a protected metatable"),
    (
      "setmetatable(_ENV)", "setmetatable(_ENV, { __index = function() return 1 end })", .runtime,
      "cannot change a protected metatable"
    ),
    (
      "__gc finaliser", "setmetatable({}, { __gc = function() while true do end end })", .runtime,
      "__gc metamethods are not allowed"
    ),
    ("require os", "return require 'os'", .runtime, "module 'os' not found"),
    ("require io", "return require 'io'", .runtime, "module 'io' not found"),
    ("path traversal in require", "return require '../../etc/passwd'", .runtime, "invalid module name"),
    ("absolute path in require", "return require '/etc/passwd'", .runtime, "invalid module name"),
    ("require a dotted escape", "return require 'a..b'", .runtime, "invalid module name"),
    (
      "runaway coroutine", "coroutine.wrap(function() while true do end end)()", .instructionLimit,
      "instruction limit"
    ),
    ("huge string", "return string.rep('x', 1 << 28)", .memoryLimit, "memory limit"),
    ("typo'd global", "return undefinedThing + 1", .runtime, "undefined global 'undefinedThing'"),
    ("index NULL", "return NULL.field", .runtime, "attempt to index NULL"),
  ]

  @Test func everyAttemptFailsClearlyAndTheVMStaysUsable() throws {
    #expect(Self.attempts.count >= 20)
    let vm = try LuaVM()
    for (what, source, kind, phrase) in Self.attempts {
      do {
        let results = try vm.run(source: source, name: "attempt.lua")
        Issue.record("\(what): not stopped, returned \(results)")
      } catch {
        #expect(error.kind == kind, "\(what): \(error)")
        #expect(error.description.contains(phrase), "\(what): \(error)")
        #expect(error.script == "attempt.lua", "\(what): \(error) \(error.traceback ?? "")")
      }
      #expect(
        try vm.run(source: "return ('ok'):upper(), #string.rep('a', 3)", name: "next.lua") == ["OK", 3], "\(what)")
    }
  }

  @Test func envGamesCannotReachTheRealGlobals() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: """
        local found = {}
        do
          local _ENV = setmetatable({}, { __index = function(_, key) return key end })
          found[1] = io   -- the string "io": nothing behind _ENV but our own table
        end
        found[2] = rawget(_G, 'io')
        found[3] = _G == _ENV
        found[4] = rawget(_ENV, 'os') ~= nil and rawget(_ENV, 'os').execute
        return found[1], found[2] == nil, found[3], found[4] == nil
        """, name: "env.lua")
    #expect(results == ["io", true, true, true])
  }

  @Test func rawsetOnALibraryViewChangesOnlyThatScriptsView() throws {
    let vm = try LuaVM()
    try vm.run(source: "rawset(string, 'upper', function() return 'pwned' end)", name: "a.lua")
    let results = try vm.run(source: "return ('a'):upper(), string.upper('b')", name: "b.lua")
    #expect(results == ["A", "B"])
  }

  @Test func globalsDoNotLeakBetweenScripts() throws {
    let vm = try LuaVM()
    try vm.run(source: "shared = 42", name: "a.lua")
    let error = try #require(throws: LuaError.self) { try vm.run(source: "return shared", name: "b.lua") }
    #expect(error.description == "b.lua:1: undefined global 'shared'")
  }

  @Test func randomNumbersRepeatFromRunToRun() throws {
    let script =
      "local t = {} for i = 1, 5 do t[i] = math.random(1000) end math.randomseed() t[6] = math.random(1000) return t"
    let first = try LuaVM().run(source: script, name: "r.lua")
    let second = try LuaVM().run(source: script, name: "r.lua")
    #expect(first == second)
  }

  @Test func allowedLibrariesWork() throws {
    let vm = try LuaVM()
    let results = try vm.run(
      source: """
        local t = { 3, 1, 2 }
        table.sort(t)
        return table.concat(t, ','), utf8.char(233), math.floor(2.5), type(os.time()), os.date('!%Y', 0),
          select('#', 1, 2), string.format('%05.1f', 3.14159), collectgarbage('count') > 0
        """, name: "libs.lua")
    #expect(results == ["1,2,3", .text("é"), 2, "number", "1970", 2, "003.1", true])
  }

  @Test func requireLoadsModulesFromTheNamedFoldersOnly() throws {
    let folder = try TemporaryDirectory()
    try folder.write("local M = {} function M.shout(s) return s:upper() .. '!' end return M", to: "text/shout.lua")
    try folder.write(
      "local other = require 'text.shout' return { twice = function(s) return other.shout(s):rep(2) end }",
      to: "text/twice.lua")
    try folder.write("return require 'loop.b'", to: "loop/a.lua")
    try folder.write("return require 'loop.a'", to: "loop/b.lua")
    try folder.write("local x = = 1", to: "broken.lua")
    try folder.write("leaked = true return {}", to: "leaky.lua")
    let vm = try LuaVM(modulePaths: [folder.url])
    #expect(try vm.run(source: "return require('text.twice').twice('hi')", name: "use.lua") == ["HI!HI!"])
    #expect(try vm.run(source: "return require('text.shout') == require('text.shout')", name: "same.lua") == [true])

    let missing = try #require(throws: LuaError.self) { try vm.run(source: "require 'nope'", name: "m.lua") }
    #expect(missing.description.contains("module 'nope' not found in the policy folders"))
    #expect(missing.description.contains(folder.url.path + "/nope.lua"))
    let circular = try #require(throws: LuaError.self) { try vm.run(source: "require 'loop.a'", name: "c.lua") }
    #expect(circular.description.contains("circular require of module 'loop.a'"))
    let broken = try #require(throws: LuaError.self) { try vm.run(source: "require 'broken'", name: "s.lua") }
    #expect(broken.script == folder.url.lastPathComponent + "/broken.lua")
    #expect(broken.line == 1)
    // A module's globals stay in the module.
    let leaked = try #require(throws: LuaError.self) {
      try vm.run(source: "require 'leaky' return leaked", name: "l.lua")
    }
    #expect(leaked.description.contains("undefined global 'leaked'"))
  }
}
