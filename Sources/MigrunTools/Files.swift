import Foundation

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
