import Foundation
import TestSupport
import Testing

@Suite struct HashCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  struct Report: Decodable, Equatable {
    let version: String
    let entities: [String: String]
    let digest: String
    let checksum: String
  }

  @Test func jsonMatchesTheHashesAppleStoredInTheStore() throws {
    let result = try MigrunProcess.run(["hash", Self.moody, "--model-version", "Moody 5", "--json"])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
    #expect(report.version == "Moody 5")
    // Z_METADATA of Moody 5.moody.sqlite, written by Core Data.
    #expect(
      report.entities == [
        "Country": "21e52i8NxodJGZwlKBYunYKxn2vHuyPYV1SpEotGJeM=",
        "Mood": "SjcR5Vdq/wxIQgvxtVgKK/jMHR+sZjNnI18eFNKsctY=",
      ])
  }

  @Test func digestAndChecksumEqualThoseInAppleStores() throws {
    let bundle = Fixtures.url("coredataplus-samplemodels/SampleModel3/SampleModel3.xcdatamodeld").path
    let result = try MigrunProcess.run(["hash", bundle, "--json"])
    let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
    #expect(report.version == "SampleModel3")
    #expect(report.checksum == "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik=")
    #expect(report.entities == ["User": "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g="])
  }

  @Test func textOutputListsEntitiesThenDigestAndChecksum() throws {
    let result = try MigrunProcess.run(["hash", Self.moody, "--model-version", "Moody 5"])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(
      lines == [
        "Moody — version Moody 5",
        "  Country  21e52i8NxodJGZwlKBYunYKxn2vHuyPYV1SpEotGJeM=",
        "  Mood     SjcR5Vdq/wxIQgvxtVgKK/jMHR+sZjNnI18eFNKsctY=",
        "digest    W2eF7Apfefx6RyBlRcV5SMH0ImIkBEi4MpOVOiKrfkakWvApyXiXheVA0KnMiz0ySB5DPuwCVHoKzsdF0CQT8Q==",
        "checksum  T9Jx/VHN7IaqGrKA8N/gFknHOo8dAgPntzS9b1OsxDQ=",
      ])
  }

  @Test func defaultsToTheCurrentVersionAndAcceptsASingleXcdatamodel() throws {
    let current = try MigrunProcess.run(["hash", Self.moody, "--json"])
    #expect(try JSONDecoder().decode(Report.self, from: Data(current.stdout.utf8)).version == "Moody 6")
    let single = try MigrunProcess.run(["hash", Self.moody + "/Moody 5.xcdatamodel", "--json"])
    let report = try JSONDecoder().decode(Report.self, from: Data(single.stdout.utf8))
    #expect(report.version == "Moody 5")
    #expect(report.entities["Mood"] == "SjcR5Vdq/wxIQgvxtVgKK/jMHR+sZjNnI18eFNKsctY=")
  }

  /// Each bad model: exit 1 and exactly one line on standard error that says what and where.
  @Test(arguments: [
    ("truncated", "<?xml version=\"1.0\"?><model><entity name=\"A\"><attribute name=\"x\" attr", "not well-formed XML"),
    (
      "missing destination",
      #"<model><entity name="Mood"><relationship name="country" maxCount="1" destinationEntity="Place"/></entity></model>"#,
      "entity 'Mood', property 'country': destination entity 'Place' does not exist"
    ),
    (
      "cycle", #"<model><entity name="A" parentEntity="B"/><entity name="B" parentEntity="A"/></model>"#,
      "entity 'A': inheritance cycle: A → B → A"
    ),
    (
      "unknown type", #"<model><entity name="A"><attribute name="x" attributeType="Quaternion"/></entity></model>"#,
      "entity 'A', property 'x': unknown attribute type 'Quaternion'"
    ),
  ])
  func badModelGivesOneClearLineAndNonZeroExit(name: String, xml: String, message: String) throws {
    let temporary = try TemporaryDirectory()
    let contents = try temporary.write(xml, to: "Bad.xcdatamodeld/Bad.xcdatamodel/contents")
    let result = try MigrunProcess.run(["hash", temporary.url.appendingPathComponent("Bad.xcdatamodeld").path])
    #expect(result.status == 1, "\(name)")
    #expect(result.stdout.isEmpty, "\(name)")
    #expect(result.errorLines.count == 1, "\(name): \(result.stderr)")
    #expect(result.stderr.hasPrefix("migrun: error: \(contents.path): "), "\(name): \(result.stderr)")
    #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
  }

  @Test func emptyFolderGivesOneClearLineAndNonZeroExit() throws {
    let temporary = try TemporaryDirectory()
    let folder = try temporary.folder("Empty.xcdatamodeld")
    let result = try MigrunProcess.run(["hash", folder.path])
    #expect(result.status == 1)
    #expect(result.errorLines == ["migrun: error: \(folder.path): the folder holds no .xcdatamodel versions"])
  }

  @Test func unknownVersionAndMissingPathFailCleanly() throws {
    let unknown = try MigrunProcess.run(["hash", Self.moody, "--model-version", "Moody 42"])
    #expect(unknown.status == 1)
    #expect(unknown.errorLines.count == 1)
    #expect(unknown.stderr.contains("no version named 'Moody 42'"))
    let missing = try MigrunProcess.run(["hash", "/nonexistent/X.xcdatamodeld"])
    #expect(missing.status == 1)
    #expect(missing.errorLines == ["migrun: error: /nonexistent/X.xcdatamodeld: no such file or folder"])
  }

  @Test func helpDescribesTheCommand() throws {
    let result = try MigrunProcess.run(["hash", "--help"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("--model-version"))
    #expect(result.stdout.contains("NSStoreModelVersionHashesDigest"))
  }

  @Test func theModelIsAlsoTakenAsModelAndVersionIsTheToolsEverywhere() throws {
    let argument = try MigrunProcess.run(["hash", Self.moody, "--model-version", "Moody 5", "--json"])
    let option = try MigrunProcess.run(["hash", "--model", Self.moody, "--model-version", "Moody 5", "--json"])
    #expect(option.status == 0, "\(option.stderr)")
    #expect(option.stdout == argument.stdout)
    let diff = try MigrunProcess.run(["diff", "--model", Self.moody, "--from", "Moody", "--to", "Moody 2"])
    #expect(diff.status == 0, "\(diff.stderr)")
    let both = try MigrunProcess.run(["hash", Self.moody, "--model", "/elsewhere/M.xcdatamodeld"])
    #expect(both.status == 1)
    #expect(both.stderr.contains("give the model once"))
    // --version prints the tool's version on every command, never a model version.
    for command in ["hash", "create", "import", "export", "migrate", "plan", "inspect", "diff", "status"] {
      let version = try MigrunProcess.run([command, "--version"])
      #expect(version.status == 0, "\(command): \(version.stderr)")
      let lines = version.stdout.split(separator: "\n")
      #expect(lines.count == 1 && lines[0].hasPrefix("0.1.0 (commit "), "\(command)")
      let help = try MigrunProcess.run(["help", command])
      let helpLines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
      #expect(helpLines.allSatisfy { $0.count <= 80 || $0.hasPrefix("USAGE:") }, "\(command): a line over 80 columns")
      // Not listed beside --model-version, as if it were a model's (issue 61); it still works.
      #expect(!help.stdout.contains("--version"), "\(command): --version listed")
      // Prose wraps once: above USAGE, no short line is followed by more of the same paragraph.
      let prose = lines.prefix { !$0.hasPrefix("USAGE:") }
      for (line, next) in zip(prose, prose.dropFirst())
      where !line.isEmpty && line.count < 50 && !next.isEmpty && next.first != " " && line.first != " " {
        Issue.record("\(command): '\(line)' is cut short before '\(next)'")
      }
    }
  }
}
