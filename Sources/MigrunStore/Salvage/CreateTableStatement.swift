import Foundation

/// A `CREATE TABLE` statement read from a damaged file's schema as text — never run, never
/// evaluated: its columns (name, declared type, the definition as written), which one is the
/// rowid, and each column's `DEFAULT` when it is a literal value.
///
/// The statement is split by a tokenizer that knows SQL's quotes (`'…'` strings, `"…"`, `` `…` ``
/// and `[…]` names, `X'…'` blobs), comments and nested parentheses: a `CHECK (x <> ')')` or a
/// `DEFAULT 'a, b'` is one column's, never the end of one (counting commas NULLed a column).
///
/// ```swift
/// let table = CreateTableStatement(sql: "CREATE TABLE ZX (Z_PK INTEGER PRIMARY KEY, ZY VARCHAR DEFAULT 'a, b')")
/// table?.columns.map(\.name)  // ["Z_PK", "ZY"]
/// table?.rowidColumn          // "Z_PK"
/// ```
///
/// A default is only what SQLite reads for a column a row was written without (`ALTER TABLE … ADD
/// COLUMN … DEFAULT` leaves older rows shorter): a number, a string, a blob, NULL, TRUE or FALSE is
/// taken as written (at most ``maxLiteralBytes``); any other expression (`CURRENT_TIME`, a call, a
/// sum) is ``Default/expression`` and is never evaluated — a crafted default held salvage for seven
/// minutes.
package struct CreateTableStatement: Sendable, Hashable {
  package struct Column: Sendable, Hashable {
    package var name: String
    /// The declared type's words, upper-cased, one space between them (`VARCHAR`, `UNSIGNED BIG
    /// INT`); empty where none. A size (`VARCHAR(255)`) is left out.
    package var type: String
    /// The column's definition as the statement writes it (name, type, constraints).
    package var definition: String
    /// Whether a `PRIMARY KEY` constraint is on the column itself.
    package var isPrimaryKey = false
    package var defaultValue: Default?
  }

  /// A column's `DEFAULT`.
  package enum Default: Sendable, Hashable {
    /// A literal value, as SQLite stores it.
    case literal(SQLiteFileImage.Value)
    /// Anything else (its text, at most 200 characters): not evaluated, read as NULL.
    case expression(String)
  }

  /// The largest literal default taken (a longer one is an ``Default/expression``).
  package static let maxLiteralBytes = 1 << 20

  package var columns: [Column] = []
  /// The columns a table constraint `PRIMARY KEY (…)` names.
  package var primaryKey: [String] = []
  /// `WITHOUT ROWID`: the rows are in an index b-tree, and no column is the rowid.
  package var withoutRowid = false

  /// The statement's definition; nil when it is not one `CREATE TABLE name (…)` as SQLite keeps it
  /// in its schema (a `CREATE TABLE … AS SELECT`, a statement with more after it, unclosed quotes).
  package init?(sql: String) {
    guard let tokens = Self.tokens(Array(sql.utf8)), let open = Self.listStart(tokens),
      let (parts, end) = Self.list(tokens, from: open)
    else { return nil }
    // After the list: table options only (`WITHOUT ROWID`, `STRICT`), as SQLite keeps the statement.
    var options = Array(tokens[(end + 1)...]).filter { $0.kind != .mark(",") }.map { $0.text.uppercased() }
    while let option = options.first {
      if option == "STRICT" {
        options.removeFirst()
      } else if option == "WITHOUT", options.dropFirst().first == "ROWID" {
        withoutRowid = true
        options.removeFirst(2)
      } else {
        return nil
      }
    }
    for part in parts where !part.isEmpty {
      let first = part[0]
      if case .word = first.kind,
        ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].contains(first.text.uppercased())
      {
        if let key = part.firstIndex(where: { $0.kind == .word && $0.text.uppercased() == "PRIMARY" }) {
          primaryKey += Self.namesInParentheses(part[(key + 1)...])
        }
        continue
      }
      guard first.isName else { return nil }
      columns.append(Self.column(part, sql: Array(sql.utf8)))
    }
    guard !columns.isEmpty else { return nil }
  }

  /// The index of the `(` that opens the column list of `CREATE [TEMP] TABLE [IF NOT EXISTS]
  /// [schema.]name (`; nil when the statement does not start so (`… AS SELECT`).
  private static func listStart(_ tokens: [Token]) -> Int? {
    func word(_ index: Int) -> String? {
      guard index < tokens.count, case .word = tokens[index].kind else { return nil }
      return tokens[index].text.uppercased()
    }
    guard word(0) == "CREATE" else { return nil }
    var at = 1
    if word(at) == "TEMP" || word(at) == "TEMPORARY" { at += 1 }
    guard word(at) == "TABLE" else { return nil }
    at += 1
    if word(at) == "IF", word(at + 1) == "NOT", word(at + 2) == "EXISTS" { at += 3 }
    // The name, maybe `schema.name`.
    guard at < tokens.count, tokens[at].isName else { return nil }
    at += 1
    if at + 1 < tokens.count, tokens[at].kind == .mark("."), tokens[at + 1].isName { at += 2 }
    guard at < tokens.count, tokens[at].kind == .mark("(") else { return nil }
    return at
  }

  /// The list's parts (split at its own commas, never one inside parentheses or quotes) and the
  /// index of its closing `)`; nil when it is not closed.
  private static func list(_ tokens: [Token], from at: Int) -> ([[Token]], Int)? {
    var parts: [[Token]] = [[]]
    var depth = 0
    var end: Int?
    for index in (at + 1)..<tokens.count {
      let token = tokens[index]
      if token.kind == .mark("(") { depth += 1 }
      if token.kind == .mark(")") {
        if depth == 0 {
          end = index
          break
        }
        depth -= 1
      }
      if token.kind == .mark(","), depth == 0 {
        parts.append([])
      } else {
        parts[parts.count - 1].append(token)
      }
    }
    return end.map { (parts, $0) }
  }

  /// The column that is the table's rowid: its one `INTEGER PRIMARY KEY` (the type exactly
  /// `INTEGER`, as SQLite's rule has it); nil for a table `WITHOUT ROWID` or of another key.
  package var rowidColumn: String? {
    guard !withoutRowid else { return nil }
    let keys = columns.filter(\.isPrimaryKey).map(\.name) + primaryKey
    guard keys.count == 1, let key = keys.first,
      let column = columns.first(where: { $0.name.uppercased() == key.uppercased() }), column.type == "INTEGER"
    else { return nil }
    return column.name
  }

  // MARK: - Non public

  fileprivate enum Kind: Hashable {
    /// A bare word: a keyword or a name.
    case word
    /// A quoted name (`"…"`, `` `…` ``, `[…]`).
    case quotedName
    case string
    case blob([UInt8])
    case number
    case punctuation(UInt8)
  }

  fileprivate struct Token {
    var kind: Kind
    /// The text (a quoted name or string without its quotes).
    var text: String
    /// Its bytes in the statement.
    var range: Range<Int>

    var isName: Bool { kind == .word || kind == .quotedName || kind == .string }
  }

  private static let constraintWords: Set<String> = [
    "CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE", "REFERENCES", "GENERATED",
    "AS",
  ]

  /// One column's definition: its name, the type's words up to the first constraint, then its
  /// constraints (`PRIMARY KEY`, `DEFAULT …`).
  private static func column(_ part: [Token], sql: [UInt8]) -> Column {
    let text = String(decoding: sql[part[0].range.lowerBound..<(part.last?.range.upperBound ?? 0)], as: UTF8.self)
    var column = Column(name: part[0].text, type: "", definition: text)
    var index = 1
    var words: [String] = []
    while index < part.count, part[index].isName, !constraintWords.contains(part[index].text.uppercased()) {
      words.append(part[index].text.uppercased())
      index += 1
    }
    column.type = words.joined(separator: " ")
    var depth = 0
    while index < part.count {
      let token = part[index]
      if token.kind == .mark("(") { depth += 1 }
      if token.kind == .mark(")") { depth -= 1 }
      if depth == 0, token.kind == .word {
        switch token.text.uppercased() {
        case "PRIMARY": column.isPrimaryKey = true
        // `ON DELETE SET DEFAULT` is a foreign key's action, no default.
        case "DEFAULT" where index == 0 || part[index - 1].text.uppercased() != "SET":
          let (value, next) = defaultValue(part, from: index + 1, sql: sql)
          column.defaultValue = value
          index = next
          continue
        default: break
        }
      }
      index += 1
    }
    return column
  }

  /// The `DEFAULT` starting at token `start` and the index after it: a literal — signed, or alone
  /// in parentheses — or else an expression, its text kept (never evaluated).
  private static func defaultValue(_ part: [Token], from start: Int, sql: [UInt8]) -> (Default?, Int) {
    guard start < part.count else { return (nil, start) }
    var end = start + 1
    if part[start].kind == .mark("(") {
      var depth = 0
      end = start
      while end < part.count {
        if part[end].kind == .mark("(") { depth += 1 }
        if part[end].kind == .mark(")") { depth -= 1 }
        end += 1
        if depth == 0 { break }
      }
    } else if part[start].kind == .mark("-") || part[start].kind == .mark("+") {
      end = min(start + 2, part.count)
    }
    var inner = Array(part[start..<end])
    if inner.first?.kind == .mark("("), inner.last?.kind == .mark(")") {
      inner = Array(inner.dropFirst().dropLast())
    }
    let text = String(
      decoding: sql[part[start].range.lowerBound..<part[end - 1].range.upperBound].prefix(200), as: UTF8.self)
    guard let value = literal(inner), value.byteCount <= maxLiteralBytes else { return (.expression(text), end) }
    return (.literal(value), end)
  }

  /// The literal value of `tokens`: a number (with its sign), a string, a blob, `NULL`, `TRUE`,
  /// `FALSE`, or a bare name (SQLite reads `DEFAULT abc` as the text `abc`); nil for anything else.
  private static func literal(_ tokens: [Token]) -> SQLiteFileImage.Value? {
    switch tokens.count {
    case 1:
      let token = tokens[0]
      switch token.kind {
      case .string: return .text(token.text)
      case .blob(let bytes): return .blob(bytes)
      case .number: return number(token.text)
      case .word, .quotedName:
        switch token.text.uppercased() {
        case "NULL": return .null
        case "TRUE": return .integer(1)
        case "FALSE": return .integer(0)
        case "CURRENT_TIME", "CURRENT_DATE", "CURRENT_TIMESTAMP": return nil
        default:
          return token.kind == .word && !constraintWords.contains(token.text.uppercased()) ? .text(token.text) : nil
        }
      default: return nil
      }
    case 2:
      guard tokens[1].kind == .number, let value = number(tokens[1].text) else { return nil }
      switch (tokens[0].kind, value) {
      case (.punctuation(UInt8(ascii: "+")), _): return value
      case (.punctuation(UInt8(ascii: "-")), .integer(let number)):
        return number == Int64.min ? .real(-Double(number)) : .integer(-number)
      case (.punctuation(UInt8(ascii: "-")), .real(let number)): return .real(-number)
      default: return nil
      }
    default: return nil
    }
  }

  /// A number as SQLite reads it: an integer when it is one that fits (decimal or `0x…`), else a real.
  private static func number(_ text: String) -> SQLiteFileImage.Value? {
    let lower = text.lowercased()
    if lower.hasPrefix("0x") {
      guard let bits = UInt64(lower.dropFirst(2), radix: 16) else { return nil }
      return .integer(Int64(bitPattern: bits))
    }
    if let integer = Int64(text) { return .integer(integer) }
    return Double(text).map { .real($0) }
  }

  /// The names in the parentheses that follow (`PRIMARY KEY (a, b DESC)` → `a`, `b`).
  private static func namesInParentheses(_ tokens: ArraySlice<Token>) -> [String] {
    guard let open = tokens.firstIndex(where: { $0.kind == .mark("(") }) else { return [] }
    var names: [String] = []
    var expectName = true
    var depth = 0
    for token in tokens[(open + 1)...] {
      if token.kind == .mark("(") { depth += 1 }
      if token.kind == .mark(")") {
        if depth == 0 { break }
        depth -= 1
      }
      if depth == 0, token.kind == .mark(",") {
        expectName = true
      } else if expectName, depth == 0, token.isName {
        names.append(token.text)
        expectName = false
      }
    }
    return names
  }

  /// The statement's tokens; nil when a quote or comment is not closed.
  private static func tokens(_ sql: [UInt8]) -> [Token]? {
    var tokens: [Token] = []
    var at = 0
    func isNameByte(_ byte: UInt8) -> Bool {
      byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
        || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
        || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || isDigit(byte)
    }
    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    while at < sql.count {
      let byte = sql[at]
      let next = at + 1 < sql.count ? sql[at + 1] : 0
      switch byte {
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0C:
        at += 1
      case UInt8(ascii: "-") where next == UInt8(ascii: "-"):
        while at < sql.count, sql[at] != UInt8(ascii: "\n") { at += 1 }
      case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
        guard let end = commentEnd(sql, at) else { return nil }
        at = end
      case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
        let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : byte
        guard let (text, end) = quoted(sql, at, close: close, doubles: byte != UInt8(ascii: "[")) else { return nil }
        tokens.append(Token(kind: byte == UInt8(ascii: "'") ? .string : .quotedName, text: text, range: at..<end))
        at = end
      case UInt8(ascii: "x") where next == UInt8(ascii: "'"), UInt8(ascii: "X") where next == UInt8(ascii: "'"):
        guard let (text, end) = quoted(sql, at + 1, close: UInt8(ascii: "'"), doubles: false) else { return nil }
        let bytes = hexBytes(text)
        tokens.append(Token(kind: bytes.map { .blob($0) } ?? .word, text: text, range: at..<end))
        at = end
      case _ where isDigit(byte) || (byte == UInt8(ascii: ".") && isDigit(next)):
        let end = numberEnd(sql, from: at)
        tokens.append(Token(kind: .number, text: String(decoding: sql[at..<end], as: UTF8.self), range: at..<end))
        at = end
      case _ where isNameByte(byte):
        var end = at
        while end < sql.count, isNameByte(sql[end]) { end += 1 }
        tokens.append(Token(kind: .word, text: String(decoding: sql[at..<end], as: UTF8.self), range: at..<end))
        at = end
      default:
        tokens.append(Token(kind: .punctuation(byte), text: String(UnicodeScalar(byte)), range: at..<at + 1))
        at += 1
      }
    }
    return tokens
  }
}

