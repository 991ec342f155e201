import FileDoors
import Foundation
import LuaHost
import Yams

#if canImport(Glibc)
  import Glibc
#endif

/// A project's `.migrun.yml`, found in the working folder or the nearest folder above it: the
/// options a team would otherwise repeat on every command. Flags given on the command line win.
///
/// ```yaml
/// model: Model/Moody.xcdatamodeld     # paths are relative to the file's folder
/// policies: [policies, shared-policies]
/// chain: Moody, Moody 2, Moody 3      # or a list
/// configuration: Cloud
/// to: Moody 3
/// jobs: 4
/// lua: { time: 30, memory: 256, instructions: 200000000 }
/// ```
///
/// A key migrun does not know, or a value of the wrong kind, is an error naming the file and the key
/// (a misspelt key would otherwise be an option silently not in force).
package struct ProjectConfig: Sendable {
  package static let fileName = ".migrun.yml"
  package static let keys = ["model", "policies", "chain", "configuration", "to", "jobs", "lua"]
  package static let luaKeys = ["time", "memory", "instructions"]

  package let file: URL
  package var model: String?
  package var policies: [String] = []
  package var chain: String?
  package var configuration: String?
  package var to: String?
  package var jobs: Int?
  package var luaTime: Double?
  package var luaMemory: Int?
  package var luaInstructions: Int64?

  /// The file in `folder` or the nearest folder above.
  package static func find(from folder: URL) -> URL? {
    var current = folder.standardizedFileURL
    while true {
      let candidate = current.appendingPathComponent(fileName)
      if InputFile.kind(at: candidate.path) != nil { return candidate }
      let parent = current.deletingLastPathComponent()
      if parent.path == current.path { return nil }
      current = parent
    }
  }

  /// The project file in force (from the working folder), read now: the command line reads it once
  /// per command and hands it down (no copy is kept for the process).
  package static func inWorkingFolder() throws -> ProjectConfig? {
    guard let url = find(from: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)) else { return nil }
    if let doubt = untrusted(url) {
      StandardError.write("migrun: warning: \(url.path) is not read: \(doubt)\n")
      return nil
    }
    do {
      return try load(url)
    } catch let error as ToolError {
      throw error
    } catch {
      throw ToolError(message: "\(url.path): \(error)", underlying: error)
    }
  }

  /// Why a project file found above the working folder is not to be obeyed, or nil when it is the
  /// user's own: as git's `safe.directory`, a file another user owns (root aside), or one that
  /// others may write — it or its folder (the system's shared temporary folder, where anyone can put
  /// one above a store someone works on) — names policies that would run over the user's stores.
  static func untrusted(_ url: URL) -> String? {
    var file = stat()
    var folder = stat()
    guard lstat(url.path, &file) == 0, stat(url.deletingLastPathComponent().path, &folder) == 0 else { return nil }
    if file.st_uid != geteuid() && file.st_uid != 0 {
      return "another user (uid \(file.st_uid)) owns it, and its policies would run over your stores; "
        + "if it is yours to use, take it over (chown) or give its options on the command line"
    }
    if file.st_mode & S_IWOTH != 0 {
      return "anyone may write it (mode \(String(file.st_mode & 0o777, radix: 8))); make it yours alone (chmod o-w)"
    }
    if folder.st_mode & S_IWOTH != 0 {
      return "its folder \(url.deletingLastPathComponent().path) is writable by anyone, so anyone could have put it "
        + "there; keep project files in a folder of your own"
    }
    return nil
  }

  /// The file's YAML, parsed.
  private static func yaml(_ url: URL, fail: (String) -> ToolError) throws -> Any? {
    // Not read whole when it is far larger than a project file can be.
    let text: String
    do {
      text = try InputFile.text(url, limit: yamlLimits.bytes)
    } catch let error as InputFileError {
      throw fail(error.reason)
    }
    return try yaml(text, fail: fail)
  }

  /// `text` as YAML, parsed, within ``yamlLimits`` (the `project-config` fuzz target's entry).
  package static func yaml(_ text: String, fail: (String) -> ToolError) throws -> Any? {
    guard text.utf8.count <= yamlLimits.bytes else {
      throw fail(tooLarge(text.utf8.count))
    }
    let node: Node?
    do {
      node = try Yams.compose(yaml: text)
    } catch {
      throw fail("not YAML: \(error)")
    }
    guard let node else { return nil }
    // Aliases share what they name: `a: &a [*b, *b, …]` nested a few dozen times is a few hundred bytes
    // that expand to billions of values. Counted before anything is expanded.
    var budget = yamlLimits.values
    guard fits(node, within: &budget) else {
      throw fail("its aliases (*name) expand to more than \(yamlLimits.values) values; write the values out instead")
    }
    return node.any
  }

  /// The most a project file may hold: its size, and its values with every alias expanded (nesting
  /// is bounded by libyaml, 1,000 levels).
  private static let yamlLimits = (bytes: 1 << 20, values: 100_000)

  private static func tooLarge(_ size: Int) -> String {
    "\(size) bytes, more than a project file's \(yamlLimits.bytes); is it the right file?"
  }

  /// Whether `node`, its aliases expanded, has no more values than `budget` (which it spends); stops
  /// counting as soon as it is spent.
  private static func fits(_ node: Node, within budget: inout Int) -> Bool {
    budget -= 1
    guard budget >= 0 else { return false }
    switch node {
    case .mapping(let mapping):
      return mapping.allSatisfy { fits($0.key, within: &budget) && fits($0.value, within: &budget) }
    case .sequence(let sequence): return sequence.allSatisfy { fits($0, within: &budget) }
    case .scalar, .alias: return true
    }
  }

  private static func isFolder(_ path: String) -> Bool {
    var isFolder: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
  }

  /// The file at `url`, read: every problem of its keys and values is reported at once, in one error
  /// naming the file (a user fixing them one run at a time would otherwise meet them one by one).
  package static func load(_ url: URL) throws -> ProjectConfig {
    let parsed = try yaml(url) { ToolError(message: "\(url.path): \($0)") }
    var config = ProjectConfig(file: url)
    guard let parsed else { return config }
    guard let top = parsed as? [String: Any] else {
      throw ToolError(message: "\(url.path): expected keys and values (\(keys.joined(separator: ", ")))")
    }
    var problems: [String] = []
    for key in top.keys.sorted() {
      do {
        try config.read(key, top[key] ?? NSNull(), folder: url.deletingLastPathComponent(), problems: &problems)
      } catch let error as ToolError {
        problems.append(error.message)
      }
    }
    guard problems.isEmpty else {
      let listed =
        problems.count == 1 ? problems[0] : "\(problems.count) problems:\n  " + problems.joined(separator: "\n  ")
      throw ToolError(message: "\(url.path): \(listed)")
    }
    return config
  }

  // MARK: - Non public

  /// One top-level key's value, read into the configuration; a problem is thrown (its words alone,
  /// the file is named by ``load(_:)``), a `lua:` key's problems are added to `problems`.
  private mutating func read(_ key: String, _ value: Any, folder: URL, problems: inout [String]) throws {
    func fail(_ why: String) -> ToolError { ToolError(message: why) }
    func path(_ value: String) -> String {
      value.hasPrefix("/") ? value : folder.appendingPathComponent(value).standardizedFileURL.path
    }
    func string(_ value: Any) throws -> String {
      guard let text = value as? String ?? (value as? Int).map(String.init) ?? (value as? Double).map({ "\($0)" })
      else {
        throw fail("'\(key)' must be a text")
      }
      return text
    }
    switch key {
    case "model": model = path(try string(value))
    case "policies":
      policies = try ((value as? [Any]) ?? [value]).map { path(try string($0)) }
      // Said here, naming the file and key, not later as if a --policies flag had named it.
      if let missing = policies.first(where: { !Self.isFolder($0) }) {
        throw fail("'policies': \(missing) is no folder")
      }
    case "chain":
      chain = try (value as? [Any]).map { try $0.map(string).joined(separator: ",") } ?? string(value)
    case "configuration": configuration = try string(value)
    case "to": to = try string(value)
    case "jobs":
      guard let count = value as? Int, count >= 1 else { throw fail("'jobs' must be a whole number, 1 or more") }
      jobs = count
    case "lua":
      guard let lua = value as? [String: Any] else {
        throw fail("'lua' must hold \(Self.luaKeys.joined(separator: ", "))")
      }
      readLua(lua, problems: &problems)
    default:
      throw fail("unknown key '\(key)' (known: \(Self.keys.joined(separator: ", ")))")
    }
  }

  /// The `lua:` limits: `time` (seconds), `memory` (MiB), `instructions`, in the ranges of their flags.
  private mutating func readLua(_ lua: [String: Any], problems: inout [String]) {
    for (luaKey, luaValue) in lua.sorted(by: { $0.key < $1.key }) {
      let problem: String?
      switch luaKey {
      case "time":
        let seconds = (luaValue as? Double) ?? (luaValue as? Int).map(Double.init)
        problem = seconds.map(Self.luaTimeProblem) ?? Self.luaTimeRange
        self.luaTime = seconds
      case "memory":
        let mebibytes = luaValue as? Int
        problem = mebibytes.map(Self.luaMemoryProblem) ?? Self.luaMemoryRange
        self.luaMemory = mebibytes
      case "instructions":
        let count = (luaValue as? Int).map(Int64.init)
        problem = count.map(Self.luaInstructionsProblem) ?? Self.luaInstructionsRange
        self.luaInstructions = count
      default:
        problem = nil
        problems.append("unknown key 'lua.\(luaKey)' (known: \(Self.luaKeys.joined(separator: ", ")))")
      }
      if let problem { problems.append("'lua.\(luaKey)' \(problem)") }
    }
  }
}

