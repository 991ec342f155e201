import Foundation
import MigrunKit
import TestSupport
import Testing

// The examples of MigratingFromSwift.md and WritingAPolicyInSwift.md, word for word: this file
// imports what their snippets import, and nothing else of migrun's.
extension DocumentationExamplesTests {
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
    let before = try Self.creators(storeURL, try bundle.model(named: "Moody 5"))
    let migrator = StoreMigrator(store: storeURL, plan: plan, options: .init(keepBackup: false))
    migrator.policies = { _ in [EntityMapping.name(source: "Mood", destination: "Mood"): UppercasedCreators()] }
    _ = try migrator.run()

    // Every mood's creator, upper-cased by the policy (the store's are not).
    let after = try Self.creators(storeURL, try bundle.model(named: "Moody 6"))
    #expect(!before.isEmpty && before.values.allSatisfy { $0 != $0.uppercased() })
    #expect(after == before.mapValues { $0.uppercased() })
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
