import Foundation
import TestSupport
import Testing

/// `migrun review`: one self-contained page per example, loaded in headless Chromium — each step
/// and each entity count in the DOM, no console error, no request leaving the file, every internal
/// link resolving — and its `--json` twin.
@Suite struct ReviewCommandTests {
  static let moody = "objcio-core-data-moody"
  static let policies = Fixtures.repositoryRoot.appendingPathComponent("policies")

  /// Writes the page and its JSON twin for `arguments`, loads the page in the browser and checks it
  /// against the twin: returns both.
  static func review(_ arguments: [String], in folder: TemporaryDirectory) throws -> (
    page: BrowsedPage, json: [String: Any]
  ) {
    let html = folder.url.appendingPathComponent("review.html")
    let written = try MigrunProcess.run(["review"] + arguments + ["--out", html.path])
    #expect(written.status == 0, "\(written.stderr)")
    let twin = try MigrunProcess.run(["review"] + arguments + ["--json"])
    #expect(twin.status == 0, "\(twin.stderr)")
    let json = try twin.jsonLine("review")
    let page = try BrowsedPage.load(html)
    #expect(page.console.isEmpty, "\(page.console)")
    #expect(page.requests.isEmpty, "\(page.requests)")
    #expect(page.brokenLinks.isEmpty, "\(page.brokenLinks)")
    #expect(page.scripts == 0)
    let steps = json["steps"] as? [[String: Any]] ?? []
    for (index, step) in steps.enumerated() {
      let name = step["name"] as? String ?? "?"
      #expect(page.text.contains("Step \(index + 1): \(name)"), "step \(name) not on the page")
      // Each entity's objects before and after the step, as a row of its table.
      guard let run = step["run"] as? [String: Any], let after = run["objectsAfter"] as? [String: Int] else {
        Issue.record("step \(name) did not run: \(json["refused"] ?? "")")
        continue
      }
      let before =
        index == 0
        ? json["objectsBefore"] as? [String: Int] ?? [:]
        : (steps[index - 1]["run"] as? [String: Any])?["objectsAfter"] as? [String: Int] ?? [:]
      for entity in Set(before.keys).union(after.keys) {
        let row = "\(entity)\t\(before[entity].map(String.init) ?? "—")\t\(after[entity].map(String.init) ?? "—")"
        #expect(page.text.contains(row), "no row '\(row)' in step \(name)")
      }
    }
    return (page, json)
  }

