import Foundation
import GRDB
import MigrunKit
import MigrunModel

/// A SQLite file's schema as sets, read independently of migrun's store code: what must be equal
/// between a store migrun writes and the one Apple's Core Data wrote.
public struct SchemaSnapshot: Equatable, CustomStringConvertible {
  /// Table name → column names.
  public var tables: [String: Set<String>]
  /// Index names (automatic indexes left out).
  public var indexes: Set<String>
  /// Uniqueness constraints as "TABLE(COL,COL)", whichever SQL spelled them.
  public var uniqueness: Set<String>

  /// Reads the schema of `url`, opened read-only and immutable (nothing is written).
  /// Tables and indexes whose names match `excluding` are left out (Apple's persistent-history tables).
  public init(of url: URL, excluding: (String) -> Bool = { _ in false }) throws {
    var configuration = Configuration()
    configuration.readonly = true
    let path = "file:\(url.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? url.path)?immutable=1"
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    var tables: [String: Set<String>] = [:]
    var indexes: Set<String> = []
    var uniqueness: Set<String> = []
    try queue.read { db in
      for row in try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master") {
        let type: String = row["type"]
        let name: String = row["name"]
        let table: String = row["tbl_name"]
        guard !excluding(name), !excluding(table), !name.hasPrefix("sqlite_") else { continue }
        if type == "table" {
          tables[name] = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(name))").map { $0["name"] as String })
        } else if type == "index" {
          indexes.insert(name)
        }
      }
      for table in tables.keys {
        for index in try Row.fetchAll(db, sql: "PRAGMA index_list(\(table))") where (index["unique"] as Int) == 1 {
          let origin: String = index["origin"]
          guard origin != "pk" else { continue }
          let name: String = index["name"]
          let columns = try Row.fetchAll(db, sql: "PRAGMA index_info(\(name))").map { $0["name"] as String }
          uniqueness.insert("\(table)(\(columns.joined(separator: ",")))")
        }
      }
    }
    self.tables = tables
    self.indexes = indexes
    self.uniqueness = uniqueness
  }

  /// This snapshot without what Core Data leaves behind when it migrates a store in place: fetch
  /// indexes (`Z_<Entity>_<name>`, not a uniqueness index) that `model` does not declare. Apple's
  /// in-place migration keeps the fetch indexes of the versions the store went through (the
  /// bookmarks stores keep `Z_BookmarkEntity_url` beside the current `Z_BookmarkEntity_byURL`), so
  /// they are no part of the layout a version gives a new store.
  public func withoutInPlaceLeftovers(of model: ObjectModel) -> SchemaSnapshot {
    var copy = self
    let declared = Set(
      model.entities.flatMap { entity in entity.fetchIndexes.map { "Z_\(entity.name)_\($0.name)" } })
    let prefixes = model.entities.map { "Z_\($0.name)_" }
    copy.indexes = indexes.filter { name in
      name.contains("UNIQUE") || declared.contains(name) || !prefixes.contains { name.hasPrefix($0) }
    }
    return copy
  }

  public var description: String {
    let tableText = tables.keys.sorted().map { "\($0): \(tables[$0]?.sorted().joined(separator: ",") ?? "")" }
    return (tableText + ["indexes: \(indexes.sorted())", "unique: \(uniqueness.sorted())"]).joined(separator: "\n")
  }
}

/// A fresh copy of a fixture store in a temporary folder (stores are never opened where they are).
/// Each copy gets a folder of its own inside `folder`, so copies of same-named stores do not clash.
public func copyOfFixture(_ relativePath: String, into folder: TemporaryDirectory) throws -> URL {
  let source = Fixtures.url(relativePath)
  let destination = try folder.folder(UUID().uuidString).appendingPathComponent(source.lastPathComponent)
  try FileManager.default.copyItem(at: source, to: destination)
  // A store copied off a device comes with its sidecars when it has them: they are part of it.
  for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
    try FileManager.default.copyItem(
      at: URL(fileURLWithPath: source.path + suffix), to: URL(fileURLWithPath: destination.path + suffix))
  }
  return destination
}

/// Apple's persistent-history tables and indexes (ACHANGE, ATRANSACTION…), which a model does not declare.
public func isPersistentHistory(_ name: String) -> Bool {
  ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING", "Z_TRANSACTION", "Z_TRANSACTIONSTRING"].contains {
    name.hasPrefix($0)
  }
    || name.hasPrefix("Z_DA_")
}

/// A SQLite database made with plain SQL, for stores that are wrong on purpose.
public func makeDatabase(_ url: URL, _ statements: [String]) throws {
  let queue = try DatabaseQueue(path: url.path)
  try queue.write { db in
    for statement in statements { try db.execute(sql: statement) }
  }
}
