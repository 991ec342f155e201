import FileDoors
import Foundation
import MigrunModel
import MigrunStore

#if canImport(Glibc)
  import Glibc
#endif

/// A file a command writes — a store, an export, a report, JUnit, coverage — checked before any work
/// is done, so that a refusal costs nothing and names its reason: a symbolic link (migrun never
/// writes through one, dangling or not), a folder, one of the command's inputs, a file already there
/// the user did not ask to replace (`--force`), a folder that is not there or cannot be written in.
///
/// ```swift
/// try OutputFile.check(out, option: "--out", force: force, inputs: [store])
/// ```
package enum OutputFile {
  /// Refuses `path` as an output, by name, when writing it would harm or fail (see the type).
  /// `force`: whether an existing file may be replaced (`--force`), nil where the command has no
  /// `--force` (a new store: never); an input, a link or a folder is never replaced.
  package static func check(_ path: String, option: String? = nil, force: Bool? = nil, inputs: [String] = [])
    throws
  {
    let name = option.map { "\($0) \(path)" } ?? path
    if let input = inputs.first(where: { sameFile($0, path) }) ?? ReadFiles.input(named: path) {
      throw ToolError(message: "\(name): \(ontoInput(path, input)); give another file to write")
    }
    switch InputFile.kind(at: path) {
    case nil: break
    case .file?:
      guard force == true else {
        throw ToolError(
          message: "\(name): a file is already there; "
            + (force == nil ? "migrun does not overwrite it" : "give --force to replace it, or another name"))
      }
    case .link?:
      throw ToolError(
        message: "\(name): is a symbolic link; migrun does not write through links — give the path of a file itself")
    case .folder?: throw ToolError(message: "\(name): is a folder; give the path of a file to write")
    case let kind?:
      throw ToolError(
        message: "\(name): is \(kind.words), not a regular file; migrun writes only regular files, --force or not "
          + "(send the output to standard output by leaving the option out, where the command can)")
    }
    if let problem = folderProblem(of: path) { throw ToolError(message: "\(name): \(problem)") }
  }

  /// Refuses `path` again just before a finished output is moved into place: by then the command has
  /// read all it reads (a module a test required, a model's `contents`), and none of it is replaced.
  package static func recheck(_ path: String, inputs: [String]) throws {
    if let input = inputs.first(where: { sameFile($0, path) }) ?? ReadFiles.input(named: path) {
      throw ToolError(message: "\(path): \(ontoInput(path, input)); the output was not written — give another file")
    }
    if let kind = InputFile.kind(at: path), kind != .file {
      throw ToolError(message: "\(path): is \(kind.words) now; the output was not written")
    }
  }

  /// A failure to write `path` in words that say what to do: no space (exit 12: the cause is kept),
  /// permission denied or a read-only folder (named); any other error as it is.
  package static func explain(_ error: any Error, writing path: String) -> any Error {
    if StoreFailure.isDiskFull(error) {
      return ToolError(
        message: "\(path): not enough free space on its disk; nothing was written — free some space, or write it "
          + "elsewhere", underlying: error)
    }
    if error is ToolError { return error }
    if let problem = folderProblem(of: path) { return ToolError(message: "\(path): \(problem)", underlying: error) }
    return error
  }

  /// A full disk met while working in the temporary folder (`verify`'s made-up stores, `review`'s
  /// copy), said as that — exit 12, the folder named, `TMPDIR` to move it; any other error as it is.
  package static func explainTemporary(_ error: any Error) -> any Error {
    guard StoreFailure.isDiskFull(error) else { return error }
    return ToolError(
      message: "not enough free space in the temporary folder \(FileManager.default.temporaryDirectory.path) for "
        + "migrun's working copies (\(error)); free some space, or set TMPDIR to a folder with room",
      underlying: error)
  }

  /// What went wrong underneath a write, in a few words: "no space left on the disk", "permission
  /// denied", "read-only file system", "is a folder", else the system's own words.
  package static func reason(_ error: any Error) -> String {
    if StoreFailure.isDiskFull(error) { return "no space left on the disk" }
    switch errorNumber(error) {
    case EACCES, EPERM: return "permission denied"
    case EROFS: return "read-only file system"
    case EISDIR: return "is a folder"
    case let number?: return String(cString: strerror(number))
    case nil: return error.localizedDescription
    }
  }

  // MARK: - Non public

  /// Why writing `path` would replace `input`: it is that input, or a name beside it SQLite reads.
  private static func ontoInput(_ path: String, _ input: String) -> String {
    let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
    let beside = absolute.hasPrefix(input) && absolute != input && !sameFile(path, input)
    return beside
      ? "is beside \(input), which this command reads, under a name SQLite would read as that store's own file"
      : "is \(sameFile(path, input) || absolute == input ? input : path), which this command reads"
  }

  /// Why nothing can be written in `path`'s folder, or nil when it can.
  private static func folderProblem(of path: String) -> String? {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
      return "there is no folder \(folder) to write it in"
    }
    guard isFolder.boolValue else { return "\(folder) is not a folder" }
    guard access(folder, W_OK) != 0 else { return nil }
    switch errno {
    case EROFS: return "\(folder) is on a read-only file system; write it elsewhere"
    default: return "permission denied: cannot write in the folder \(folder); write it elsewhere"
    }
  }

  /// Whether two paths name one file (the same device and inode; links followed).
  private static func sameFile(_ first: String, _ second: String) -> Bool {
    var (a, b) = (stat(), stat())
    guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino
  }

  /// The system's error number under `error` (a POSIX error, or Foundation's underlying one).
  private static func errorNumber(_ error: any Error) -> Int32? {
    for cause in ErrorCause.chain(error) {
      if let posix = cause as? POSIXError { return posix.code.rawValue }
      let nsError = cause as NSError
      if nsError.domain == NSPOSIXErrorDomain { return Int32(exactly: nsError.code) }
    }
    return nil
  }
}
