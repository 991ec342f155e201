import Foundation
import TestSupport
import Testing

@testable import MigrunContext
@testable import MigrunModel
@testable import MigrunStore

/// Faults (`includesPropertyValues: false`) and batches: a fetch that holds keys, values read when
/// first used, a batch of a fetch's faults at a time.
@Suite struct FaultTests {
  @Test func aFaultIsReadWhenFirstUsedWithTheFaultsAfterIt() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    try coordinator.newContext().write(employees: 600)
    let context = coordinator.newContext()
    let faults = try context.fetch("Employee", matching: nil, includesPropertyValues: false)
    #expect(faults.count == 603)
    #expect(faults.allSatisfy { $0.isFault })
    #expect(coordinator.snapshotCount == 0, "a fault holds no values")
    // The first read fires its fault and the next ones of the fetch: one batch.
    #expect(try faults[0].value("name") == .string("Ada"))
    #expect(faults.prefix(ObjectContext.faultBatch).allSatisfy { !$0.isFault })
    #expect(faults.dropFirst(ObjectContext.faultBatch).allSatisfy { $0.isFault })
    #expect(coordinator.snapshotCount == ObjectContext.faultBatch)
    // Every value is the store's, fired in turn.
    let names = try faults.map { try $0.value("name").text ?? "" }
    #expect(names.prefix(3) == ["Ada", "Bob", "Carol"] && names.last == "E599")
    // A fetch with values of objects already registered hands out the same objects.
    let again = try context.fetch("Employee", matching: try FormatPredicate("name == 'Bob'"))
    #expect(again.first === faults[1])
  }

  @Test func aFaultReadsTheVersionOfWhenItIsFired() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let left = coordinator.newContext()
    let bob = try #require(
      try left.fetch("Employee", matching: try FormatPredicate("name == 'Bob'"), includesPropertyValues: false).first)
    // Another context changes Bob before the fault is fired: the fault reads that version, so the
    // save that follows is no conflict (Core Data's includesPropertyValues = false, as documented).
    let right = coordinator.newContext()
    try CompanyScenario.employee("Bob", right).set("salary", .double(7000))
    try right.save()
    try bob.set("counter", .integer(3))
    try left.save()
    let fresh = coordinator.newContext()
    let stored = try CompanyScenario.employee("Bob", fresh)
    #expect(try stored.value("salary") == .double(7000))
    #expect(try stored.value("counter") == .integer(3))
  }

  @Test func aFaultWhoseRowIsGoneSaysSo() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let context = coordinator.newContext()
    let carol = try #require(
      try context.fetch("Employee", matching: try FormatPredicate("name == 'Carol'"), includesPropertyValues: false)
        .first)
    let other = coordinator.newContext()
    try other.delete(try CompanyScenario.employee("Carol", other))
    try other.save()
    #expect {
      _ = try carol.value("name")
    } throws: { ($0 as? ContextError)?.code == .noSuchObject && "\($0)".contains("no longer has this object") }
  }

  @Test func forEachHoldsOneBatchAtATime() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    try coordinator.newContext().write(employees: 1_000)
    let context = coordinator.newContext()
    var seen = 0
    var most = 0
    try context.forEach(
      "Employee", matching: try FormatPredicate("name BEGINSWITH 'E'"), sortedBy: [.descending("name")], batchSize: 100
    ) { batch in
      seen += batch.count
      most = max(most, context.registeredCount, coordinator.snapshotCount)
    }
    #expect(seen == 1_000)
    #expect(most == 100, "one batch held at a time")
    #expect(context.registeredCount == 0 && coordinator.snapshotCount == 0)
  }

  @Test func fetchValuesReturnsOnlyThePropertiesAskedFor() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let rows = try context.fetchValues(
      "Employee", matching: try FormatPredicate("salary < %@", arguments: [.double(9000)]),
      properties: ["name", "manager", "reports"], sortedBy: [.ascending("name")])
    #expect(rows.map { $0.attributes["name"] } == [.string("Bob"), .string("Carol")])
    #expect(rows.allSatisfy { $0.attributes.count == 1 && $0.attributes["salary"] == nil })
    #expect(rows[0].toOne["manager"] == ObjectID(entity: "Employee", primaryKey: 1) && rows[1].toOne["manager"] == nil)
    #expect(rows.allSatisfy { $0.toMany["reports"] == [] })
    #expect(context.registeredCount == 0, "no object stays")
    #expect(throws: ContextError.self) {
      _ = try context.fetchValues("Employee", matching: nil, properties: ["wage"])
    }
  }
}
