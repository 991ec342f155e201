import Foundation

/// Help text written hard-wrapped in the source, as the help formatter wants it: the lines of each
/// paragraph joined (the formatter wraps them to the terminal; left as they are, each source line
/// would be wrapped again and break mid-sentence), blank lines and indented lines (examples, lists)
/// kept as written.
package enum HelpText {
  package static func reflow(_ text: String) -> String {
    var out: [String] = []
    var paragraph: [String] = []
    func flush() {
      if !paragraph.isEmpty { out.append(paragraph.joined(separator: " ")) }
      paragraph = []
    }
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.trimmingCharacters(in: .whitespaces).isEmpty {
        flush()
        out.append("")
      } else if line.first == " " || line.first == "-" || line.hasSuffix(":") {
        flush()
        out.append(String(line))
      } else {
        paragraph.append(String(line))
      }
    }
    flush()
    return out.joined(separator: "\n")
  }
}
