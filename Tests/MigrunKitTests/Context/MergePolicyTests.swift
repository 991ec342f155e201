import Foundation
import MigrunContext
import MigrunKit
import MigrunStore
import TestSupport
import Testing

/// Two windows edit Bob (see ``CompanyScenario/twoWindows(_:_:)``): the left one saved department
/// Research and salary 6000 first; the right one read Bob before that and now saves manager Carol
/// and salary 7000 under each policy.
@Suite struct MergePolicyTests {
  @Test func errorFailsTheSaveWithTheConflictAndWritesNothing() throws {
    let folder = try TemporaryDirectory()
    let (error, bob) = try CompanyScenario.twoWindows(.error, folder)
    let failure = try #require(error)
    #expect(failure.code == .conflicts)
    #expect(failure.conflicts.count == 1)
    let conflict = try #require(failure.conflicts.first)
    #expect(conflict.kind == .update)
    #expect(conflict.id.entity == "Employee")
    #expect(conflict.oldVersion == 1)
    #expect(conflict.newVersion == 2)
    #expect(conflict.snapshot?.attributes["salary"] == .double(5000))
    #expect(conflict.store?.attributes["salary"] == .double(6000))
    #expect(conflict.object?.attributes["salary"] == .double(7000))
    #expect(conflict.changed == ["manager", "salary"])
    #expect(failure.description.contains("Employee/p2: changed in the store since it was read (version 1 → 2)"))
    #expect(failure.description.contains("salary: read 5000.0, store 6000.0, here 7000.0"), "\(failure)")
    #expect(bob == .init(department: "Research", manager: "Ada", salary: 6000, version: 2))
  }

  @Test func storeTrumpKeepsTheStoresValueWhereBothChanged() throws {
    let (error, bob) = try CompanyScenario.twoWindows(.mergeByPropertyStoreTrump, try TemporaryDirectory())
    #expect(error == nil)
    #expect(bob == .init(department: "Research", manager: "Carol", salary: 6000, version: 3))
  }

  @Test func objectTrumpKeepsTheContextsValueWhereBothChanged() throws {
    let (error, bob) = try CompanyScenario.twoWindows(.mergeByPropertyObjectTrump, try TemporaryDirectory())
    #expect(error == nil)
    #expect(bob == .init(department: "Research", manager: "Carol", salary: 7000, version: 3))
  }

  @Test func overwriteWritesTheContextsWholeState() throws {
    let (error, bob) = try CompanyScenario.twoWindows(.overwrite, try TemporaryDirectory())
    #expect(error == nil)
    #expect(bob == .init(department: "Sales", manager: "Carol", salary: 7000, version: 3))
  }

  @Test func rollbackKeepsTheStoresStateAndWritesNothing() throws {
    let (error, bob) = try CompanyScenario.twoWindows(.rollback, try TemporaryDirectory())
    #expect(error == nil)
    #expect(bob == .init(department: "Research", manager: "Ada", salary: 6000, version: 2))
  }

  @Test func withoutAConflictEveryPolicySavesAndTheInverseFollows() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let bob = try CompanyScenario.employee("Bob", context)
    let research = try context.fetch("Department", where: .equals("name", .string("Research")))[0]
    try bob.set("department", to: research)
    #expect(try research.members("employees").map { try $0.value("name") } == [.string("Bob"), .string("Carol")])
    let changes = try context.save()
    #expect(changes.updated == [bob.id])
    let fresh = StoreCoordinator(store: try SQLiteStore(url: store.url, model: store.model)).newContext()
    let names = try fresh.fetch("Department", where: .equals("name", .string("Research")))[0].members("employees")
      .map { try $0.value("name") }
    #expect(names == [.string("Bob"), .string("Carol")])
    #expect(try CompanyScenario.storedBob(store.url).version == 2)
  }

  @Test func aFailedSaveKeepsThePendingChangesForAnotherTry() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let left = coordinator.newContext()
    let right = coordinator.newContext()
    try CompanyScenario.employee("Bob", left).set("salary", .double(1))
    let bob = try CompanyScenario.employee("Bob", right)
    try bob.set("salary", .double(2))
    try left.save()
    #expect(throws: ContextError.self) { try right.save() }
    #expect(right.hasChanges)
    right.mergePolicy = .mergeByPropertyObjectTrump
    try right.save()
    #expect(try CompanyScenario.storedBob(store.url).salary == 2)
    #expect(!right.hasChanges)
  }
}
