/// Turns a derived attribute's expression into the text `NSExpression` prints for it, which is what
/// Core Data hashes.
///
/// A key path with a collection operator becomes a function expression:
/// `pages.@count` → `count:(pages)`, `items.@sum.price` → `sum:(items.price)`; `@avg` prints as
/// `average:`. Anything else (a plain key path, a function expression already) is printed as written.
package enum DerivationFormat {
  static let functionNames = [
    "count": "count:", "sum": "sum:", "avg": "average:", "min": "min:", "max": "max:",
  ]

  package static func expression(_ text: String) -> String {
    let trimmed = text.trimmingWhitespace()
    let components = trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard let operatorIndex = components.firstIndex(where: { $0.hasPrefix("@") }), operatorIndex > 0,
      let function = functionNames[String(components[operatorIndex].dropFirst())]
    else { return trimmed }
    let collection = components[..<operatorIndex]
    let member = components[(operatorIndex + 1)...]
    // `pages.@count` counts the collection; `items.@count.done` (a Boolean member: Core Data counts
    // the true ones) keeps its member — a guess for how NSExpression prints it, no store shows one.
    let argument = Array(collection + member).joined(separator: ".")
    return "\(function)(\(argument))"
  }

  /// `count:(pages)` → (`count:`, `pages`); `now()` → (`now()`, nil); `title` → (nil, `title`).
  package static func parse(_ expression: String) -> (function: String?, argument: String?) {
    let text = expression.trimmingWhitespace()
    if text == "now()" { return ("now()", nil) }
    guard let colon = text.firstIndex(of: ":"), text.hasSuffix(")") else {
      return (nil, isKeyPath(text) ? text : nil)
    }
    let name = String(text[...colon])
    let rest = text[text.index(after: colon)...]
    guard rest.hasPrefix("("), case let inner = String(rest.dropFirst().dropLast()).trimmingWhitespace(),
      isKeyPath(inner)
    else { return (name, nil) }
    return (name, inner)
  }

  package static func isKeyPath(_ text: String) -> Bool {
    !text.isEmpty
      && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
        guard let first = part.first, first.isLetter || first == "_" else { return false }
        return part.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
      }
  }
}

extension String {
  package func trimmingWhitespace() -> String {
    var scalars = Substring(self)
    while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
    while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
    return String(scalars)
  }
}
