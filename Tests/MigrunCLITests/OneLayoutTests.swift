import Foundation
import TestSupport
import Testing

/// One home for Core Data's SQL: every command that writes a SQLite store writes the tables,
/// indexes and triggers `create` writes for the same model, statement for statement — `import` of
/// an export, `copy` back from an XML store, `salvage`, and `migrate` by every method. A store kind
/// whose layout came from a second copy of the rule fails here.
@Suite struct OneLayoutTests {
  /// Models with what a layout can differ in: Teams' 46 entities (case-insensitive numbering,
  /// columns of every type, many-to-manys), SampleModel2 (a hierarchy, derived attributes and their
  /// triggers, decimals, UUIDs, transformables) and Truth Social's (sub-entities sharing an
  /// attribute name: ZACCOUNTID, ZACCOUNTID1).
  static let models = [
    "production-schemas/teams-josh_ios15_ffs-SkypeSpacesDogfood.sqlite",
    "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite",
    "production-schemas/truthSocial-josh_ios17_ffs-ChatModel.sqlite",
  ]

  @Test(arguments: models) func everyCommandWritesCreatesTables(_ fixture: String) throws {
    let folder = try TemporaryDirectory()
    let model = try copyOfFixture(fixture, into: folder).path
    let created = folder.url.appendingPathComponent("created.sqlite").path
    try Self.run(["create", created, "--model", model])
    let export = folder.url.appendingPathComponent("export.json").path
    try Self.run(["export", created, "--out", export])
    let xml = folder.url.appendingPathComponent("store.xml").path
    try Self.run(["copy", created, xml, "--type", "xml"])
    var written: [(String, String)] = []
    written.append(("import", folder.url.appendingPathComponent("imported.sqlite").path))
    try Self.run(["import", export, "--model", model, "--out", written[0].1])
    written.append(("copy from XML", folder.url.appendingPathComponent("copied.sqlite").path))
    try Self.run(["copy", xml, written[1].1, "--type", "sqlite", "--model", model])
    written.append(("salvage", folder.url.appendingPathComponent("salvaged.sqlite").path))
    try Self.run(["salvage", created, "--out", written[2].1])
    let expected = try SchemaStatements(of: URL(fileURLWithPath: created))
    #expect(expected.statements.count > 10)
    for (command, store) in written {
      let differences = try SchemaStatements(of: URL(fileURLWithPath: store)).differences(
        from: expected, (command, "create"))
      #expect(differences.isEmpty, "\(fixture): \(command):\n\(differences.joined(separator: "\n"))")
    }
  }

  /// A migration writes the destination version's tables as `create` does, whether its steps run
  /// as Core Data's object by object or by migrun's fast paths (Moody 1 → 6: five steps).
  @Test(arguments: [[], ["--objects-only"]]) func aMigrationWritesCreatesTables(_ options: [String]) throws {
    let folder = try TemporaryDirectory()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    try Self.run(["migrate", store.path, "--model", model] + options)
    let created = folder.url.appendingPathComponent("created.sqlite")
    try Self.run(["create", created.path, "--model", model])
    let differences = try SchemaStatements(of: store).differences(
      from: try SchemaStatements(of: created), ("migrate", "create"))
    #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
  }

  static func run(_ arguments: [String]) throws {
    let result = try MigrunProcess.run(arguments)
    #expect(result.status == 0, "migrun \(arguments.joined(separator: " ")): \(result.stdout) \(result.stderr)")
  }
}
