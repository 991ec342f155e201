/// Turns a derived attribute's expression into the text `NSExpression` prints for it, which is what
/// Core Data hashes.
///
/// A key path with a collection operator becomes a function expression:
/// `pages.@count` → `count:(pages)`, `items.@sum.price` → `sum:(items.price)`; `@avg` prints as
/// `average:`. Anything else (a plain key path, a function expression already) is printed as written.
enum DerivationFormat {
  static let functionNames = [
    "count": "count:", "sum": "sum:", "avg": "average:", "min": "min:", "max": "max:",
  ]

  static func expression(_ text: String) -> String {
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
}

extension String {
  func trimmingWhitespace() -> String {
    var scalars = Substring(self)
    while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
    while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
    return String(scalars)
  }
}
