import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import PropertyList
import TestSupport
import Testing

/// Nothing ends in `Done` having lost what the user did not ask to lose: the silent drops found by
/// trying migrun on real projects, each shown to end in a kept value or a clear refusal.
@Suite struct NothingLostTests {
  static let wibosco = "wibosco-coredatamigration-example/"
  static let wiboscoModel = Fixtures.url(
    wibosco + "CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
  ).path
  static let wiboscoMappings = Fixtures.url(wibosco + "CoreDataMigration-Example/CoreData/Migration/Mappings").path
  static let wiboscoPolicy = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/wibosco").path
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let moodyPolicies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path

  static func count(_ store: URL, _ sql: String) throws -> Int {
    let queue = try DatabaseQueue(path: store.path)
    defer { try? queue.close() }
    return try queue.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
  }

  /// The app's 2 → 3 mapping model (found by its hashes in the app's Mappings folder) with the Lua
  /// port of its custom policy: a new Color per post, set on the post's one-to-one `color`. Core
  /// Data sets the inverse with it: every Color names its post, and the post names it back.
  @Test func settingOneSideOfAOneToOneSetsTheOther() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(
      Self.wibosco + "CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite", into: folder)
    let posts = try Self.count(store, "SELECT count(*) FROM ZPOST")
    let result = try MigrunProcess.run([
      "migrate", store.path, "--model", Self.wiboscoModel, "--to", "CoreDataMigration_Example 3",
      "--policies", Self.wiboscoMappings, "--policies", Self.wiboscoPolicy,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(posts == 5979)
    #expect(try Self.count(store, "SELECT count(*) FROM ZCOLOR") == posts)
    #expect(try Self.count(store, "SELECT count(*) FROM ZCOLOR WHERE ZPOST IS NULL") == 0)
    #expect(
      try Self.count(store, "SELECT count(*) FROM ZCOLOR c JOIN ZPOST p ON p.Z_PK = c.ZPOST WHERE p.ZCOLOR = c.Z_PK")
        == posts)
    // The hex came along: every post's color holds the hexColor the post had.
    #expect(try Self.count(store, "SELECT count(*) FROM ZCOLOR WHERE ZHEX IS NOT NULL") > 0)
  }

  /// A policy that leaves a one-to-one's sides disagreeing is caught by the step's check, and the
  /// original stays as it was.
  @Test func aStepLeavingAOneToOneDisagreeingIsRefused() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(
      Self.wibosco + "CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    // Two posts given one color: the second steals it from the first (Core Data's rule), so the
    // first post's color is gone — and 'color' is required: the step must say so, not write it.
    let policies = try folder.folder("policy")
    try """
    local shared
    return {
      createRelationships = function(dst, m)
        shared = shared or m:insert("Color", { colorID = "one" })
        dst.color = shared
      end,
    }
    """.write(to: policies.appendingPathComponent("Post2ToPost3MigrationPolicy.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run([
      "migrate", store.path, "--model", Self.wiboscoModel, "--to", "CoreDataMigration_Example 3",
      "--policies", Self.wiboscoMappings, "--policies", policies.path,
    ])
    #expect(result.status == 1, "\(result.stdout)")
    #expect(try Data(contentsOf: store) == original)
  }

  /// `--policies` naming a folder that does not exist, or holding a mapping file whose name is no
  /// step of the model, is an error before anything runs — never an inferred step in its place.
  @Test func aPolicyFolderThatCannotBeUsedIsAnError() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    let missing = folder.url.appendingPathComponent("no-such-folder").path
    for command in ["plan", "migrate"] {
      let result = try MigrunProcess.run([command, store.path, "--model", Self.moody, "--policies", missing])
      #expect(result.status == 1, "\(command): \(result.stdout)")
      #expect(result.stderr.contains("--policies \(missing): no such folder"), "\(result.stderr)")
    }
    let misnamed = try folder.folder("misnamed")
    try FileManager.default.copyItem(
      at: URL(fileURLWithPath: Self.moodyPolicies).appendingPathComponent("Moody 5-Moody 6.lua"),
      to: misnamed.appendingPathComponent("moody5-moody6.lua"))
    for command in ["plan", "migrate"] {
      let result = try MigrunProcess.run([command, store.path, "--model", Self.moody, "--policies", misnamed.path])
      #expect(result.status == 1, "\(command): \(result.stdout)")
      #expect(result.stderr.contains("moody5-moody6.lua is no step of Moody"), "\(result.stderr)")
      #expect(result.stderr.contains("did you mean 'Moody 5-Moody 6.lua'?"), "\(result.stderr)")
    }
    #expect(try Data(contentsOf: store) == original)
    // Modules a mapping file requires and tests stay welcome: the example folder plans as it is.
    let fine = try MigrunProcess.run(["plan", store.path, "--model", Self.moody, "--policies", Self.moodyPolicies])
    #expect(fine.status == 0, "\(fine.stderr)")
  }
}

extension NothingLostTests {
  /// Two migrations in a row (a device's Moody 2 store to Moody 4, then to Moody 6): the second
  /// keeps the first's backup — the original — and writes its own beside it, saying which.
  @Test func aSecondMigrationKeepsTheFirstBackup() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    let base = ["--model", Self.moody, "--policies", Self.moodyPolicies]
    let first = try MigrunProcess.run(["migrate", store.path, "--to", "Moody 4"] + base)
    #expect(first.status == 0, "\(first.stderr)")
    let backup = store.deletingLastPathComponent().appendingPathComponent("Moody 2.moody~.sqlite")
    let intermediate = try Data(contentsOf: store)
    let second = try MigrunProcess.run(["migrate", store.path, "--to", "Moody 6"] + base)
    #expect(second.status == 0, "\(second.stderr)")
    let secondBackup = store.deletingLastPathComponent().appendingPathComponent("Moody 2.moody~2.sqlite")
    #expect(try Data(contentsOf: backup) == original, "the first backup is the original, byte for byte")
    #expect(try Data(contentsOf: secondBackup) == intermediate, "the second backup is the Moody 4 store")
    #expect(second.stdout.contains("Moody 2.moody~2.sqlite"), "\(second.stdout)")
    // A folder run takes neither backup for a store.
    let status = try MigrunProcess.run(["status", store.deletingLastPathComponent().path] + base)
    #expect(!status.stdout.contains("~2"), "\(status.stdout)")
  }
}

