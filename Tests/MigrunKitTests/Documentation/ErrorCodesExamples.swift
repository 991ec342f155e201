import Foundation
import MigrunKit
import TestSupport
import Testing

// The examples of ErrorCodes.md, word for word: this file imports what their snippets import, and
// nothing else of migrun's.
extension DocumentationExamplesTests {
  @Test func matchingAnErrorByCode() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder)
    let modelURL = Self.modelURL
    // A failure of another kind would leave the `catch` unmatched and fail this test.
    do {
      let older = try ModelBundle(modelOrStoreAt: modelURL).model(named: "Moody")
      _ = try SQLiteStore(url: storeURL, model: older)
    } catch let error as StoreError where error.code == .incompatibleModel {
      print("the store is not at that version: \(error)")
    }
    let older = try ModelBundle(modelOrStoreAt: modelURL).model(named: "Moody")
    #expect(throws: StoreError.self) { try SQLiteStore(url: storeURL, model: older) }
  }
}
