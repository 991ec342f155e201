import Foundation
import GRDB
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// XML and binary stores (issue 47) wherever a store is taken: copied between every type, created,
/// inspected, checked, planned and migrated — with the same Lua policies and counts as a SQLite
/// store, written back in their own type with the `~` backup, the original only read.
@Suite struct AtomicStoreCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody")
  static let moodyModel = moody.appendingPathComponent("models/Moody.xcdatamodeld").path
  static let moodyPolicies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path
  static let wibosco = Fixtures.url("wibosco-coredatamigration-example")
  static let wiboscoModel = wibosco.appendingPathComponent(
    "CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
  ).path

  static func migrun(_ arguments: [String]) throws -> MigrunProcess.Result {
    try MigrunProcess.run(arguments)
  }

  /// An export reduced to what survives any store type: per entity, each object's attributes (as
  /// JSON, sorted) and how many links each relationship holds — keys and versions left out.
  static func content(_ export: String) throws -> [String: [String]] {
    let json = try #require(try JSONSerialization.jsonObject(with: Data(export.utf8)) as? [String: Any])
    let entities = try #require(json["entities"] as? [String: [[String: Any]]])
    var content: [String: [String]] = [:]
    for (entity, objects) in entities {
      content[entity] = try objects.map { object in
        let attributes = try JSONSerialization.data(
          withJSONObject: object["attributes"] ?? [:], options: [.sortedKeys])
        let links = (object["relationships"] as? [String: Any] ?? [:]).mapValues { ($0 as? [Any])?.count ?? 1 }
        return String(decoding: attributes, as: UTF8.self) + " " + links.sorted { $0.key < $1.key }.description
      }.sorted()
    }
    return content
  }

  @Test(arguments: ["xml", "binary"])
  func aStoreGoesToEveryTypeAndBackWithItsObjects(_ type: String) throws {
    let folder = try TemporaryDirectory()
    let original = try copyOfFixture(
      "wibosco-coredatamigration-example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite",
      into: folder)
    let atomic = folder.url.appendingPathComponent("store.\(type)")
    let there = try Self.migrun(["copy", original.path, atomic.path, "--type", type, "--model", Self.wiboscoModel])
    #expect(there.status == 0, "\(there.stderr)")
    #expect(there.stdout.contains("UUID") && there.stdout.contains("kept"), "\(there.stdout)")
    let back = folder.url.appendingPathComponent("back.sqlite")
    let again = try Self.migrun(["copy", atomic.path, back.path, "--model", Self.wiboscoModel])
    #expect(again.status == 0, "\(again.stderr)")
    let exports = try [original, atomic, back].map { store in
      let result = try Self.migrun(["export", store.path, "--model", Self.wiboscoModel])
      #expect(result.status == 0, "\(result.stderr)")
      return result.stdout
    }
    #expect(try Self.content(exports[0]) == Self.content(exports[1]))
    #expect(try Self.content(exports[0]) == Self.content(exports[2]))
    #expect(try Self.content(exports[0]).values.joined().count > 100)
    let inspect = try Self.migrun(["inspect", atomic.path, "--model", Self.wiboscoModel])
    #expect(inspect.stdout.contains(type == "xml" ? "XML (NSXMLStoreType)" : "Binary (NSBinaryStoreType)"))
    #expect(inspect.stdout.contains("Version    CoreDataMigration_Example 3"), "\(inspect.stdout)")
    let check = try Self.migrun(["check", atomic.path, "--model", Self.wiboscoModel])
    #expect(check.status == 0 && check.stdout.contains("clean"), "\(check.stdout)\(check.stderr)")
    // An export imported as a store of this type holds the same objects.
    let json = folder.url.appendingPathComponent("export.json")
    try Data(exports[0].utf8).write(to: json)
    let imported = folder.url.appendingPathComponent("imported.\(type)")
    let result = try Self.migrun([
      "import", json.path, "--out", imported.path, "--type", type, "--model", Self.wiboscoModel, "--model-version",
      "CoreDataMigration_Example 3",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(StoreType.of(imported)?.rawValue.lowercased() == type)
    let reexport = try Self.migrun(["export", imported.path, "--model", Self.wiboscoModel])
    #expect(try Self.content(reexport.stdout) == Self.content(exports[0]))
  }

  /// Moody 1 → 6 with the Lua mapping files of `policies/examples/moody`, once as a SQLite store and
  /// once as an XML store: the same steps, counts and objects; the XML store is written back as XML,
  /// the original kept as `Moody~.storedata`, the working folder gone.
  @Test func anXMLStoreMigratesWithTheSameLuaPoliciesAsItsSQLiteCopy() throws {
    let folder = try TemporaryDirectory()
    let sqlite = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let xml = folder.url.appendingPathComponent("Moody.storedata")
    let copy = try Self.migrun(["copy", sqlite.path, xml.path, "--type", "xml", "--model", Self.moodyModel])
    #expect(copy.status == 0, "\(copy.stderr)")
    let before = try Data(contentsOf: xml)
    let options = ["--model", Self.moodyModel, "--policies", Self.moodyPolicies]
    let plan = try Self.migrun(["plan", xml.path] + options)
    #expect(plan.status == 0 && plan.stdout.contains("Moody 6"), "\(plan.stdout)\(plan.stderr)")
    let fromSQLite = try Self.migrun(["migrate", sqlite.path] + options)
    let fromXML = try Self.migrun(["migrate", xml.path] + options)
    #expect(fromSQLite.status == 0 && fromXML.status == 0, "\(fromSQLite.stderr)\(fromXML.stderr)")
    func counts(_ text: String) -> [Substring] {
      text.split(separator: "\n").filter { $0.contains(" → ") && $0.contains("links") }
    }
    #expect(!counts(fromXML.stdout).isEmpty && counts(fromXML.stdout) == counts(fromSQLite.stdout), "\(fromXML.stdout)")
    #expect(StoreType.of(xml) == .xml)
    let backup = folder.url.appendingPathComponent("Moody~.storedata")
    #expect(try Data(contentsOf: backup) == before, "the original is kept whole as the backup")
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
      $0.contains("migrun")
    }
    #expect(leftovers.isEmpty, "\(leftovers)")
    let exports = try [sqlite, xml].map { try Self.migrun(["export", $0.path, "--model", Self.moodyModel]).stdout }
    #expect(try Self.content(exports[0]) == Self.content(exports[1]))
    let status = try Self.migrun(["status", xml.path] + options)
    #expect(status.stdout.contains("no migration needed"), "\(status.stdout)\(status.stderr)")
  }

  /// A binary store migrated: written back as a binary store; a dry run writes nothing; a
  /// migration that cannot run leaves the store as it was and no working files.
  @Test func aBinaryStoreMigratesInItsOwnTypeAndAFailureLeavesItWhole() throws {
    let folder = try TemporaryDirectory()
    let sqlite = try copyOfFixture(
      "wibosco-coredatamigration-example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
      into: folder)
    let binary = folder.url.appendingPathComponent("Posts.binary")
    #expect(try Self.migrun(["copy", sqlite.path, binary.path, "--type", "binary"]).status == 0)
    let before = try Data(contentsOf: binary)
    let model = ["--model", Self.wiboscoModel]
    let failed = try Self.migrun(["migrate", binary.path] + model)
    #expect(failed.status != 0 && failed.stderr.contains("color"), "\(failed.stderr)")
    let dry = try Self.migrun(["migrate", binary.path, "--to", "CoreDataMigration_Example 2", "--dry-run"] + model)
    #expect(dry.status == 0, "\(dry.stderr)")
    #expect(try Data(contentsOf: binary) == before)
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(!files.contains { $0.contains("migrun") || $0.contains("~") }, "\(files)")
    let migrated = try Self.migrun(["migrate", binary.path, "--to", "CoreDataMigration_Example 2"] + model)
    #expect(migrated.status == 0 && migrated.stdout.contains("kept as Posts~.binary"), "\(migrated.stdout)")
    #expect(StoreType.of(binary) == .binary)
    #expect(try Data(contentsOf: folder.url.appendingPathComponent("Posts~.binary")) == before)
    let inspect = try Self.migrun(["inspect", binary.path] + model)
    #expect(inspect.stdout.contains("Version    CoreDataMigration_Example 2"), "\(inspect.stdout)")
    #expect(inspect.stdout.contains("Post  1001"), "\(inspect.stdout)")
  }

  @Test func createMakesEmptyStoresOfEveryType() throws {
    let folder = try TemporaryDirectory()
    for type in ["xml", "binary"] {
      let store = folder.url.appendingPathComponent("empty.\(type)")
      let created = try Self.migrun(["create", store.path, "--type", type, "--model", Self.moodyModel])
      #expect(created.status == 0, "\(created.stderr)")
      let inspect = try Self.migrun(["inspect", store.path, "--model", Self.moodyModel, "--json"])
      #expect(inspect.stdout.contains("\"version\":\"Moody 6\""), "\(inspect.stdout)\(inspect.stderr)")
      #expect(try Self.migrun(["check", store.path, "--model", Self.moodyModel]).status == 0)
    }
    let wrong = try Self.migrun(["create", folder.url.appendingPathComponent("x").path, "--type", "csv"])
    #expect(wrong.status != 0 && wrong.stderr.contains("sqlite, xml or binary"), "\(wrong.stderr)")
  }

  /// Broken binary stores are clear errors naming the file; `check` reports them as damage.
  @Test func brokenBinaryStoresAreClearErrors() throws {
    let folder = try TemporaryDirectory()
    let sqlite = try copyOfFixture(
      "wibosco-coredatamigration-example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
      into: folder)
    let binary = folder.url.appendingPathComponent("good.binary")
    #expect(try Self.migrun(["copy", sqlite.path, binary.path, "--type", "binary"]).status == 0)
    let bytes = try Data(contentsOf: binary)
    var cases: [(String, Data, String)] = [
      ("short", bytes.prefix(40), "shorter than its 64-byte header"),
      ("cut", bytes.prefix(bytes.count / 2), "lies outside the file"),
    ]
    var version = bytes
    version[15] = 1
    cases.append(("version", version, "database version"))
    var archive = bytes
    archive.replaceSubrange(64..<72, with: Data("garbage!".utf8))
    cases.append(("archive", archive, "a keyed archive in it does not read"))
    for (name, data, message) in cases {
      let file = folder.url.appendingPathComponent("\(name).binary")
      try data.write(to: file)
      let inspect = try Self.migrun(["inspect", file.path, "--model", Self.wiboscoModel])
      #expect(inspect.status != 0, "\(name)")
      #expect(
        inspect.stderr.contains("\(name).binary") && inspect.stderr.contains(message), "\(name): \(inspect.stderr)")
      let check = try Self.migrun(["check", file.path, "--model", Self.wiboscoModel])
      #expect(check.status == 1 && check.stdout.contains("store-unreadable"), "\(name): \(check.stdout)")
    }
    let type = try Self.migrun(["copy", binary.path, folder.url.appendingPathComponent("x").path, "--type", "csv"])
    #expect(type.status != 0 && type.stderr.contains("sqlite, xml or binary"), "\(type.stderr)")
  }

  /// A folder of stores of every type migrates as a fleet, each in its own type.
  @Test func aFleetTakesStoresOfEveryType() throws {
    let folder = try TemporaryDirectory()
    let fleet = try folder.folder("fleet")
    let sqlite = try copyOfFixture(
      "wibosco-coredatamigration-example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
      into: folder)
    for type in ["xml", "binary"] {
      let result = try Self.migrun([
        "copy", sqlite.path, fleet.appendingPathComponent("a.\(type)").path, "--type", type,
      ])
      #expect(result.status == 0, "\(result.stderr)")
    }
    try FileManager.default.copyItem(at: sqlite, to: fleet.appendingPathComponent("a.sqlite"))
    let result = try Self.migrun([
      "migrate", fleet.path, "--to", "CoreDataMigration_Example 2", "--model", Self.wiboscoModel,
    ])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(StoreType.of(fleet.appendingPathComponent("a.xml")) == .xml)
    #expect(StoreType.of(fleet.appendingPathComponent("a.binary")) == .binary)
    for name in ["a.xml", "a.binary", "a.sqlite"] {
      let inspect = try Self.migrun(["inspect", fleet.appendingPathComponent(name).path, "--model", Self.wiboscoModel])
      #expect(inspect.stdout.contains("CoreDataMigration_Example 2"), "\(name): \(inspect.stdout)")
    }
  }

  /// A custom transformer's own data (Moody's `colors`, `ColorsTransformer`: no keyed archive)
  /// cannot go into a binary store, which keeps values: refused by name before anything is written,
  /// with the option that leaves them out on purpose, which the copy then reports.
  @Test func aCustomTransformersValuesAreRefusedByNameOrDroppedOnPurpose() throws {
    let folder = try TemporaryDirectory()
    let sqlite = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let binary = folder.url.appendingPathComponent("Moody.binary")
    let refused = try Self.migrun(["copy", sqlite.path, binary.path, "--type", "binary", "--model", Self.moodyModel])
    #expect(refused.status == 1, "\(refused.stdout)")
    #expect(
      refused.stderr.contains("Mood.colors") && refused.stderr.contains("--drop Mood.colors"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: binary.path))
    let dropped = try Self.migrun([
      "copy", sqlite.path, binary.path, "--type", "binary", "--model", Self.moodyModel, "--drop", "Mood.colors",
    ])
    #expect(dropped.status == 0, "\(dropped.stderr)")
    #expect(dropped.stdout.contains("dropped on purpose (--drop): Mood.colors — 4 values"), "\(dropped.stdout)")
    let unknown = try Self.migrun([
      "copy", sqlite.path, folder.url.appendingPathComponent("x.binary").path, "--type", "binary", "--model",
      Self.moodyModel, "--drop", "Mood.colour",
    ])
    #expect(unknown.status != 0 && unknown.stderr.contains("--drop Mood.colour"), "\(unknown.stderr)")
  }

  /// Apple's own mapping models (Moody's four `.xcmappingmodel` files, with the Lua policy for the
  /// custom class they name) migrate a binary store as they migrate its SQLite copy: the same
  /// per-mapping counts and objects, written back as a binary store.
  @Test func aBinaryStoreMigratesThroughApplesMappingModels() throws {
    let folder = try TemporaryDirectory()
    let sqlite = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let binary = folder.url.appendingPathComponent("Moody.binary")
    let copy = try Self.migrun([
      "copy", sqlite.path, binary.path, "--type", "binary", "--model", Self.moodyModel, "--drop", "Mood.colors",
    ])
    #expect(copy.status == 0, "\(copy.stderr)")
    // The SQLite store without the dropped values, so that both start from the same objects.
    try DatabaseQueue(path: sqlite.path).write { db in try db.execute(sql: "UPDATE ZMOOD SET ZCOLORS = NULL") }
    let mappings = Self.moody.appendingPathComponent("mappings").path
    let options = ["--model", Self.moodyModel, "--policies", mappings, "--policies", Self.moodyPolicies]
    let fromSQLite = try Self.migrun(["migrate", sqlite.path] + options)
    let fromBinary = try Self.migrun(["migrate", binary.path] + options)
    #expect(fromSQLite.status == 0 && fromBinary.status == 0, "\(fromSQLite.stderr)\(fromBinary.stderr)")
    func counts(_ text: String) -> [Substring] {
      text.split(separator: "\n").filter { $0.contains(" → ") && !$0.hasPrefix("Migrating") }
    }
    #expect(
      !counts(fromBinary.stdout).isEmpty && counts(fromBinary.stdout) == counts(fromSQLite.stdout),
      "\(fromBinary.stdout)")
    #expect(StoreType.of(binary) == .binary)
    let exports = try [sqlite, binary].map { try Self.migrun(["export", $0.path, "--model", Self.moodyModel]).stdout }
    #expect(try Self.content(exports[0]) == Self.content(exports[1]))
  }

  /// What a SQLite store holds beyond its model (SampleModel2's persistent history) has no place in
  /// an XML or binary store: refused by name before anything is written, left out with --drop.
  @Test func aSQLiteStoresOwnTablesAreRefusedByNameOrDroppedOnPurpose() throws {
    let folder = try TemporaryDirectory()
    let sqlite = try copyOfFixture(
      "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: folder)
    let xml = folder.url.appendingPathComponent("Books.storedata")
    let refused = try Self.migrun(["copy", sqlite.path, xml.path, "--type", "xml"])
    #expect(
      refused.status == 1 && refused.stderr.contains("ACHANGE, ATRANSACTION, ATRANSACTIONSTRING"), "\(refused.stderr)")
    #expect(refused.stderr.contains("--drop ACHANGE") && !FileManager.default.fileExists(atPath: xml.path))
    let dropped = try Self.migrun(
      [
        "copy", sqlite.path, xml.path, "--type", "xml", "--drop", "ACHANGE", "--drop", "ATRANSACTION", "--drop",
        "ATRANSACTIONSTRING",
      ])
    #expect(dropped.status == 0 && dropped.stdout.contains("dropped on purpose (--drop): ACHANGE"), "\(dropped.stderr)")
  }
}
