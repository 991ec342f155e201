import Foundation
import PropertyList

/// `json.encode(value [, pretty])` and `json.decode(text)`, NULL-aware and exact about numbers.
///
/// - `null` ↔ `NULL`; integers stay integers (`1` decodes as an integer, `1.0` as a float).
/// - A table with only keys 1…n encodes as an array, any other as an object with sorted keys
///   (integer keys become strings); an empty table encodes as `{}`.
/// - Strings must be UTF-8 (encode BLOBs with `base64` first).
enum JSONCodec {
  static let maxDepth = 200

  static func encode(_ value: LuaValue, pretty: Bool = false) throws -> String {
    var output = ""
    try write(value, to: &output, depth: 0, pretty: pretty)
    return output
  }

  static func decode(_ bytes: [UInt8]) throws -> LuaValue {
    var parser = Parser(bytes: bytes)
    parser.skipWhitespace()
    let value = try parser.value(depth: 0)
    parser.skipWhitespace()
    guard parser.index == bytes.count else { throw parser.failure("unexpected text after the value") }
    return value
  }

  /// A float as JSON and Lua print it: integral floats keep a ".0".
  static func format(_ number: Double) -> String {
    if number.rounded() == number && abs(number) < 1e15 { return String(format: "%.1f", number) }
    return "\(number)"
  }

  // MARK: - Non public

  private static func write(_ value: LuaValue, to output: inout String, depth: Int, pretty: Bool) throws {
    guard depth < maxDepth else { throw HostError("json.encode: nested more than \(maxDepth) deep (a cycle?)") }
    switch value {
    case .nil, .null: output += "null"
    case .boolean(let flag): output += flag ? "true" : "false"
    case .integer(let number): output += String(number)
    case .number(let number):
      guard number.isFinite else { throw HostError("json.encode: \(number) has no JSON form") }
      output += format(number)
    case .string(let bytes):
      guard let text = String(validating: bytes, as: UTF8.self) else {
        throw HostError("json.encode: a string is not valid UTF-8 (encode binary data with base64 first)")
      }
      JSONText.appendQuoted(text, to: &output)
    case .function: throw HostError("json.encode: a function has no JSON form")
    case .table(let table):
      let indent = pretty ? "\n" + String(repeating: "  ", count: depth + 1) : ""
      let closing = pretty ? "\n" + String(repeating: "  ", count: depth) : ""
      if table.fields.isEmpty && !table.array.isEmpty {
        output += "["
        for (index, element) in table.array.enumerated() {
          if index > 0 { output += "," }
          output += indent
          try write(element, to: &output, depth: depth + 1, pretty: pretty)
        }
        output += closing + "]"
        return
      }
      var members: [(String, LuaValue)] = []
      for (index, element) in table.array.enumerated() { members.append((String(index + 1), element)) }
      for (key, element) in table.fields {
        switch key {
        case .string(let bytes): members.append((String(decoding: bytes, as: UTF8.self), element))
        case .integer(let number): members.append((String(number), element))
        default: throw HostError("json.encode: a \(key.typeName) key has no JSON form")
        }
      }
      members.sort { $0.0 < $1.0 }
      output += "{"
      for (index, member) in members.enumerated() {
        if index > 0 { output += "," }
        output += indent
        JSONText.appendQuoted(member.0, to: &output)
        output += pretty ? ": " : ":"
        try write(member.1, to: &output, depth: depth + 1, pretty: pretty)
      }
      output += (members.isEmpty ? "" : closing) + "}"
    }
  }

  private struct Parser {
    let bytes: [UInt8]
    var index = 0

    func failure(_ message: String) -> HostError {
      HostError("json.decode: \(message) at byte \(index + 1)")
    }

