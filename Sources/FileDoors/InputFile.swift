import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The one door for a file migrun reads from outside: a store's file before SQLite opens it, a
/// sidecar, a model, a mapping model, a step or stage file, a chain, the project file, a fleet's
/// entries, a coverage file, JSON. Whatever the command, a file comes in only as:
///
/// - **a regular file**: a FIFO, a device, a socket or a folder is refused by name, and never
///   blocks — the file is opened without waiting (`O_NONBLOCK`) and looked at before it is read;
/// - **not through a link**, unless the user named the link itself (``Origin/named``): a file found
///   inside a folder (``Origin/found``: a step file, a module, a model's `contents`) that is a
///   symbolic link is refused, so a folder cannot make migrun read what lies outside it;
/// - **bounded**: a file larger than the reader's limit is refused with the limit named, never read
///   whole into memory;
/// - **text decoded strictly**: a byte that is not UTF-8 is an error naming the file and line,
///   never a file silently passed over;
/// - **remembered**: every file read is noted (``ReadFiles``), so that the door out refuses to write
///   over any input of the command.
///
/// ```swift
/// let text = try InputFile.text(URL(fileURLWithPath: "policies/chain"), origin: .found)
/// ```
package enum InputFile {
  /// How migrun came to read a path.
  package enum Origin: Sendable {
    /// The user named this path (an argument, an option): a symbolic link is followed.
    case named
    /// Found inside a folder the user named: a symbolic link is refused.
    case found
  }

  /// The largest file read whole unless a reader says otherwise: 256 MiB.
  package static let defaultLimit = 256 << 20

  /// The bytes of the file at `url`, checked as the type says.
  package static func data(_ url: URL, origin: Origin = .found, limit: Int = defaultLimit) throws -> Data {
    let (descriptor, size) = try open(url, origin: origin, limit: limit)
    defer { close(descriptor) }
    var data = Data(count: size + 1)
    var count = 0
    while count < data.count {
      let read = data.withUnsafeMutableBytes {
        Glibc.read(descriptor, $0.baseAddress.map { $0 + count }, $0.count - count)
      }
      if read < 0 && errno == EINTR { continue }
      guard read >= 0 else { throw InputFileError(url.path, "cannot be read (\(String(cString: strerror(errno))))") }
      if read == 0 { break }
      count += read
    }
    // A file that grew as it was read is refused as one past the limit would be.
    guard count <= limit else { throw tooLarge(url, limit: limit) }
    return data.prefix(count)
  }

  /// ``data(_:origin:limit:)``, or nil when nothing is at `url` (a file that may be absent: a
  /// chain, a `VersionInfo.plist`); anything else that is not a readable regular file still throws.
  package static func dataIfPresent(_ url: URL, origin: Origin = .found, limit: Int = defaultLimit) throws -> Data? {
    kind(at: url.path) == nil ? nil : try data(url, origin: origin, limit: limit)
  }

  /// The first `count` bytes of the regular file at `url` (fewer when it is shorter), checked as
  /// the type says — what a reader looks at to tell a file's kind.
  package static func head(_ url: URL, count: Int, origin: Origin = .found) throws -> [UInt8] {
    let (descriptor, _) = try open(url, origin: origin, limit: nil)
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: count)
    let read = pread(descriptor, &bytes, count, 0)
    guard read >= 0 else { throw InputFileError(url.path, "cannot be read (\(String(cString: strerror(errno))))") }
    return Array(bytes.prefix(read))
  }

  /// The text of the file at `url`, UTF-8 decoded strictly: a byte sequence that is not UTF-8 is an
  /// error naming the file and its line (a leading byte-order mark is passed over).
  package static func text(_ url: URL, origin: Origin = .found, limit: Int = defaultLimit) throws -> String {
    try decode(try data(url, origin: origin, limit: limit), file: url.path)
  }

  /// `data` as UTF-8 text, or an error naming `file` and the line of the first byte that is not UTF-8.
  package static func decode(_ data: Data, file: String) throws -> String {
    let bytes = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    var offset = 0
    var line = 1
    while case .valid(let scalar) = parser.parseScalar(from: &iterator) {
      if scalar.count == 1 && scalar.first == 0x0A { line += 1 }
      offset += scalar.count
    }
    throw InputFileError(
      file,
      "line \(line): byte \(offset + 1) is not UTF-8 text (a file saved in another encoding?); save it as UTF-8")
  }

  /// Checks that `url` is a regular file that may be read as `origin` allows, notes it as read, and
  /// returns its size — for a file another library opens itself (SQLite a store): a FIFO there
  /// would block that library's open forever.
  /// Looked at, not opened (the other library opens it; a store's opens are counted): what is at the
  /// path when that library opens it is its own look.
  @discardableResult
  package static func check(_ url: URL, origin: Origin = .named) throws -> Int {
    let path = url.path
    var info = stat()
    let follow = origin == .named || ReadFiles.isNamed(path)
    guard (follow ? stat(path, &info) : lstat(path, &info)) == 0 else {
      throw InputFileError(path, "cannot be read (\(String(cString: strerror(errno))))")
    }
    let kind = Kind(mode: info.st_mode)
    if kind == .link { throw linkFound(path) }
    guard kind == .file else {
      throw InputFileError(path, "is \(kind.words), not a regular file; migrun reads only regular files")
    }
    ReadFiles.note(path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    return Int(info.st_size)
  }

  /// The file at `url` opened for a reader that reads it a piece at a time (a `-wal`, a hot
  /// `-journal`: too large to hold), checked as the type says but for its size; nil when nothing is
  /// there. The caller closes the descriptor.
  package static func openForPieces(_ url: URL, origin: Origin = .found) throws -> (descriptor: Int32, size: Int)? {
    guard kind(at: url.path) != nil else { return nil }
    return try open(url, origin: origin, limit: nil)
  }

  /// What is at `path`, not following a link at its end: nil when nothing is there.
  package static func kind(at path: String) -> Kind? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return Kind(mode: info.st_mode)
  }

  /// The kinds of entry a folder holds.
  package enum Kind: Sendable, Equatable {
    case file, folder, link, other(String)

    init(mode: mode_t) {
      switch mode & S_IFMT {
      case S_IFREG: self = .file
      case S_IFDIR: self = .folder
      case S_IFLNK: self = .link
      case S_IFIFO: self = .other("a FIFO")
      case S_IFCHR, S_IFBLK: self = .other("a device")
      case S_IFSOCK: self = .other("a socket")
      default: self = .other("not a regular file")
      }
    }

    /// "a folder", "a symbolic link", "a FIFO", …
    package var words: String {
      switch self {
      case .file: "a file"
      case .folder: "a folder"
      case .link: "a symbolic link"
      case .other(let words): words
      }
    }
  }

  // MARK: - Non public

  /// Opens `url` for reading without blocking, and returns it with its size once it is known to be
  /// a regular file within `limit`; the caller closes it.
  private static func open(_ url: URL, origin: Origin, limit: Int?) throws -> (Int32, Int) {
    let path = url.path
    // A path the command line names is the user's own, whichever reader comes to it.
    let follow = origin == .named || ReadFiles.isNamed(path) ? 0 : O_NOFOLLOW
    let descriptor = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | follow)
    guard descriptor >= 0 else {
      let number = errno
      if number == ELOOP, kind(at: path) == .link { throw linkFound(path) }
      throw InputFileError(path, "cannot be read (\(String(cString: strerror(number))))")
    }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      close(descriptor)
      throw InputFileError(path, "cannot be read (\(String(cString: strerror(errno))))")
    }
    let kind = Kind(mode: info.st_mode)
    guard kind == .file else {
      close(descriptor)
      throw InputFileError(path, "is \(kind.words), not a regular file; migrun reads only regular files")
    }
    let size = Int(info.st_size)
    if let limit, size > limit {
      close(descriptor)
      throw tooLarge(url, limit: limit)
    }
    // Reads of a regular file never wait; the flag only kept the open from waiting.
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    ReadFiles.note(path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    return (descriptor, size)
  }

  private static func linkFound(_ path: String) -> InputFileError {
    InputFileError(
      path,
      "is a symbolic link inside a folder migrun reads; migrun does not follow it (it could lead anywhere) — "
        + "put the file itself there")
  }

  private static func tooLarge(_ url: URL, limit: Int) -> InputFileError {
    InputFileError(url.path, "is larger than the \(limit >> 20) MiB migrun reads of such a file; it was not read")
  }
}

/// A file the door in refused, or could not read: `path: reason`.
package struct InputFileError: Error, CustomStringConvertible, Sendable {
  package let path: String
  package let reason: String

  package init(_ path: String, _ reason: String) {
    self.path = path
    self.reason = reason
  }

  package var description: String { "\(path): \(reason)" }
}
