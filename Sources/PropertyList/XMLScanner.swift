/// A strict, non-validating XML reader for the documents migrun reads (model `contents`, XML
/// property lists, mapping models): elements, attributes, text, CDATA, comments, processing
/// instructions, a DOCTYPE (skipped), the five predefined entities and character references.
///
/// It replaces Foundation's `XMLParser`, which on Linux traps on some malformed input (invalid
/// UTF-8 in a name, some processing instructions) instead of reporting it: every byte sequence gives
/// either events or an ``XMLScanError`` with line and column. The input must be UTF-8 (a leading BOM
/// is skipped); anything else is refused before the first event. Nesting is limited to
/// ``maximumDepth`` elements.
package struct XMLScanner {
  /// What the scanner reports, in document order. A thrown error stops the scan and is rethrown.
  package protocol Delegate: AnyObject {
    func startElement(_ name: String, attributes: [String: String]) throws
    func endElement(_ name: String) throws
    /// Character data (text, CDATA, resolved references); one run of text may come in several calls.
    func characters(_ text: String) throws
  }

  package static let maximumDepth = 4096

  private let bytes: [UInt8]
  private var index = 0

  package init(_ bytes: [UInt8]) {
    self.bytes = bytes
  }

  /// Scans the whole document, calling `delegate` for each event.
  package mutating func scan(_ delegate: any Delegate) throws {
    if let invalid = Self.firstInvalidUTF8(bytes) {
      throw error("the document is not UTF-8 (invalid byte 0x\(String(bytes[invalid], radix: 16)))", at: invalid)
    }
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    var open: [String] = []
    var sawRoot = false
    while index < bytes.count {
      if bytes[index] != UInt8(ascii: "<") {
        try scanText(inside: open, delegate)
        continue
      }
      let markup = index
      if has("<?") {
        try skip(past: "?>", what: "processing instruction")
      } else if has("<!--") {
        index += 4
        try skip(past: "-->", what: "comment")
      } else if has("<![CDATA[") {
        guard !open.isEmpty else { throw error("CDATA outside the root element", at: markup) }
        index += 9
        let start = index
        try skip(past: "]]>", what: "CDATA section")
        try delegate.characters(string(start..<(index - 3)))
      } else if has("<!DOCTYPE") {
        guard !sawRoot else { throw error("a DOCTYPE after the root element", at: markup) }
        try skipDoctype()
      } else if has("</") {
        try scanEndTag(closing: &open, delegate)
      } else {
        guard open.count > 0 || !sawRoot else { throw error("a second root element", at: markup) }
        try scanStartTag(opening: &open, delegate)
        sawRoot = true
      }
    }
    if let unclosed = open.last { throw error("the document ends inside <\(unclosed)>: truncated?", at: index) }
    guard sawRoot else { throw error("no root element", at: index) }
  }

  /// Text up to the next `<`: only white space outside the root element (`open`, the elements open).
  private mutating func scanText(inside open: [String], _ delegate: any Delegate) throws {
    let start = index
    let text = try readText()
    if open.isEmpty {
      guard text.allSatisfy(\.isWhitespace) else { throw error("text outside the root element", at: start) }
    } else if !text.isEmpty {
      try delegate.characters(text)
    }
  }

  /// `</name>`, which must close the innermost element open.
  private mutating func scanEndTag(closing open: inout [String], _ delegate: any Delegate) throws {
    let markup = index
    index += 2
    let name = try readName()
    skipSpace()
    try expect(">", what: "the end tag </\(name)")
    guard let top = open.popLast() else { throw error("</\(name)> closes nothing", at: markup) }
    guard top == name else { throw error("</\(name)> closes <\(top)>", at: markup) }
    try delegate.endElement(name)
  }

  /// `<name attributes…>` or `<name attributes…/>`, opened in `open` unless it closes itself.
  private mutating func scanStartTag(opening open: inout [String], _ delegate: any Delegate) throws {
    let markup = index
    index += 1
    guard open.count < Self.maximumDepth else {
      throw error("elements nested deeper than \(Self.maximumDepth)", at: markup)
    }
    let name = try readName()
    let attributes = try readAttributes(of: name)
    if has("/>") {
      index += 2
      try delegate.startElement(name, attributes: attributes)
      try delegate.endElement(name)
    } else {
      try expect(">", what: "the start tag <\(name)")
      open.append(name)
      try delegate.startElement(name, attributes: attributes)
    }
  }

  // MARK: - Pieces

  private func has(_ literal: StaticString) -> Bool {
    let count = literal.utf8CodeUnitCount
    guard index + count <= bytes.count else { return false }
    return literal.withUTF8Buffer { buffer in
      for offset in 0..<count where bytes[index + offset] != buffer[offset] { return false }
      return true
    }
  }

  private mutating func expect(_ literal: StaticString, what: String) throws {
    guard has(literal) else { throw error("\(what) is not closed by '\(literal)'", at: index) }
    index += literal.utf8CodeUnitCount
  }

  private mutating func skip(past terminator: StaticString, what: String) throws {
    let start = index
    while index < bytes.count {
      if has(terminator) {
        index += terminator.utf8CodeUnitCount
        return
      }
      index += 1
    }
    throw error("the \(what) is never closed", at: start)
  }

  private mutating func skipDoctype() throws {
    let start = index
    var brackets = 0
    var quote: UInt8?
    index += 9
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      if let open = quote {
        if byte == open { quote = nil }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
      case UInt8(ascii: "["): brackets += 1
      case UInt8(ascii: "]"): brackets -= 1
      case UInt8(ascii: ">") where brackets <= 0: return
      default: break
      }
    }
    throw error("the DOCTYPE is never closed", at: start)
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  private mutating func skipSpace() {
    while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
  }

  private static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
      UInt8(ascii: ":"), 0x80...0xFF:
      return true
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
      return !first
    default:
      return false
    }
  }

  private mutating func readName() throws -> String {
    let start = index
    while index < bytes.count, Self.isNameByte(bytes[index], first: index == start) { index += 1 }
    guard index > start else {
      let found = index < bytes.count ? "'\(Character(Unicode.Scalar(bytes[index])))'" : "the end"
      throw error("a name was expected, found \(found)", at: start)
    }
    return string(start..<index)
  }

  private mutating func readAttributes(of element: String) throws -> [String: String] {
    var attributes: [String: String] = [:]
    while true {
      let hadSpace = index < bytes.count && Self.isSpace(bytes[index])
      skipSpace()
      guard index < bytes.count else { throw error("the start tag <\(element)> is not closed", at: index) }
      if bytes[index] == UInt8(ascii: ">") || has("/>") { return attributes }
      guard hadSpace else { throw error("attributes of <\(element)> must be separated by spaces", at: index) }
      let at = index
      let name = try readName()
      skipSpace()
      try expect("=", what: "the attribute \(name)")
      skipSpace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
        throw error("the value of \(name) must be quoted", at: index)
      }
      let quote = bytes[index]
      index += 1
      var value = ""
      var start = index
      while true {
        guard index < bytes.count else { throw error("the value of \(name) is never closed", at: at) }
        let byte = bytes[index]
        if byte == quote { break }
        if byte == UInt8(ascii: "<") { throw error("'<' in the value of \(name)", at: index) }
        if byte == UInt8(ascii: "&") {
          value += string(start..<index)
          value += try readReference()
          start = index
        } else {
          index += 1
        }
      }
      value += string(start..<index)
      index += 1
      guard attributes.updateValue(value, forKey: name) == nil else {
        throw error("<\(element)> has the attribute \(name) twice", at: at)
      }
    }
  }

  /// Text up to the next `<`, references resolved.
  private mutating func readText() throws -> String {
    var text = ""
    var start = index
    while index < bytes.count, bytes[index] != UInt8(ascii: "<") {
      if bytes[index] == UInt8(ascii: "&") {
        text += string(start..<index)
        text += try readReference()
        start = index
      } else {
        index += 1
      }
    }
    return text + string(start..<index)
  }

  /// `&amp;` and the other four, `&#N;`, `&#xN;` (index at `&`).
  private mutating func readReference() throws -> String {
    let start = index
    index += 1
    var end = index
    while end < bytes.count, end - index < 12, bytes[end] != UInt8(ascii: ";") { end += 1 }
    guard end < bytes.count, bytes[end] == UInt8(ascii: ";") else {
      throw error("'&' starts no reference (write &amp;)", at: start)
    }
    let name = string(index..<end)
    index = end + 1
    switch name {
    case "amp": return "&"
    case "lt": return "<"
    case "gt": return ">"
    case "quot": return "\""
    case "apos": return "'"
    default:
      var digits = Substring(name)
      guard digits.first == "#" else { throw error("unknown entity &\(name);", at: start) }
      digits = digits.dropFirst()
      let hex = digits.first == "x"
      if hex { digits = digits.dropFirst() }
      guard let code = UInt32(digits, radix: hex ? 16 : 10), code != 0, let scalar = Unicode.Scalar(code) else {
        throw error("&\(name); is not a character", at: start)
      }
      return String(Character(scalar))
    }
  }

  private func string(_ range: Range<Int>) -> String {
    String(decoding: bytes[range], as: UTF8.self)
  }

  private func error(_ message: String, at offset: Int) -> XMLScanError {
    var line = 1
    var column = 1
    for byte in bytes[0..<min(offset, bytes.count)] {
      if byte == 0x0A {
        line += 1
        column = 1
      } else if byte & 0xC0 != 0x80 {
        column += 1
      }
    }
    return XMLScanError(line: line, column: column, message: message)
  }

  /// The offset of the first byte that is not part of well-formed UTF-8, or `nil`.
  static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      let length: Int
      var lower: UInt8 = 0x80
      var upper: UInt8 = 0xBF
      switch byte {
      case 0x00...0x7F:
        index += 1
        continue
      case 0xC2...0xDF: length = 2
      case 0xE0:
        length = 3
        lower = 0xA0
      case 0xE1...0xEC, 0xEE...0xEF: length = 3
      case 0xED:
        length = 3
        upper = 0x9F
      case 0xF0:
        length = 4
        lower = 0x90
      case 0xF1...0xF3: length = 4
      case 0xF4:
        length = 4
        upper = 0x8F
      default: return index
      }
      guard index + length <= bytes.count else { return index }
      guard (lower...upper).contains(bytes[index + 1]) else { return index }
      for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return index }
      index += length
    }
    return nil
  }
}

/// Why a document is not well-formed XML, with where.
package struct XMLScanError: Error, Sendable, Hashable, CustomStringConvertible {
  package let line: Int
  package let column: Int
  package let message: String

  package var description: String { "line \(line), column \(column): \(message)" }
}
