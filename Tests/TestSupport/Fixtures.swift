import Foundation
import GRDB

/// Paths of the real Core Data fixtures in `../shared/fixtures/coredata` (or `$MIGRUN_FIXTURES`).
///
/// The fixtures are read where they are, never copied into the repository. When they cannot be
/// found the tests that need them fail with that message — they are never skipped.
public enum Fixtures {
  /// The repository's root folder.
  public static let repositoryRoot: URL = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url
  }()

  /// The `coredata` fixtures folder.
  public static let coreData: URL = {
    if let override = ProcessInfo.processInfo.environment["MIGRUN_FIXTURES"] {
      return URL(fileURLWithPath: override)
    }
    return repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/coredata")
  }()

  /// A file of facts read off stores that are not shared (`../shared/fixtures/facts`).
  public static func facts(_ name: String) -> URL {
    coreData.deletingLastPathComponent().appendingPathComponent("facts").appendingPathComponent(name)
  }

  /// A path inside the fixtures folder.
  public static func url(_ relativePath: String) -> URL {
    coreData.appendingPathComponent(relativePath)
  }

  /// Whether the fixtures are where they should be.
  public static var areAvailable: Bool {
    FileManager.default.fileExists(atPath: coreData.appendingPathComponent("expected_store_hashes.json").path)
  }

  /// Every `.xcdatamodeld` folder in the fixtures.
  public static func modelBundles() throws -> [URL] {
    try find { $0.pathExtension == "xcdatamodeld" }
  }

  /// Every compiled model's `VersionInfo.plist` (inside `.momd` folders).
  public static func versionInfoPlists() throws -> [URL] {
    try find { $0.lastPathComponent == "VersionInfo.plist" && $0.deletingLastPathComponent().pathExtension == "momd" }
  }

  /// The `.xcdatamodeld` a compiled `.momd` was made from: the bundle of the same name nearest to
  /// it in the fixtures (beside it, or in a folder above), nil when the project did not ship it.
  public static func sourceBundle(ofCompiled momd: URL) throws -> URL? {
    let name = momd.deletingPathExtension().lastPathComponent
    let candidates = try modelBundles().filter { $0.deletingPathExtension().lastPathComponent == name }
    func shared(_ url: URL) -> Int {
      zip(url.pathComponents, momd.pathComponents).prefix { $0 == $1 }.count
    }
    return candidates.max { shared($0) < shared($1) }
  }

  /// Whether the SQLite file `store` has a table named `table`, read without writing anything.
  public static func store(_ store: URL, hasTable table: String) throws -> Bool {
    var configuration = Configuration()
    configuration.readonly = true
    let path =
      "file:\(store.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? store.path)?immutable=1"
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    return try queue.read { try $0.tableExists(table) }
  }

  private static func find(_ match: (URL) -> Bool) throws -> [URL] {
    guard let walker = FileManager.default.enumerator(at: coreData, includingPropertiesForKeys: nil) else {
      return []
    }
    var found: [URL] = []
    for case let url as URL in walker where match(url) {
      found.append(url)
    }
    return found.sorted { $0.path < $1.path }
  }
}
