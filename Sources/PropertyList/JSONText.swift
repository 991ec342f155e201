import Foundation

/// JSON string literals, shared by the Lua `json` helper and the store's JSON export (both write
/// JSON by hand, for exact numbers and sorted keys). This module is the one both already use for
/// serialized formats.
package enum JSONText {
  /// Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped.
  package static func appendQuoted(_ text: String, to output: inout String) {
    output += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case _ where scalar.value < 0x20: output += String(format: "\\u%04x", scalar.value)
      default: output.unicodeScalars.append(scalar)
      }
    }
    output += "\""
  }

  /// `text` as a JSON string literal.
  package static func quoted(_ text: String) -> String {
    var output = ""
    appendQuoted(text, to: &output)
    return output
  }
}
