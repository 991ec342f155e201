import Foundation
import TestSupport
import Testing

/// `migrun lint`: findings with their versions, entity and properties; exit 1 on findings; JSON.
@Suite struct LintCommandTests {
  /// A two-version model on disk whose second version renames `title` without a renaming identifier.
  static func bundle(in folder: TemporaryDirectory) throws -> URL {
    let bundle = folder.url.appendingPathComponent("Notes.xcdatamodeld", isDirectory: true)
    for (version, attribute) in [("Notes", "title"), ("Notes 2", "heading")] {
      try writeModelVersion(
        version, of: bundle,
        entities: #"<entity name="Note" representedClassName="Note" syncable="YES">"#
          + #"<attribute name="\#(attribute)" optional="YES" attributeType="String"/></entity>"#)
    }
    try Data(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Notes 2.xcdatamodel</string></dict></plist>
      """.utf8
    ).write(to: bundle.appendingPathComponent(".xccurrentversion"))
    return bundle
  }

  @Test func findingsExitOneAndNameTheVersionsEntityAndProperties() throws {
    let folder = try TemporaryDirectory()
    let bundle = try Self.bundle(in: folder)
    let text = try MigrunProcess.run(["lint", bundle.path])
    #expect(text.status == 1, "\(text.stderr)")
    #expect(text.stdout.hasPrefix("Notes → Notes 2: Note.title, heading: 'title' removed and 'heading' (String) added"))
    #expect(text.stdout.hasSuffix("Notes: 1 finding\n"))
    let json = try MigrunProcess.run(["lint", bundle.path, "--json"])
    let findings = try json.jsonLines().filter { $0["event"] as? String == "finding" }
    #expect(try json.jsonLine("summary")["findings"] as? Int == 1)
    #expect(findings.count == 1)
    #expect(findings.first?["rule"] as? String == "probable-rename")
    #expect(findings.first?["versions"] as? [String] == ["Notes", "Notes 2"])
    #expect(findings.first?["properties"] as? [String] == ["title", "heading"])
    // Moody 4 adds uniqueness constraints: duplicates in a Moody 3 store would stop the migration,
    // unless a mapping file (Moody's own fold them) or a stage covers the step.
    let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    let constrained = try MigrunProcess.run(["lint", moody])
    #expect(constrained.status == 1)
    #expect(
      constrained.stdout.contains(
        "Moody 3 → Moody 4: Country.numericISO3166Code, uniquenessDummy: gets a uniqueness constraint"),
      "\(constrained.stdout)")
    let clean = try MigrunProcess.run([
      "lint", moody, "--policies", Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path,
    ])
    #expect(clean.status == 0, "\(clean.stdout)")
    #expect(clean.stdout == "Moody: 6 versions, no findings\n")
    let cloud = try MigrunProcess.run([
      "lint", Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path, "--cloudkit",
    ])
    #expect(cloud.status == 1)
    #expect(cloud.stdout.contains("Moody 6: Mood.date: is required without a default"))
  }
}
