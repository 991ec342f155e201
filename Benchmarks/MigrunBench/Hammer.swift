import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore

/// One process of the two-process hammer: `rounds` increments of `counter` on every Employee of
/// the store, saved under `policy`, printed as one JSON line.
///
/// - `mergeByPropertyStoreTrump`: where another process saved first, the store's counter wins and
///   this increment is not written (the object is not in the save's `updated`); it stays owed and is
///   tried again on the fresh value. Every increment lands exactly once.
/// - `error`: each round increments every counter and saves; a conflicting save fails whole (counted,
///   rolled back, tried again on fresh values).
func hammer(store path: String, model modelPath: String, rounds: Int, policyName: String) throws {
  guard let policy = MergePolicy(name: policyName) else { throw HostFailure("unknown merge policy \(policyName)") }
  let model = try XcdatamodelReader.read(contentsOf: URL(fileURLWithPath: modelPath))
  let store = try SQLiteStore(url: URL(fileURLWithPath: path), model: model, access: .readWrite)
  let context = StoreCoordinator(store: store).newContext(mergePolicy: policy)
  var owed: [ObjectID: Int] = [:]
  var saves = 0
  var failedSaves = 0
  var conflictsReported = 0
  var attempts = 0
  let limit = rounds * 200
  func fetchFresh() throws -> [ManagedObject] {
    context.reset()
    return try context.fetch("Employee")
  }
  if case .error = policy {
    var done = 0
    while done < rounds {
      attempts += 1
      guard attempts <= limit else { throw HostFailure("gave up after \(limit) attempts") }
      for employee in try fetchFresh() {
        try employee.set("counter", .integer((employee.value("counter").integerValue ?? 0) + 1))
      }
      do {
        try context.save()
        saves += 1
        done += 1
      } catch let error as ContextError where error.code == .conflicts {
        failedSaves += 1
        conflictsReported += error.conflicts.count
        context.rollback()
      }
    }
  } else {
    for employee in try fetchFresh() { owed[employee.id] = rounds }
    while owed.values.contains(where: { $0 > 0 }) {
      attempts += 1
      guard attempts <= limit else { throw HostFailure("gave up after \(limit) attempts") }
      for employee in try fetchFresh() where (owed[employee.id] ?? 0) > 0 {
        try employee.set("counter", .integer((employee.value("counter").integerValue ?? 0) + 1))
      }
      let changes = try context.save()
      saves += 1
      for id in changes.updated { owed[id, default: 0] -= 1 }
    }
  }
  let line: [String: Any] = [
    "pid": ProcessInfo.processInfo.processIdentifier, "saves": saves, "failedSaves": failedSaves,
    "conflictsReported": conflictsReported, "attempts": attempts,
  ]
  let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
  print(String(decoding: data, as: UTF8.self))
}

struct HostFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

extension StoreValue {
  var integerValue: Int64? { if case .integer(let value) = self { value } else { nil } }
}
