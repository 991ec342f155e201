import CLuaShim

/// Line coverage of the Lua scripts every VM of the process runs (`migrun test --coverage`): which
/// lines ran and how often, by script name (`folder/module.lua` for a required module, the name a
/// script was run under otherwise). Costs a hook call per line while on; off by default.
package enum LuaCoverage {
  /// Starts counting (from zero).
  package static func start() {
    mr_coverage_reset()
    mr_coverage_enable(1)
  }

  package static func stop() { mr_coverage_enable(0) }

  /// Script name → line → times run.
  package static func lines() -> [String: [Int: Int]] {
    var lines: [String: [Int: Int]] = [:]
    var name = [CChar](repeating: 0, count: 4096)
    var line: Int32 = 0
    var count: Int64 = 0
    for index in 0..<mr_coverage_size() {
      guard mr_coverage_entry(index, &name, name.count, &line, &count) != 0 else { break }
      let script = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      lines[script, default: [:]][Int(line), default: 0] += Int(count)
    }
    return lines
  }
}