// MARK: - The Lua limits' ranges

/// One home for the ranges of the Lua limits: the flags (`--lua-time`, `--lua-memory`,
/// `--lua-instructions`) and `.migrun.yml`'s `lua:` keys refuse the same values in the same words.
extension ProjectConfig {
  static let luaTimeRange = "must be more than 0 seconds"
  static let luaMemoryRange = "must be between 1 and 1048576 MiB"
  static let luaInstructionsRange = "must be at least 1"

  /// What is wrong with `seconds` as the Lua time limit, or nil.
  package static func luaTimeProblem(_ seconds: Double) -> String? {
    seconds > 0 && seconds.isFinite ? nil : luaTimeRange
  }
  /// What is wrong with `mebibytes` as the Lua memory limit (its bytes must fit the VM's count), or nil.
  package static func luaMemoryProblem(_ mebibytes: Int) -> String? {
    (1...(1 << 20)).contains(mebibytes) ? nil : luaMemoryRange
  }
  /// The Lua limits in force: the flags' values given, else the project file's (`project`), else the
  /// defaults.
  package static func luaLimits(seconds: Double?, mebibytes: Int?, instructions: Int64?, project: ProjectConfig?)
    -> LuaLimits
  {
    var limits = LuaLimits()
    if let seconds = seconds ?? project?.luaTime { limits.seconds = seconds }
    if let mebibytes = mebibytes ?? project?.luaMemory { limits.memoryBytes = mebibytes << 20 }
    if let count = instructions ?? project?.luaInstructions { limits.instructions = count }
    return limits
  }

  /// What is wrong with `count` as the Lua instruction limit, or nil.
  package static func luaInstructionsProblem(_ count: Int64) -> String? { count >= 1 ? nil : luaInstructionsRange }
}

/// A job that falls back on the project file for the options it was not given: the command line
/// reads the file once and hands it to the job (``ProjectConfig/inWorkingFolder()``).
package protocol ProjectJob {
  var project: ProjectConfig? { get set }
}

extension ProjectJob {
  /// The job with the project file the command line read.
  package func reading(_ project: ProjectConfig?) -> Self {
    var job = self
    job.project = project
    return job
  }
}
