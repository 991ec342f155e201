import Foundation
import PropertyList

/// Writes `url` whole or not at all: into a hidden file beside it, renamed into place.
package func writeAtomically(to url: URL, _ body: (FileHandle) throws -> Void) throws {
  let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).migrun-tmp")
  guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
    let handle = FileHandle(forWritingAtPath: temporary.path)
  else { throw ToolError(message: "\(url.path): cannot write") }
  do {
    try body(handle)
    try handle.close()
    guard rename(temporary.path, url.path) == 0 else { throw ToolError(message: "\(url.path): cannot move into place") }
  } catch {
    try? FileManager.default.removeItem(at: temporary)
    throw error
  }
}

/// Property list values as JSON-ready Foundation objects (data as base64).
package enum JSONBridge {
  package static func object(_ value: PropertyListValue) -> Any {
    switch value {
    case .string(let text): text
    case .integer(let number): number
    case .real(let number), .date(let number): number
    case .boolean(let flag): flag
    case .data(let bytes): Data(bytes).base64EncodedString()
    case .array(let elements): elements.map(object)
    case .dictionary(let entries): entries.mapValues(object)
    case .uid(let reference): ["CF$UID": reference]
    }
  }
}
