import Foundation
import LuaHost
import MigrunKit
import Testing

@testable import MigrunScripting
@testable import MigrunTools
@testable import TestSupport

/// The editor's type definitions (`policies/types`) name everything the host registers: every
/// helper module function and global of a live VM, the object views' and the manager's methods, the
/// mapping-file fields, the merge context, and the test API — so they cannot drift.
@Suite struct TypeDefinitionTests {
  static let types: String = {
    let folder = Fixtures.repositoryRoot.appendingPathComponent("policies/types")
    let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return files.sorted().filter { $0.hasSuffix(".lua") }.compactMap {
      try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)
    }.joined(separator: "\n")
  }()

  static func names(_ pattern: String, in text: String) throws -> [String] {
    let expression = try NSRegularExpression(pattern: pattern)
    let range = NSRange(text.startIndex..., in: text)
    return expression.matches(in: text, range: range).compactMap { match in
      Range(match.range(at: 1), in: text).map { String(text[$0]) }
    }
  }

  @Test func theDefinitionsAreMetaFilesTheLanguageServerFinds() throws {
    #expect(Self.types.contains("---@meta migrun"))
    let settings = try Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent(".luarc.json"))
    let object = try #require(try JSONSerialization.jsonObject(with: settings) as? [String: Any])
    #expect(object["workspace.library"] as? [String] == ["policies/types"])
    #expect(object["runtime.version"] as? String == "Lua 5.4")
  }

  /// Every global a policy's VM has beyond Lua's own: module functions and plain globals.
  @Test func everyHostGlobalIsDefined() throws {
    let vm = try LuaVM()
    let listed = try vm.run(
      source: """
        local standard = {}
        for name in ("_G _VERSION assert error getmetatable ipairs next pairs pcall rawequal rawget rawlen rawset " ..
          "select setmetatable tonumber tostring type xpcall require string table math utf8 coroutine " ..
          "os io load loadfile dofile collectgarbage package debug warn"):gmatch("%S+") do standard[name] = true end
        local out = {}
        for name, value in pairs(_G) do
          if not standard[name] and name:sub(1, 2) ~= "__" then
            if type(value) == "table" and name ~= "NULL" then
              for key, member in pairs(value) do
                if type(member) == "function" then out[#out + 1] = name .. "." .. key end
              end
            else
              out[#out + 1] = name
            end
          end
        end
        table.sort(out)
        return table.concat(out, " ")
        """, name: "globals")
    let names = (listed.first?.stringValue ?? "").split(separator: " ").map(String.init)
    #expect(names.count >= 15, "\(names)")
    for name in names {
      let defined =
        Self.types.contains("function \(name)(") || Self.types.contains("\n\(name) = ")
      #expect(defined, "\(name) has no definition in policies/types")
    }
  }

  @Test func objectsManagerMappingFilesMergeRulesAndTestsAreDefined() throws {
    for method in try Self.names(#"function methods\.(\w+)\("#, in: Prelude.source) {
      #expect(Self.types.contains("function Object:\(method)("), "object method \(method)")
    }
    for method in try Self.names(#"function Manager:(\w+)\("#, in: Prelude.source) {
      #expect(Self.types.contains("function Manager:\(method)("), "manager method \(method)")
    }
    // Fields a script reads (the prelude's own start with `__`).
    let managerFields = try Self.names(#"(\w+) = info\.\w+"#, in: Prelude.source).filter { !$0.hasPrefix("__") }
    #expect(managerFields.sorted() == ["from", "mapping", "model", "to"])
    for field in managerFields {
      #expect(Self.types.contains("---@field \(field) "), "manager field \(field)")
    }
    for key in LuaMappingFile.entryKeys.sorted() {
      #expect(Self.types.contains("---@field \(key)? "), "mapping-file field \(key)")
    }
    for method in try Self.names(#"function C:(\w+)\("#, in: LuaMergeRules.helpers) {
      #expect(Self.types.contains("function MergeContext:\(method)("), "merge context method \(method)")
    }
    let mergeSource = try String(
      contentsOf: Fixtures.repositoryRoot.appendingPathComponent("Sources/MigrunScripting/LuaMergeRules.swift"),
      encoding: .utf8)
    let contextBlock = try #require(mergeSource.range(of: "let context: LuaValue = [")).upperBound
    let fields = try Self.names(#""(\w+)": "#, in: String(mergeSource[contextBlock...].prefix(700)))
    #expect(fields.count >= 10, "\(fields)")
    for field in fields { #expect(Self.types.contains("---@field \(field) "), "merge context field \(field)") }
    for method in try Self.names(#"function Expectation:(\w+)\("#, in: TestPrelude.source) {
      #expect(Self.types.contains("function Expectation:\(method)("), "matcher \(method)")
    }
    for global in try Self.names(#"\n\s*(\w+) = function"#, in: TestPrelude.source) {
      #expect(Self.types.contains("function \(global)("), "test global \(global)")
    }
    for method in try Self.names(#"function Context:(\w+)\("#, in: LuaStage.helpers) {
      #expect(Self.types.contains("function StageContext:\(method)("), "stage context method \(method)")
    }
    for method in try Self.names(#"function methods\.(\w+)\("#, in: LuaStage.helpers) {
      #expect(Self.types.contains("function StageObject:\(method)("), "stage object method \(method)")
    }
    for hook in StageHook.allCases { #expect(Self.types.contains("---@field \(hook.rawValue)? "), "stage \(hook)") }
    #expect(Self.types.contains("function migrate("))
    let testsSource = try String(
      contentsOf: Fixtures.repositoryRoot.appendingPathComponent("Sources/MigrunTools/PolicyTests/PolicyTests.swift"),
      encoding: .utf8)
    for option in Set(try Self.names(#"options\["(\w+)"\]"#, in: testsSource)).sorted() {
      #expect(Self.types.contains("---@field \(option)? "), "migrate option \(option)")
    }
  }
}
