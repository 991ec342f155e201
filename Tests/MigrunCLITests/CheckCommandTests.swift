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
