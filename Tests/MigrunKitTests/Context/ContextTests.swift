import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Contexts: fetching, faulting, inserting, undoing, notifications, uniqueness, snapshots.
@Suite struct ContextTests {
  static func names(_ objects: [ManagedObject]) throws -> [String] {
    try objects.map { try $0.value("name").text ?? "?" }
  }

  @Test func fetchFiltersSortsAndCountsPendingChanges() throws {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    #expect(try Self.names(context.fetch("Employee", sortedBy: [.descending("salary")])) == ["Ada", "Carol", "Bob"])
    #expect(
      try Self.names(context.fetch("Employee", where: .greater("salary", .integer(6000)) && .isNotNull("email")))
        == ["Ada", "Carol"])
    let sales = try context.fetch("Department", where: .equals("name", .string("Sales")))[0]
    #expect(try Self.names(context.fetch("Employee", where: .targets("department", sales.id))) == ["Ada", "Bob"])
    // Pending changes count: a new object that matches, a deleted one left out, a changed value judged.
    try context.insert("Employee", ["name": .string("Dan"), "salary": .double(8000)])
    try context.delete(try CompanyScenario.employee("Carol", context))
    try CompanyScenario.employee("Bob", context).set("salary", .double(9500))
    #expect(
      try Self.names(
        context.fetch("Employee", where: .greater("salary", .integer(6000)), sortedBy: [.ascending("salary")]))
        == ["Dan", "Ada", "Bob"])
    let error = try #require(throws: ContextError.self) { try context.fetch("Employee", where: .isNull("nickname")) }
    #expect(error.description == "entity 'Employee': entity 'Employee' has no property 'nickname'")
  }

  /// `Z_OPT` is read from the file (outside input): an object at Int64's largest version, changed
  /// and saved, trapped on `version + 1`. It wraps; the version still differs from the one read.
  @Test func aChangeToAnObjectAtTheLargestVersionWraps() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let bob = try CompanyScenario.employee("Bob", StoreCoordinator(store: store).newContext()).id
    var stored = try #require(try store.object(bob))
    stored.version = .max
    try store.write { try $0.update(stored, bumpingVersion: false) }
    let context = StoreCoordinator(store: store).newContext()
    try CompanyScenario.employee("Bob", context).set("salary", .double(9500))
    try context.save()
    #expect(try store.object(bob)?.version == .min)
    try CompanyScenario.employee("Bob", context).set("salary", .double(9600))
    try context.save()
    #expect(try store.object(bob)?.version == .min + 1)
  }

  @Test func oneObjectPerIDAndRelatedObjectsFaultInOnAccess() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let bob = try CompanyScenario.employee("Bob", context)
    #expect(context.registeredCount == 1)
    let ada = try #require(try bob.object("manager"))
    #expect(context.registeredCount == 2, "the manager was read when asked for")
    #expect(try ada.value("name") == .string("Ada"))
    #expect(try ada.members("reports").first === bob, "one object per ID in a context")
    #expect(try context.object(with: bob.id) === bob)
    let uri = context.uri(of: bob)
    #expect(uri == "x-coredata://\(store.metadata.uuid)/Employee/p2")
    #expect(try context.object(uri: uri) === bob)
    #expect(throws: ContextError.self) { try context.object(with: ObjectID(entity: "Employee", primaryKey: 99)) }
    #expect(throws: ContextError.self) { try bob.value("nickname") }
    #expect(throws: ContextError.self) { try bob.set("salary", .string("a lot")) }
  }

  @Test func insertedObjectsGetPermanentIDsOnSave() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let dan = try context.insert("Employee", ["name": .string("Dan"), "salary": .integer(4000)])
    #expect(dan.id.primaryKey < 0, "temporary until saved")
    #expect(try dan.value("salary") == .double(4000), "converted to the attribute's type")
    #expect(try dan.value("counter") == .integer(0), "the model's default")
    try dan.set("department", to: try context.fetch("Department", where: .equals("name", .string("Research")))[0])
    let changes = try context.save()
    #expect(dan.id == ObjectID(entity: "Employee", primaryKey: 4))
    #expect(changes.inserted == [dan.id])
    #expect(dan.version == 1)
    #expect(!dan.hasChanges)
    let fresh = StoreCoordinator(store: try SQLiteStore(url: store.url, model: store.model)).newContext()
    let research = try fresh.fetch("Department", where: .equals("name", .string("Research")))[0]
    #expect(try Self.names(research.members("employees")) == ["Carol", "Dan"])
  }

  @Test func rollbackRefreshAndReset() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let context = coordinator.newContext()
    let bob = try CompanyScenario.employee("Bob", context)
    try bob.set("salary", .double(1))
    let dan = try context.insert("Employee", ["name": .string("Dan")])
    try context.delete(try CompanyScenario.employee("Carol", context))
    context.rollback()
    #expect(!context.hasChanges)
    #expect(try bob.value("salary") == .double(5000))
    #expect(dan.isDeleted, "a rolled-back insert is gone")
    #expect(try Self.names(context.fetch("Employee")) == ["Ada", "Bob", "Carol"])
    // Another context saves; refresh reads the new values (keeping or dropping pending ones).
    let other = coordinator.newContext()
    try CompanyScenario.employee("Bob", other).set("salary", .double(5100))
    try other.save()
    try bob.set("name", .string("Robert"))
    try context.refresh(bob, mergeChanges: true)
    #expect(try bob.value("salary") == .double(5100))
    #expect(try bob.value("name") == .string("Robert"))
    #expect(bob.version == 2)
    try context.refresh(bob, mergeChanges: false)
    #expect(try bob.value("name") == .string("Bob"))
    context.reset()
    #expect(context.registeredCount == 0)
    #expect(throws: ContextError.self) { try bob.value("name") }
  }

  @Test func aSavesChangesMergeIntoAnotherContext() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let writer = coordinator.newContext()
    let reader = coordinator.newContext(mergePolicy: .mergeByPropertyStoreTrump)
    let bob = try CompanyScenario.employee("Bob", reader)
    let ada = try CompanyScenario.employee("Ada", reader)
    let carol = try CompanyScenario.employee("Carol", reader)
    try ada.set("name", .string("Ada L."))  // kept: the store did not change it
    try ada.set("salary", .double(1))  // dropped: the store changed it too (store trump)
    try CompanyScenario.employee("Bob", writer).set("salary", .double(5500))
    try CompanyScenario.employee("Ada", writer).set("salary", .double(9900))
    try writer.delete(try writer.fetch("Department", where: .equals("name", .string("Research")))[0])
    let changes = try writer.save()
    #expect(changes.updated == [ada.id, bob.id])
    #expect(changes.deleted == [ObjectID(entity: "Department", primaryKey: 2), carol.id], "Carol by cascade")
    try reader.mergeChanges(changes)
    #expect(try bob.value("salary") == .double(5500), "an unchanged object is read again")
    #expect(!bob.hasChanges)
    #expect(try ada.value("name") == .string("Ada L."))
    #expect(try ada.value("salary") == .double(9900))
    #expect(ada.version == 2)
    #expect(carol.isDeleted)
    #expect(try Self.names(reader.fetch("Employee")) == ["Ada L.", "Bob"])
    try reader.save()
    #expect(try CompanyScenario.employee("Ada L.", StoreCoordinator(store: store).newContext()).version == 3)
  }

  @Test func aDuplicateOnAUniquenessConstraintIsAConflict() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext()
    let twin = try context.insert("Employee", ["name": .string("Bobby"), "email": .string("bob@acme.test")])
    let error = try #require(throws: ContextError.self) { try context.save() }
    #expect(error.code == .conflicts)
    #expect(error.conflicts.map(\.kind) == [.uniqueness])
    #expect(
      error.conflicts.first?.description
        == "a new Employee: email = \"bob@acme.test\" already belongs to Employee/p2 (uniqueness constraint (email))")
    #expect(try Self.names(StoreCoordinator(store: store).newContext().fetch("Employee")) == ["Ada", "Bob", "Carol"])
    // Object trump: the new object's values land on the existing one, which survives.
    context.mergePolicy = .mergeByPropertyObjectTrump
    try twin.set("department", to: try context.fetch("Department", where: .equals("name", .string("Research")))[0])
    let changes = try context.save()
    let bob = ObjectID(entity: "Employee", primaryKey: 2)
    #expect(changes.merged.values.map { $0 } == [bob])
    #expect(changes.updated == [bob])
    #expect(twin.mergedInto == bob)
    let fresh = StoreCoordinator(store: store).newContext()
    #expect(try Self.names(fresh.fetch("Employee")) == ["Ada", "Bobby", "Carol"])
    let stored = try fresh.object(with: bob)
    #expect(try stored.object("department")?.value("name") == .string("Research"))
    #expect(try stored.object("manager")?.value("name") == .string("Ada"), "kept: the new object had none")
    #expect(try stored.value("salary") == .double(5000), "kept: the new object's default does not erase it")
  }

  @Test func storeTrumpOnAUniquenessConflictKeepsTheExistingObject() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let context = StoreCoordinator(store: store).newContext(mergePolicy: .mergeByPropertyStoreTrump)
    let twin = try context.insert("Employee", ["name": .string("Bobby"), "email": .string("bob@acme.test")])
    let dan = try context.insert("Employee", ["name": .string("Dan")])
    try dan.set("manager", to: twin)
    try context.save()
    let fresh = StoreCoordinator(store: store).newContext()
    #expect(try Self.names(fresh.fetch("Employee")) == ["Ada", "Bob", "Carol", "Dan"])
    let danManager = try CompanyScenario.employee("Dan", fresh).committedValues?.toOne["manager"]
    #expect(
      danManager == ObjectID(entity: "Employee", primaryKey: 2),
      "references to the folded object point at the survivor")
  }

  @Test func snapshotsGoWithTheLastObjectUsingThem() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let context = coordinator.newContext()
    try context.write(employees: 2_000)
    #expect(coordinator.snapshotCount == 0, "a save keeps no snapshot of objects nobody holds")
    var fetched: [ManagedObject]? = try context.fetch("Employee")
    #expect(fetched?.count == 2_003)
    #expect(coordinator.snapshotCount == 2_003)
    let other = coordinator.newContext()
    let bob = try CompanyScenario.employee("Bob", other)
    #expect(coordinator.snapshotCount == 2_003, "two contexts holding one version share its snapshot")
    fetched = nil
    #expect(coordinator.snapshotCount == 1)
    #expect(context.registeredCount == 0)
    #expect(try bob.value("name") == .string("Bob"))
  }
}

extension ObjectContext {
  /// Inserts `count` employees and saves (and lets them go).
  func write(employees count: Int) throws {
    for index in 0..<count { try insert("Employee", ["name": .string("E\(index)"), "counter": .integer(0)]) }
    try save()
  }
}
