import MigrunKit
import MigrunModel

/// Lua source text that migrun writes (`convert`, `diff --lua`): string literals, table keys, values.
package enum LuaSource {
  package static let keywords: Set<String> = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in", "local", "nil",
    "not", "or", "repeat", "return", "then", "true", "until", "while",
  ]

  /// A name usable as `name` (not a keyword, ASCII letters, digits and `_`, not starting with a digit).
  package static func isIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic)
    else { return false }
    return !keywords.contains(name)
      && name.unicodeScalars.allSatisfy {
        $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0)
      }
  }

  /// A table key: `name`, or `["name"]` when it is not an identifier.
  package static func key(_ name: String) -> String { isIdentifier(name) ? name : "[\(string(name))]" }

  /// A stored value as a Lua literal (a Boolean as Core Data stores it, 0 or 1).
  package static func literal(_ value: StoreValue) -> String {
    switch value {
    case .null: return "NULL"
    case .integer(let number): return String(number)
    case .boolean(let flag): return flag ? "1" : "0"
    case .double(let number), .date(let number):
      if number.isNaN { return "0/0" }
      if number.isInfinite { return number > 0 ? "1/0" : "-1/0" }
      return "\(number)"
    case .string(let text): return string(text)
    default: return "NULL"
    }
  }

  /// A Lua string literal.
  package static func string(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case _ where scalar.value < 32 || scalar.value == 127:
        let digits = String(scalar.value)
        out += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}
