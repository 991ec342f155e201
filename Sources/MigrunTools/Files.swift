import Foundation
import MigrunStore

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

/// Makes a new store at `path` — which must not exist: migrun never overwrites a file — by `body`
/// writing it to a hidden working file beside it (`.NAME.migrun-<label>`), synced and renamed into
/// place once `body` returns; on any failure the working file is removed and nothing is at `path`.
package func writeNewStore(at path: String, label: String, _ body: (URL) throws -> Void) throws {
  let target = URL(fileURLWithPath: path)
  guard !FileManager.default.fileExists(atPath: target.path) else {
    throw ToolError(message: "\(path): a file is already there; migrun does not overwrite it")
  }
  let working = target.deletingLastPathComponent().appendingPathComponent(
    ".\(target.lastPathComponent).migrun-\(label)")
  StoreFiles.remove(working)
  do {
    try body(working)
    try StoreFiles.sync(working)
    guard rename(working.path, target.path) == 0 else {
      throw ToolError(message: "\(path): cannot move the store into place")
    }
  } catch {
    StoreFiles.remove(working)
    throw error
  }
}
