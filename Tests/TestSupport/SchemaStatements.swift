import Foundation
import GRDB

/// A store's `sqlite_master`, statement for statement: each table's, index's, trigger's and view's
/// SQL by type and name (uppercased), whitespace aside. SQLite's own objects are left out. Read
/// immutable: nothing is written beside the store.
public struct SchemaStatements: Equatable, CustomStringConvertible {
  public struct Key: Hashable, Comparable, CustomStringConvertible {
    public let type: String
    public let name: String
    /// The table an index or trigger is on (the table itself for a table); not part of the key.
    public let table: String

    public static func < (a: Key, b: Key) -> Bool { (a.type, a.name) < (b.type, b.name) }
    public static func == (a: Key, b: Key) -> Bool { a.type == b.type && a.name == b.name }
    public func hash(into hasher: inout Hasher) {
      hasher.combine(type)
      hasher.combine(name)
    }
    public var description: String { "\(type) \(name)" }
  }

  public var statements: [Key: String]

  public init(of url: URL) throws {
    var configuration = Configuration()
    configuration.readonly = true
    let path = "file:\(url.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? url.path)?immutable=1"
    statements = try DatabaseQueue(path: path, configuration: configuration).read { db in
      var found: [Key: String] = [:]
      for row in try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL")
      {
        let name: String = row["name"]
        let table: String = row["tbl_name"]
        guard !name.hasPrefix("sqlite_") else { continue }
        found[Key(type: row["type"], name: name.uppercased(), table: table.uppercased())] = Self.normalized(row["sql"])
      }
      return found
    }
  }

  public subscript(type: String, name: String) -> String? {
    get { statements[Key(type: type, name: name.uppercased(), table: "")] }
    set { statements[Key(type: type, name: name.uppercased(), table: "")] = newValue }
  }

  /// Where two stores' statements differ, one line each: the object, then each store's statement.
  public func differences(from other: SchemaStatements, _ names: (String, String)) -> [String] {
    Set(statements.keys).union(other.statements.keys).sorted().compactMap { key in
      statements[key] == other.statements[key]
        ? nil : "\(key)\n  \(names.0): \(statements[key] ?? "none")\n  \(names.1): \(other.statements[key] ?? "none")"
    }
  }

  public var description: String {
    statements.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
  }

  /// Whitespace aside: runs of it are one space, and none is kept beside `(`, `)` and `,`.
  public static func normalized(_ sql: String) -> String {
    var text = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    for mark in ["(", ")", ","] {
      text = text.replacingOccurrences(of: " \(mark)", with: mark).replacingOccurrences(of: "\(mark) ", with: mark)
    }
    return text
  }
}
