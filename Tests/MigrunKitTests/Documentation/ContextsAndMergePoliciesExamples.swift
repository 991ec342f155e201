import Foundation
import MigrunKit
import TestSupport
import Testing

// The examples of ContextsAndMergePolicies.md, word for word: this file imports what their snippets
// import, and nothing else of migrun's.
extension DocumentationExamplesTests {
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
}
