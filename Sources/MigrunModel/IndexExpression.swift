import PropertyList

/// What a fetch index element indexes when it is no property: the `NSExpressionDescription` an
/// `NSFetchIndexElementDescription` may hold (Apple: "This property may also be an
/// NSExpressionDescription that expresses a function"), as `NSExpression` prints and archives it —
/// `lowercase:(title)`, `abs:(balance)`, `price * quantity`, `SELF`.
///
/// Xcode writes such an element as `<fetchIndexElement expression="lowercase:(title)"
/// expressionType="String" …/>` (the expression in `NSExpression`'s format syntax); a compiled model
/// or a store's model cache archives the description under `NSIndexedProperty`.
package indirect enum IndexExpression: Sendable, Hashable, CustomStringConvertible {
  /// `SELF`: the object (its primary key).
  case evaluatedObject
  /// A key path (`title`; `folder.name` is one Core Data refuses in an index).
  case keyPath(String)
  case constant(Constant)
  /// A function expression by its selector (`lowercase:`, `add:to:`, `now`) and arguments.
  case function(String, [IndexExpression])
  /// An expression of another kind (a variable, a subquery, a ternary…), by what it is.
  case other(String)

  package enum Constant: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case string(String)
    /// An `NSDate`, as seconds since 2001-01-01.
    case date(Double)
  }

  /// The infix operators `NSExpression` prints for its arithmetic functions.
  static let infix: [String: String] = ["add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/"]

  /// As `NSExpression.description` prints it: `lowercase:(title)`, `now()`, `price * quantity`.
  package var description: String {
    switch self {
    case .evaluatedObject: return "SELF"
    case .keyPath(let path): return path
    case .constant(.null): return "nil"
    case .constant(.integer(let number)): return String(number)
    case .constant(.real(let number)): return String(number)
    case .constant(.string(let text)): return "\"\(text.replacingOccurrences(of: "\"", with: "\\\""))\""
    case .constant(.date(let seconds)): return "CAST(\(seconds), \"NSDate\")"
    case .function(let selector, let arguments):
      if let symbol = Self.infix[selector], arguments.count == 2 {
        func operand(_ argument: IndexExpression) -> String {
          if case .function(let inner, let parts) = argument, Self.infix[inner] != nil, parts.count == 2 {
            return "(\(argument))"
          }
          return argument.description
        }
        return "\(operand(arguments[0])) \(symbol) \(operand(arguments[1]))"
      }
      return "\(selector)(\(arguments.map(\.description).joined(separator: ", ")))"
    case .other(let what): return what
    }
  }

  /// Parses `NSExpression`'s format syntax as Xcode writes an element's `expression`: key paths,
  /// `SELF`, numbers, quoted strings, `nil`, functions as `lowercase:(title)`, `add:to:(a, b)` or
  /// `now()`, and `+ - * /` with parentheses.
  package static func parse(_ text: String) throws(FormatPredicateError) -> IndexExpression {
    var parser = FormatPredicateParser(text, arguments: [])
    if let error = parser.tokenizeError { throw error }
    let expression = try parser.parseIndexSum()
    guard parser.current == .end else {
      throw parser.fail("unexpected \(parser.describe(parser.current)) after the expression")
    }
    return expression
  }

  /// An archived `NSExpression` (`NSKeyPathExpression`, `NSFunctionExpression`,
  /// `NSConstantValueExpression`, `NSSelfExpression`…): a fetch index element's, and a derived
  /// attribute's, whose ``description`` is the text Core Data hashes.
  static func archived(_ value: ArchivedValue, depth: Int = 0) -> IndexExpression {
    guard depth < 64, case .object(let className, let fields) = value else {
      return .other("an expression migrun cannot read")
    }
    func text(_ key: String) -> String? { if case .string(let text)? = fields[key] { text } else { nil } }
    switch className {
    case "NSSelfExpression": return .evaluatedObject
    case "NSKeyPathSpecifierExpression":
      return text("NSKeyPath").map(IndexExpression.keyPath) ?? .other("a key path without keys")
    case "NSConstantValueExpression":
      switch fields["NSConstantValue"] {
      case nil, .null?: return .constant(.null)
      case .integer(let number)?: return .constant(.integer(number))
      case .real(let number)?: return .constant(.real(number))
      case .boolean(let flag)?: return .constant(.integer(flag ? 1 : 0))
      case .string(let text)?: return .constant(.string(text))
      case .object("NSDate", let date)?:
        if case .real(let seconds)? = date["NS.time"] { return .constant(.date(seconds)) }
        return .other("a date constant without a time")
      case .object(let kind, _)?: return .other("a constant \(kind)")
      default: return .other("a constant of another kind")
      }
    case "NSKeyPathExpression", "NSFunctionExpression":
      guard let selector = text("NSSelectorName") else { return .other("a function without a selector") }
      var arguments: [IndexExpression] = []
      if case .array(let values)? = fields["NSArguments"] {
        arguments = values.map { archived($0, depth: depth + 1) }
      }
      // A key path is the object receiving valueForKey:/valueForKeyPath: with the path.
      if selector == "valueForKey:" || selector == "valueForKeyPath:" {
        guard arguments.count == 1, case .keyPath(let path) = arguments[0] else {
          return .other("a key path migrun cannot read")
        }
        let operand = fields["NSOperand"].map { archived($0, depth: depth + 1) }
        switch operand {
        case .evaluatedObject?, nil: return .keyPath(path)
        case .keyPath(let base)?: return .keyPath(base + "." + path)
        case let other?: return .other("a key path of \(other)")
        }
      }
      return .function(selector, arguments)
    case "NSVariableExpression": return .other("a variable")
    case "NSSubqueryExpression": return .other("a subquery")
    case "NSTernaryExpression": return .other("a ternary expression")
    case "NSAggregateExpression": return .other("an aggregate")
    default: return .other("an expression \(className)")
    }
  }
}