extension CreateTableStatement {
  /// Where the number starting at `start` ends: `0x` and hex digits, or digits, a fraction and an
  /// exponent.
  private static func numberEnd(_ sql: [UInt8], from start: Int) -> Int {
    func isDigit(_ at: Int) -> Bool { at < sql.count && sql[at] >= UInt8(ascii: "0") && sql[at] <= UInt8(ascii: "9") }
    var end = start
    if sql[start...].starts(with: Array("0x".utf8)) || sql[start...].starts(with: Array("0X".utf8)) {
      end += 2
      while end < sql.count, UInt8(String(UnicodeScalar(sql[end])), radix: 16) != nil { end += 1 }
      return end
    }
    while isDigit(end) { end += 1 }
    if end < sql.count, sql[end] == UInt8(ascii: ".") {
      end += 1
      while isDigit(end) { end += 1 }
    }
    if end < sql.count, sql[end] == UInt8(ascii: "e") || sql[end] == UInt8(ascii: "E") {
      var exponent = end + 1
      if exponent < sql.count, sql[exponent] == UInt8(ascii: "+") || sql[exponent] == UInt8(ascii: "-") {
        exponent += 1
      }
      if isDigit(exponent) {
        end = exponent
        while isDigit(end) { end += 1 }
      }
    }
    return end
  }

