import Foundation
import GRDB
import LuaHost
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

// Contexts and stages at the size of real stores (issue 45). Each measure runs in its own process
// (scripts/bench starts one per measure and round), so its peak resident memory is its own.

/// One measure's JSON line.
func report(_ line: [String: Any]) throws {
  let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
  print(String(decoding: data, as: UTF8.self))
}

/// Peak resident memory of this process so far (VmHWM), MiB.
func peakMiB() -> Double {
  guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
    let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
    let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
  else { return -1 }
  return (kilobytes / 1024 * 10).rounded() / 10
}

/// The items store (`itemStore`) kept between measures: made once per size in `folder`.
func sizedItemStore(count: Int, folder: String) throws -> URL {
  let url = URL(fileURLWithPath: folder).appendingPathComponent("items-\(count).sqlite")
  if !FileManager.default.fileExists(atPath: url.path) {
    let (store, made) = try itemStore(count: count, folder: folder, name: "items-\(count)", indexedName: true)
    try store.close()
    precondition(made == url)
  }
  return url
}

/// `context-fetch COUNT FOLDER MODE`: every item of a COUNT-item store, read as
/// - `objects`: one fetch, every object held (resident bytes per object while held);
/// - `faults`: the same with `includesPropertyValues: false` (values read when touched, after);
/// - `batches`: `forEach` in batches of 1,000, each object's values read (peak resident memory);
/// - `grdb`: GRDB's fetch of the same rows into structs (the reference).
func contextFetch(count: Int, folder: String, mode: String) throws {
  let url = try sizedItemStore(count: count, folder: folder)
  struct Item: FetchableRecord {
    var key: Int64
    var n: Int64
    var name: String?
    var price: Double?
    init(row: Row) {
      key = row[0]
      n = row[1]
      name = row[2]
      price = row[3]
    }
  }
  trim()
  let baseline = residentMiB()
  let started = now()
  var made = 0
  var sink = 0.0
  switch mode {
  case "grdb":
    let queue = try DatabaseQueue(path: url.path)
    let items = try queue.read { db in try Item.fetchAll(db, sql: "SELECT Z_PK, ZN, ZNAME, ZPRICE FROM ZITEM") }
    made = items.count
    let seconds = now() - started
    let held = residentMiB()
    sink = items.reduce(0) { $0 + ($1.price ?? 0) }
    try report(line(count: made, seconds: seconds, baseline: baseline, held: held, sink: sink, mode: mode))
  case "objects", "faults":
    let store = try SQLiteStore(url: url, model: try itemModel(indexedName: true), access: .readOnly)
    let context = StoreCoordinator(store: store).newContext()
    let objects = try context.fetch("Item", matching: nil, includesPropertyValues: mode == "objects")
    made = objects.count
    let seconds = now() - started
    let held = residentMiB()
    // A fault's values are read here, after the fetch's memory and time are taken.
    let fetched = now()
    sink = objects.reduce(0) { $0 + ($1["price"]?.number ?? 0) }
    if mode == "faults" { FileHandle.standardError.write(Data("faults read in \(now() - fetched) s\n".utf8)) }
    try report(line(count: made, seconds: seconds, baseline: baseline, held: held, sink: sink, mode: mode))
    withExtendedLifetime(objects) {}
  default:
    let store = try SQLiteStore(url: url, model: try itemModel(indexedName: true), access: .readOnly)
    let context = StoreCoordinator(store: store).newContext()
    try context.forEach("Item", matching: nil, batchSize: 1000) { batch in
      made += batch.count
      for object in batch { sink += object["price"]?.number ?? 0 }
    }
    try report(
      line(count: made, seconds: now() - started, baseline: baseline, held: residentMiB(), sink: sink, mode: mode))
  }
}

private func line(count: Int, seconds: Double, baseline: Double, held: Double, sink: Double, mode: String)
  -> [String: Any]
{
  [
    "mode": mode, "objects": count, "seconds": (seconds * 1000).rounded() / 1000,
    "baseline_mib": baseline, "held_mib": held, "peak_mib": peakMiB(),
    "bytes_per_object": count > 0 ? ((held - baseline) * 1_048_576 / Double(count)).rounded() : 0,
    "sink": sink > 0,
  ]
}

/// `dedupe COUNT FOLDER MODE`: a store of COUNT items, one in ten a duplicate of another's name,
/// deduplicated by a Lua stage walking in batches (`stage`) or by one SQL statement (`sql`).
func dedupe(count: Int, folder: String, mode: String) throws {
  let url = URL(fileURLWithPath: folder).appendingPathComponent("dedupe-\(mode).sqlite")
  try? FileManager.default.removeItem(at: url)
  let (made, itemsURL) = try itemStore(count: count, folder: folder, name: "dedupe-\(mode)")
  precondition(itemsURL == url)
  try made.close()
  // One in ten items takes the name of the item before it.
  let queue = try DatabaseQueue(path: url.path)
  try queue.write { db in
    try db.execute(sql: "UPDATE ZITEM SET ZNAME = 'item ' || (Z_PK - 1) WHERE Z_PK % 10 = 0")
  }
  try queue.close()
  trim()
  let baseline = residentMiB()
  let started = now()
  if mode == "sql" {
    let queue = try DatabaseQueue(path: url.path)
    try queue.write { db in
      try db.execute(sql: "DELETE FROM ZITEM WHERE Z_PK NOT IN (SELECT MIN(Z_PK) FROM ZITEM GROUP BY ZNAME)")
    }
    try queue.close()
  } else {
    let file = URL(fileURLWithPath: folder).appendingPathComponent("A-B.stage.lua")
    try
      (ProcessInfo.processInfo.environment["DEDUPE_STAGE"] ?? """
        return { willMigrate = function(ctx)
          local last
          ctx:each("Item", nil, function(item)
            if item.name == last then ctx:delete(item) else last = item.name end
          end, { sort = { "name" }, batch = 1000, save = true })
        end }
        """).write(to: file, atomically: true, encoding: .utf8)
    // As a migration opens a stage's store: its own working file, fsynced once at the end.
    let store = try SQLiteStore(url: url, model: try itemModel(indexedName: false), access: .readWrite)
    try store.deferSyncToTheEnd()
    let step = MigrationStep(
      from: "A", to: "B", kind: .inferred, inferredMapping: nil, source: store.model, destination: store.model)
    // The default limits: a walk's budget grows with the objects it is handed (issue 72).
    _ = try LuaStage(file: file).run(
      .willMigrate, on: StoreCoordinator(store: store).newContext(), step: step)
    try store.close()
  }
  let seconds = now() - started
  let left = try DatabaseQueue(path: url.path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ZITEM") }
  try report([
    "mode": mode, "objects": count, "left": left ?? -1, "seconds": (seconds * 1000).rounded() / 1000,
    "baseline_mib": baseline, "peak_mib": peakMiB(),
  ])
  try? FileManager.default.removeItem(at: url)
}