extension FormatPredicateParser {
  /// The binary operators by precedence, loosest first, as the functions `NSExpression` makes of them.
  static let indexOperatorLevels: [[String: String]] = [
    ["+": "add:to:", "-": "from:subtract:"], ["*": "multiply:by:", "/": "divide:by:"],
  ]

  /// An expression whose operators bind at least as tightly as `level`'s, left to right.
  mutating func parseIndexSum(level: Int = 0) throws(FormatPredicateError) -> IndexExpression {
    guard level < Self.indexOperatorLevels.count else { return try parseIndexPrimary() }
    var result = try parseIndexSum(level: level + 1)
    while case .symbol(let symbol) = current, let selector = Self.indexOperatorLevels[level][symbol] {
      advance()
      result = .function(selector, [result, try parseIndexSum(level: level + 1)])
    }
    return result
  }

  /// One operand: parentheses and function arguments recurse through it, so it counts a level
  /// (``enter()``): a text of a hundred thousand `(` stops with an error, not the stack.
  mutating func parseIndexPrimary() throws(FormatPredicateError) -> IndexExpression {
    try enter()
    defer { depth -= 1 }
    switch current {
    case .symbol("-"):
      advance()
      guard case .number(let value, let isInteger) = current else { throw fail("expected a number after '-'") }
      advance()
      return .constant(isInteger && abs(value) < 9.2e18 ? .integer(-Int64(value)) : .real(-value))
    case .number(let value, let isInteger):
      advance()
      return .constant(isInteger && abs(value) < 9.2e18 ? .integer(Int64(value)) : .real(value))
    case .string(let text):
      advance()
      return .constant(.string(text))
    case .symbol("("):
      advance()
      let inner = try parseIndexSum()
      guard current == .symbol(")") else { throw fail("expected ')'") }
      advance()
      return inner
    case .word(let word):
      if let constant = Self.indexWordConstant(word) {
        advance()
        return constant
      }
      advance()
      // A function: `lowercase:(title)`, `add:to:(a, b)`, or `now()`.
      if current == .symbol(":") || current == .symbol("(") { return try parseIndexFunction(named: word) }
      return try parseIndexKeyPath(from: word)
    default:
      throw fail("expected a key path, a value or a function, found \(describe(current))")
    }
  }

  /// The value a word names on its own (`nil`, `self`, `true`, `NO` …), or nil for a key or a function.
  static func indexWordConstant(_ word: String) -> IndexExpression? {
    switch word.uppercased() {
    case "NIL", "NULL": .constant(.null)
    case "SELF": .evaluatedObject
    case "TRUE", "YES": .constant(.integer(1))
    case "FALSE", "NO": .constant(.integer(0))
    default: nil
    }
  }

  /// A function call after its first word: `:` and the selector's other parts, then the arguments
  /// in parentheses.
  mutating func parseIndexFunction(named word: String) throws(FormatPredicateError) -> IndexExpression {
    var selector = word
    if current == .symbol(":") {
      selector += ":"
      advance()
      while case .word(let part) = current {
        advance()
        guard current == .symbol(":") else { throw fail("expected ':' after '\(part)' in a selector") }
        selector += part + ":"
        advance()
      }
      guard current == .symbol("(") else { throw fail("expected '(' after the function \(selector)") }
    }
    advance()
    var arguments: [IndexExpression] = []
    if current != .symbol(")") {
      arguments.append(try parseIndexSum())
      while current == .symbol(",") {
        advance()
        arguments.append(try parseIndexSum())
      }
    }
    guard current == .symbol(")") else { throw fail("expected ')' or ',', found \(describe(current))") }
    advance()
    if !selector.hasSuffix(":"), !arguments.isEmpty { selector += ":" }
    return .function(selector, arguments)
  }

  /// A key path after its first word: `.key` parts.
  mutating func parseIndexKeyPath(from word: String) throws(FormatPredicateError) -> IndexExpression {
    var path = word
    while current == .symbol(".") {
      advance()
      guard case .word(let key) = current else { throw fail("expected a key after '.'") }
      path += "." + key
      advance()
    }
    return .keyPath(path)
  }
}
