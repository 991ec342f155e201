import Foundation

/// What every `--json` prints: JSON lines, each one object whose `event` says what the line is and
/// whose `schema` is the version of the set of events (`docs/json.md` lists them and their keys). A
/// tool reads any command's output the same way: line by line, choosing lines by `event`.
package enum JSONLines {
  /// Raised when an event's keys change in a way an old reader would misread.
  package static let schema = 2

  /// One line: `fields` with `event` and `schema` added, keys sorted.
  package static func emit(_ event: String, _ fields: [String: Any] = [:]) throws {
    FileHandle.standardOutput.write(try line(event, fields))
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

  package mutating func say(_ line: String) { lines.append(line) }

  package mutating func emit(_ event: String, _ fields: [String: Any] = [:]) { events.append((event, fields)) }

  package mutating func emit(_ event: String, encoding value: some Encodable) throws {
    emit(event, try JSONLines.fields(event, value))
  }
}
