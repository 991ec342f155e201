import Foundation
import TestSupport
import Testing

/// `migrun convert`, and mapping models run by `plan`/`migrate` from a policy folder.
@Suite struct ConvertCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let mappings = Fixtures.url("objcio-core-data-moody/mappings")
  static let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path

  @Test func convertWritesALuaMappingFileThatMigratesAsTheMappingModelDoes() throws {
    let folder = try TemporaryDirectory()
    let out = try folder.folder("converted")
    let mapping = Self.mappings.appendingPathComponent("Moody 5-Moody 6.xcmappingmodel").path
    // Without the class's Lua policy: a stub, and a note saying so.
    let stubbed = try MigrunProcess.run(["convert", mapping, "--model", Self.moody])
    #expect(stubbed.status == 0, "\(stubbed.stderr)")
    #expect(stubbed.stdout.contains("local Country5ToCountry6Policy = {"))
    #expect(stubbed.stderr.contains("stubs, to fill in: Country5ToCountry6Policy"))
    let written = try MigrunProcess.run([
      "convert", mapping, "--model", Self.moody, "--policies", Self.policies, "--out", out.path,
    ])
    #expect(written.status == 0, "\(written.stderr)")
    #expect(written.stdout.contains("Moody 5-Moody 6.lua"))
    #expect(written.stderr.isEmpty)
    let again = try MigrunProcess.run(["convert", mapping, "--model", Self.moody, "--out", out.path])
    #expect(again.status == 1)
    #expect(again.stderr.contains("a file is already there; give --force"))

    let byConverted = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let byMapping = try copyOfFixture("objcio-core-data-moody/stores/Moody 5.moody.sqlite", into: folder)
    let converted = try MigrunProcess.run([
      "migrate", byConverted.path, "--model", Self.moody, "--policies", out.path, "--policies", Self.policies,
    ])
    #expect(converted.status == 0, "\(converted.stderr)")
    let plan = try MigrunProcess.run([
      "plan", byMapping.path, "--model", Self.moody, "--mapping", mapping, "--policies", Self.policies,
    ])
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("Moody 5-Moody 6.xcmappingmodel"), "\(plan.stdout)")
    let direct = try MigrunProcess.run([
      "migrate", byMapping.path, "--model", Self.moody, "--mapping", mapping, "--policies", Self.policies,
    ])
    #expect(direct.status == 0, "\(direct.stderr)")
    let exports = try [byConverted, byMapping].map {
      try MigrunProcess.run(["export", $0.path, "--model", Self.moody]).stdout
    }
    #expect(exports[0] == exports[1])
    #expect(exports[0].contains("\"Continent\""))
  }

  /// Moody 4-Moody 5 with its one value expression's selector changed (same length, so the archive
  /// stays valid): FUNCTION($source, "lowercaseString:", continent.numericISO3166Code).
  static func unsupportedMappingModel(in folder: URL) throws -> URL {
    let name = "Moody 4-Moody 5.xcmappingmodel"
    var xml = try String(
      contentsOf: Self.mappings.appendingPathComponent(name).appendingPathComponent("xcmapping.xml"), encoding: .utf8)
    let open = #"<attribute name="valueexpressiondata" type="binary">"#
    let start = try #require(xml.range(of: open)).upperBound
    let end = try #require(xml.range(of: "</attribute>", range: start..<xml.endIndex)).lowerBound
    var archive = [UInt8](
      try #require(Data(base64Encoded: String(xml[start..<end]), options: .ignoreUnknownCharacters)))
    let from = Array("valueForKeyPath:".utf8)
    let at = try #require((0...(archive.count - from.count)).first { Array(archive[$0..<$0 + from.count]) == from })
    archive.replaceSubrange(at..<at + from.count, with: Array("lowercaseString:".utf8))
    xml.replaceSubrange(start..<end, with: Data(archive).base64EncodedString())
    let bundle = folder.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
    try xml.write(to: bundle.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
    return bundle
  }

  @Test func anUnsupportedExpressionIsOneLineNamingTheMappingModelEntityMappingAndProperty() throws {
    let folder = try TemporaryDirectory()
    let mappingFolder = try folder.folder("mappings")
    let mapping = try Self.unsupportedMappingModel(in: mappingFolder)
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    let before = try Data(contentsOf: store)
    for arguments in [
      ["plan", store.path, "--model", Self.moody, "--to", "Moody 5", "--policies", mappingFolder.path],
      ["migrate", store.path, "--model", Self.moody, "--to", "Moody 5", "--policies", mappingFolder.path],
      ["convert", mapping.path, "--model", Self.moody],
    ] {
      let result = try MigrunProcess.run(arguments)
      #expect(result.status == 1, "\(arguments[0])")
      #expect(result.errorLines.count == 1, "\(result.stderr)")
      let line = result.errorLines.first ?? ""
      #expect(
        line.contains("Moody 4-Moody 5.xcmappingmodel: entity mapping CountryToCountry, property 'isoContinent'"),
        "\(line)")
      #expect(
        line.contains(
          #"unsupported value expression FUNCTION($source, "lowercaseString:", continent.numericISO3166Code)"#),
        "\(line)")
    }
    #expect(try Data(contentsOf: store) == before)
  }
}
