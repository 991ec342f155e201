/// Text written into an XML document, escaped: `&`, `<`, `>` and `"` as entities; control
/// characters other than tab and newline, which XML 1.0 has no place for, as `controls` says.
package enum XMLText {
  package enum Controls: Sendable {
    /// As character references (`&#1;`), read back by ``XMLScanner`` (XML 1.1's form).
    case references
    /// As spaces (a report whose readers take only XML 1.0).
    case spaces
  }

  package static func escaped(_ text: String, controls: Controls = .references) -> String {
    var escaped = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": escaped += "&amp;"
      case "<": escaped += "&lt;"
      case ">": escaped += "&gt;"
      case "\"": escaped += "&quot;"
      case "\n", "\t": escaped.unicodeScalars.append(scalar)
      case _ where scalar.value < 0x20:
        escaped += controls == .references ? "&#\(scalar.value);" : " "
      default: escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }
}
