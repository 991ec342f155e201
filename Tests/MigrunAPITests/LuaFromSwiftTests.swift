import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import Synchronization
import TestSupport
import Testing

/// The library used as a Swift program uses it — Lua step files, stages, limits, merge rules, error
/// codes, check and verify — through the public API alone, on Moody's real stores and the
/// repository's own policies/examples/moody. Every example of the article "Using Lua from Swift"
/// (Sources/MigrunKit/MigrunKit.docc/UsingLuaFromSwift.md) is compiled and run here, word for word.
@Suite(.enabled(if: Fixtures.areAvailable))
struct LuaFromSwiftTests {
  static let article = Fixtures.repositoryRoot.appendingPathComponent(
    "Sources/MigrunKit/MigrunKit.docc/UsingLuaFromSwift.md")
  static let modelURL = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
  static let moodyPolicies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")

  /// A writable copy of a Moody store of `version` ("Moody" is version 1) in `folder`.
  static func moodyStore(_ version: String, in folder: URL) throws -> URL {
    try writableCopyOfFixture("objcio-core-data-moody/stores/\(version).moody.sqlite", in: folder)
  }

  /// The repository's Moody policies copied into `folder`, with a custom stage for the last step
  /// that marks every mood (so that the report has a stage's results to show).
  static func policiesWithAStage(in folder: TemporaryDirectory) throws -> URL {
    let policies = folder.url.appendingPathComponent("policies")
    try FileManager.default.copyItem(at: moodyPolicies, to: policies)
    let stage = """
      return {
        didMigrate = function(ctx)
          for _, mood in ipairs(ctx:fetch("Mood")) do mood.creatorID = "staged" end
          ctx:save()
        end,
      }
      """
    try stage.write(to: policies.appendingPathComponent("Moody 5-Moody 6.stage.lua"), atomically: true, encoding: .utf8)
    return policies
  }

  @Test func everyCodeBlockOfTheArticleIsCodeHere() throws {
    let here = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let code = Set(here.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
    let text = try String(contentsOf: Self.article, encoding: .utf8)
    let blocks = text.components(separatedBy: "```swift\n").dropFirst()
    for block in blocks {
      let lines = block.components(separatedBy: "\n```")[0].split(separator: "\n")
      for line in lines.map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
        #expect(code.contains(line), "UsingLuaFromSwift.md: '\(line)' is not in LuaFromSwiftTests")
      }
    }
    #expect(blocks.count >= 6)
  }

  /// Moody 1 → Moody 6 as `migrun migrate --policies policies/examples/moody` takes it: five steps,
  /// the first inferred, four through the folder's Lua files, the last with its custom stage.
  @Test func migratesMoody1To6ThroughTheStepFilesAndReadsEachStep() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody", in: try folder.folder("store"))
    let policiesURL = try Self.policiesWithAStage(in: folder)
    let modelURL = Self.modelURL
    let bundle = try ModelBundle(modelOrStoreAt: modelURL)
    let scripts = MigrationScripts(policyFolders: [policiesURL])
    let plan = try scripts.plan(store: storeURL, bundle: bundle)
    print(plan.steps.map(\.name))
    let report = try scripts.migrator(store: storeURL, plan: plan).run()
    for step in report.steps {
      print("\(step.name): \(step.method.rawValue) (\(step.reason ?? "DDL"))")
      print("  objects: \(step.counts.sorted { $0.key < $1.key })")
      for drop in step.drops { print("  left behind: \(drop)") }
      if let saved = step.didMigrate { print("  its stage changed \(saved.updated) objects") }
    }

