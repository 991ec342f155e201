import Foundation
import MigrunTools
import TestSupport
import Testing

/// `.migrun.yml` read as a value (`ProjectConfig.load`): paths are the file's folder's, and every
/// problem of its keys is said at once, in one error naming the file.
struct ProjectConfigLoadTests {
  @Test func valuesAreReadAndPathsAreTheFilesFolders() throws {
    let folder = try TemporaryDirectory()
    _ = try folder.folder("policies")
    let file = try folder.write(
      """
      model: models/M.xcdatamodeld
      policies: policies
      chain: [V1, V2, V3]
      to: V3
      jobs: 4
      lua: { time: 2.5, memory: 64, instructions: 1000 }
      """, to: ".migrun.yml")
    let config = try ProjectConfig.load(file)
    #expect(config.model == folder.url.appendingPathComponent("models/M.xcdatamodeld").standardizedFileURL.path)
    #expect(config.policies == [folder.url.appendingPathComponent("policies").standardizedFileURL.path])
    #expect(config.chain == "V1,V2,V3")
    #expect(config.to == "V3" && config.jobs == 4)
    #expect(config.luaTime == 2.5 && config.luaMemory == 64 && config.luaInstructions == 1000)
  }

  @Test func everyProblemIsSaidAtOnceNamingTheFile() throws {
    let folder = try TemporaryDirectory()
    let file = try folder.write(
      "modle: M\njobs: 0\npolicies: nowhere\nlua: { time: 0, colour: red }\n", to: ".migrun.yml")
    let error = try #require(throws: ToolError.self) { try ProjectConfig.load(file) }
    #expect(error.message.hasPrefix("\(file.path): 5 problems:\n"), "\(error.message)")
    for problem in [
      "'jobs' must be a whole number, 1 or more", "unknown key 'lua.colour' (known: time, memory, instructions)",
      "'lua.time' must be more than 0 seconds", "unknown key 'modle' (known: model, policies",
      "'policies': \(folder.url.appendingPathComponent("nowhere").standardizedFileURL.path) is no folder",
    ] {
      #expect(error.message.contains("\n  " + problem), "\(problem) not in \(error.message)")
    }
  }

  @Test func aFileThatIsNoKeysAndValuesIsRefused() throws {
    let folder = try TemporaryDirectory()
    let list = try folder.write("- model\n- jobs\n", to: ".migrun.yml")
    let error = try #require(throws: ToolError.self) { try ProjectConfig.load(list) }
    #expect(error.message == "\(list.path): expected keys and values (\(ProjectConfig.keys.joined(separator: ", ")))")
    let empty = try folder.write("# nothing yet\n", to: "empty.yml")
    let config = try ProjectConfig.load(empty)
    #expect(config.model == nil && config.policies.isEmpty && config.jobs == nil)
  }

  @Test func theLuaLimitsRangesAreTheFlagsOnes() {
    #expect(ProjectConfig.luaTimeProblem(0) == "must be more than 0 seconds")
    #expect(ProjectConfig.luaTimeProblem(0.5) == nil)
    #expect(ProjectConfig.luaMemoryProblem(1 << 20) == nil)
    #expect(ProjectConfig.luaMemoryProblem((1 << 20) + 1) == "must be between 1 and 1048576 MiB")
    #expect(ProjectConfig.luaInstructionsProblem(0) == "must be at least 1")
  }
}
