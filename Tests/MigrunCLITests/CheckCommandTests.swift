import Foundation
import GRDB
import TestSupport
import Testing

/// `migrun check`: every store in ../shared is clean; each kind of damage is found, by name.
@Suite struct CheckCommandTests {
  struct Expected: Decodable { let model: String? }

  @Test func everyStoreOfTheCorpusIsClean() throws {
    let folder = try TemporaryDirectory()
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    let stores = try JSONDecoder().decode([String: Expected].self, from: data)
    for (path, expected) in stores.sorted(by: { $0.key < $1.key }) {
      let store = try copyOfFixture(path, into: folder)
      let model = expected.model.map {
        Fixtures.url($0).deletingLastPathComponent().deletingLastPathComponent().path
      }
      let result = try MigrunProcess.run(["check", store.path] + (model.map { ["--model", $0] } ?? []))
      #expect(result.status == 0, "\(path): \(result.stdout) \(result.stderr)")
      #expect(result.stdout.hasSuffix(": clean\n"), "\(path): \(result.stdout)")
      #expect(!result.stdout.contains("column-not-in-model"), "\(path): \(result.stdout)")
    }
  }

  /// Every production schema (real phones' stores, read with their own model cache) is clean:
  /// Core Data's numbering, column order and the columns Notes appended in place are its layout.
  @Test func everyProductionSchemaIsClean() throws {
    let folder = try TemporaryDirectory()
    let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.url("production-schemas").path)
    var checked = 0
    for name in names.sorted() where name.hasSuffix(".sqlite") {
      let store = try copyOfFixture("production-schemas/" + name, into: folder)
      let result = try MigrunProcess.run(["check", store.path])
      #expect(result.status == 0 && result.stdout.hasSuffix(": clean\n"), "\(name): \(result.stdout) \(result.stderr)")
      checked += 1
    }
    #expect(checked == 15)
  }

  /// Core Data's own layout is never damage: the team-chat app's store (framework 1145) numbers its
  /// 46 entities in case-insensitive name order (`ScheduledMemberTag` 26, `SContact` 27, …,
  /// `SMessage` 34) and lists its columns grouped by type. With rows in it, `check` calls it clean;
  /// a row under a number no entity of its table has is still found.
  @Test func theTeamChatStoreWithRowsIsClean() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("production-schemas/teams-josh_ios15_ffs-SkypeSpacesDogfood.sqlite", into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in
      try db.execute(
        sql: """
          WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 81)
          INSERT INTO ZSMESSAGE (Z_PK, Z_ENT, Z_OPT, ZISLOCAL, ZTHREADID, ZTSID) SELECT i, 34, 1, 0, '19:t', i FROM n;
          WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
          INSERT INTO ZSCONTACT (Z_PK, Z_ENT, Z_OPT) SELECT i, 27, 1 FROM n;
          UPDATE Z_PRIMARYKEY SET Z_MAX = 81 WHERE Z_NAME = 'SMessage';
          UPDATE Z_PRIMARYKEY SET Z_MAX = 10 WHERE Z_NAME = 'SContact';
          """)
    }
    try queue.close()
    let clean = try MigrunProcess.run(["check", store.path])
    #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
    #expect(clean.stdout.hasSuffix(": clean\n"), "\(clean.stdout)")

    let damaged = try DatabaseQueue(path: store.path)
    try damaged.write { try $0.execute(sql: "UPDATE ZSMESSAGE SET Z_ENT = 33 WHERE Z_PK = 1") }
    try damaged.close()
    let found = try MigrunProcess.run(["check", store.path])
    #expect(found.status == 1)
    #expect(found.stdout.contains("unknown-entity-number: ZSMESSAGE: 1 row with Z_ENT 33"), "\(found.stdout)")
  }

  /// A store numbered otherwise than Core Data numbers today — migrun numbered entities in byte
  /// order before it knew Core Data's case-insensitive order (`Bird` 1, `ant` 2, where Core Data
  /// has `ant` 1, `Bird` 2) — is read by its own `Z_PRIMARYKEY`: clean, every object under its
  /// own entity, its numbers kept.
  @Test func aStoreNumberedInByteOrderIsReadByItsOwnNumbers() throws {
    let folder = try TemporaryDirectory()
    let bundle = folder.url.appendingPathComponent("Zoo.xcdatamodeld")
    try writeModelVersion(
      "Zoo", of: bundle,
      entities: """
        <entity name="ant"><attribute name="legs" attributeType="Integer 16" defaultValueString="6"/></entity>
        <entity name="Bird"><attribute name="name" optional="YES" attributeType="String"/></entity>
        """)
    let store = folder.url.appendingPathComponent("zoo.sqlite")
    let created = try MigrunProcess.run(["create", store.path, "--model", bundle.path])
    #expect(created.status == 0, "\(created.stderr)")
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in
      let numbered = try String.fetchAll(db, sql: "SELECT Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT")
      #expect(numbered == ["ant", "Bird"])
      try db.execute(
        sql: """
          UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 10;
          UPDATE Z_PRIMARYKEY SET Z_ENT = 13 - Z_ENT;
          INSERT INTO ZBIRD (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 1, 1, 'robin');
          INSERT INTO ZANT (Z_PK, Z_ENT, Z_OPT, ZLEGS) VALUES (1, 2, 1, 6), (2, 2, 1, 6);
          UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Bird';
          UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'ant';
          """)
    }
    try queue.close()
    let checked = try MigrunProcess.run(["check", store.path, "--model", bundle.path])
    #expect(checked.status == 0, "\(checked.stdout) \(checked.stderr)")
    let exported = try MigrunProcess.run(["export", store.path, "--model", bundle.path])
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(exported.stdout.contains("robin"), "\(exported.stdout)")
    let reread = try DatabaseQueue(path: store.path)
    let kept = try reread.read { db in
      try String.fetchAll(db, sql: "SELECT Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT")
    }
    #expect(kept == ["Bird", "ant"])

    // Salvage keeps the numbering: its rows keep their Z_ENT, and the new store names them alike.
    let salvaged = folder.url.appendingPathComponent("salvaged.sqlite")
    let salvage = try MigrunProcess.run(["salvage", store.path, "--out", salvaged.path, "--model", bundle.path])
    #expect(salvage.status == 0, "\(salvage.stdout) \(salvage.stderr)")
    let salvagedCheck = try MigrunProcess.run(["check", salvaged.path, "--model", bundle.path])
    #expect(salvagedCheck.status == 0, "\(salvagedCheck.stdout)")
    let salvagedNumbers = try DatabaseQueue(path: salvaged.path).read { db in
      try String.fetchAll(db, sql: "SELECT Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT")
    }
    #expect(salvagedNumbers == ["Bird", "ant"])

    // A migration writes the destination under Core Data's numbers, and says so before it runs.
    try writeModelVersion(
      "Zoo 2", of: bundle,
      entities: """
        <entity name="ant"><attribute name="legs" attributeType="Integer 16" defaultValueString="6"/>\
        <attribute name="colour" optional="YES" attributeType="String"/></entity>
        <entity name="Bird"><attribute name="name" optional="YES" attributeType="String"/></entity>
        """)
    let plan = try MigrunProcess.run(["plan", store.path, "--model", bundle.path, "--to", "Zoo 2"])
    #expect(
      plan.stdout.contains("the store numbers entity Bird 1, where Core Data numbers it 2"),
      "\(plan.stdout) \(plan.stderr)")
    let migrated = try MigrunProcess.run(["migrate", store.path, "--model", bundle.path, "--to", "Zoo 2"])
    #expect(migrated.status == 0, "\(migrated.stdout) \(migrated.stderr)")
    let after = try DatabaseQueue(path: store.path).read { db in
      (
        try String.fetchAll(db, sql: "SELECT Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT"),
        try String.fetchAll(db, sql: "SELECT ZNAME FROM ZBIRD WHERE Z_ENT = 2")
      )
    }
    #expect(after.0 == ["ant", "Bird"])
    #expect(after.1 == ["robin"])
    try reread.close()
  }

  /// An index the model calls for that the store lacks is a finding, named as the framework that
  /// wrote the store names it; an index of the form before framework 847 that a migration in place
  /// left on a table it did not change is a note, and the store stays clean.
  @Test func indexesAreCheckedAsTheFrameworkThatWroteTheStoreWritesThem() throws {
    let folder = try TemporaryDirectory()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in try db.execute(sql: "DROP INDEX ZMOOD_ZREMOTEIDENTIFIER_INDEX") }
    try queue.close()
    let damaged = try MigrunProcess.run(["check", store.path, "--model", model])
    #expect(damaged.status == 1)
    #expect(
      damaged.stdout.contains(
        "index-missing: ZMOOD: no index ZMOOD_ZREMOTEIDENTIFIER_INDEX, which the model calls for"),
      "\(damaged.stdout)")

    let other = try TemporaryDirectory()
    let migrated = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: other)
    let migrate = try MigrunProcess.run(["migrate", migrated.path, "--model", model, "--to", "Moody 2"])
    #expect(migrate.status == 0, "\(migrate.stdout) \(migrate.stderr)")
    let checked = try MigrunProcess.run(["check", migrated.path, "--model", model])
    #expect(checked.status == 0, "\(checked.stdout)")
    #expect(
      checked.stdout.contains(
        "note: index-older-form: ZGEOGRAPHICREGION: index ZGEOGRAPHICREGION_ZMARKEDFORDELETIONDATE_ZUPDATEDAT is the "
          + "form Core Data wrote before framework 847, kept from an earlier framework; today's Core Data writes "
          + "Z_GeographicRegion_markedForDeletionDate_updatedAt"), "\(checked.stdout)")
    #expect(checked.stdout.hasSuffix(": clean\n"))
  }

  @Test func eachKindOfDamageIsFound() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in
      // A mood whose country names no object, a row of no entity, a key sequence behind its table.
      try db.execute(sql: "UPDATE ZMOOD SET ZCOUNTRY = 999 WHERE Z_PK = (SELECT min(Z_PK) FROM ZMOOD)")
      try db.execute(sql: "INSERT INTO ZMOOD (Z_PK, Z_ENT, Z_OPT) VALUES (500, 77, 1)")
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Mood'")
    }
    try queue.close()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let result = try MigrunProcess.run(["check", store.path, "--model", model, "--json"])
    #expect(result.status == 1, "\(result.stdout)")
    let report = try result.jsonLine("check")
    #expect(try result.jsonLine("summary")["withFindings"] as? Int == 1)
    let kinds = Set((report["findings"] as? [[String: String]] ?? []).compactMap { $0["kind"] })
    #expect(kinds == ["link-to-no-object", "unknown-entity-number", "primary-key-behind"], "\(result.stdout)")
    // Against another model's versions: the metadata matches none.
    let other = Fixtures.url(
      "coredataplus-samplemodels/SampleModel/SampleModel.xcdatamodeld"
    ).path
    let foreign = try MigrunProcess.run(["check", store.path, "--model", other])
    #expect(foreign.stdout.contains("no-matching-version"), "\(foreign.stdout)")
  }

  /// A damaged page: check says so, and migrate refuses before any work, naming the user's file
  /// (not a working copy), the file untouched.
  @Test func aDamagedFileIsNamedAndNotMigrated() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(
      "wibosco-coredatamigration-example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite",
      into: folder)
    var bytes = try Data(contentsOf: store)
    // Scribble over a page in the middle (a table's b-tree page), leaving the header and schema.
    let page = 4096
    for offset in (page * 100)..<(page * 100 + 2000) { bytes[offset] = 0xA5 }
    try bytes.write(to: store)
    let check = try MigrunProcess.run(["check", store.path])
    #expect(check.status == 1)
    #expect(check.stdout.contains("sqlite-integrity"), "\(check.stdout)")
    let model = Fixtures.url(
      "wibosco-coredatamigration-example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
    ).path
    let migrate = try MigrunProcess.run(["migrate", store.path, "--model", model])
    #expect(migrate.status == 1)
    #expect(migrate.stderr.contains("\(store.path) is damaged"), "\(migrate.stderr)")
    #expect(!migrate.stderr.contains(".migrun-"), "\(migrate.stderr)")
    #expect(try Data(contentsOf: store) == bytes)
  }

  /// A store whose `-wal` holds transactions is checked through a private copy: every finding, and
  /// an error, names the user's file, never the copy (`/tmp/migrun-check-…/Moody.moody.sqlite`); a
  /// column added by hand is named as a note.
  @Test func aStoreCheckedThroughItsWALIsNamedAsTheUsersFile() throws {
    let folder = try TemporaryDirectory()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try SQLiteShell.commitIntoWAL(
      store, "ALTER TABLE ZMOOD ADD COLUMN ZNOTE TEXT;\nINSERT INTO ZMOOD (Z_PK, Z_ENT, Z_OPT) VALUES (900, 77, 1);\n")
    let checked = try MigrunProcess.run(["check", store.path, "--model", model])
    #expect(checked.status == 1, "\(checked.stdout) \(checked.stderr)")
    #expect(!checked.stdout.contains("migrun-check-"), "\(checked.stdout)")
    #expect(
      checked.stdout.contains(
        "\(store.path): note: column-not-in-model: ZMOOD.ZNOTE: a column model version 'Moody' does not have"),
      "\(checked.stdout)")
    #expect(checked.stdout.contains("\(store.path): unknown-entity-number"), "\(checked.stdout)")
    let dropped = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try SQLiteShell.commitIntoWAL(dropped, "ALTER TABLE ZMOOD DROP COLUMN ZCOLORS;\n")
    let refused = try MigrunProcess.run(["check", dropped.path, "--model", model])
    #expect(refused.status != 0)
    #expect(!refused.stderr.contains("migrun-check-"), "\(refused.stderr)")
    #expect(refused.stderr.contains(dropped.path), "\(refused.stderr)")
  }

  /// A column the model does not have is named in a store read directly too; every store of the
  /// corpus has none.
  @Test func aColumnAddedByHandIsNamed() throws {
    let folder = try TemporaryDirectory()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try makeDatabase(store, ["ALTER TABLE ZMOOD ADD COLUMN ZB TEXT", "ALTER TABLE ZMOOD ADD COLUMN ZA INTEGER"])
    let checked = try MigrunProcess.run(["check", store.path, "--model", model])
    #expect(checked.status == 0, "\(checked.stdout) \(checked.stderr)")
    #expect(
      checked.stdout.contains(
        "note: column-not-in-model: ZMOOD.ZA, ZMOOD.ZB: columns model version 'Moody' does not have (added by hand?); "
          + "Core Data neither reads nor writes them"), "\(checked.stdout)")
    #expect(checked.stdout.hasSuffix(": clean\n"))
  }
}
