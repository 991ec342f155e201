import Foundation
import MigrunContext
import MigrunKit
import MigrunStore
import TestSupport
import Testing

/// Deletes against changes: one window deletes Bob while another changes him.
@Suite struct ConflictKindTests {
  /// The left window deletes Bob (or changes his salary to 6000) and saves; the right one, which read
  /// Bob before, changes his salary to 7000 (or deletes him) and saves under `policy`.
  static func run(_ policy: MergePolicy, leftDeletes: Bool) throws -> (ContextError?, [String: Double]) {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let left = coordinator.newContext()
    let right = coordinator.newContext(mergePolicy: policy)
    let bobLeft = try CompanyScenario.employee("Bob", left)
    let bobRight = try CompanyScenario.employee("Bob", right)
    if leftDeletes {
      try left.delete(bobLeft)
      try bobRight.set("salary", .double(7000))
    } else {
      try bobLeft.set("salary", .double(6000))
      try right.delete(bobRight)
    }
    try left.save()
    var failure: ContextError?
    do { try right.save() } catch let error as ContextError { failure = error }
    let fresh = StoreCoordinator(store: try SQLiteStore(url: store.url, model: store.model)).newContext()
    var salaries: [String: Double] = [:]
    for employee in try fresh.fetch("Employee") {
      salaries[try employee.value("name").text ?? "?"] = try employee.value("salary").number
    }
    return (failure, salaries)
  }

  @Test func changingAnObjectDeletedInTheStore() throws {
    let (error, salaries) = try Self.run(.error, leftDeletes: true)
    #expect(error?.conflicts.map(\.kind) == [.storeDeleted])
    #expect(error?.conflicts.first?.newVersion == 0)
    #expect(salaries["Bob"] == nil)
    #expect(try Self.run(.mergeByPropertyStoreTrump, leftDeletes: true).1["Bob"] == nil, "the delete stands")
    #expect(try Self.run(.rollback, leftDeletes: true).1["Bob"] == nil)
    #expect(try Self.run(.mergeByPropertyObjectTrump, leftDeletes: true).1["Bob"] == 7000, "written back")
    #expect(try Self.run(.overwrite, leftDeletes: true).1["Bob"] == 7000)
  }

  @Test func deletingAnObjectChangedInTheStore() throws {
    let (error, salaries) = try Self.run(.error, leftDeletes: false)
    #expect(error?.conflicts.map(\.kind) == [.delete])
    #expect(salaries["Bob"] == 6000)
    #expect(try Self.run(.mergeByPropertyStoreTrump, leftDeletes: false).1["Bob"] == 6000, "the delete is dropped")
    #expect(try Self.run(.rollback, leftDeletes: false).1["Bob"] == 6000)
    #expect(try Self.run(.mergeByPropertyObjectTrump, leftDeletes: false).1["Bob"] == nil, "the delete goes ahead")
    #expect(try Self.run(.overwrite, leftDeletes: false).1["Bob"] == nil)
  }

  @Test func anInMemoryStoreBehavesAlike() throws {
    let store = InMemoryStore(model: try SampleModels.companyModel())
    let coordinator = StoreCoordinator(store: store)
    let setup = coordinator.newContext()
    try setup.insert("Employee", ["name": .string("Bob"), "salary": .double(5000)])
    try setup.save()
    let left = coordinator.newContext()
    let right = coordinator.newContext(mergePolicy: .mergeByPropertyStoreTrump)
    let bobLeft = try CompanyScenario.employee("Bob", left)
    let bobRight = try CompanyScenario.employee("Bob", right)
    try bobLeft.set("salary", .double(6000))
    try bobRight.set("salary", .double(7000))
    try bobRight.set("email", .string("bob@acme.test"))
    try left.save()
    try right.save()
    let stored = try #require(try store.object(bobLeft.id))
    #expect(stored.attributes["salary"] == .double(6000))
    #expect(stored.attributes["email"] == .string("bob@acme.test"))
    #expect(stored.version == 3)
  }
}
