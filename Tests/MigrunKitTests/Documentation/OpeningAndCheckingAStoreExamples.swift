import Foundation
import MigrunKit
import TestSupport
import Testing

// The examples of MigrunKit.md and OpeningAndCheckingAStore.md, word for word: this file imports
// what their snippets import, and nothing else of migrun's.
extension DocumentationExamplesTests {
  @Test func oneImportBringsTheLibrary() throws {
    let modelURL = Self.modelURL
    let bundle = try ModelBundle(modelOrStoreAt: modelURL)
    print(bundle.versionNames.joined(separator: ", "))
    #expect(bundle.versionNames.last == "Moody 6")
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
    #expect(try store.entityCounts()["Mood"] ?? 0 > 0)

    let broken = try store.ruleViolations(limit: 10)
    print(broken.isEmpty ? "every object keeps the model's rules" : broken.joined(separator: "\n"))
    #expect(broken.isEmpty)
  }
}
