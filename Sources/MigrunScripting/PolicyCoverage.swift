import FileDoors
import Foundation
import LuaHost

/// Line coverage of a policy library (`migrun test --coverage FILE`): every `.lua` file under the
/// tested folders (not the tests themselves, not the editor's type definitions), its executable
/// lines and how often each ran, as an lcov tracefile and a text summary.
///
/// Which lines are executable is read off the text (our rule, close to what Lua's compiler marks):
/// a line with code outside comments, other than a block's closing words alone (`end`, `else`,
/// `until`'s partner `repeat`, `}`, `)`…); a line that ran always counts.
package enum PolicyCoverage {
  package struct File: Sendable {
    package let url: URL
    /// As the summary shows it: the tested folder's name, then the path inside it.
    package let shown: String
    /// Executable line → times run.
    package let lines: [Int: Int]

    package var percent: Double {
      lines.isEmpty ? 100 : 100 * Double(lines.values.filter { $0 > 0 }.count) / Double(lines.count)
    }
    package var neverRun: [Int] { lines.filter { $0.value == 0 }.keys.sorted() }
  }

  /// The files under `roots` with the counts of `counted` (script name → line → count).
  package static func collect(roots: [URL], counted: [String: [Int: Int]]) -> [File] {
    var files: [(url: URL, shown: String, keys: [String])] = []
    for root in roots {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder), isFolder.boolValue else {
        continue
      }
      let base = root.standardizedFileURL
      let enumerator = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)
      while let file = enumerator?.nextObject() as? URL {
        let name = file.lastPathComponent
        guard name.hasSuffix(".lua"), !name.hasSuffix("_test.lua") else { continue }
        let path = file.standardizedFileURL.path
        guard path.hasPrefix(base.path + "/") else { continue }
        let relative = String(path.dropFirst(base.path.count + 1))
        guard let text = try? InputFile.text(URL(fileURLWithPath: path)), !text.hasPrefix("---@meta") else {
          continue
        }
        let shown = "\(base.lastPathComponent)/\(relative)"
        // The names a script runs under: a module's, and a mapping file's ("<folder>/<file>").
        let parent = file.deletingLastPathComponent().lastPathComponent
        files.append((file.standardizedFileURL, shown, [shown, "\(parent)/\(name)"]))
      }
    }
    var result: [File] = []
    for (url, shown, keys) in files.sorted(by: { $0.shown < $1.shown }) {
      guard let text = try? InputFile.text(url) else { continue }
      var lines: [Int: Int] = [:]
      for line in executableLines(of: text) { lines[line] = 0 }
      // A line that holds a whole function counts the runs of that function's body (recorded as
      // the line negated), not the enclosing code that made the closure when the file loaded.
      let oneLiners = oneLineFunctions(of: text)
      for key in Set(keys) {
        for (line, count) in counted[key] ?? [:] {
          if line < 0 {
            if oneLiners.contains(-line) { lines[-line, default: 0] += count }
          } else if !oneLiners.contains(line) {
            lines[line, default: 0] += count
          }
        }
      }
      result.append(File(url: url, shown: shown, lines: lines))
    }
    return result
  }

  /// The lcov tracefile of `files` (`SF`, `DA` per executable line, `LF`, `LH`).
  package static func lcov(_ files: [File]) -> String {
    var out = ""
    for file in files {
      out += "TN:\nSF:\(file.url.path)\n"
      for (line, count) in file.lines.sorted(by: { $0.key < $1.key }) { out += "DA:\(line),\(count)\n" }
      out += "LF:\(file.lines.count)\nLH:\(file.lines.values.filter { $0 > 0 }.count)\nend_of_record\n"
    }
    return out
  }

  /// One line per file (its percentage and the lines never run, as ranges), then the total.
  package static func summary(_ files: [File]) -> [String] {
    var lines = files.map { file in
      let never = ranges(file.neverRun)
      return String(format: "%6.1f%%  ", file.percent) + file.shown + (never.isEmpty ? "" : "  never run: \(never)")
    }
    let total = files.reduce(0) { $0 + $1.lines.count }
    let hit = files.reduce(0) { $0 + $1.lines.values.filter { $0 > 0 }.count }
    lines.append(
      String(format: "%6.1f%%  ", total == 0 ? 100 : 100 * Double(hit) / Double(total))
        + "in all: \(hit) of \(total) lines in \(files.count) files")
    return lines
  }

  static func ranges(_ numbers: [Int]) -> String {
    var parts: [String] = []
    var index = 0
    while index < numbers.count {
      var end = index
      while end + 1 < numbers.count, numbers[end + 1] == numbers[end] + 1 { end += 1 }
      parts.append(end == index ? "\(numbers[index])" : "\(numbers[index])-\(numbers[end])")
      index = end + 1
    }
    return parts.joined(separator: ", ")
  }

  /// The lines of Lua text that hold code (see the type's notes).
  /// The lines that hold a whole function — `function` and its `end` on one line, as `diff --lua`
  /// writes attribute functions. Read off the line's words outside strings and comments: the line
  /// has `function`, and as many `end`s as blocks it opens (`function`, `if`, `do`) — our rule.
  static func oneLineFunctions(of text: String) -> Set<Int> {
    var found: Set<Int> = []
    for (number, code) in codeByLine(of: text) {
      let words = code.split { !($0.isLetter || $0.isNumber || $0 == "_") }
      let opens = words.filter { ["function", "if", "do"].contains($0) }.count
      if words.contains("function"), opens == words.filter({ $0 == "end" }).count { found.insert(number) }
    }
    return found
  }

  /// Each line's code outside comments, strings kept as the marker `s` (a long string counts on every
  /// line it spans), runs of blanks as one space.
  static func codeByLine(of text: String) -> [Int: String] {
    var reader = LuaCodeLines(Array(text.utf8))
    reader.read()
    return reader.code.mapValues { String(decoding: $0, as: UTF8.self) }
  }

  static func executableLines(of text: String) -> Set<Int> {
    let code = codeByLine(of: text)
    let closers: Set<String> = ["end", "else", "}", ")", "]", "do", "then", "repeat"]
    var lines = Set<Int>()
    for (number, text) in code {
      let words = text.split(whereSeparator: { $0 == " " }).joined(separator: " ")
      let trimmed = words.trimmingCharacters(in: CharacterSet(charactersIn: ",;"))
      guard !trimmed.isEmpty else { continue }
      // A block's closing words alone (`end)`, `end,`, `},`, `})`…) run nothing.
      let stripped = trimmed.replacingOccurrences(of: " ", with: "")
      if closers.contains(trimmed)
        || stripped.allSatisfy({ "}),;]".contains($0) })
        || ["end)", "end,", "end})", "end},", "end),", "end;"].contains(stripped)
      {
        continue
      }
      // A function's header, when the function is a value (`local function f(…)`, `x = function(…)`,
      // `f(function(…)`): Lua makes the closure at the function's last line, not here. (A
      // `function M.f(…)` statement is made at its first line, and stays.)
      if trimmed.hasSuffix(")"), trimmed.hasPrefix("local function ") || trimmed.contains("function(") {
        if let header = trimmed.range(of: "function"),
          trimmed.hasPrefix("local function ") || !trimmed[..<header.lowerBound].isEmpty
        {
          continue
        }
      }
      lines.insert(number)
    }
    return lines
  }
}

