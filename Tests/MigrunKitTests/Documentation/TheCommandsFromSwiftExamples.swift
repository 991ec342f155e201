import Foundation
import MigrunKit
import TestSupport
import Testing

// The salvage, export and import examples of TheCommandsFromSwift.md, word for word (lint and convert
// are TheCommandsFromSwiftTests', which imports MigrunScripting).
extension DocumentationExamplesTests {
  /// Moody 5 salvaged (an intact file reads whole: nothing lost); its damaged cases are SalvageCommandTests'.
  @Test func salvageFromSwift() throws {
    let folder = try TemporaryDirectory()
    let damagedURL = try Self.moodyStore("Moody 5", in: folder)
    let rescuedURL = folder.url.appendingPathComponent("rescued.sqlite")
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let salvaged = try SQLiteStore.salvage(damagedURL, bundle: bundle, to: rescuedURL)
    print(salvaged.written, salvaged.lost, salvaged.remaining)
    #expect(salvaged.version == "Moody 5")
    #expect((salvaged.written["Mood"] ?? 0) > 0 && salvaged.lost.isEmpty, "\(salvaged.written) \(salvaged.lost)")
    #expect(!salvaged.report.isEmpty)
    // The output exists now: a second salvage to it is refused, the store left as it is.
    #expect(throws: StoreError.self) { try SQLiteStore.salvage(damagedURL, bundle: bundle, to: rescuedURL) }
  }

  @Test func exportAndImportFromSwift() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder)
    let copyURL = folder.url.appendingPathComponent("copy.sqlite")
    let bundle = try ModelBundle(modelOrStoreAt: Self.modelURL)
    let store = try SQLiteStore(url: storeURL, model: try bundle.model(named: "Moody 5"))
    let json = try store.exportJSON()
    let copy = try SQLiteStore.create(at: copyURL, model: try bundle.model(named: "Moody 5"))
    try copy.importJSON(Data(json.utf8))
    #expect(try copy.exportJSON() == json)
    try store.close()
    try copy.close()
  }
}
