import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Core Data names a many-to-many's join table after the side it meets first, and the order it
/// meets them in depends on every property of the entity (``CoreDataDictionaryOrder``): adding one
/// attribute can move the name to the other side. A real messaging app's `UserClient` shows it —
/// between its versions 2.95.0 and 2.96.0 only `needsSessionMigration` was added, and Core Data's
/// own migration renamed `Z_nTRUSTEDCLIENTS` to `Z_nTRUSTEDBYCLIENTS`
/// (`../shared/fixtures/facts/join-pairing.json`). A migration here does the same, every way, and
/// keeps the links.
@Suite struct JoinTableRenameTests {
  /// The model of one fact's version: the entity with its properties, and every entity its
  /// relationships reach with the inverse (to-many where the fact's tables pair them).
  static func model(fact: [String: Any], version: String) throws -> ObjectModel {
    let name = try #require(fact["entity"] as? String)
    var others: [String: [String]] = [:]
    var body = try #require(fact["attributes"] as? [String]).map {
      #"<attribute name="\#($0)" optional="YES" attributeType="String"/>"#
    }
    for relationship in try #require(fact["relationships"] as? [[String: Any]]) {
      let own = try #require(relationship["name"] as? String)
      let destination = try #require(relationship["destination"] as? String)
      let inverse = try #require(relationship["inverse"] as? String)
      let toMany = relationship["toMany"] as? Bool ?? false
      body.append(
        #"<relationship name="\#(own)" optional="YES" \#(toMany ? #"toMany="YES""# : #"maxCount="1""#) deletionRule="Nullify" destinationEntity="\#(destination)" inverseName="\#(inverse)" inverseEntity="\#(destination)"/>"#
      )
      guard destination != name else { continue }
      // The other side is a to-many of a one-to-many (the fact's tables pair only the entity's own).
      others[destination, default: []].append(
        #"<relationship name="\#(inverse)" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="\#(name)" inverseName="\#(own)" inverseEntity="\#(name)"/>"#
      )
    }
    var xml = "<model>\n<entity name=\"\(name)\">\n" + body.joined(separator: "\n") + "\n</entity>\n"
    for (entity, relationships) in others.sorted(by: { $0.key < $1.key }) {
      xml += "<entity name=\"\(entity)\">\n" + relationships.joined(separator: "\n") + "\n</entity>\n"
    }
    xml += "</model>"
    return try Migrations.model(xml, version)
  }

  static func facts() throws -> [String: [String: Any]] {
    let data = try Data(contentsOf: Fixtures.facts("join-pairing.json"))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    var byVersion: [String: [String: Any]] = [:]
    for fact in try #require(root["facts"] as? [[String: Any]]) {
      for version in fact["versions"] as? [String] ?? [] { byVersion[version] = fact }
    }
    return byVersion
  }

  static func tables(_ store: URL) throws -> Set<String> {
    try DatabaseQueue(path: StoreFiles.immutableURI(store)).read { db in
      Set(
        try String.fetchAll(
          db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\'"))
    }
  }

  @Test func addingOneAttributeRenamesTheJoinTableAsCoreDataDid() throws {
    let facts = try Self.facts()
    let v1 = try Self.model(fact: try #require(facts["zmessaging2.95.0"]), version: "zmessaging2.95.0")
    let v2 = try Self.model(fact: try #require(facts["zmessaging2.96.0"]), version: "zmessaging2.96.0")
    let number = try #require(StoreSchema(model: v1).layout(of: "UserClient")).number
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("Clients.sqlite")
    let created = try SQLiteStore.create(at: store, model: v1)
    let client = { (key: Int64) in ObjectID(entity: "UserClient", primaryKey: key) }
    try created.write { writer in
      for key in Int64(1)...4 {
        try writer.insert(StoredObject(id: client(key), attributes: ["label": .string("client \(key)")]))
      }
      try writer.setToMany(client(1), "trustedClients", [client(2), client(3)])
      try writer.setToMany(client(4), "trustedClients", [client(1)])
      try writer.setToMany(client(2), "ignoredClients", [client(4)])
    }
    try created.close()
    #expect(try Self.tables(store).isSuperset(of: ["Z_\(number)TRUSTEDCLIENTS", "Z_\(number)IGNOREDCLIENTS"]))

    let results = try Migrations.migrateEveryWay(
      store, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    for (method, url) in results {
      let tables = try Self.tables(url)
      #expect(tables.contains("Z_\(number)TRUSTEDBYCLIENTS"), "\(method)")
      #expect(!tables.contains("Z_\(number)TRUSTEDCLIENTS"), "\(method)")
      #expect(tables.contains("Z_\(number)IGNOREDCLIENTS"), "\(method)")
      let migrated = try SQLiteStore(url: url, model: v2)
      defer { try? migrated.close() }
      #expect(
        Set(try #require(try migrated.object(client(1))).toMany["trustedClients"] ?? []) == [client(2), client(3)])
      #expect(try #require(try migrated.object(client(1))).toMany["trustedByClients"] == [client(4)])
      #expect(try #require(try migrated.object(client(4))).toMany["ignoredByClients"] == [client(2)])
    }
  }
}