    #expect(
      report.steps.map(\.name) == [
        "Moody → Moody 2", "Moody 2 → Moody 3", "Moody 3 → Moody 4", "Moody 4 → Moody 5", "Moody 5 → Moody 6",
      ])
    // The scripted steps run their Lua: never DDL, and each says why.
    for step in report.steps.dropFirst() {
      #expect(step.method != .ddl, "\(step.name)")
      #expect(step.reason?.contains("Lua") == true, "\(step.name): \(step.reason ?? "no reason")")
    }
    let moods = try #require(report.steps.last?.counts["Mood"])
    #expect(moods > 0)
    #expect(report.steps.allSatisfy { ($0.counts["Mood"] ?? 0) == moods })
    #expect(report.steps.last?.didMigrate?.updated == moods)
    #expect(report.steps.dropLast().allSatisfy { $0.didMigrate == nil && $0.willMigrate == nil })
    #expect(report.backup?.lastPathComponent == "Moody.moody~.sqlite")

    let migrated = try SQLiteStore(url: storeURL, model: try bundle.model(named: "Moody 6"))
    defer { try? migrated.close() }
    let context = StoreCoordinator(store: migrated).newContext()
    let marked = try context.count("Mood", matching: try FormatPredicate("creatorID == 'staged'"))
    #expect(marked == moods)
  }

  /// A step's files, the path's reason, per-mapping counts and the scripts' lines, from Swift: Moody
  /// 2 → 3 run in two passes (issues 70 and 71).
  @Test func aReportSaysWhichFilesRanAndWhatEachMappingMoved() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 2", in: try folder.folder("store"))
    let policies = try folder.folder("policies")
    try "return { Country = { relationships = { moods = false } }, Continent = 'copy' }\n".write(
      to: policies.appendingPathComponent("places.lua"), atomically: true, encoding: .utf8)
    try "return { Mood = { relationships = { country = false }, begin = function(m) m:log('moods begin') end } }\n"
      .write(to: policies.appendingPathComponent("moods.lua"), atomically: true, encoding: .utf8)
    try "places.lua\nmoods.lua\n".write(
      to: policies.appendingPathComponent("Moody 2-Moody 3.order"), atomically: true, encoding: .utf8)
    let heard = Mutex<[String]>([])
    MigrationScripts.sendScriptLines { line in heard.withLock { $0.append(line) } }
    defer { MigrationScripts.sendScriptLines(to: nil) }
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let scripts = MigrationScripts(policyFolders: [policies])
    let plan = try scripts.plan(store: storeURL, bundle: bundle, destination: "Moody 3")
    let report = try scripts.migrator(store: storeURL, plan: plan).run()
    print("path: \(plan.pathReason)")
    for step in report.steps {
      let files = step.scripts.map(\.lastPathComponent)
      print("\(step.name): \(files.isEmpty ? "inferred" : files.joined(separator: ", then "))")
      for (mapping, read, written) in step.objectsByMapping { print("  \(mapping): \(read) → \(written)") }
    }
    #expect(plan.pathReason.contains("Core Data"), "\(plan.pathReason)")
    #expect(report.steps.first?.scripts.map(\.lastPathComponent) == ["places.lua", "moods.lua"])
    let moods = report.steps.first?.objectsByMapping.first { $0.mapping == "MoodToMood" }
    #expect(moods?.read == 4 && moods?.written == 4)
    // Process-wide: lines of other tests running meanwhile may be heard too.
    #expect(heard.withLock { $0 }.contains("policies/moods.lua: moods begin"))
  }

  /// The library's own inferred plan along a chain walks it too (no scripts: every step inferred).
  @Test func aChainGivenToThePlannerIsWalkedOneVersionAtATime() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 3", in: folder.url)
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let chained = try MigrationPlanner.plan(
      store: storeURL, bundle: bundle, chain: ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5", "Moody 6"])
    #expect(chained.steps.map(\.to) == ["Moody 4", "Moody 5", "Moody 6"])
    #expect(throws: MigrationError.self) {
      try MigrationPlanner.plan(store: storeURL, bundle: bundle, chain: ["Moody 3", "Moody 9"])
    }
  }

  /// A step file that does not load fails the plan, as `migrun plan` does — never the migration
  /// after its first steps (issue 71).
  @Test func aStepFileThatDoesNotLoadFailsThePlan() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 2", in: folder.url)
    let policies = folder.url.appendingPathComponent("policies")
    try FileManager.default.copyItem(at: Self.moodyPolicies, to: policies)
    try "return { Country = {".write(
      to: policies.appendingPathComponent("Moody 4-Moody 5.lua"), atomically: true, encoding: .utf8)
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    #expect(throws: (any Error).self) {
      try MigrationScripts(policyFolders: [policies]).plan(store: storeURL, bundle: bundle)
    }
  }

  /// Limits are the library's own value: a limit too small for the step's script stops the step,
  /// and the store is left as it was.
  @Test func limitsReachTheScripts() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 4", in: folder.url)
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let policiesURL = Self.moodyPolicies
    var limits = ScriptLimits()
    limits.seconds = 30
    limits.memoryBytes = 256 << 20
    let patient = MigrationScripts(policyFolders: [policiesURL], limits: limits)
    #expect(patient.limits.seconds == 30 && patient.limits.memoryBytes == 256 << 20)

    var tiny = ScriptLimits()
    tiny.memoryBytes = 4 << 10
    let before = storeFileBytes(storeURL)
    #expect {
      try MigrationScripts(policyFolders: [policiesURL], limits: tiny).migrate(store: storeURL, bundle: bundle)
    } throws: { error in
      // A limit, not an error of the script's own: its own code (issue 71).
      (error as? MigrationError)?.step == "Moody 4 → Moody 5" && (error as? MigrationError)?.code == .scriptLimit
        && "\(error)".contains("out of memory")
    }
    #expect(storeFileBytes(storeURL) == before)
    let report = try patient.migrate(store: storeURL, bundle: bundle)
    #expect(report.steps.map(\.name) == ["Moody 4 → Moody 5", "Moody 5 → Moody 6"])
  }

  /// Two contexts change the same mood; the second's save meets the first's and the Lua rule decides.
  @Test func aLuaMergeRuleDecidesAContextsConflict() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder.url)
    let rulesURL = folder.url.appendingPathComponent("rules.lua")
    let rules = """
      return {
        Mood = function(c)
          local v = c:merge("objectTrump")
          v.creatorID = c.store.creatorID .. "+" .. c.object.creatorID
          return v
        end,
      }
      """
    try rules.write(to: rulesURL, atomically: true, encoding: .utf8)
    let model = try ModelBundle(modelOrStoreAt: Self.modelURL).model(named: "Moody 5")
    let store = try SQLiteStore(url: storeURL, model: model, access: .readWrite)
    defer { try? store.close() }
    let first = StoreCoordinator(store: store).newContext()
    let context = StoreCoordinator(store: store).newContext()
    context.mergePolicy = .rule(try LuaMergeRules(file: rulesURL, model: context.model))
    let mine = try context.fetch("Mood", matching: nil, limit: 1)[0]
    let theirs = try first.object(with: mine.id)
    try theirs.set("creatorID", .string("first"))
    try first.save()
    try mine.set("creatorID", .string("second"))
    try context.save()
    let saved = try StoreCoordinator(store: store).newContext().object(with: mine.id)
    #expect(try saved.value("creatorID") == .string("first+second"))

    // A rule file naming no entity of the model is refused by code when it is loaded.
    let wrong = folder.url.appendingPathComponent("wrong.lua")
    try "return { Nothing = function(c) return nil end }".write(to: wrong, atomically: true, encoding: .utf8)
    #expect(throws: ContextError.self) { try LuaMergeRules(file: wrong, model: model) }
    // One that does not load (a syntax error): the same public error, by code, naming file and line.
    let broken = folder.url.appendingPathComponent("broken.lua")
    try "return { Mood = function(c) return c.store end".write(to: broken, atomically: true, encoding: .utf8)
    #expect {
      try LuaMergeRules(file: broken, model: model)
    } throws: { error in
      (error as? ContextError)?.code == .mergeRule && "\(error)".contains("broken.lua")
    }
  }

  /// Another program holds the store's write lock (the sqlite3 shell, in a process of its own): a
  /// context's save waits its busy timeout, then fails with `inUse` — no GRDB error to import — and
  /// saves once the other lets go.
  @Test func aSaveOnAStoreAnotherProcessWritesFailsWithInUse() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder.url)
    let model = try ModelBundle(modelOrStoreAt: Self.modelURL).model(named: "Moody 5")
    let store = try SQLiteStore(url: storeURL, model: model, access: .readWrite)
    defer { try? store.close() }
    let context = StoreCoordinator(store: store).newContext()
    let mood = try context.fetch("Mood", matching: nil, limit: 1)[0]
    try mood.set("creatorID", .string("while held"))
    let shell = try SQLiteShell(storeURL, "BEGIN IMMEDIATE;")
    var code: ContextError.Code?
    context.busyTimeout = 0.5
    do {
      try context.save()
    } catch let error as ContextError where error.code == .inUse {
      print("another program is writing the store; nothing was saved")
      code = error.code
      #expect(error.description.contains("ObjectContext.busyTimeout"))
      #expect(!error.description.contains("--wait"))
    } catch let error as ContextError where error.code == .noSpace {
      print("the disk is full; nothing was saved")
    }
    #expect(code == .inUse)
    #expect(context.busyTimeout == 0.5)
    shell.close()
    try context.save()
    #expect(
      try StoreCoordinator(store: store).newContext().object(with: mood.id).value("creatorID") == .string("while held"))
  }

  /// A migration of a store another process holds is refused by code, and its message names the
  /// API's option, not the command line's flag.
  @Test func aMigrationOfAStoreInUseNamesTheWaitOption() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 4", in: folder.url)
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let shell = try SQLiteShell(storeURL, "BEGIN IMMEDIATE;")
    defer { shell.close() }
    do {
      _ = try MigrationScripts(policyFolders: [Self.moodyPolicies]).migrate(store: storeURL, bundle: bundle)
      Issue.record("a store another process holds was migrated")
    } catch let error as StoreError where error.code == .inUse {
      #expect(error.description.contains("StoreMigrator.Options.wait"))
      #expect(!error.description.contains("--wait"))
    }
  }

  /// A full disk under a context's save is `noSpace`, and nothing of the save is written.
  @Test func aSaveOnAFullDiskFailsWithNoSpace() throws {
    let folder = try TemporaryDirectory()
    guard let tiny = try TinyFileSystem.mount("512k", in: folder, test: "a save on a full disk") else { return }
    defer { TinyFileSystem.unmount(tiny) }
    let storeURL = try Self.moodyStore("Moody 5", in: tiny)
    let model = try ModelBundle(modelOrStoreAt: Self.modelURL).model(named: "Moody 5")
    let store = try SQLiteStore(url: storeURL, model: model, access: .readWrite)
    defer { try? store.close() }
    let context = StoreCoordinator(store: store).newContext()
    let template = try context.fetch("Mood", matching: nil, limit: 1)[0]
    let before = try context.count("Mood", matching: nil)
    let big = String(repeating: "x", count: 16_000)
    for _ in 0..<64 {
      let copy = try context.insert("Mood", template.state.attributes)
      try copy.set("creatorID", .string(big))
      try copy.set("country", to: try template.object("country"))
    }
    var code: ContextError.Code?
    do {
      try context.save()
    } catch let error as ContextError {
      code = error.code
    }
    #expect(code == .noSpace)
    #expect(try StoreCoordinator(store: store).newContext().count("Mood", matching: nil) == before)
  }

  /// A store of no version of the model, and a destination the model does not have, by code.
  @Test func unknownVersionsFailByCode() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder.url)
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let scripts = MigrationScripts(policyFolders: [Self.moodyPolicies])
    var code: MigrationError.Code?
    do {
      _ = try scripts.plan(store: storeURL, bundle: bundle, destination: "Moody 9")
    } catch let error as MigrationError {
      code = error.code
    }
    #expect(code == .unknownVersion)
    let foreign = try ModelBundle(
      modelOrStoreAt: Fixtures.url(
        "karim-ezzedine-cartkit/Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld"))
    code = nil
    do {
      _ = try MigrationScripts(policyFolders: []).plan(store: storeURL, bundle: foreign)
    } catch let error as MigrationError {
      code = error.code
    }
    #expect(code == .unknownSourceVersion)
    #expect {
      try SQLiteStore(url: storeURL, model: try bundle.model(named: "Moody 2"))
    } throws: { ($0 as? StoreError)?.code == .incompatibleModel }
  }

  /// `check` and `verify` from Swift: a sound store has no finding but notes; every old version of
  /// Moody reaches Moody 6 through the policies.
  @Test func checkAndVerify() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder.url)
    let scratchURL = try folder.folder("scratch")
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let scripts = MigrationScripts(policyFolders: [Self.moodyPolicies])
    var problems: [StoreCheck.Finding] = []
    for finding in try StoreCheck.findings(of: storeURL, bundle: bundle) where !finding.isNote {
      print(finding.kind, finding.message)
      problems.append(finding)
    }
    #expect(problems.isEmpty, "\(problems)")
    let outcomes = try scripts.verify(bundle: bundle, objectsPerEntity: 5, scratch: scratchURL)
    print(outcomes.filter(\.passed).count, "of", outcomes.count, "versions reach", bundle.currentVersionName)
    #expect(outcomes.map(\.version) == ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"])
    #expect(outcomes.filter { !$0.passed }.isEmpty, "\(outcomes.filter { !$0.passed }.map(\.detail))")
    #expect(outcomes.allSatisfy { $0.objects > 0 })
  }
}
