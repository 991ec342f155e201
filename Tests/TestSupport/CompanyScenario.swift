import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore

/// A company store on disk and the two-window scenario run on it.
///
/// Seeded: Acme with departments Sales and Research; Ada (Sales), Bob (Sales, manager Ada, salary
/// 5000) and Carol (Research).
public enum CompanyScenario {
  public static func seededStore(_ folder: TemporaryDirectory, name: String = "company.sqlite") throws -> SQLiteStore {
    let store = try SQLiteStore.create(
      at: folder.url.appendingPathComponent(name), model: try SampleModels.companyModel())
    let context = StoreCoordinator(store: store).newContext()
    let acme = try context.insert("Company", ["name": .string("Acme")])
    let sales = try context.insert("Department", ["name": .string("Sales")])
    let research = try context.insert("Department", ["name": .string("Research")])
    try acme.setMembers("departments", [sales, research])
    let ada = try context.insert(
      "Employee", ["name": .string("Ada"), "email": .string("ada@acme.test"), "salary": .double(9000)])
    let bob = try context.insert(
      "Employee", ["name": .string("Bob"), "email": .string("bob@acme.test"), "salary": .double(5000)])
    let carol = try context.insert(
      "Employee", ["name": .string("Carol"), "email": .string("carol@acme.test"), "salary": .double(6500)])
    try ada.set("department", to: sales)
    try bob.set("department", to: sales)
    try bob.set("manager", to: ada)
    try carol.set("department", to: research)
    try context.save()
    return store
  }

  /// Bob as stored: department and manager by name, salary, version.
  public struct Bob: Equatable, CustomStringConvertible {
    public var department: String?
    public var manager: String?
    public var salary: Double
    public var version: Int64

    public init(department: String?, manager: String?, salary: Double, version: Int64) {
      self.department = department
      self.manager = manager
      self.salary = salary
      self.version = version
    }

    public var description: String {
      "department \(department ?? "nil"), manager \(manager ?? "nil"), salary \(salary), version \(version)"
    }
  }

  /// Two windows edit Bob: the left one (merge policy error) moves him to Research and sets his
  /// salary to 6000 and saves; then the right one, under `policy`, which read Bob before, makes Carol
  /// his manager and sets his salary to 7000 and saves. Returns the right save's error, if any, and
  /// Bob as a fresh connection reads him from the file.
  public static func twoWindows(_ policy: MergePolicy, _ folder: TemporaryDirectory) throws -> (ContextError?, Bob) {
    let store = try seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    let left = coordinator.newContext()
    let right = coordinator.newContext(mergePolicy: policy)
    let bobLeft = try employee("Bob", left)
    let bobRight = try employee("Bob", right)
    try bobLeft.set("department", to: try left.fetch("Department", where: .equals("name", .string("Research")))[0])
    try bobLeft.set("salary", .double(6000))
    try left.save()
    try bobRight.set("manager", to: try employee("Carol", right))
    try bobRight.set("salary", .double(7000))
    var failure: ContextError?
    do {
      try right.save()
    } catch let error as ContextError {
      failure = error
    }
    return (failure, try storedBob(store.url))
  }

  public static func employee(_ name: String, _ context: ObjectContext) throws -> ManagedObject {
    let found = try context.fetch("Employee", where: .equals("name", .string(name)))
    guard found.count == 1 else { throw ContextError(.noSuchObject, reason: "\(found.count) employees named \(name)") }
    return found[0]
  }

  /// Bob read through a new connection to the file (nothing cached).
  public static func storedBob(_ url: URL) throws -> Bob {
    let store = try SQLiteStore(url: url, model: try SampleModels.companyModel())
    let context = StoreCoordinator(store: store).newContext()
    let bob = try employee("Bob", context)
    return Bob(
      department: try bob.object("department")?.value("name").text,
      manager: try bob.object("manager")?.value("name").text,
      salary: try bob.value("salary").number ?? .nan, version: bob.version)
  }
}

extension StoreValue {
  public var text: String? { if case .string(let text) = self { text } else { nil } }
}
