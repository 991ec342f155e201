import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// A model split into configurations — CloudKit apps keep `Local` and `Cloud` entities in two
/// stores — gives one store per configuration, holding that configuration's entities alone. Each
/// store is read, planned and migrated as its own: with `--configuration`, or found from the store.
@Suite struct ConfigurationTests {
  static func entity(_ name: String, extra: String = "") -> String {
    #"<entity name="\#(name)"><attribute name="title" optional="YES" attributeType="String"/>\#(extra)</entity>"#
  }

  static func configurations() -> String {
    #"""
    <configuration name="Cloud"><memberEntity name="Folder"/><memberEntity name="Note"/></configuration>
    <configuration name="Local"><memberEntity name="Cache"/></configuration>
    """#
  }

  /// Two versions: version 2 gives Note and Cache a new attribute.
  static func bundle(in folder: TemporaryDirectory) throws -> URL {
    let size = #"<attribute name="size" optional="YES" attributeType="Integer 32"/>"#
    try folder.write(
      "<model>\(entity("Cache"))\(entity("Folder"))\(entity("Note"))\(configurations())</model>",
      to: "S.xcdatamodeld/S1.xcdatamodel/contents")
    try folder.write(
      "<model>\(entity("Cache", extra: size))\(entity("Folder"))\(entity("Note", extra: size))\(configurations())</model>",
      to: "S.xcdatamodeld/S2.xcdatamodel/contents")
    try folder.write(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>S2.xcdatamodel</string></dict></plist>
      """, to: "S.xcdatamodeld/.xccurrentversion")
    return folder.url.appendingPathComponent("S.xcdatamodeld")
  }

  static func tables(_ url: URL) throws -> [String] {
    try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try String.fetchAll(
        db,
        sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'Z\\_%' ESCAPE '\\' ORDER BY name")
    }
  }

  @Test func eachConfigurationsStoreMigratesToItsOwnFoundFromTheStore() throws {
    let folder = try TemporaryDirectory()
    let model = try Self.bundle(in: folder)
    let bundle = try ModelBundle(modelOrStoreAt: model)
    for (configuration, entity, other) in [("Cloud", "Note", "ZCACHE"), ("Local", "Cache", "ZNOTE")] {
      let url = folder.url.appendingPathComponent("\(configuration).sqlite")
      let created = try MigrunProcess.run(
        ["create", url.path, "--model", model.path, "--model-version", "S1", "--configuration", configuration])
      #expect(created.status == 0, "\(created.stderr)")
      #expect(!(try Self.tables(url)).contains(other), "the store holds its configuration's entities alone")
      let store = try SQLiteStore(
        url: url, model: try bundle.restricted(toConfiguration: configuration).model(named: "S1"), access: .readWrite)
      try store.write { writer in
        try writer.insert(
          StoredObject(id: ObjectID(entity: entity, primaryKey: 1), attributes: ["title": .string("kept")]))
      }
      try store.close()
      #expect(try bundle.configuration(ofStoreAt: url) == configuration)
      // Found from the store: no --configuration.
      let status = try MigrunProcess.run(["status", url.path, "--model", model.path])
      #expect(status.status == 10, "\(status.stdout)\(status.stderr)")
      let migrated = try MigrunProcess.run(["migrate", url.path, "--model", model.path, "--no-backup"])
      #expect(migrated.status == 0, "\(migrated.stdout)\(migrated.stderr)")
      #expect(!(try Self.tables(url)).contains(other))
      let exported = try MigrunProcess.run(["export", url.path, "--model", model.path])
      #expect(exported.status == 0, "\(exported.stderr)")
      #expect(exported.stdout.contains("\"kept\""))
      // The export comes back into a store of the same configuration.
      try folder.write(exported.stdout, to: "\(configuration).json")
      let copy = folder.url.appendingPathComponent("\(configuration)-copy.sqlite")
      let imported = try MigrunProcess.run([
        "import", folder.url.appendingPathComponent("\(configuration).json").path, "--model", model.path,
        "--configuration", configuration, "--out", copy.path,
      ])
      #expect(imported.status == 0, "\(imported.stderr)")
      #expect(try Self.tables(copy) == (try Self.tables(url)))
      #expect(
        try MigrunProcess.run(["export", copy.path, "--model", model.path]).stdout
          == exported.stdout.replacingOccurrences(
            of: try SQLiteStore.metadata(at: url).uuid, with: try SQLiteStore.metadata(at: copy).uuid))
      let after = try MigrunProcess.run(["status", url.path, "--model", model.path, "--configuration", configuration])
      #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
    }
  }

  @Test func aConfigurationTheModelDoesNotHaveIsAnErrorNamingThoseItHas() throws {
    let folder = try TemporaryDirectory()
    let model = try Self.bundle(in: folder)
    let url = folder.url.appendingPathComponent("x.sqlite")
    let result = try MigrunProcess.run(["create", url.path, "--model", model.path, "--configuration", "Remote"])
    #expect(result.status != 0)
    #expect(
      result.stderr.contains("no version of S has a configuration 'Remote' (it has Cloud, Local)"), "\(result.stderr)")
  }
}
