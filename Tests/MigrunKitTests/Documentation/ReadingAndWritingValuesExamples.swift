import Foundation
import MigrunKit
import TestSupport
import Testing

// The examples of ReadingAndWritingValues.md, word for word: this file imports what their snippets
// import, and nothing else of migrun's.
extension DocumentationExamplesTests {
  @Test func readingAndWritingValues() throws {
    let folder = try TemporaryDirectory()
    let storeURL = try Self.moodyStore("Moody 5", in: folder)
    let modelURL = Self.modelURL
    let model = try ModelBundle(modelOrStoreAt: modelURL).model(named: "Moody 5")
    let store = try SQLiteStore(url: storeURL, model: model, access: .readWrite)
    let context = StoreCoordinator(store: store).newContext()
    let placed = try FormatPredicate("rating >= %@ AND country != nil", arguments: [.integer(0)])
    for mood in try context.fetch("Mood", matching: placed, sortedBy: [.ascending("date")], limit: 5) {
      guard case .date(let seconds) = try mood.value("date") else { continue }
      let country = try mood.object("country")
      let code = try country?.value("numericISO3166Code") ?? .null
      print("\(Date(timeIntervalSinceReferenceDate: seconds)): \(mood["creatorID"] ?? .null) in \(code)")
    }
    let read = try context.fetch("Mood", matching: placed, sortedBy: [.ascending("date")], limit: 5)
    #expect(!read.isEmpty && read.allSatisfy { (try? $0.object("country")) != nil })
    #expect(read.map { $0["date"]?.number ?? 0 } == read.map { $0["date"]?.number ?? 0 }.sorted())

    let oldest = try context.fetch("Mood", matching: nil, sortedBy: [.ascending("date")], limit: 1)[0]
    try oldest.set("rating", .integer(5))
    let added = try context.insert("Mood", ["date": .date(Date().timeIntervalSinceReferenceDate)])
    try added.set("creatorID", .string("migrun"))
    try added.set("country", to: oldest.object("country"))
    let saved = try context.save()
    print("\(saved.inserted.count) inserted, \(saved.updated.count) updated")
    #expect(saved.inserted.count == 1 && saved.updated.contains(oldest.id))

    let mine = try FormatPredicate("creatorID == %@", arguments: [.string("migrun")])
    let found = try StoreCoordinator(store: store).newContext().fetch("Mood", matching: mine)
    print("\(found.count) mood by migrun, rated \(found.first?["rating"] ?? .null)")
    try store.close()
    #expect(found.count == 1 && found.first?["rating"] == .integer(0))
    #expect(try Self.rating(of: oldest.id, in: storeURL, model) == .integer(5))
  }
}
