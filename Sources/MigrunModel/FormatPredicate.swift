import Foundation

/// A predicate in `NSPredicate`'s format syntax — the language app developers already write for
/// fetch requests — parsed once and evaluated on a context's objects.
///
/// ```swift
/// let recent = try FormatPredicate("ANY items.price > %@ AND name BEGINSWITH[cd] 'sm'", arguments: [.double(10)])
/// let found = try context.fetch("Order", matching: recent, sortedBy: [.descending("date")], limit: 5)
/// ```
///
/// What it takes (Apple's "FormatPredicate Format String Syntax"): comparisons `=`/`==`, `!=`/`<>`, `<`,
/// `<=`/`=<`, `>`, `>=`/`=>`, `BETWEEN {a, b}`, `IN`; strings `BEGINSWITH`, `ENDSWITH`, `CONTAINS`,
/// `LIKE` (`*` and `?`), `MATCHES` (a regular expression matching the whole string), each with
/// `[c]` (case), `[d]` (diacritics) or `[cd]`; `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses,
/// `TRUEPREDICATE`, `FALSEPREDICATE`; key paths through to-ones and to-manys (a to-many makes the
/// values a collection), `@count`, `@sum`, `@avg`, `@min`, `@max`; `ANY`/`SOME`, `ALL`, `NONE`;
/// literals (numbers, quoted strings, `TRUE`/`YES`, `FALSE`/`NO`, `NULL`/`NIL`, `{…}` lists), `SELF`,
/// and arguments `%@` (a value), `%K` (a key path), `%d`/`%i`/`%f`. A reserved word is a key with `#`.
///
/// Semantics follow Apple's where they are documented: a comparison with NULL is false except `==`
/// and `!=` (`x == nil`); a key path through a to-many without `ANY`/`ALL`/`NONE` compares as `ANY`
/// (as Core Data's SQL does), except that `collection CONTAINS value` asks for membership; strings
/// without options compare scalar by scalar, in code-point order (SQLite's BINARY, which Core Data's
/// SQL uses), not by Swift's canonical equivalence.
public struct FormatPredicate: Sendable, CustomStringConvertible {
  package indirect enum Node: Sendable {
    case constant(Bool)
    case and([Node]), or([Node]), not(Node)
    case comparison(Expression, Operator, Expression, Options, Modifier)
  }

  package indirect enum Expression: Sendable {
    case keyPath([String])
    case value(StoreValue)
    case list([Expression])
    case this
  }

  package enum Operator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case inList = "IN", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case like = "LIKE", matches = "MATCHES", between = "BETWEEN"
  }

  package struct Options: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    package static let caseInsensitive = Options(rawValue: 1)
    package static let diacriticInsensitive = Options(rawValue: 2)
  }

  package enum Modifier: Sendable { case direct, any, all, none }

  package let root: Node
  /// The format it was parsed from.
  public let format: String

  /// Parses `format`; `arguments` fill `%@`, `%d`, `%f` (values) and `%K` (a key path, as a string) in order.
  public init(_ format: String, arguments: [StoreValue] = []) throws(FormatPredicateError) {
    try self.init(format, filling: arguments.map(Argument.value))
  }

  /// One argument of a predicate: a value, or a list of values (`name IN %@`, `n BETWEEN %@`), as
  /// `NSPredicate` takes an array for `%@`.
  public enum Argument: Sendable {
    case value(StoreValue)
    case list([StoreValue])
  }

  /// Parses `format`; `arguments` fill `%@` (a value or a list), `%d`, `%f` and `%K` in order.
  public init(_ format: String, filling arguments: [Argument]) throws(FormatPredicateError) {
    var parser = FormatPredicateParser(format, arguments: arguments)
    root = try parser.parse()
    self.format = format
  }

  public var description: String { format }

  /// The first key of each key path (checked against an entity before a fetch).
  package var keys: [String] {
    func keys(_ expression: Expression) -> [String] {
      switch expression {
      case .keyPath(let path): path.first.map { [$0] } ?? []
      case .list(let items): items.flatMap(keys)
      case .value, .this: []
      }
    }
    func walk(_ node: Node) -> [String] {
      switch node {
      case .constant: []
      case .and(let nodes), .or(let nodes): nodes.flatMap(walk)
      case .not(let inner): walk(inner)
      case .comparison(let lhs, _, let rhs, _, _): keys(lhs) + keys(rhs)
      }
    }
    return walk(root)
  }

}