    mutating func skipWhitespace() {
      while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func value(depth: Int) throws -> LuaValue {
      guard depth < maxDepth else { throw failure("nested more than \(maxDepth) deep") }
      guard index < bytes.count else { throw failure("unexpected end of text") }
      switch bytes[index] {
      case UInt8(ascii: "{"): return try object(depth: depth)
      case UInt8(ascii: "["): return try array(depth: depth)
      case UInt8(ascii: "\""): return .text(try string())
      case UInt8(ascii: "t"): return try literal("true", .boolean(true))
      case UInt8(ascii: "f"): return try literal("false", .boolean(false))
      case UInt8(ascii: "n"): return try literal("null", .null)
      default: return try number()
      }
    }

    mutating func literal(_ word: String, _ value: LuaValue) throws -> LuaValue {
      let expected = Array(word.utf8)
      guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
        throw failure("unexpected character")
      }
      index += expected.count
      return value
    }

    mutating func object(depth: Int) throws -> LuaValue {
      index += 1
      var table = LuaTable()
      skipWhitespace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .table(table)
      }
      while true {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
        let key = try string()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
        index += 1
        skipWhitespace()
        table.fields[.text(key)] = try value(depth: depth + 1)
        skipWhitespace()
        guard index < bytes.count else { throw failure("unexpected end of text") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "}") else { throw failure("expected ',' or '}'") }
        index += 1
        return .table(table)
      }
    }

    mutating func array(depth: Int) throws -> LuaValue {
      index += 1
      var elements: [LuaValue] = []
      skipWhitespace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .table(LuaTable())
      }
      while true {
        skipWhitespace()
        elements.append(try value(depth: depth + 1))
        skipWhitespace()
        guard index < bytes.count else { throw failure("unexpected end of text") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "]") else { throw failure("expected ',' or ']'") }
        index += 1
        // A JSON null inside an array is kept as NULL, so positions never shift.
        return .table(LuaTable(array: elements))
      }
    }

    mutating func string() throws -> String {
      index += 1
      var scalars = String.UnicodeScalarView()
      var start = index
      func flush(_ parser: Parser) {
        scalars.append(contentsOf: String(decoding: parser.bytes[start..<parser.index], as: UTF8.self).unicodeScalars)
      }
      while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\"") {
          flush(self)
          index += 1
          return String(scalars)
        }
        if byte == UInt8(ascii: "\\") {
          flush(self)
          index += 1
          guard index < bytes.count else { break }
          let escape = bytes[index]
          index += 1
          switch escape {
          case UInt8(ascii: "n"): scalars.append("\n")
          case UInt8(ascii: "t"): scalars.append("\t")
          case UInt8(ascii: "r"): scalars.append("\r")
          case UInt8(ascii: "b"): scalars.append("\u{08}")
          case UInt8(ascii: "f"): scalars.append("\u{0C}")
          case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800..<0xDC00).contains(code), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
              bytes[index + 1] == UInt8(ascii: "u")
            {
              index += 2
              let low = try hex4()
              // A high surrogate pairs only with a low one (`\ud800\u0041` is no character).
              guard (0xDC00..<0xE000).contains(low) else { throw failure("unpaired surrogate in a \\u escape") }
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw failure("invalid \\u escape") }
            scalars.append(scalar)
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(Unicode.Scalar(escape))
          default: throw failure("invalid escape")
          }
          start = index
          continue
        }
        guard byte >= 0x20 else { throw failure("control character in a string") }
        index += 1
      }
      throw failure("unterminated string")
    }

    mutating func hex4() throws -> UInt32 {
      guard index + 4 <= bytes.count,
        let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
      else { throw failure("invalid \\u escape") }
      index += 4
      return code
    }

    mutating func number() throws -> LuaValue {
      let start = index
      var isFloat = false
      while index < bytes.count {
        let byte = bytes[index]
        if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
          || byte == UInt8(ascii: "+")
        {
          index += 1
        } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
          isFloat = true
          index += 1
        } else {
          break
        }
      }
      let text = String(decoding: bytes[start..<index], as: UTF8.self)
      guard !text.isEmpty else { throw failure("unexpected character") }
      if !isFloat, let integer = Int64(text) { return .integer(integer) }
      guard let number = Double(text) else { throw failure("invalid number '\(text)'") }
      return .number(number)
    }
  }
}
