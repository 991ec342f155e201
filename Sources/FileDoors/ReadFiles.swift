import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What this process reads: every file through the door in (``InputFile``), the names the command
/// line gave, and the names beside a store SQLite would read as its own (`-wal`, `-shm`,
/// `-journal`). The door out asks ``input(named:)`` before it writes, and again before it moves a
/// finished file into place: no output of a command replaces one of its inputs, whichever option
/// named it.
package enum ReadFiles {
  /// Notes the file at `path` (its device and inode) as read.
  package static func note(_ path: String, device: UInt64, inode: UInt64) {
    let absolute = absolutePath(path)
    state.withLock {
      $0.identities[Identity(device: device, inode: inode)] = absolute
      $0.paths[absolute] = absolute
    }
  }

  /// Notes `names` (absolute or relative paths) as inputs of `input`, whether or not anything is
  /// there yet: a store's sidecars, which SQLite would take for the store's own.
  package static func note(names: [String], of input: String) {
    let owner = absolutePath(input)
    state.withLock {
      for name in names { $0.paths[absolutePath(name)] = owner }
    }
  }

  /// Notes the paths a command line names (`arguments`, and the value of each `--option=value`),
  /// each that names an existing file or folder: a path named twice — once as an input, once as the
  /// output — is then refused as that output; and beside each file named, the names `suffixes` make
  /// (a store's `-wal`, `-shm`, `-journal`: SQLite would read an output there as the store's own).
  package static func noteArguments(_ arguments: [String], besideEachFile suffixes: [String]) {
    let values = arguments.map { argument in
      argument.hasPrefix("--") && argument.contains("=") ? String(argument.drop { $0 != "=" }.dropFirst()) : argument
    }
    var named: [(Identity, String)] = []
    for value in values where !value.isEmpty && !value.hasPrefix("-") {
      var info = stat()
      guard stat(value, &info) == 0 else { continue }
      named.append((Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), absolutePath(value)))
      if info.st_mode & S_IFMT == S_IFREG { note(names: suffixes.map { value + $0 }, of: value) }
    }
    state.withLock { $0.named = named }
  }

  /// Whether the command line names `path` itself (a link there was the user's choice).
  package static func isNamed(_ path: String) -> Bool {
    let absolute = absolutePath(path)
    return state.withLock { $0.named.contains { $0.1 == absolute } }
  }

  /// The input that writing `path` would replace — a file read, a store's sidecar name, or a path the
  /// command line names besides as the output itself — or nil when `path` is no input.
  package static func input(named path: String) -> String? {
    let absolute = absolutePath(path)
    var info = stat()
    let identity =
      stat(path, &info) == 0 ? Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) : nil
    return state.withLock { state -> String? in
      if let owner = state.paths[absolute] { return owner }
      if let identity, let read = state.identities[identity] { return read }
      let named = state.named.filter { $0.1 == absolute || $0.0 == identity }
      return named.count > 1 ? named[0].1 : nil
    }
  }

  // MARK: - Non public

  private struct Identity: Hashable {
    let device: UInt64
    let inode: UInt64
  }

  private struct State {
    var identities: [Identity: String] = [:]
    var paths: [String: String] = [:]
    var named: [(Identity, String)] = []
  }

  private static let state = Mutex(State())

  /// `path` made absolute and standardized (`.` and `..` resolved in words, links left as they are).
  private static func absolutePath(_ path: String) -> String {
    URL(fileURLWithPath: path).standardizedFileURL.path
  }
}