/// A Lua text read line by line for ``PolicyCoverage/codeByLine(of:)``: each line's code outside
/// comments, strings kept as the marker `s`.
private struct LuaCodeLines {
  let bytes: [UInt8]
  /// Line → its code outside comments (strings kept as a marker).
  var code: [Int: [UInt8]] = [:]
  var line = 1
  var index = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  mutating func read() {
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\n") {
        line += 1
        index += 1
      } else if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
        skipComment()
      } else if let level = longBracket(at: index) {
        code[line, default: []].append(UInt8(ascii: "s"))
        index = skipLong(from: index, level: level, asCode: true)
      } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
        skipShortString(closedBy: byte)
      } else {
        if byte != UInt8(ascii: " "), byte != UInt8(ascii: "\t"), byte != UInt8(ascii: "\r") {
          code[line, default: []].append(byte)
        } else {
          code[line, default: []].append(UInt8(ascii: " "))
        }
        index += 1
      }
    }
  }

  /// `--` to the end of the line, or a long comment `--[[ … ]]`.
  mutating func skipComment() {
    if let level = longBracket(at: index + 2) {
      index = skipLong(from: index + 2, level: level, asCode: false)
    } else {
      while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
    }
  }

  /// A string in quotes, kept as the marker `s`.
  mutating func skipShortString(closedBy quote: UInt8) {
    code[line, default: []].append(UInt8(ascii: "s"))
    index += 1
    while index < bytes.count, bytes[index] != quote, bytes[index] != UInt8(ascii: "\n") {
      index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    index += 1
  }

  /// `[`, any number of `=`, `[` at `position`: the level, or nil.
  func longBracket(at position: Int) -> Int? {
    guard position < bytes.count, bytes[position] == UInt8(ascii: "[") else { return nil }
    var cursor = position + 1
    var level = 0
    while cursor < bytes.count, bytes[cursor] == UInt8(ascii: "=") {
      level += 1
      cursor += 1
    }
    return cursor < bytes.count && bytes[cursor] == UInt8(ascii: "[") ? level : nil
  }

  /// Past the long bracket of `level` opened at `position`; a long string (`asCode`) counts as code
  /// on every line it spans.
  mutating func skipLong(from position: Int, level: Int, asCode: Bool) -> Int {
    var cursor = position + level + 2
    let close = [UInt8(ascii: "]")] + Array(repeating: UInt8(ascii: "="), count: level) + [UInt8(ascii: "]")]
    while cursor < bytes.count {
      if bytes[cursor] == UInt8(ascii: "\n") {
        line += 1
        if asCode { code[line, default: []].append(UInt8(ascii: "s")) }
      }
      if bytes[cursor] == UInt8(ascii: "]"), cursor + close.count <= bytes.count,
        Array(bytes[cursor..<(cursor + close.count)]) == close
      {
        return cursor + close.count
      }
      cursor += 1
    }
    return cursor
  }
}
