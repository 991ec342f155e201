import Foundation
import GRDB
import TestSupport
import Testing

/// `import` writes only what `check` would find clean (issue 69, part B): an edited export whose
/// objects link to objects not in it, hold an Integer 16 of 70,000 or miss a required value was
/// imported, exit 0. Each is refused before anything is written, naming the entity, the object's
/// key, the property and the reason — and no store, nor any working file of one, is left.
@Suite struct ImportCheckTests {
  static let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  /// Moody's store exported, `edit` made to its text, imported as `Imported.sqlite`.
  static func importEdited(_ edit: (String) -> String) throws -> (MigrunProcess.Result, TemporaryDirectory) {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let exported = try MigrunProcess.run(["export", store.path])
    #expect(exported.status == 0, "\(exported.stderr)")
    let edited = edit(exported.stdout)
    #expect(edited != exported.stdout, "the edit changed nothing")
    let json = folder.url.appendingPathComponent("edited.json")
    try edited.write(to: json, atomically: true, encoding: .utf8)
    let out = folder.url.appendingPathComponent("Imported.sqlite")
    let result = try MigrunProcess.run([
      "import", json.path, "--model", model, "--model-version", "Moody", "--out", out.path,
    ])
    return (result, folder)
  }

  @Test(arguments: [
    (
      #""numericISO3166Code": 710,"#, #""numericISO3166Code": 70000,"#,
      "entity 'Country', object 21: 'numericISO3166Code' holds 70000, outside Integer 16's -32768…32767"
    ),
    (
      #""numberOfCountries": 6,"#, #""numberOfCountries": 99999999999999999999,"#,
      "entity 'Continent', object 1: 'numberOfCountries' holds 1e+20, outside Integer 64's "
        + "-9223372036854775808…9223372036854775807"
    ),
    (
      #""updatedAt": 464687061.782827"#, #""updatedAt": null"#,
      "entity 'Country', object 21: 'updatedAt' has no value, and the model requires one"
    ),
    (
      #""continent": "Continent/p2", "moods": ["Mood/p39""#, #""continent": "Continent/p99", "moods": ["Mood/p39""#,
      "entity 'Country', object 21: 'continent' links to Continent/p99, an object not there"
    ),
    (
      #""moods": ["Mood/p39", "Mood/p100"]"#, #""moods": ["Mood/p39", "Mood/p1000"]"#,
      "entity 'Country', object 21: 'moods' links to Mood/p1000, an object not there"
    ),
    (
      #""continent": "Continent/p2", "moods": ["Mood/p39""#, #""continent": "Mood/p39", "moods": ["Mood/p39""#,
      "entity 'Country', object 21: 'continent' links to Mood/p39, which is no Continent"
    ),
  ])
  func anEditedExportIsRefusedByObjectAndPropertyAndNothingIsWritten(
    from: String, to: String, expected: String
  ) throws {
    let (result, folder) = try Self.importEdited { $0.replacingOccurrences(of: from, with: to) }
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains(expected), "\(result.stderr)")
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(!left.contains { $0.contains("Imported") }, "\(left)")
  }

  /// The export as it was imports, and `check` finds the new store clean.
  @Test func anUneditedExportImportsAndChecksClean() throws {
    let (result, folder) = try Self.importEdited {
      $0.replacingOccurrences(of: "\"version\": 2,", with: "\"version\": 3,")
    }
    #expect(result.status == 0, "\(result.stderr)")
    let check = try MigrunProcess.run([
      "check", folder.url.appendingPathComponent("Imported.sqlite").path, "--model", Self.model,
    ])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
  }

  /// A real beyond an integer attribute's type (1e20 in an Integer 64 column, what such an import
  /// wrote) is a finding of `check`, as an integer outside Integer 16 is: one range per type for both.
  @Test func checkNamesARealBeyondItsIntegerType() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody.moody.sqlite", into: folder)
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { try $0.execute(sql: "UPDATE ZGEOGRAPHICREGION SET ZNUMBEROFCOUNTRIES = 1e20 WHERE Z_PK = 1") }
    try queue.close()
    let check = try MigrunProcess.run(["check", store.path, "--model", Self.model])
    #expect(check.status == 1)
    #expect(
      check.stdout.contains(
        "value-of-another-type: Continent.numberOfCountries (Integer 64): 1 value outside "
          + "-9223372036854775808…9223372036854775807"), "\(check.stdout)")
  }
}
