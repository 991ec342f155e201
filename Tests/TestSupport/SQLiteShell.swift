import Foundation

/// The `sqlite3` shell (Debian's `sqlite3` package) in a second process, holding a store the way
/// another program would: an open connection, a read transaction, a write lock — or killed with
/// `kill -9` after committing, leaving its transactions in the `-wal`.
public final class SQLiteShell: @unchecked Sendable {
  public static let executable = URL(fileURLWithPath: "/usr/bin/sqlite3")
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()

  /// Starts `sqlite3 store`, runs `sql` and returns once it has run (the shell stays open).
  public init(_ store: URL, _ sql: String) throws {
    process.executableURL = Self.executable
    process.arguments = ["-batch", store.path]
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    try send(sql + "\nSELECT 'migrun-test-ready';\n")
    var seen = Data()
    while !String(decoding: seen, as: UTF8.self).contains("migrun-test-ready") {
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else {
        throw ShellError(message: "sqlite3 ended early: \(String(decoding: seen, as: UTF8.self))")
      }
      seen += chunk
    }
  }

  struct ShellError: Error { let message: String }

  public var pid: Int32 { process.processIdentifier }

  public func send(_ sql: String) throws {
    try input.fileHandleForWriting.write(contentsOf: Data(sql.utf8))
  }

  /// Ends the shell as a user would (end of input): it commits nothing more and closes the store.
  public func close() {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  /// `kill -9`: the shell dies holding whatever it held, its WAL not checkpointed.
  public func kill() {
    Foundation.kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  deinit {
    if process.isRunning { kill() }
  }

  /// Runs `sql` on `store` in a shell that is then killed: committed transactions stay in the
  /// `-wal` (with its `-shm`), as in a store copied off a device while its app was running.
  public static func commitIntoWAL(_ store: URL, _ sql: String) throws {
    let shell = try SQLiteShell(store, "PRAGMA journal_mode = WAL;\nPRAGMA wal_autocheckpoint = 0;\n" + sql)
    shell.kill()
  }

  /// Runs `sql` on `store` (put in rollback-journal mode) inside a transaction that never commits, in
  /// a shell killed part way: its cache kept to one page, the changed pages are written into the
  /// store itself before the kill, their originals in a hot `-journal` that SQLite rolls back.
  public static func crashMidTransaction(_ store: URL, _ sql: String) throws {
    let shell = try SQLiteShell(store, "PRAGMA journal_mode = DELETE;\nPRAGMA cache_size = 1;\nBEGIN;\n" + sql)
    shell.kill()
  }
}

/// The bytes of a store's three files (`nil` for one that is not there).
public func storeFileBytes(_ store: URL) -> [Data?] {
  ["", "-wal", "-shm"].map { FileManager.default.contents(atPath: store.path + $0) }
}

/// A fixture store copied into a new folder in `folder`, writable (the fixtures are read-only files).
public func writableCopyOfFixture(_ relativePath: String, into folder: TemporaryDirectory) throws -> URL {
  try writableCopyOfFixture(relativePath, in: try folder.folder(UUID().uuidString))
}

/// A fixture store copied into `folder` itself (a mount point, say), under its own name, writable.
public func writableCopyOfFixture(_ relativePath: String, in folder: URL) throws -> URL {
  let source = Fixtures.url(relativePath)
  let copy = folder.appendingPathComponent(source.lastPathComponent)
  try FileManager.default.copyItem(at: source, to: copy)
  try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path)
  return copy
}
