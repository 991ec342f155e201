import Foundation
import MigrunModel

/// "1 store", "2 stores".
package func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

/// `text` filled with spaces to `width` columns; a longer text is kept whole (never cut).
package func padded(_ text: String, _ width: Int) -> String {
  text.count >= width ? text : text.padding(toLength: width, withPad: " ", startingAt: 0)
}

/// Words compared.
package enum Text {
  /// Levenshtein distance between two words.
  package static func distance(_ a: String, _ b: String) -> Int {
    let (a, b) = (Array(a), Array(b))
    var row = Array(0...b.count)
    for (i, x) in a.enumerated() {
      var previous = row[0]
      row[0] = i + 1
      for (j, y) in b.enumerated() {
        let current = row[j + 1]
        row[j + 1] = min(row[j + 1] + 1, row[j] + 1, previous + (x == y ? 0 : 1))
        previous = current
      }
    }
    return row[b.count]
  }

}
