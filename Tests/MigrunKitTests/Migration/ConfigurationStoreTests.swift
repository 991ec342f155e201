import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// A configuration's store — its entities' tables alone, numbered among the whole model's, with the
/// whole model's hashes and model cache, as Core Data's NSSQLModel and NSPersistentStore write one —
/// migrates on every path to the next version of the same configuration.
@Suite struct ConfigurationStoreTests {
  static let v1 = """
    <model>
      <entity name="Cache"><attribute name="key" optional="YES" attributeType="String"/></entity>
      <entity name="Note"><attribute name="title" optional="YES" attributeType="String"/></entity>
      <entity name="Tag"><attribute name="word" optional="YES" attributeType="String"/></entity>
      <configuration name="Cloud"><memberEntity name="Note"/><memberEntity name="Tag"/></configuration>
      <configuration name="Local"><memberEntity name="Cache"/></configuration>
    </model>
    """

  @Test func aConfigurationsStoreMigratesOnEveryPath() throws {
    let v2XML = Self.v1.replacingOccurrences(
      of: #"<attribute name="title" optional="YES" attributeType="String"/>"#,
      with:
        #"<attribute name="title" optional="YES" attributeType="String"/><attribute name="body" optional="YES" attributeType="String"/>"#
    )
    let v1 = try Migrations.model(Self.v1, "V1").restricted(toConfiguration: "Cloud")
    let v2 = try Migrations.model(v2XML, "V2").restricted(toConfiguration: "Cloud")
    #expect(v1.entities.map(\.name) == ["Note", "Tag"])
    // NSSQLModel numbers every entity of the model (Cache 1, Note 2, Tag 3), then keeps the
    // configuration's; the metadata holds the coordinator's model's hashes.
    #expect(StoreSchema(model: v1).entities.map(\.number) == [2, 3], "numbered among the whole model's entities")
    let whole = try Migrations.model(Self.v1, "V1")
    #expect(v1.entityVersionHashes == whole.entityVersionHashes)
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Cloud.sqlite")
    let store = try SQLiteStore.create(at: url, model: v1)
    try store.write { writer in
      try writer.insert(
        StoredObject(id: ObjectID(entity: "Note", primaryKey: 1), attributes: ["title": .string("kept")]))
      try writer.insert(StoredObject(id: ObjectID(entity: "Tag", primaryKey: 1), attributes: ["word": .string("red")]))
    }
    try store.close()
    let rows = try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try Int64.fetchAll(db, sql: "SELECT Z_ENT FROM ZNOTE UNION ALL SELECT Z_ENT FROM ZTAG")
    }
    #expect(rows == [2, 3])
    #expect(try SQLiteStore.metadata(at: url).versionHashes == whole.entityVersionHashes)
    #expect(try SQLiteStore.cachedModel(at: url)?.entities.map(\.name) == ["Cache", "Note", "Tag"])
    #expect(whole.configuration(ofStoreTables: try SQLiteStore.tableNames(at: url)) == "Cloud")
    // Opened with the whole model, or its own cached one, the store is read as Cloud's.
    for model in [whole, nil] {
      let opened = try SQLiteStore(url: url, model: model)
      #expect(opened.model.wholeModel?.configuration == "Cloud")
      #expect(try opened.count(of: "Note", includingSubentities: true) == 1)
      try opened.close()
    }
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    for (method, result) in results {
      let migrated = try SQLiteStore(url: result, model: v2)
      #expect(
        try migrated.object(ObjectID(entity: "Note", primaryKey: 1))?.attributes["title"] == .string("kept"),
        "\(method)")
      #expect(try migrated.count(of: "Tag", includingSubentities: true) == 1, "\(method)")
      try migrated.close()
    }
  }

  @Test func aConfigurationThatCannotStandAloneIsRefusedByName() throws {
    let xml = Self.v1.replacingOccurrences(
      of: #"<entity name="Note"><attribute name="title" optional="YES" attributeType="String"/></entity>"#,
      with:
        #"<entity name="Note"><attribute name="title" optional="YES" attributeType="String"/><relationship name="cache" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Cache"/></entity>"#
    )
    let model = try Migrations.model(xml, "V1")
    #expect(throws: ModelError.self) { try model.restricted(toConfiguration: "Cloud") }
    do {
      _ = try model.restricted(toConfiguration: "Cloud")
    } catch {
      #expect("\(error)".contains("relationship 'cache' leads to Cache, which the configuration does not hold"))
    }
  }
}
