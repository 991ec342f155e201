import Foundation

/// A fresh folder under the system's temporary folder, removed when the value goes away.
public final class TemporaryDirectory: @unchecked Sendable {
  public let url: URL

  public convenience init() throws {
    try self.init(
      url: FileManager.default.temporaryDirectory.appendingPathComponent("migrun-test-\(UUID().uuidString)"))
  }

  private init(url: URL) throws {
    self.url = url
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// Writes `text` to `name` inside the folder (creating subfolders) and returns its URL.
  @discardableResult
  public func write(_ text: String, to name: String) throws -> URL {
    let file = url.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: file)
    return file
  }

  /// Makes an empty subfolder and returns its URL.
  public func folder(_ name: String) throws -> URL {
    let folder = url.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }
}
