import Foundation
import PropertyList

/// What every `--json` prints: JSON lines, each one object whose `event` says what the line is and
/// whose `schema` is the version of the set of events (`docs/json.md` lists them and their keys). A
/// tool reads any command's output the same way: line by line, choosing lines by `event`.
package enum JSONLines {
  /// Raised when an event's keys change in a way an old reader would misread.
  package static let schema = 2

  /// One line: `fields` with `event` and `schema` added, keys sorted.
  package static func emit(_ event: String, _ fields: [String: Any] = [:]) throws {
    try StandardOutput.write(try line(event, fields))
  }

  /// The line ``emit(_:_:)`` writes, with its newline.
  package static func line(_ event: String, _ fields: [String: Any] = [:]) throws -> Data {
    var line = fields
    line["event"] = event
    line["schema"] = schema
    let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
    return data + Data("\n".utf8)
  }

  /// One line from an encodable value's keys.
  package static func emit(_ event: String, encoding value: some Encodable) throws {
    try emit(event, fields(event, value))
  }

  /// An encodable value's keys, as a line's fields.
  package static func fields(_ event: String, _ value: some Encodable) throws -> [String: Any] {
    let data = try JSONEncoder().encode(value)
    guard let fields = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw ToolError(message: "internal: \(event) is not a JSON object")
    }
    return fields
  }
}

/// What a job prints, as it asked: lines of text, or JSON lines (docs/json.md), and the exit status it
/// ends with. The command line writes it out; a job never prints.
package struct JobOutput {
  package var lines: [String] = []
  package var events: [(event: String, fields: [String: Any])] = []
  /// Lines for standard error (`migrun: note: …`), after the output.
  package var notes: [String] = []
  /// 0, or the status the command ends with (1 for findings, 10 for a store that needs migrating).
  package var status: Int32 = 0

  package init() {}

  /// One line: a line feed in it (a name's) is escaped when written, never a line of its own.
  package mutating func say(_ line: String) { lines.append(line) }

  /// Text of several lines, each said as one (a file's text, a test's message).
  package mutating func say(lines text: String) {
    lines += text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }

  package mutating func emit(_ event: String, _ fields: [String: Any] = [:]) { events.append((event, fields)) }

  package mutating func emit(_ event: String, encoding value: some Encodable) throws {
    emit(event, try JSONLines.fields(event, value))
  }
}

/// A JSON value with its type kept, for the parts of a report whose shape is data, not schema — a
/// store's metadata (a property list), an option's value — encoded as `JSONLines` writes them.
package enum JSONField: Encodable, Sendable {
  case null
  case string(String)
  case integer(Int64)
  case number(Double)
  case boolean(Bool)
  case list([JSONField])
  case object([String: JSONField])

  /// A property list value as JSON: data as base64, dates as seconds since 2001, a UID as `{"CF$UID": n}`.
  package init(plist value: PropertyListValue) {
    switch value {
    case .string(let text): self = .string(text)
    case .integer(let number): self = .integer(number)
    case .real(let number), .date(let number): self = .number(number)
    case .boolean(let flag): self = .boolean(flag)
    case .data(let bytes): self = .string(Data(bytes).base64EncodedString())
    case .array(let elements): self = .list(elements.map(JSONField.init(plist:)))
    case .dictionary(let entries): self = .object(entries.mapValues(JSONField.init(plist:)))
    case .uid(let reference): self = .object(["CF$UID": .integer(Int64(bitPattern: reference))])
    }
  }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .string(let text): try container.encode(text)
    case .integer(let number): try container.encode(number)
    case .number(let number): try container.encode(number)
    case .boolean(let flag): try container.encode(flag)
    case .list(let items): try container.encode(items)
    case .object(let fields): try container.encode(fields)
    }
  }
}

extension JobOutput {
  /// Writes what a job printed: its lines or JSON lines, then its notes on standard error.
  package func write() throws {
    if !lines.isEmpty { try StandardOutput.lines(lines) }
    for (event, fields) in events { try JSONLines.emit(event, fields) }
    for note in notes { StandardError.write("\(note)\n") }
  }
}
