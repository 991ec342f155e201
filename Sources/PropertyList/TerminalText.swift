/// Text for a terminal: what a script, a store or a file name holds is shown, never obeyed.
package enum TerminalText {
  /// `text` as a terminal shows it harmlessly: control characters (but tab) and C1 controls
  /// written as `\u{1B}` — a script's or a store's text never moves the cursor, recolours the
  /// screen or hides what follows.
  ///
  /// ```swift
  /// TerminalText.safe("red\u{1B}[31m")  // "red\\u{1B}[31m"
  /// ```
  ///
  /// `keepingLineBreaks`: a line feed is kept as it is (text of several lines, such as a message),
  /// else written `\u{A}` too (one line, such as a report's line: a name cannot forge a line after it).
  package static func safe(_ text: String, keepingLineBreaks: Bool = false) -> String {
    var safe = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      if keepingLineBreaks && scalar == "\n" {
        safe.append(scalar)
      } else if (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value) {
        safe.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
      } else {
        safe.append(scalar)
      }
    }
    return String(safe)
  }
}
