import Foundation

/// "1 store", "2 stores".
package func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

/// `text` filled with spaces to `width` columns; a longer text is kept whole (never cut).
package func padded(_ text: String, _ width: Int) -> String {
  text.count >= width ? text : text.padding(toLength: width, withPad: " ", startingAt: 0)
}