  /// The end of the quoted run starting at `start` closed by `close` (doubled: one of it).
  private static func quoted(_ sql: [UInt8], _ start: Int, close: UInt8, doubles: Bool) -> (text: String, end: Int)? {
    var bytes: [UInt8] = []
    var index = start + 1
    while index < sql.count {
      if sql[index] == close {
        guard doubles, index + 1 < sql.count, sql[index + 1] == close else {
          return (String(decoding: bytes, as: UTF8.self), index + 1)
        }
        index += 1
      }
      bytes.append(sql[index])
      index += 1
    }
    return nil
  }

  /// Where the block comment starting at `start` (`/*`) ends, past its `*/`; nil when it does not.
  private static func commentEnd(_ sql: [UInt8], _ start: Int) -> Int? {
    var index = start + 2
    while index + 1 < sql.count, !(sql[index] == UInt8(ascii: "*") && sql[index + 1] == UInt8(ascii: "/")) {
      index += 1
    }
    return index + 1 < sql.count ? index + 2 : nil
  }

  /// The bytes of a blob literal's hex digits; nil when they are not pairs of hex digits.
  private static func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
      bytes.append(byte)
    }
    return bytes
  }
}

extension SQLiteFileImage.Value {
  /// The bytes the value holds (text and blobs; 8 for a number).
  var byteCount: Int {
    switch self {
    case .null: 0
    case .integer, .real: 8
    case .text(let text): text.utf8.count
    case .blob(let bytes): bytes.count
    }
  }
}

extension CreateTableStatement.Kind {
  fileprivate static func mark(_ character: Character) -> Self { .punctuation(character.asciiValue ?? 0) }
}