/// A predicate that cannot be parsed or evaluated: what and where (the character offset).
public struct FormatPredicateError: Error, Sendable, CustomStringConvertible {
  public let format: String
  public let offset: Int?
  public let reason: String

  package init(format: String, offset: Int?, reason: String) {
    self.format = format
    self.offset = offset
    self.reason = reason
  }

  public var description: String {
    let shown = ErrorMessage.quoted(format)
    if let offset { return "predicate \"\(shown)\": at character \(offset + 1): \(reason)" }
    return "predicate \"\(shown)\": \(reason)"
  }
}

// MARK: - Parsing

struct FormatPredicateParser {
  enum Token: Equatable {
    case word(String)  // identifiers and keywords (keywords matched case-insensitively)
    case escaped(String)  // #word: always a key
    case number(Double, isInteger: Bool)
    case string(String)
    case symbol(String)
    case argument(Character)
    case end
  }

  let format: String
  var tokens: [(Token, Int)] = []
  var position = 0
  var arguments: [FormatPredicate.Argument]
  var tokenizeError: FormatPredicateError?
  /// Parentheses, NOTs and expressions open: the parser recurses once per level, so a text of a
  /// few hundred thousand `(` or `NOT` must stop with an error, not the stack.
  var depth = 0
  static let maximumDepth = 256

  mutating func enter() throws(FormatPredicateError) {
    depth += 1
    guard depth <= Self.maximumDepth else { throw fail("nested more than \(Self.maximumDepth) deep") }
  }

  init(_ format: String, arguments: [FormatPredicate.Argument]) {
    self.format = format
    self.arguments = arguments
    do { tokens = try Self.tokenize(format) } catch { tokenizeError = error }
  }

  static func tokenize(_ format: String) throws(FormatPredicateError) -> [(Token, Int)] {
    let characters = Array(format)
    var tokens: [(Token, Int)] = []
    var index = 0
    func fail(_ reason: String) -> FormatPredicateError {
      FormatPredicateError(format: format, offset: index, reason: reason)
    }
    while index < characters.count {
      let character = characters[index]
      let start = index
      if character.isWhitespace {
        index += 1
      } else if character.isLetter || character == "_" || character == "$" || character == "@" || character == "#" {
        index += 1
        while index < characters.count,
          characters[index].isLetter || characters[index].isNumber || characters[index] == "_"
            || characters[index] == "$"
        {
          index += 1
        }
        let text = String(characters[start..<index])
        tokens.append((character == "#" ? .escaped(String(text.dropFirst())) : .word(text), start))
      } else if character.isNumber
        || (character == "." && index + 1 < characters.count && characters[index + 1].isNumber
          && !(tokens.last.map { if case .word = $0.0 { return true } else { return false } } ?? false))
      {
        tokens.append((try scanNumber(characters, &index, format: format), start))
      } else if character == "'" || character == "\"" {
        tokens.append((try scanString(characters, &index, format: format), start))
      } else if character == "%" {
        guard index + 1 < characters.count, "@KdifD".contains(characters[index + 1]) else {
          throw fail("'%' starts an argument: %@, %K, %d, %i or %f")
        }
        tokens.append((.argument(characters[index + 1]), start))
        index += 2
      } else {
        guard let symbol = symbol(at: index, in: characters) else { throw fail("unexpected '\(character)'") }
        tokens.append((.symbol(symbol), start))
        index += symbol.count
      }
    }
    tokens.append((.end, characters.count))
    return tokens
  }

