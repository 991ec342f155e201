import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Every example of the library's DocC articles (Sources/MigrunKit/MigrunKit.docc), compiled and run
/// here against Moody's real stores — and each article's code blocks held to be the code below,
/// word for word, so an article cannot drift from what compiles.
@Suite(.enabled(if: Fixtures.areAvailable))
struct DocumentationExamplesTests {
  static let moody = "objcio-core-data-moody"
  static let articles = Fixtures.repositoryRoot.appendingPathComponent("Sources/MigrunKit/MigrunKit.docc")

  /// A copy of a Moody store of `version` ("Moody 5") in `folder`.
  static func moodyStore(_ version: String, in folder: TemporaryDirectory) throws -> URL {
    let copy = folder.url.appendingPathComponent("\(version).sqlite")
    try FileManager.default.copyItem(at: Fixtures.url("\(moody)/stores/\(version).moody.sqlite"), to: copy)
    return copy
  }

  static var modelURL: URL { Fixtures.url("\(moody)/models/Moody.xcdatamodeld") }

  @Test func everyCodeBlockOfTheArticlesIsAnExampleHere() throws {
    let here = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let code = Set(here.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
    // The Lua article's examples need MigrunScripting: LuaFromSwiftTests (MigrunAPITests) holds them.
    let files = try FileManager.default.contentsOfDirectory(atPath: Self.articles.path)
      .filter { $0.hasSuffix(".md") && $0 != "UsingLuaFromSwift.md" }
    var blocks = 0
    for file in files {
      let text = try String(contentsOf: Self.articles.appendingPathComponent(file), encoding: .utf8)
      for block in text.components(separatedBy: "```swift\n").dropFirst() {
        let lines = block.components(separatedBy: "\n```")[0].split(separator: "\n")
        for line in lines.map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
          #expect(code.contains(line), "\(file): '\(line)' is not in DocumentationExamplesTests")
        }
        blocks += 1
      }
    }
    #expect(blocks >= 8)
  }

