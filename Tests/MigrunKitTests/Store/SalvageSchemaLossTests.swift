import Foundation
import GRDB
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Salvage with the schema lost (issue 56): no value is ever placed in a column by a guess. Every
/// store of `../shared` with page 1 (the schema's root) overwritten is salvaged with its model and
/// without one (its metadata and model cache found by their content); every object written holds
/// exactly the intact store's values, and every object not written is counted as set aside.
@Suite struct SalvageSchemaLossTests {
  /// The store's objects by entity and key.
  static func objects(of store: SQLiteStore) throws -> [String: [Int64: StoredObject]] {
    var found: [String: [Int64: StoredObject]] = [:]
    for entity in store.model.entities {
      try store.forEachObject(of: entity.name, includingSubentities: false) { object in
        found[entity.name, default: [:]][object.id.primaryKey] = object
      }
    }
    return found
  }

  /// Core Data's column order as salvage derives it is the order of every fixture store's tables
  /// (frameworks 637 to 1523): the rule read from the decompilation holds on real files.
  @Test func coreDatasColumnOrderIsEveryFixtureStoresOwn() throws {
    let folder = try TemporaryDirectory()
    var tables = 0
    var differing: [String] = []
    try StoreRoundTripTests.forEachFixtureStore(in: folder) { store, url, source in
      let schema = StoreSchema(model: source.model)
      try source.close()
      let statements = try DatabaseQueue(path: url.path).read { db in
        try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table'")
          .map { (name: $0[0] as String, sql: $0[1] as String) }
      }
      for (name, sql) in statements {
        guard let table = schema.tables.first(where: { $0.name == name }),
          schema.entities.contains(where: { $0.table == name })
        else { continue }
        let placement = SalvagePlacement(table: table, schema: schema)
        tables += 1
        let own = SalvageRead.columns(of: sql)
        if placement.candidates.first != own {
          differing.append("\(store) \(name): \(placement.candidates.first ?? []) for \(own)")
        }
      }
    }
    #expect(differing.isEmpty, "\(differing)")
    #expect(tables > 40)
  }

  @Test func pageOneOverwrittenPutsNoValueInAnotherColumn() throws {
    let folder = try TemporaryDirectory()
    var written = 0
    var aside = 0
    try StoreRoundTripTests.forEachFixtureStore(in: folder) { store, url, source in
      let model = source.model
      let intact = try Self.objects(of: source)
      try source.close()
      var bytes = Array(try Data(contentsOf: url))
      let size = SQLiteFileImage(bytes: bytes).pageSize
      var generator = StoreFiller.SplitMix(seed: 1)
      for offset in 0..<min(size, bytes.count) { bytes[offset] = UInt8(truncatingIfNeeded: generator.next()) }
      let bundle = try ModelBundle(
        name: "Fixture", url: url, versions: [(model.versionName ?? "Fixture", model)],
        current: model.versionName ?? "Fixture", isOrderGuessed: false)
      for given in [bundle, nil] {
        let work = try folder.folder(UUID().uuidString)
        let damaged = work.appendingPathComponent("damaged.sqlite")
        try Data(bytes).write(to: damaged)
        let label = "\(store) (\(given == nil ? "no model" : "--model"))"
        let first = try SalvageRead(url: damaged, model: nil)
        // Without a model, a store that never had a model cache is refused, naming --model.
        guard let version = try? Salvage.version(of: damaged, first: first, bundle: given) else {
          #expect(given == nil && (try? SQLiteStore.cachedModel(at: url)) == nil, "\(label): refused")
          continue
        }
        let out = work.appendingPathComponent("salvaged.sqlite")
        let report = try Salvage.write(try SalvageRead(url: damaged, model: version), model: version, to: out)
        #expect(report.remaining.isEmpty, "\(label): \(report.remaining)")
        let saved = try SQLiteStore(url: out, model: model)
        defer { try? saved.close() }
        let salvaged = try Self.objects(of: saved)
        for (entity, objects) in intact {
          let kept = salvaged[entity] ?? [:]
          let revived = kept.keys.filter { intact[entity]?[$0] == nil }
          // The freelist's head was on page 1: leaves freed before the damage are found by their
          // trunk pages, and objects deleted before it stay deleted.
          #expect(revived.isEmpty, "\(label): \(revived.count) \(entity) objects deleted before the damage come back")
          for (key, object) in kept where intact[entity]?[key] != nil {
            #expect(
              object.attributes == intact[entity]?[key]?.attributes, "\(label): \(entity) \(key) has another value")
          }
          let missing = objects.count - (kept.count - revived.count)
          #expect(missing == report.entities[entity]?.setAside ?? 0, "\(label): \(entity) lost \(missing) unsaid")
          written += kept.count
          aside += missing
        }
      }
    }
    print("salvage with page 1 overwritten: \(written) objects written with the intact values, \(aside) set aside")
    #expect(written > 10_000)
  }
}
