import Foundation
import MigrunContext
import MigrunKit
import MigrunModel

/// Predicate fetches, as a custom stage makes them (one `ctx:fetch` per key looked up): `FETCHES`
/// fetches of `name == 'item N'` from a store of `COUNT` items with a fetch index on `name` — the
/// comparison tested by SQLite while it reads rows — against the same fetches written as a
/// predicate the store cannot say in SQL (`name MATCHES X`, a regular expression: every row read
/// into an object and judged), in the same process. Prints one JSON line (fetches per second, median of three).
func predicateFetch(count: Int, fetches: Int, folder: String) throws {
  let (store, url) = try itemStore(count: count, folder: folder, name: "predicate-fetch", indexedName: true)
  let context = StoreCoordinator(store: store).newContext()
  func rate(_ format: String) throws -> Double {
    var rates: [Double] = []
    for _ in 0..<3 {
      let started = now()
      for fetch in 0..<fetches {
        let name = "item \(1 + (fetch * 7919) % count)"
        let found = try context.fetch(
          "Item", matching: try FormatPredicate(format, arguments: [.string(name)]))
        precondition(found.count == 1, "\(format) found \(found.count)")
      }
      rates.append(Double(fetches) / (now() - started))
    }
    return median(rates)
  }
  let tested = try rate("name == %@")
  let judged = try rate("name MATCHES %@")
  let line: [String: Any] = [
    "objects": count, "fetches": fetches, "store_tested_per_second": (tested * 10).rounded() / 10,
    "judged_per_second": (judged * 10).rounded() / 10, "ratio": (tested / judged * 10).rounded() / 10,
  ]
  let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
  print(String(decoding: data, as: UTF8.self))
  try store.close()
  try? FileManager.default.removeItem(at: url)
}