extension NothingLostTests {
  /// `convert` without the custom class's Lua policy writes a stub to fill in; run as written, the
  /// step fails naming the class (Moody's Country5ToCountry6Policy makes the continents: a stub that
  /// ran would lose them) and the store is left as it was.
  @Test func aConvertedStubFailsTheStepUntilWritten() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    let mapping = Fixtures.url("objcio-core-data-moody/mappings/Moody 5-Moody 6.xcmappingmodel").path
    let converted = try MigrunProcess.run(["convert", mapping, "--model", Self.moody])
    #expect(converted.status == 0, "\(converted.stderr)")
    let steps = try folder.folder("steps")
    try converted.stdout.write(
      to: steps.appendingPathComponent("Moody 5-Moody 6.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--policies", steps.path])
    #expect(result.status == 1, "\(result.stdout)")
    #expect(result.stderr.contains("Country5ToCountry6Policy"), "\(result.stderr)")
    #expect(result.stderr.contains("not written in Lua yet"), "\(result.stderr)")
    #expect(try Data(contentsOf: store) == original)
  }
}

extension NothingLostTests {
  /// The app's 1 → 2 step renames `color` to `hexColor` in a mapping model. Inferred instead, the
  /// step drops every post's color: `diff`, `plan` and `migrate` say so by name and count, and
  /// `--no-drops` refuses it before anything is written; with the app's mapping model nothing drops.
  @Test func dropsAreReportedAndCanBeRefused() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(
      Self.wibosco + "CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    let colors = try Self.count(store, "SELECT count(*) FROM ZPOST WHERE ZCOLOR IS NOT NULL")
    #expect(colors > 0)
    let target = ["--model", Self.wiboscoModel, "--to", "CoreDataMigration_Example 2"]
    let diff = try MigrunProcess.run([
      "diff", Self.wiboscoModel, "--from", "CoreDataMigration_Example", "--to", "CoreDataMigration_Example 2",
    ])
    #expect(diff.stdout.contains("drops Post.color"), "\(diff.stdout)")
    let plan = try MigrunProcess.run(["plan", store.path] + target)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("drops Post.color — \(colors) values"), "\(plan.stdout)")
    let refused = try MigrunProcess.run(["migrate", store.path, "--no-drops"] + target)
    #expect(refused.status == 1, "\(refused.stdout)")
    #expect(refused.stderr.contains("Post.color — \(colors) values"), "\(refused.stderr)")
    #expect(try Data(contentsOf: store) == original)
    let json = try MigrunProcess.run(["migrate", store.path, "--json", "--dry-run"] + target)
    #expect(json.status == 0, "\(json.stderr)")
    let result = try json.jsonLine("result")
    let dropped = (result["steps"] as? [[String: Any]])?.first?["dropped"] as? [[String: Any]]
    #expect(dropped?.first?["property"] as? String == "color")
    #expect(dropped?.first?["values"] as? Int == colors)
    // verify says it too, for the made-up store of version 1.
    let verify = try MigrunProcess.run(["verify", "--objects", "5"] + target)
    #expect(verify.status == 0, "\(verify.stderr)")
    #expect(verify.stdout.contains("drops Post.color — "), "\(verify.stdout)")
    // The app's own mapping model carries the value: nothing dropped, and --no-drops lets it run.
    let mapped = try MigrunProcess.run(
      ["migrate", store.path, "--no-drops", "--policies", Self.wiboscoMappings] + target)
    #expect(mapped.status == 0, "\(mapped.stderr)")
    #expect(!mapped.stdout.contains("dropped:"), "\(mapped.stdout)")
    #expect(try Self.count(store, "SELECT count(*) FROM ZPOST WHERE ZHEXCOLOR IS NOT NULL") == colors)
  }
}

extension NothingLostTests {
  /// The messaging app's case: a store whose metadata hashes match no version, and whose own cached
  /// model hashes one entity otherwise than its metadata. Core Data takes the cache as the source;
  /// so does migrun, and says so.
  @Test func aCacheThatDisagreesWithItsMetadataIsTheSource() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    var metadata = try SQLiteStore.metadata(at: store)
    metadata.versionHashes["Mood"] = VersionHash(data: Data(repeating: 7, count: 32))
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { db in
      try db.execute(
        sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [Data(metadata.plist.binaryEncoded())])
    }
    try queue.close()
    let target = ["--model", Self.moody, "--to", "Moody 2"]
    let plan = try MigrunProcess.run(["plan", store.path] + target)
    #expect(plan.status == 0, "\(plan.stderr)")
    let migrated = try MigrunProcess.run(["migrate", store.path] + target)
    #expect(migrated.status == 0, "\(migrated.stderr)")
    #expect(
      migrated.stdout.contains("damage in the original: the store's Z_MODELCACHE disagrees with its metadata (Mood"),
      "\(migrated.stdout)")
    let status = try MigrunProcess.run(["status", store.path] + target)
    #expect(status.status == 0, "\(status.stdout)")
  }
}
