import Foundation
import TestSupport
import Testing

/// `migrun verify`: every old version of Moody, with its mapping files, reaches Moody 6; a broken
/// mapping file fails exactly the versions whose path runs it.
@Suite struct VerifyCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let policies = Fixtures.repositoryRoot.appendingPathComponent("policies")

  @Test func everyOldVersionOfMoodyReachesTheCurrentOne() throws {
    let folder = try TemporaryDirectory()
    let junit = folder.url.appendingPathComponent("verify.xml")
    let run = try MigrunProcess.run([
      "verify", Self.moody, "--policies", Self.policies.appendingPathComponent("examples/moody").path,
      "--policies", Self.policies.path, "--objects", "12", "--junit", junit.path,
    ])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0.hasPrefix("ok   ") }.count == 5, "\(run.stdout)")
    #expect(lines.first == "ok   Moody (36 objects): Moody → Moody 2 → Moody 3 → Moody 4 → Moody 5 → Moody 6")
    #expect(lines.last == "5 of 5 versions reach Moody 6")
    let xml = try String(contentsOf: junit, encoding: .utf8)
    #expect(xml.contains(#"tests="5" failures="0""#))
    // The same seed makes the same stores: the same output.
    let again = try MigrunProcess.run([
      "verify", Self.moody, "--policies", Self.policies.appendingPathComponent("examples/moody").path,
      "--policies", Self.policies.path, "--objects", "12",
    ])
    #expect(again.stdout == run.stdout)
  }

  /// A model whose current version is its first has nothing before it; --to names another.
  @Test func aFirstVersionHasNothingToCheckUntilToNamesAnother() throws {
    let model = Fixtures.url("coredataplus-samplemodels/SampleModel/SampleModel.xcdatamodeld").path
    let none = try MigrunProcess.run(["verify", model, "--objects", "3"])
    #expect(none.status == 0)
    #expect(none.stdout.contains("nothing to check"), "\(none.stdout)")
    let later = try MigrunProcess.run(["verify", model, "--to", "SampleModel3", "--objects", "3"])
    #expect(later.status == 0, "\(later.stdout)")
    #expect(later.stdout.hasSuffix("2 of 2 versions reach SampleModel3\n"), "\(later.stdout)")
  }

  @Test func aBrokenMappingFileFailsExactlyItsVersions() throws {
    let folder = try TemporaryDirectory()
    let copy = folder.url.appendingPathComponent("moody", isDirectory: true)
    try FileManager.default.copyItem(at: Self.policies.appendingPathComponent("examples/moody"), to: copy)
    let file = copy.appendingPathComponent("Moody 4-Moody 5.lua")
    let text = try String(contentsOf: file, encoding: .utf8)
    // A mistake a policy author makes: a required value computed as NULL.
    let broken = text.replacingOccurrences(
      of: "return {", with: "return {\n  Mood = { attributes = { date = function(src) return NULL end } },",
      options: [], range: text.range(of: "return {"))
    #expect(broken != text)
    try Data(broken.utf8).write(to: file)
    let run = try MigrunProcess.run([
      "verify", Self.moody, "--policies", copy.path, "--policies", Self.policies.path, "--objects", "8",
    ])
    #expect(run.status == 1)
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(
      lines.filter { $0.hasPrefix("FAIL ") }.map { $0.split(separator: " (")[0] } == [
        "FAIL Moody", "FAIL Moody 2", "FAIL Moody 3", "FAIL Moody 4",
      ], "\(run.stdout)")
    #expect(lines.contains { $0.hasPrefix("ok   Moody 5 ") })
    #expect(lines.last == "1 of 5 versions reach Moody 6")
  }

  /// A step file the plan weighs a walk with (the direct step is inferred and drops what the walk
  /// through the file's step keeps) is loaded once per made-up store, for the plan and the run — its
  /// top level, which prints, runs once: Notes walks through the file's step, Notes 2 takes it.
  @Test func aStepFileIsLoadedOncePerStoreForThePlanAndTheRun() throws {
    let folder = try TemporaryDirectory()
    let bundle = try LintCommandTests.bundle(in: folder)
    try writeModelVersion(
      "Notes 3", of: bundle,
      entities: #"<entity name="Note" representedClassName="Note" syncable="YES">"#
        + #"<attribute name="heading" optional="YES" attributeType="String"/>"#
        + #"<attribute name="size" optional="YES" attributeType="Integer 64"/></entity>"#)
    let current = bundle.appendingPathComponent(".xccurrentversion")
    try Data(
      try String(contentsOf: current, encoding: .utf8).replacingOccurrences(
        of: "Notes 2.xcdatamodel", with: "Notes 3.xcdatamodel"
      )
      .utf8
    ).write(to: current)
    let policies = try folder.folder("policies")
    try Data(
      """
      print("step file loaded")
      return { Note = { createDestinationInstances = function(src, m) m:default(src) end } }
      """.utf8
    ).write(to: policies.appendingPathComponent("Notes 2-Notes 3.lua"))
    let run = try MigrunProcess.run(["verify", bundle.path, "--policies", policies.path, "--objects", "3"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("ok   Notes (3 objects): Notes → Notes 2 → Notes 3"), "\(run.stdout)")
    #expect(run.stderr.components(separatedBy: "step file loaded").count - 1 == 2, "\(run.stderr)")
  }
}
