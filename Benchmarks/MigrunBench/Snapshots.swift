import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore

#if canImport(Glibc)
  import Glibc
#endif

/// Snapshot release: memory after fetching `count` objects into a context and letting them go,
/// against the memory before the fetch. Prints one JSON line (MiB of resident memory).
///
/// The allocator keeps freed memory for reuse; `malloc_trim` hands it back to the system so the
/// resident size shows what the process still holds.
func snapshots(count: Int, folder: String) throws {
  let (store, url) = try itemStore(count: count, folder: folder, name: "snapshots")
  let coordinator = StoreCoordinator(store: store)
  let context = coordinator.newContext()
  _ = try context.fetch("Item", where: .equals("n", .integer(1)))  // store open, statements ready
  trim()
  let baseline = residentMiB()
  let started = now()
  var fetched: [ManagedObject]? = try context.fetch("Item")
  let fetchSeconds = now() - started
  let held = residentMiB()
  let heldSnapshots = coordinator.snapshotCount
  let fetchedCount = fetched?.count ?? 0
  fetched = nil
  trim()
  let after = residentMiB()
  let line: [String: Any] = [
    "objects": fetchedCount, "fetch_seconds": (fetchSeconds * 100).rounded() / 100,
    "baseline_mib": baseline, "held_mib": held, "after_mib": after,
    "snapshots_held": heldSnapshots, "snapshots_after": coordinator.snapshotCount,
    "registered_after": context.registeredCount,
  ]
  let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
  print(String(decoding: data, as: UTF8.self))
  try? FileManager.default.removeItem(at: url)
}

/// Resident memory in MiB, from /proc/self/statm.
func residentMiB() -> Double {
  guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
  let pages = text.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? -1
  return (pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576 * 10).rounded() / 10
}

/// glibc's `malloc_trim(0)`, looked up at run time (its header is not in Swift's Glibc module).
func trim() {
  #if canImport(Glibc)
    typealias Trim = @convention(c) (Int) -> Int32
    if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
  #endif
}

/// A store of `count` items (`n`, `name` = "item N", `price`) in `folder`, named `name`.sqlite,
/// the items' `name` fetch-indexed when `indexedName`.
func itemStore(count: Int, folder: String, name: String, indexedName: Bool = false) throws -> (SQLiteStore, URL) {
  let model = try itemModel(indexedName: indexedName)
  let url = URL(fileURLWithPath: folder).appendingPathComponent("\(name).sqlite")
  try? FileManager.default.removeItem(at: url)
  let store = try SQLiteStore.create(at: url, model: model)
  try store.write { writer in
    for index in 1...count {
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Item", primaryKey: Int64(index)),
          attributes: ["n": .integer(Int64(index)), "name": .string("item \(index)"), "price": .double(Double(index))]))
    }
    try writer.reservePrimaryKeys(for: "Item", through: Int64(count))
  }
  return (store, url)
}

/// The items' model: `n`, `name`, `price`; `name` fetch-indexed when `indexedName`.
func itemModel(indexedName: Bool) throws -> ObjectModel {
  let index =
    indexedName
    ? #"<fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>"#
    : ""
  return try XcdatamodelReader.parse(
    Data(
      """
      <model><entity name="Item">
        <attribute name="n" attributeType="Integer 64" defaultValueString="0"/>
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="price" optional="YES" attributeType="Double"/>
        \(index)
      </entity></model>
      """.utf8), file: "Items.xcdatamodel/contents")
}
