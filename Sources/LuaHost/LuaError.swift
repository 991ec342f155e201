/// A script that failed: it did not compile, raised an error, or ran into a limit.
///
/// ``description`` is one line that names the script and line where Lua knows them:
///
/// ```
/// policies/recipes/Recipes 2-Recipes 3.lua:12: attempt to index a nil value (field 'photo')
/// policies/loop.lua:3: instruction limit of 50000000 exceeded
/// ```
///
/// Match on ``kind`` to tell limits from errors:
///
/// ```swift
/// catch let error as LuaError where error.kind == .instructionLimit { … }
/// ```
package struct LuaError: Error, Sendable, Hashable, CustomStringConvertible {
  package enum Kind: String, Sendable, Hashable {
    /// The script is not valid Lua text.
    case syntax
    /// The script raised an error (`error`, a failed `assert`, a bad operation).
    case runtime
    case instructionLimit
    case memoryLimit
    case deadline
    case recursionLimit
    /// A built-in refused input whose worst case is too costly (a pattern on a huge string).
    case inputLimit
    /// A value that cannot cross between Lua and Swift (a coroutine, a table nested too deep).
    case badValue
    /// A script file that cannot be read.
    case file
  }

  package let kind: Kind
  /// What went wrong, without the position.
  package let message: String
  /// The script (its chunk name, e.g. `policies/x.lua`) where it happened, when known.
  package let script: String?
  package let line: Int?
  /// Lua's stack traceback, when there is one.
  package let traceback: String?

  package init(kind: Kind, message: String, script: String? = nil, line: Int? = nil, traceback: String? = nil) {
    self.kind = kind
    self.message = message
    self.script = script
    self.line = line
    self.traceback = traceback
  }

  /// Whether a limit stopped the script (as opposed to an error in it).
  package var isLimit: Bool {
    [.instructionLimit, .memoryLimit, .deadline, .recursionLimit, .inputLimit].contains(kind)
  }

  package var description: String {
    switch (script, line) {
    case (let script?, let line?): "\(script):\(line): \(message)"
    case (let script?, nil): "\(script): \(message)"
    default: message
    }
  }

  /// Splits Lua's "chunk:line: message" form.
  init(kind: Kind, luaMessage: String, defaultScript: String?, traceback: String?) {
    var script = defaultScript
    var line: Int?
    var message = luaMessage
    if let position = Self.position(in: luaMessage) {
      // Lua shortens long chunk names ("...tail" for files, the head for other names): give back
      // the whole name when it is the script's.
      let tail = position.script.hasPrefix("...") ? String(position.script.dropFirst(3)) : nil
      if let defaultScript, defaultScript != position.script,
        tail.map(defaultScript.hasSuffix) ?? defaultScript.hasPrefix(position.script)
      {
        script = defaultScript
      } else {
        script = position.script
      }
      line = position.line
      message = position.message
    }
    self.init(kind: kind, message: message, script: script, line: line, traceback: traceback)
  }

  /// This error named after `script` where it names the host's own Lua (a limit that struck inside
  /// the prelude, with no line of the script's to give).
  package func attributed(to script: String) -> LuaError {
    guard let current = self.script, Self.isHostChunk(current) else { return self }
    return LuaError(kind: kind, message: message, script: script, line: nil, traceback: traceback)
  }

  /// The host's own Lua chunks (`migrun prelude`, `migrun merge helpers`, the sandbox): an error
  /// names the script that called into them.
  static func isHostChunk(_ name: String) -> Bool {
    name.hasPrefix("migrun ") || name == "sandbox" || name == "[C]"
  }

  private static func position(in text: String) -> (script: String, line: Int, message: String)? {
    // "name:12: message": the first ":<digits>: " after a non-empty name.
    let characters = Array(text)
    var index = characters.startIndex
    while let colon = characters[index...].firstIndex(of: ":") {
      var end = colon + 1
      while end < characters.count, characters[end].isASCII, characters[end].isNumber { end += 1 }
      if end > colon + 1, end < characters.count, characters[end] == ":", colon > 0,
        let line = Int(String(characters[(colon + 1)..<end]))
      {
        let rest = String(characters[(end + 1)...])
        return (String(characters[..<colon]), line, rest.hasPrefix(" ") ? String(rest.dropFirst()) : rest)
      }
      index = colon + 1
    }
    return nil
  }
}