  /// The operator or punctuation at `index`: two characters where they make one (`==`, `&&`…), else one.
  private static func symbol(at index: Int, in characters: [Character]) -> String? {
    let two = index + 1 < characters.count ? String(characters[index...index + 1]) : ""
    if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) { return two }
    return "=<>!(){},.[]-+:*/".contains(characters[index]) ? String(characters[index]) : nil
  }

  /// A number at `index` (decimal, with a fraction and an exponent, or `0x` hexadecimal).
  private static func scanNumber(_ characters: [Character], _ index: inout Int, format: String)
    throws(FormatPredicateError) -> Token
  {
    let character = characters[index]
    func fail(_ reason: String) -> FormatPredicateError {
      FormatPredicateError(format: format, offset: index, reason: reason)
    }
    var text = ""
    var isInteger = true
    if character == "0", index + 1 < characters.count, characters[index + 1] == "x" {
      index += 2
      while index < characters.count, characters[index].isHexDigit {
        text.append(characters[index])
        index += 1
      }
      guard let value = Int64(text, radix: 16) else {
        throw fail(text.isEmpty ? "a hexadecimal number without digits" : "0x\(text.prefix(40)) is beyond 64 bits")
      }
      return .number(Double(value), isInteger: true)
    }
    while index < characters.count,
      characters[index].isNumber || characters[index] == "."
        || ((characters[index] == "e" || characters[index] == "E") && !text.isEmpty)
        || ((characters[index] == "-" || characters[index] == "+") && (text.last == "e" || text.last == "E"))
    {
      if !characters[index].isNumber { isInteger = false }
      text.append(characters[index])
      index += 1
    }
    guard let value = Double(text) else { throw fail("'\(text)' is not a number") }
    return .number(value, isInteger: isInteger)
  }

  /// A quoted string at `index`, its escapes read.
  private static func scanString(_ characters: [Character], _ index: inout Int, format: String)
    throws(FormatPredicateError) -> Token
  {
    let character = characters[index]
    let start = index
    func fail(_ reason: String) -> FormatPredicateError {
      FormatPredicateError(format: format, offset: index, reason: reason)
    }
    index += 1
    var text = ""
    var closed = false
    while index < characters.count {
      let next = characters[index]
      if next == character {
        closed = true
        index += 1
        break
      }
      if next == "\\", index + 1 < characters.count {
        let escaped = characters[index + 1]
        text.append(escaped == "n" ? "\n" : escaped == "t" ? "\t" : escaped == "r" ? "\r" : escaped)
        index += 2
        continue
      }
      text.append(next)
      index += 1
    }
    guard closed else {
      index = start
      throw fail("a string that is not closed")
    }
    return .string(text)
  }

  var current: Token { tokens[position].0 }
  var offset: Int { tokens[position].1 }

  func fail(_ reason: String) -> FormatPredicateError {
    FormatPredicateError(format: format, offset: offset, reason: reason)
  }

  func isKeyword(_ token: Token, _ words: String...) -> Bool {
    if case .word(let text) = token { return words.contains(text.uppercased()) }
    return false
  }

  mutating func advance() { if position < tokens.count - 1 { position += 1 } }

  mutating func parse() throws(FormatPredicateError) -> FormatPredicate.Node {
    if let tokenizeError { throw tokenizeError }
    let node = try parseOr()
    guard current == .end else { throw fail("unexpected \(describe(current)) after a complete predicate") }
    return node
  }

  func describe(_ token: Token) -> String {
    switch token {
    case .word(let text), .escaped(let text): "'\(text)'"
    case .number(let value, _): "the number \(value)"
    case .string(let text): "the string '\(text)'"
    case .symbol(let text): "'\(text)'"
    case .argument(let kind): "%\(kind)"
    case .end: "the end"
    }
  }

  mutating func parseOr() throws(FormatPredicateError) -> FormatPredicate.Node {
    var nodes = [try parseAnd()]
    while isKeyword(current, "OR") || current == .symbol("||") {
      advance()
      nodes.append(try parseAnd())
    }
    return nodes.count == 1 ? nodes[0] : .or(nodes)
  }

  mutating func parseAnd() throws(FormatPredicateError) -> FormatPredicate.Node {
    var nodes = [try parseNot()]
    while isKeyword(current, "AND") || current == .symbol("&&") {
      advance()
      nodes.append(try parseNot())
    }
    return nodes.count == 1 ? nodes[0] : .and(nodes)
  }

  mutating func parseNot() throws(FormatPredicateError) -> FormatPredicate.Node {
    if isKeyword(current, "NOT") || current == .symbol("!") {
      advance()
      try enter()
      defer { depth -= 1 }
      return .not(try parseNot())
    }
    return try parsePrimary()
  }

  mutating func parsePrimary() throws(FormatPredicateError) -> FormatPredicate.Node {
    if current == .symbol("(") {
      // A parenthesised predicate (an expression in parentheses is not taken here).
      advance()
      try enter()
      defer { depth -= 1 }
      let node = try parseOr()
      guard current == .symbol(")") else { throw fail("expected ')' , found \(describe(current))") }
      advance()
      return node
    }
    if isKeyword(current, "TRUEPREDICATE") {
      advance()
      return .constant(true)
    }
    if isKeyword(current, "FALSEPREDICATE") {
      advance()
      return .constant(false)
    }
    let modifier = parseModifier()
    let lhs = try parseExpression()
    var negate = false
    if isKeyword(current, "NOT") {
      // `name NOT IN {…}`, `name NOT CONTAINS …`
      negate = true
      advance()
    }
    let op = try parseOperator()
    let options = try parseOptions()
    let rhs = try parseExpression()
    if op == .between {
      guard case .list(let bounds) = rhs, bounds.count == 2 else { throw fail("BETWEEN takes {lower, upper}") }
    }
    let node = FormatPredicate.Node.comparison(lhs, op, rhs, options, modifier)
    return negate ? .not(node) : node
  }

  /// `ANY`/`SOME`, `ALL` or `NONE` before a comparison's left side, or none.
  mutating func parseModifier() -> FormatPredicate.Modifier {
    let modifier: FormatPredicate.Modifier
    if isKeyword(current, "ANY", "SOME") {
      modifier = .any
    } else if isKeyword(current, "ALL") {
      modifier = .all
    } else if isKeyword(current, "NONE") {
      modifier = .none
    } else {
      return .direct
    }
    advance()
    return modifier
  }

  /// A comparison's operator: a symbol (`=`, `<=` …) or a word (`IN`, `CONTAINS` …).
  mutating func parseOperator() throws(FormatPredicateError) -> FormatPredicate.Operator {
    let op: FormatPredicate.Operator
    switch current {
    case .symbol("="), .symbol("=="): op = .equal
    case .symbol("!="), .symbol("<>"): op = .notEqual
    case .symbol("<"): op = .less
    case .symbol("<="), .symbol("=<"): op = .lessOrEqual
    case .symbol(">"): op = .greater
    case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
    case .word(let word):
      guard let found = FormatPredicate.Operator(rawValue: word.uppercased()), found.rawValue.first?.isLetter == true
      else {
        throw fail("expected an operator, found \(describe(current))")
      }
      op = found
    default: throw fail("expected an operator, found \(describe(current))")
    }
    advance()
    return op
  }

  /// The options in brackets after an operator (`[c]`, `[d]`, `[cd]`), or none.
  mutating func parseOptions() throws(FormatPredicateError) -> FormatPredicate.Options {
    var options: FormatPredicate.Options = []
    if current == .symbol("[") {
      advance()
      guard case .word(let letters) = current, letters.allSatisfy({ "cdnCDN".contains($0) }) else {
        throw fail("expected options c, d or cd in [ ]")
      }
      if letters.lowercased().contains("c") { options.insert(.caseInsensitive) }
      if letters.lowercased().contains("d") { options.insert(.diacriticInsensitive) }
      advance()
      guard current == .symbol("]") else { throw fail("expected ']'") }
      advance()
    }
    return options
  }

  mutating func nextArgument() throws(FormatPredicateError) -> FormatPredicate.Argument {
    guard !arguments.isEmpty else { throw fail("more arguments (%@, %K…) than values given") }
    return arguments.removeFirst()
  }

  /// A number literal's value: an integer while it fits Int64 (either sign), else a double — as
  /// NSPredicate reads `99999999999999999999` — never a conversion that traps.
  static func number(_ value: Double, isInteger: Bool) -> StoreValue {
    isInteger && abs(value) < 9.2e18 ? .integer(Int64(value)) : .double(value)
  }

  mutating func parseExpression() throws(FormatPredicateError) -> FormatPredicate.Expression {
    try enter()
    defer { depth -= 1 }
    let token = current
    switch token {
    case .symbol("-"):
      advance()
      guard case .number(let value, let isInteger) = current else { throw fail("expected a number after '-'") }
      advance()
      return .value(Self.number(-value, isInteger: isInteger))
    case .number(let value, let isInteger):
      advance()
      return .value(Self.number(value, isInteger: isInteger))
    case .string(let text):
      advance()
      return .value(.string(text))
    case .argument(let kind):
      advance()
      return try parseArgument(kind)
    case .symbol("{"):
      advance()
      return try parseList()
    case .symbol("("):
      advance()
      let inner = try parseExpression()
      guard current == .symbol(")") else { throw fail("expected ')'") }
      advance()
      return inner
    case .word(let word):
      return try parseWord(word)
    case .escaped:
      return try parseKeyPath(start: [])
    default:
      throw fail("expected a key path or a value, found \(describe(token))")
    }
  }

  /// The value of a `%@`, `%K` or `%d`… just read: the next argument given.
  mutating func parseArgument(_ kind: Character) throws(FormatPredicateError) -> FormatPredicate.Expression {
    let argument = try nextArgument()
    if kind == "K" {
      guard case .value(.string(let path)) = argument else { throw fail("%K takes a key path given as a string") }
      return .keyPath(path.split(separator: ".").map(String.init))
    }
    switch argument {
    case .value(let value): return .value(value)
    case .list(let values):
      guard kind == "@" else { throw fail("%\(kind) takes a number, not a list") }
      return .list(values.map(FormatPredicate.Expression.value))
    }
  }

  /// `{a, b, …}` after its `{`.
  mutating func parseList() throws(FormatPredicateError) -> FormatPredicate.Expression {
    var items: [FormatPredicate.Expression] = []
    if current != .symbol("}") {
      items.append(try parseExpression())
      while current == .symbol(",") {
        advance()
        items.append(try parseExpression())
      }
    }
    guard current == .symbol("}") else { throw fail("expected '}' or ',', found \(describe(current))") }
    advance()
    return .list(items)
  }

  /// A word in an expression: a constant (`YES`, `nil`), `SELF`, or the start of a key path;
  /// refused when it is one of the language's reserved words.
  mutating func parseWord(_ word: String) throws(FormatPredicateError) -> FormatPredicate.Expression {
    switch word.uppercased() {
    case "TRUE", "YES":
      advance()
      return .value(.boolean(true))
    case "FALSE", "NO":
      advance()
      return .value(.boolean(false))
    case "NULL", "NIL":
      advance()
      return .value(.null)
    case "SELF":
      advance()
      if current == .symbol(".") { return try parseKeyPath(start: []) }
      return .this
    case "AND", "OR", "NOT", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "BETWEEN", "ANY", "ALL",
      "NONE", "SOME":
      throw fail("'\(word)' is a reserved word: write #\(word) for a key of that name")
    default: return try parseKeyPath(start: [])
    }
  }

  mutating func parseKeyPath(start: [String]) throws(FormatPredicateError) -> FormatPredicate.Expression {
    var path = start
    if start.isEmpty, current != .symbol(".") {
      switch current {
      case .word(let text), .escaped(let text): path.append(text)
      default: throw fail("expected a key")
      }
      advance()
    }
    while current == .symbol(".") {
      advance()
      switch current {
      case .word(let text), .escaped(let text): path.append(text)
      default: throw fail("expected a key after '.'")
      }
      advance()
    }
    return .keyPath(path)
  }
}
