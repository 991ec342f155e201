import Foundation
import MigrunContext
import MigrunKit
import MigrunStore
import TestSupport
import Testing

/// Delete rules on delete and save, read back through a fresh connection.
@Suite struct DeleteRuleTests {
  static func freshContext(_ url: URL) throws -> ObjectContext {
    StoreCoordinator(store: try SQLiteStore(url: url, model: try SampleModels.companyModel())).newContext()
  }

  /// The `name` (or `title`) of every object of `entity` in the file, sorted.
  static func names(_ entity: String, _ url: URL, attribute: String = "name") throws -> [String] {
    try freshContext(url).fetch(entity, sortedBy: [.ascending(attribute)]).map { try $0.value(attribute).text ?? "?" }
  }

  @Test func cascadeGoesTwoLevelsDeepAndStopsThere() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let elsewhere = try context.insert("Department", ["name": .string("Elsewhere")])
    try context.insert("Employee", ["name": .string("Dan")]).set("department", to: elsewhere)
    try context.save()
    let acme = try context.fetch("Company")[0]
    try context.delete(acme)
    #expect(context.deletedObjects.count == 6, "Acme, 2 departments, 3 employees")
    let changes = try context.save()
    #expect(changes.deleted.count == 6)
    #expect(try Self.names("Company", store.url).isEmpty)
    #expect(try Self.names("Department", store.url) == ["Elsewhere"])
    #expect(try Self.names("Employee", store.url) == ["Dan"])
  }

  @Test func nullifyTakesTheObjectOutOfEveryInverse() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let apollo = try context.insert("Project", ["title": .string("Apollo")])
    try apollo.setMembers(
      "members", [try CompanyScenario.employee("Ada", context), try CompanyScenario.employee("Bob", context)])
    try context.save()
    try context.delete(try CompanyScenario.employee("Ada", context))
    try context.save()
    let fresh = try Self.freshContext(store.url)
    let bob = try CompanyScenario.employee("Bob", fresh)
    #expect(try bob.object("manager") == nil)
    #expect(bob.version == 3, "Bob was changed by the nullify (and once when added to Apollo's members)")
    #expect(try bob.object("department")?.members("employees").map { try $0.value("name") } == [.string("Bob")])
    #expect(try fresh.fetch("Project")[0].members("members").map { try $0.value("name") } == [.string("Bob")])
    #expect(try bob.members("projects").map { try $0.value("title") } == [.string("Apollo")])
  }

  @Test func denyBlocksTheSaveWithTheReasonAndWritesNothing() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let apollo = try context.insert("Project", ["title": .string("Apollo")])
    let design = try context.insert("Task", ["title": .string("Design")])
    try design.set("project", to: apollo)
    try context.save()
    try context.delete(apollo)
    try CompanyScenario.employee("Bob", context).set("salary", .double(1))
    let error = try #require(throws: ContextError.self) { try context.save() }
    #expect(error.code == .deny)
    #expect(
      error.description
        == "object Project/p1: cannot delete: relationship 'tasks' has delete rule deny and still holds Task/p1; nothing was saved"
    )
    #expect(try Self.names("Project", store.url, attribute: "title") == ["Apollo"])
    #expect(try CompanyScenario.storedBob(store.url).salary == 5000, "nothing of the failed save was written")
    // Deleting the task too lets the delete through.
    try context.delete(design)
    try context.save()
    #expect(try Self.names("Project", store.url, attribute: "title").isEmpty)
    #expect(try Self.names("Task", store.url, attribute: "title").isEmpty)
    #expect(try CompanyScenario.storedBob(store.url).salary == 1)
  }

  @Test func noActionLeavesTheDestinationUntouched() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let desk = try context.insert("Desk", ["number": .integer(7)])
    let bob = try CompanyScenario.employee("Bob", context)
    try bob.set("desk", to: desk)
    try context.save()
    let bobID = bob.id
    try context.delete(bob)
    #expect(!desk.hasChanges, "no action: the desk is not told")
    try context.save()
    let fresh = try Self.freshContext(store.url)
    let stored = try fresh.fetch("Desk")[0]
    #expect(stored.version == 1, "written once, when it was inserted with Bob")
    #expect(stored.committedValues?.toOne["occupant"] == bobID, "the desk still names the deleted employee")
    #expect(throws: ContextError.self) { try stored.object("occupant") }
  }

  @Test func cascadeThroughAToManyAlsoTakesTheMembersOutOfOtherRelationships() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let apollo = try context.insert("Project", ["title": .string("Apollo")])
    try apollo.setMembers("members", [try CompanyScenario.employee("Carol", context)])
    try context.save()
    try context.delete(try context.fetch("Department", where: .equals("name", .string("Research")))[0])
    try context.save()
    #expect(try Self.names("Employee", store.url) == ["Ada", "Bob"])
    #expect(try Self.freshContext(store.url).fetch("Project")[0].members("members").isEmpty)
  }
}
