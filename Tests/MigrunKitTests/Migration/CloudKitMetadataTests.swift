import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// `NSPersistentCloudKitContainer` names each synced object by entity number (`ZENTITYID`) in
/// `ANSCKRECORDMETADATA` and `ANSCKHISTORYANALYZERSTATE`. A step that renumbers entities rewrites
/// them, as Core Data's migrator does, and marks the store for a zone refetch; the stores here are
/// built from the tables' published layout.
@Suite struct CloudKitMetadataTests {
  static func entity(_ name: String) -> String {
    #"<entity name="\#(name)"><attribute name="title" optional="YES" attributeType="String"/></entity>"#
  }

  /// Version 2 adds Alpha (numbered first) and removes Charlie: Bravo goes from 1 to 2. Or, with
  /// `renumbering` false, Charlie gains an attribute and no number changes.
  static func bundle(in folder: TemporaryDirectory, renumbering: Bool = true) throws -> ModelBundle {
    try folder.write(
      "<model>\(entity("Bravo"))\(entity("Charlie"))</model>", to: "K.xcdatamodeld/K1.xcdatamodel/contents")
    let second =
      renumbering
      ? "<model>\(entity("Alpha"))\(entity("Bravo"))</model>"
      : "<model>\(entity("Bravo"))<entity name=\"Charlie\"><attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/><attribute name=\"size\" optional=\"YES\" attributeType=\"Integer 32\"/></entity></model>"
    try folder.write(second, to: "K.xcdatamodeld/K2.xcdatamodel/contents")
    try folder.write(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>K2.xcdatamodel</string></dict></plist>
      """, to: "K.xcdatamodeld/.xccurrentversion")
    return try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("K.xcdatamodeld"))
  }

  static func entityIDs(_ url: URL, _ table: String) throws -> [[Int64]] {
    let queue = try DatabaseQueue(path: url.path)
    return try queue.read { db in
      try Row.fetchAll(db, sql: "SELECT ZENTITYID, ZENTITYPK FROM \(table) ORDER BY Z_PK").map { [$0[0], $0[1]] }
    }
  }

  @Test(arguments: [false, true]) func aRenumberingStepRewritesCloudKitsEntityNumbers(objectByObject: Bool) throws {
    let folder = try TemporaryDirectory()
    let bundle = try Self.bundle(in: folder)
    let url = folder.url.appendingPathComponent("synced.sqlite")
    let store = try SQLiteStore.create(at: url, model: try bundle.model(named: "K1"))
    try store.write { writer in
      for (entity, key) in [("Bravo", 1), ("Bravo", 2), ("Charlie", 1)] {
        try writer.insert(
          StoredObject(id: ObjectID(entity: entity, primaryKey: Int64(key)), attributes: ["title": .string(entity)]))
      }
    }
    try store.close()
    // Bravo is 1, Charlie 2 in version 1.
    let queue = try DatabaseQueue(path: url.path)
    try queue.write { db in
      try db.execute(
        sql: """
          CREATE TABLE ANSCKRECORDMETADATA ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER, ZENTITYPK INTEGER, ZNEEDSUPLOAD INTEGER, ZRECORDZONE INTEGER, ZCKRECORDNAME VARCHAR, ZCKRECORDSYSTEMFIELDS BLOB );
          CREATE INDEX Z_ANSCKRECORDMETADATA_ENTITYIDENTITYPK ON ANSCKRECORDMETADATA (ZENTITYID, ZENTITYPK);
          INSERT INTO ANSCKRECORDMETADATA (Z_PK, Z_ENT, Z_OPT, ZENTITYID, ZENTITYPK, ZCKRECORDNAME) VALUES
            (1, 17001, 1, 1, 1, 'b1'), (2, 17001, 1, 1, 2, 'b2'), (3, 17001, 1, 2, 1, 'c1');
          CREATE TABLE ANSCKHISTORYANALYZERSTATE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER, ZENTITYPK INTEGER, ZFINALCHANGETYPE INTEGER );
          INSERT INTO ANSCKHISTORYANALYZERSTATE (Z_PK, Z_ENT, Z_OPT, ZENTITYID, ZENTITYPK, ZFINALCHANGETYPE) VALUES
            (1, 17002, 1, 1, 2, 1), (2, 17002, 1, 2, 1, 2);
          """)
    }
    let plan = try MigrationPlanner.plan(bundle: bundle, storeHashes: try SQLiteStore.metadata(at: url).versionHashes)
    // Removing Charlie is what CloudKit's schema does not allow: refused, the store untouched…
    let before = storeFileBytes(url)
    #expect(plan.cloudKitFindings.map(\.rule) == ["cloudkit-removed"])
    #expect(throws: MigrationError.self) {
      try StoreMigrator(store: url, plan: plan, options: .init(bulkCopy: !objectByObject, ddl: false)).run()
    }
    #expect(storeFileBytes(url) == before)
    // …unless allowed.
    var options = StoreMigrator.Options(bulkCopy: !objectByObject, ddl: false)
    options.allowCloudKitChanges = true
    let report = try StoreMigrator(store: url, plan: plan, options: options).run()
    #expect(report.steps.first?.cloudKit == CloudKitRenumbering(renumbered: 3, removed: 2))
    // Bravo is 2 now; Charlie's rows went with Charlie.
    #expect(try Self.entityIDs(url, "ANSCKRECORDMETADATA") == [[2, 1], [2, 2]])
    #expect(try Self.entityIDs(url, "ANSCKHISTORYANALYZERSTATE") == [[2, 2]])
    let migrated = try SQLiteStore(url: url, model: try bundle.model(named: "K2"))
    defer { try? migrated.close() }
    #expect(migrated.schema.layout(of: "Bravo")?.number == 2)
    #expect(migrated.metadata.otherKeys["PFCloudKitMetadataNeedsZoneFetchAfterClientMigrationKey"] == .boolean(true))
  }

  /// A step that keeps every number leaves CloudKit's rows and the metadata as they were.
  @Test func aStepThatKeepsTheNumbersLeavesThemAlone() throws {
    let folder = try TemporaryDirectory()
    let bundle = try Self.bundle(in: folder, renumbering: false)
    let url = folder.url.appendingPathComponent("synced.sqlite")
    try SQLiteStore.create(at: url, model: try bundle.model(named: "K1")).close()
    try makeDatabase(
      url,
      [
        "CREATE TABLE ANSCKRECORDMETADATA ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER, ZENTITYPK INTEGER )",
        "INSERT INTO ANSCKRECORDMETADATA VALUES (1, 17001, 1, 1, 1), (2, 17001, 1, 2, 1)",
      ])
    let plan = try MigrationPlanner.plan(bundle: bundle, storeHashes: try SQLiteStore.metadata(at: url).versionHashes)
    let report = try StoreMigrator(store: url, plan: plan, options: .init(bulkCopy: true, ddl: false)).run()
    #expect(report.steps.first?.cloudKit.isEmpty == true)
    #expect(try Self.entityIDs(url, "ANSCKRECORDMETADATA") == [[1, 1], [2, 1]])
    let migrated = try SQLiteStore(url: url, model: try bundle.model(named: "K2"))
    defer { try? migrated.close() }
    #expect(migrated.metadata.otherKeys["PFCloudKitMetadataNeedsZoneFetchAfterClientMigrationKey"] == nil)
  }
}
