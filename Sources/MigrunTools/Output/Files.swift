import Foundation
import MigrunStore

#if canImport(Glibc)
  import Glibc
#endif

/// Writes `path` whole or not at all: `body` writes a hidden file beside it (`.NAME.migrun-tmp`),
/// synced and renamed into place once `body` returns; on any failure — a full disk, a write refused
/// — the hidden file is removed and `path` is as it was. A file already at `path` is replaced (a
/// caller that must not replace one checks first, ``OutputFile/check(_:option:force:inputs:)``);
/// a link, a folder or one of `inputs` never is. The hidden file's name is never written through:
/// a link or anything but a plain file there is refused, a leftover plain file replaced.
package func writeAtomically(to path: String, inputs: [String] = [], _ body: (BlockWriter) throws -> Void) throws {
  try OutputFile.check(path, force: true, inputs: inputs)
  let url = URL(fileURLWithPath: path)
  let temporary = WorkingFiles.output(of: url, label: "tmp")
  try WorkingFiles.requireAbsentOr(.file, at: temporary, beside: url, as: "working file")
  unlink(temporary.path)
  let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
  guard descriptor >= 0 else {
    let cause = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    throw OutputFile.explain(
      ToolError(message: "\(path): cannot write (\(OutputFile.reason(cause)))", underlying: cause), writing: path)
  }
  let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
  do {
    let writer = BlockWriter(handle)
    try body(writer)
    try writer.flush()
    try handle.synchronize()
    try handle.close()
    try OutputFile.recheck(path, inputs: inputs)
    guard rename(temporary.path, url.path) == 0 else { throw ToolError(message: "\(path): cannot move into place") }
  } catch {
    try? FileManager.default.removeItem(at: temporary)
    throw OutputFile.explain(error, writing: path)
  }
}

/// Writes `text` to `path` as ``writeAtomically(to:inputs:_:)`` does.
package func writeAtomically(to path: String, inputs: [String] = [], text: String) throws {
  try writeAtomically(to: path, inputs: inputs) { try $0.write(text) }
}

/// Makes a new store at `path` — which must not exist, nor its `-wal`, `-shm` or `-journal`: migrun
/// never overwrites a file, and SQLite would read another store's sidecar as the new one's — by `body`
/// writing it to a hidden working file beside it (`.NAME.migrun-<label>`), synced and renamed into
/// place once `body` returns; on any failure the working file is removed and nothing is at `path`
/// (a full disk: exit 12, said so).
package func writeNewStore(at path: String, label: String, inputs: [String] = [], _ body: (URL) throws -> Void)
  throws
{
  try OutputFile.check(path, inputs: inputs)
  let target = URL(fileURLWithPath: path)
  // A -wal, -shm or -journal already there — a deleted store's, typically: SQLite would read it as
  // the new store's own, and the new store would open as that other store's transactions.
  for suffix in StoreFiles.sideFileSuffixes where WorkingFiles.entry(at: path + suffix) != .none {
    throw ToolError(
      message: "\(path)\(suffix) is already there, beside the new store's name: SQLite would take it for the new "
        + "store's own \(suffix) file and read another store's pages into it; move it away (it may be left from a "
        + "store that was deleted), or give another name. Nothing was written")
  }
  let working = WorkingFiles.output(of: target, label: label)
  // A killed run's working file is replaced; anything else under its name is refused, never removed.
  for suffix in [""] + StoreFiles.sideFileSuffixes {
    try WorkingFiles.requireAbsentOr(
      .file, at: URL(fileURLWithPath: working.path + suffix), beside: target, as: "working file")
  }
  StoreFiles.remove(working)
  do {
    try body(working)
    try StoreFiles.sync(working)
    try OutputFile.recheck(path, inputs: inputs)
    guard rename(working.path, target.path) == 0 else {
      throw ToolError(message: "\(path): cannot move the store into place")
    }
  } catch {
    StoreFiles.remove(working)
    throw OutputFile.explain(error, writing: path)
  }
}