  @Test func openingAndCheckingAStore() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder)
    let modelURL = Self.modelURL
    let bundle = try ModelBundle(modelOrStoreAt: modelURL)
    let metadata = try SQLiteStore.metadata(at: storeURL)
    guard let version = bundle.version(matching: metadata.versionHashes) else {
      throw StoreError(.incompatibleModel, file: storeURL.path, reason: "no version of \(bundle.name) fits")
    }
    print("\(storeURL.lastPathComponent) is at \(version.versionName ?? "?")")
    #expect(version.versionName == "Moody 5")

    let store = try SQLiteStore(url: storeURL, model: version)
    defer { try? store.close() }
    for (entity, count) in try store.entityCounts().sorted(by: { $0.key < $1.key }) {
      print("\(entity): \(count)")
    }
    let broken = try store.ruleViolations(limit: 10)
    print(broken.isEmpty ? "every object keeps the model's rules" : broken.joined(separator: "\n"))
    #expect(try store.entityCounts()["Mood"] ?? 0 > 0)
  }

  @Test func contextsAndMergePolicies() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder)
    let model = try ModelBundle(modelOrStoreAt: Self.modelURL).model(named: "Moody 5")
    let store = try SQLiteStore(url: storeURL, model: model, access: .readWrite)
    let coordinator = StoreCoordinator(store: store)
    let context = coordinator.newContext()
    let recent = try FormatPredicate("date > %@", arguments: [.date(0)])
    let moods = try context.fetch("Mood", matching: recent, sortedBy: [.descending("date")], limit: 3)
    for mood in moods {
      try mood.set("creatorID", .string("migrun"))
    }
    let saved = try context.save()
    print("\(saved.updated.count) moods saved")
    #expect(saved.updated.count == moods.count && !moods.isEmpty)

    let left = coordinator.newContext()
    let right = coordinator.newContext(mergePolicy: .mergeByPropertyObjectTrump)
    let first = try left.fetch("Mood", matching: nil, limit: 1)[0]
    let same = try right.object(with: first.id)
    try first.set("creatorID", .string("left"))
    try same.set("latitude", .double(48.85))
    _ = try left.save()
    _ = try right.save()  // merged: the store now holds both changes

    let after = try coordinator.newContext().object(with: first.id)
    #expect(try after.value("creatorID") == .string("left"))
    #expect(try after.value("latitude") == .double(48.85))
    try bigEntities(coordinator.newContext(), recent)
    try store.close()
  }

  func bigEntities(_ context: ObjectContext, _ recent: FormatPredicate) throws {
    let faults = try context.fetch("Mood", matching: nil, includesPropertyValues: false)
    print("\(faults.count) moods, \(faults.filter(\.isFault).count) not read yet")
    var walked = 0
    try context.forEach("Mood", matching: recent, sortedBy: [.ascending("date")], batchSize: 100) { batch in
      walked += batch.count  // each batch let go after this closure, unless kept or changed
    }
    let counted = try context.count("Mood", matching: recent)  // in SQL: no object made
    #expect(!faults.isEmpty && faults.allSatisfy { $0.isFault })
    #expect(walked == counted && counted > 0)
  }

  @Test func migratingFromSwift() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 4", in: folder)
    let modelURL = Self.modelURL
    let bundle = try ModelBundle(modelOrStoreAt: modelURL)
    let plan = try MigrationPlanner.plan(store: storeURL, bundle: bundle)
    print(plan.needsMigration ? plan.steps.map(\.name).joined(separator: ", ") : "current")
    #expect(plan.needsMigration && plan.destinationVersion == "Moody 6")

    let migrator = StoreMigrator(store: storeURL, plan: plan, options: .init(keepBackup: true))
    migrator.progress = { progress in
      print("\(progress.step ?? "") \(progress.mapping): \(progress.done)/\(progress.total)")
    }
    let report = try migrator.run()
    print("done; the original is kept as \(report.backup?.lastPathComponent ?? "nothing")")
    #expect(report.backup?.lastPathComponent == "Moody 4~.sqlite")
    #expect(bundle.version(matching: try SQLiteStore.metadata(at: storeURL).versionHashes)?.versionName == "Moody 6")
  }

  @Test func writingAPolicyInSwift() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder)
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let plan = try MigrationPlanner.plan(store: storeURL, bundle: bundle)
    let migrator = StoreMigrator(store: storeURL, plan: plan, options: .init(keepBackup: false))
    migrator.policies = { _ in [EntityMapping.name(source: "Mood", destination: "Mood"): UppercasedCreators()] }
    let before = try Self.creators(storeURL, try bundle.model(named: "Moody 5"))
    _ = try migrator.run()

    // Every mood's creator, upper-cased by the policy (the store's are not).
    let after = try Self.creators(storeURL, try bundle.model(named: "Moody 6"))
    #expect(!before.isEmpty && before.values.allSatisfy { $0 != $0.uppercased() })
    #expect(after == before.mapValues { $0.uppercased() })
  }

  static func creators(_ url: URL, _ model: ObjectModel) throws -> [Int64: String] {
    let store = try SQLiteStore(url: url, model: model)
    defer { try? store.close() }
    var creators: [Int64: String] = [:]
    for mood in try StoreCoordinator(store: store).newContext().fetch("Mood", matching: nil) {
      if case .string(let creator) = try mood.value("creatorID") { creators[mood.id.primaryKey] = creator }
    }
    return creators
  }
}

final class UppercasedCreators: EntityMigrationPolicy {
  func createDestinationInstances(for source: StoredObject, _ mapping: EntityMapping, _ manager: MigrationManager)
    throws
  {
    guard case .string(let creator)? = source.attributes["creatorID"] else {
      try manager.createDefaultDestination(for: source, mapping)
      return
    }
    try manager.createDefaultDestination(for: source, mapping, overriding: ["creatorID": .string(creator.uppercased())])
  }
}