  /// Moody 1 → 6 with the bundled policies: five scripted steps, each run on a copy — the store
  /// itself is not written — with its picture, and the made-up stores of every old version pass.
  @Test(.enabled(if: Fixtures.areAvailable)) func moodyOneToSix() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("\(Self.moody)/stores/Moody.moody.sqlite", into: folder)
    let original = try Data(contentsOf: store)
    let model = Fixtures.url("\(Self.moody)/models/Moody.xcdatamodeld").path
    let (page, json) = try Self.review(
      [store.path, "--model", model, "--policies", Self.policies.appendingPathComponent("examples/moody").path],
      in: folder)
    #expect(json["migrated"] as? Bool == true, "\(json["refused"] ?? "")")
    #expect((json["steps"] as? [Any])?.count == 5)
    #expect(page.dom.components(separatedBy: "<svg").count - 1 >= 5, "a diagram per step")
    #expect((json["verify"] as? [[String: Any]])?.allSatisfy { $0["passed"] as? Bool == true } == true)
    #expect(try Data(contentsOf: store) == original)
    #expect(!FileManager.default.fileExists(atPath: store.deletingPathExtension().path + "~.sqlite"))
    // On a phone: the page fits its width (wide tables and diagrams scroll in their own boxes).
    let phone = try BrowsedPage.load(folder.url.appendingPathComponent("review.html"), width: 390, mobile: true)
    #expect(phone.width <= 390, "the page is \(phone.width) px wide on a 390 px screen")
    // Printed: no navigation, the content all there.
    let printed = try BrowsedPage.load(folder.url.appendingPathComponent("review.html"), print: true)
    #expect(page.navShown)
    #expect(!printed.navShown)
    #expect(printed.text.contains("Step 5: Moody 5 → Moody 6"))
  }

  /// The recipe example: its store, its own policies and the library's.
  @Test func recipes() throws {
    let folder = try TemporaryDirectory()
    let example = Self.policies.appendingPathComponent("examples/recipes")
    let model = example.appendingPathComponent("Recipes.xcdatamodeld").path
    let store = folder.url.appendingPathComponent("Recipes.sqlite")
    let made = try MigrunProcess.run(["example-store", store.path, "200", model], program: "migrun-bench")
    try #require(made.status == 0, "\(made.stderr)")
    // The coverage `migrun test --coverage` writes is shown beside each step file.
    let coverage = folder.url.appendingPathComponent("lcov.info")
    let tested = try MigrunProcess.run(["test", example.path, "--coverage", coverage.path])
    try #require(FileManager.default.fileExists(atPath: coverage.path), "\(tested.stdout)\(tested.stderr)")
    let (page, json) = try Self.review(
      [
        store.path, "--model", model, "--policies", example.appendingPathComponent("policies").path, "--policies",
        Self.policies.path, "--coverage", coverage.path,
      ], in: folder)
    #expect(json["migrated"] as? Bool == true, "\(json["refused"] ?? "")")
    let steps = json["steps"] as? [[String: Any]] ?? []
    #expect(steps.count >= 2)
    // A scripted step says what its file does.
    let policies = steps.flatMap { $0["policies"] as? [[String: Any]] ?? [] }
    #expect(!policies.isEmpty, "\(steps)")
    let scripted = steps.filter { $0["script"] is String }
    #expect(!scripted.isEmpty)
    for step in scripted {
      let lines = (step["coverage"] as? [[String: Any]])?.first?["lines"] as? Int ?? 0
      #expect(lines > 0, "no coverage for \(step["script"] ?? "")")
    }
    #expect(page.text.contains("Lines run"))
  }

  /// A SwiftData project's sources, given as a folder: a store of its oldest version is made up.
  @Test func swiftDataSourceFolder() throws {
    let folder = try TemporaryDirectory()
    let sources = folder.url.appendingPathComponent("Trips")
    try SwiftDataSamples.write(SwiftDataSamples.trips, into: sources)
    let (page, json) = try Self.review([sources.path], in: folder)
    #expect(json["madeUp"] as? Bool == true)
    #expect(json["source"] as? String == "1.0.0")
    #expect(json["destination"] as? String == "2.0.0")
    #expect(page.text.contains("Step 1: 1.0.0 → 2.0.0"))
  }

  /// Names from the user's files are text on the page, never markup: versions named
  /// `<img onerror=…>` and `<svg onload=…>` run nothing and load nothing. (Entity names cannot carry
  /// markup: a store's tables are named after them.)
  @Test func hostileNamesAreEscaped() throws {
    let folder = try TemporaryDirectory()
    let bundle = folder.url.appendingPathComponent("Evil.xcdatamodeld", isDirectory: true)
    let versions = ["Evil 1 <img src=x onerror=console.error(1)>", "Evil 2 <svg onload=console.error(2)>"]
    for (version, attribute) in zip(versions, ["title", "heading"]) {
      try writeModelVersion(
        version, of: bundle,
        entities: #"<entity name="Note" representedClassName="Note" syncable="YES">"#
          + #"<attribute name="\#(attribute)" optional="YES" attributeType="String"/></entity>"#)
    }
    try Data(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key>\
      <string>Evil 2 &lt;svg onload=console.error(2)&gt;.xcdatamodel</string></dict></plist>
      """.utf8
    ).write(to: bundle.appendingPathComponent(".xccurrentversion"))
    let (page, json) = try Self.review([bundle.path], in: folder)
    #expect(json["destination"] as? String == versions[1])
    #expect(page.text.contains("Step 1: \(versions[0]) → \(versions[1])"))
    #expect(!page.dom.contains("<img"))
    #expect(!page.dom.contains("<svg onload"))
  }

  /// A step the run on the copy refuses: the page is still written (exit 0), says why, and shows
  /// the steps it planned without their run.
  @Test func aRefusedRunIsOnThePage() throws {
    let folder = try TemporaryDirectory()
    let bundle = try LintCommandTests.bundle(in: folder)
    let policies = try folder.folder("policies")
    try Data(
      """
      return { Note = { attributes = { heading = function(src) error("no heading for this note") end } } }
      """.utf8
    ).write(to: policies.appendingPathComponent("Notes-Notes 2.lua"))
    let html = folder.url.appendingPathComponent("review.html")
    let run = try MigrunProcess.run(["review", bundle.path, "--policies", policies.path, "--out", html.path])
    #expect(run.status == 0, "\(run.stderr)")
    let page = try BrowsedPage.load(html)
    #expect(page.text.contains("refused"), "\(page.text)")
    #expect(page.text.contains("no heading for this note"))
    #expect(page.text.contains("Not run:"))
    #expect(page.text.contains("After: not checked (the run did not finish)"))
    #expect(page.console.isEmpty, "\(page.console)")
  }

  /// A Notes store at its first version, with `step` as the Lua mapping file of its one step.
  static func notesStore(step: String, in folder: TemporaryDirectory) throws -> (
    store: URL, model: URL, policies: URL
  ) {
    let model = try LintCommandTests.bundle(in: folder)
    let policies = try folder.folder("policies")
    try Data(step.utf8).write(to: policies.appendingPathComponent("Notes-Notes 2.lua"))
    let store = folder.url.appendingPathComponent("notes.sqlite")
    let created = try MigrunProcess.run(["create", store.path, "--model", model.path, "--model-version", "Notes"])
    #expect(created.status == 0, "\(created.stderr)")
    return (store, model, policies)
  }

  /// The Lua limits are the job's, as migrate's (`--lua-instructions`): a step file past them is
  /// refused in migrate's words.
  @Test func aStepFilePastTheInstructionLimitIsRefusedAsMigrateRefusesIt() throws {
    let folder = try TemporaryDirectory()
    let (store, model, policies) = try Self.notesStore(
      step: """
        local n = 0
        for i = 1, 3000000 do n = n + i end
        return { Note = { attributes = { heading = function(src) return src.title end } } }
        """, in: folder)
    let arguments = [store.path, "--model", model.path, "--policies", policies.path, "--lua-instructions", "1000000"]
    let review = try MigrunProcess.run(["review"] + arguments + ["--json"])
    let migrate = try MigrunProcess.run(["migrate"] + arguments)
    let words = "Notes-Notes 2.lua:2: instruction limit of 1000000 exceeded"
    #expect(migrate.status == 1 && migrate.stderr.contains(words), "\(migrate.stderr)")
    #expect(review.status == 1 && review.stderr.contains(words), "\(review.stderr)")
  }

  /// A step file that needs more than the default Lua memory reviews under a raised `--lua-memory`:
  /// every look at the step file (its policies, its picture) is the plan's load, under the job's
  /// limits, never a second load under the defaults.
  @Test func aStepFileNeedingMoreMemoryReviewsUnderTheJobsLimit() throws {
    let folder = try TemporaryDirectory()
    let (store, model, policies) = try Self.notesStore(
      step: """
        local big = string.rep("x", 80 * 1024 * 1024)
        return { Note = { attributes = { heading = function(src) return src.title end } } }
        """, in: folder)
    let review = try MigrunProcess.run([
      "review", store.path, "--model", model.path, "--policies", policies.path, "--lua-memory", "256", "--json",
    ])
    #expect(review.status == 0, "\(review.stderr)")
    let json = try review.jsonLine("review")
    #expect(json["migrated"] as? Bool == true, "\(json["refused"] ?? "")")
    let steps = json["steps"] as? [[String: Any]] ?? []
    #expect((steps.first?["policies"] as? [[String: Any]])?.first?["computed"] as? [String] == ["heading"])
  }

  /// A store that is not there is named, before the model is read.
  @Test func aMissingStoreIsNamed() throws {
    let folder = try TemporaryDirectory()
    let missing = folder.url.appendingPathComponent("nothing.sqlite").path
    let run = try MigrunProcess.run(["review", missing, "--model", folder.url.appendingPathComponent("M").path])
    #expect(run.status != 0)
    #expect(run.stderr.contains("nothing.sqlite"), "\(run.stderr)")
  }
}
