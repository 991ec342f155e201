import Foundation
import GRDB
import MigrunModel
import TestSupport
import Testing

@testable import MigrunStore

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

  /// The ways the schema is lost: page 1 (its root) overwritten; where `sqlite_master` has pages
  /// of its own beyond page 1 (interior, leaves, overflow), those overwritten, with page 1 too, and
  /// the file cut at the first of them.
  static func schemaLosses(of url: URL) throws -> [(name: String, bytes: [UInt8], cut: Bool)] {
    let original = Array(try Data(contentsOf: url))
    let size = SQLiteFileImage(bytes: original).pageSize
    let pages = try DatabaseQueue(path: url.path).read { db in
      try Int.fetchAll(
        db,
        sql: "SELECT pageno FROM dbstat WHERE name IN ('sqlite_master', 'sqlite_schema') AND pageno > 1 ORDER BY pageno"
      )
    }
    func overwritten(_ numbers: [Int]) -> [UInt8] {
      var bytes = original
      var generator = StoreFiller.SplitMix(seed: 1)
      for page in numbers {
        for offset in (page - 1) * size..<min(page * size, bytes.count) {
          bytes[offset] = UInt8(truncatingIfNeeded: generator.next())
        }
      }
      return bytes
    }
    var losses = [(name: "page 1 overwritten", bytes: overwritten([1]), cut: false)]
    guard let first = pages.first else { return losses }
    losses.append((name: "the schema's other pages overwritten", bytes: overwritten(pages), cut: false))
    losses.append((name: "every schema page overwritten", bytes: overwritten([1] + pages), cut: false))
    losses.append(
      (name: "cut at the schema's page \(first)", bytes: Array(original.prefix((first - 1) * size)), cut: true))
    return losses
  }

  /// Every store of `../shared` (frameworks 386 to 1523), its schema lost each way, salvaged with its
  /// model and without one: every object written holds the intact store's values one by one, none
  /// deleted before the damage comes back, and every object not written is said — set aside or lost
  /// by entity, or (the file cut) the cut named.
  @Test func schemaLossPutsNoValueInAnotherColumn() throws {
    let folder = try TemporaryDirectory()
    var written = 0
    var unwritten = 0
    var frameworks = Set<Int64>()
    var kinds = Set<String>()
    try StoreRoundTripTests.forEachFixtureStore(in: folder) { store, url, source in
      let model = source.model
      let intact = try Self.objects(of: source)
      frameworks.formUnion([try SQLiteStore.metadata(at: url).frameworkVersion].compactMap { $0 })
      try source.close()
      let bundle = try ModelBundle(
        name: "Fixture", url: url, versions: [(model.versionName ?? "Fixture", model)],
        current: model.versionName ?? "Fixture", isOrderGuessed: false)
      for loss in try Self.schemaLosses(of: url) {
        for given in [bundle, nil] {
          let label = "\(store), \(loss.name) (\(given == nil ? "no model" : "--model"))"
          guard let salvaged = try Self.salvage(loss.bytes, given: given, in: folder, label: label) else {
            continue
          }
          let counts = Self.compare(
            intact, salvaged.objects, report: salvaged.report, rowsLost: loss.cut, exact: true, model: model,
            label: label)
          written += counts.written
          unwritten += counts.unwritten
          kinds.insert(loss.name.components(separatedBy: " page").first ?? loss.name)
        }
      }
    }
    print(
      "salvage with the schema lost: \(written) objects written with the intact values, \(unwritten) said not written")
    #expect(written > 10_000)
    #expect(frameworks.contains { $0 < 1200 } && frameworks.count > 4, "\(frameworks)")
    #expect(kinds.count == 4, "\(kinds)")
  }

  /// The production schemas (real phones' stores, frameworks 1145–1340, every row deleted) filled
  /// with made-up objects of every attribute type — text columns side by side, hierarchies whose
  /// subentities share an attribute name — then their schema lost each way and salvaged with their
  /// own model: every value written is the intact store's in its own column; every object not
  /// written is said, by entity.
  @Test func filledProductionSchemasPutNoValueInAnotherColumn() throws {
    let folder = try TemporaryDirectory()
    var written = 0
    var stores = 0
    var checkNamed = 0
    var placements = Set<String>()
    let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.url("production-schemas").path)
    for name in names.sorted() where name.hasSuffix(".sqlite") {
      let url = try copyOfFixture("production-schemas/" + name, into: folder)
      let source = try SQLiteStore(url: url, model: nil, access: .readWrite)
      let model = source.model
      try StoreFiller.fill(source, with: StoreFiller.objects(for: model, perEntity: 6, seed: 11))
      let intact = try Self.objects(of: source)
      try source.close()
      try DatabaseQueue(path: url.path).writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        try db.execute(sql: "PRAGMA journal_mode = DELETE")
      }
      stores += 1
      let bundle = try ModelBundle(
        name: "Fixture", url: url, versions: [(model.versionName ?? "Fixture", model)],
        current: model.versionName ?? "Fixture", isOrderGuessed: false)
      for loss in try Self.schemaLosses(of: url) {
        let label = "\(name), \(loss.name)"
        guard let salvaged = try Self.salvage(loss.bytes, given: bundle, in: folder, label: label) else { continue }
        let counts = Self.compare(
          intact, salvaged.objects, report: salvaged.report, rowsLost: loss.cut, exact: true, model: model, label: label
        )
        written += counts.written
        checkNamed += salvaged.report.remaining.count
        // The schema lost, the report says per entity how its rows were placed (or why they were
        // set aside); found (on a page other than 1), they were placed by the store's own statement.
        let unsaid = salvaged.report.entities.filter {
          $0.value.written + $0.value.setAside > 0 && $0.value.placement == nil
        }
        #expect(
          salvaged.report.schemaFound || unsaid.isEmpty, "\(label): no placement said for \(unsaid.keys.sorted())")
        placements.formUnion(salvaged.report.entities.values.compactMap(\.placement))
      }
    }
    print("filled production schemas, schema lost: \(written) objects written with the intact values")
    #expect(stores == 15)
    // Rows no proof placed are kept aside, and check on the new store names each table of them.
    #expect(checkNamed > 0)
    #expect(placements.contains { $0.hasPrefix("placed by Core Data's column order for framework 1") }, "\(placements)")
    #expect(written > 1_000)
  }

  /// The damaged bytes salvaged as `salvage` does; nil when (no model given) the damaged file holds
  /// no model cache and salvage refuses it, naming --model — as expected.
  static func salvage(
    _ bytes: [UInt8], wal: [UInt8]? = nil, given: ModelBundle?, in folder: TemporaryDirectory, label: String
  ) throws -> (objects: [String: [Int64: StoredObject]], report: SalvageReport)? {
    let work = try folder.folder(UUID().uuidString)
    let damaged = work.appendingPathComponent("damaged.sqlite")
    try Data(bytes).write(to: damaged)
    if let wal { try Data(wal).write(to: URL(fileURLWithPath: damaged.path + "-wal")) }
    guard let (version, read) = try? Salvage.read(damaged, bundle: given) else {
      let cache = try SalvageRead(url: damaged, model: nil).cachedModel
      #expect(given == nil && cache == nil, "\(label): refused")
      return nil
    }
    let out = work.appendingPathComponent("salvaged.sqlite")
    let report = try Salvage.write(read, model: version, to: out)
    // What check still finds is the rows no proof placed, table by table: nothing else.
    #expect(
      report.remaining.allSatisfy { $0.hasPrefix("rows-set-aside: MIGRUN_SETASIDE_") }
        && report.remaining.count >= report.unplacedTables.count,
      "\(label): \(report.remaining)")
    let saved = try SQLiteStore(url: out, model: version)
    defer { try? saved.close() }
    return (try objects(of: saved), report)
  }

  /// Each object written has the intact values; none deleted before the damage is back; every
  /// object not written is said. `exact`: per entity, set aside or lost — or the file was cut and the
  /// report says so (the schema lost); else over the store, at most what is said lost or set aside (a
  /// hierarchy's lost keys are counted under its root, and keys between an unreadable page's
  /// neighbours may be objects deleted before) unless pages whose keys nothing bounds are named.
  /// `rowsLost`: a derived attribute counts what the new store holds (`Book.pagesCount` without the
  /// pages lost, as Core Data's triggers count them), and is not compared.
  static func compare(
    _ intact: [String: [Int64: StoredObject]], _ salvaged: [String: [Int64: StoredObject]], report: SalvageReport,
    rowsLost: Bool, exact: Bool, model: ObjectModel, label: String
  ) -> (written: Int, unwritten: Int) {
    var counts = (written: 0, unwritten: 0, said: 0)
    for (entity, objects) in intact {
      let kept = salvaged[entity] ?? [:]
      let revived = kept.keys.filter { objects[$0] == nil }
      #expect(revived.isEmpty, "\(label): \(revived.count) \(entity) objects deleted before the damage come back")
      let derived = model.entity(named: entity).map { model.attributes(of: $0).filter { $0.derivation != nil } } ?? []
      let compared = { (object: StoredObject?) in
        object?.attributes.filter { name, _ in !rowsLost || !derived.contains { $0.name == name } }
      }
      for (key, object) in kept where objects[key] != nil {
        #expect(compared(object) == compared(objects[key]), "\(label): \(entity) \(key) has another value")
      }
      let missing = objects.count - (kept.count - revived.count)
      let said = (report.entities[entity]?.setAside ?? 0) + (report.entities[entity]?.lost ?? 0)
      // A key the file lost has no row to tell its entity: the report counts it under the root of
      // its hierarchy, so a hierarchy's root is compared with the whole hierarchy's missing objects
      // (the file cut short: never more said than lost, the rest under the cut the report names).
      let hierarchy =
        model.entity(named: entity).map { root in
          model.entities.filter { model.root(of: $0).name == root.name }.map(\.name)
        } ?? [entity]
      let hierarchyMissing = hierarchy.reduce(0) { total, name in
        let all = intact[name] ?? [:]
        let back = (salvaged[name] ?? [:]).keys.filter { all[$0] != nil }.count
        return total + all.count - back
      }
      let hierarchySaid = hierarchy.reduce(0) {
        $0 + (report.entities[$1]?.setAside ?? 0) + (report.entities[$1]?.lost ?? 0)
      }
      let isRoot = model.entity(named: entity)?.parentName == nil && hierarchy.count > 1
      let unaccounted = report.entities[entity]?.keysUnaccounted ?? 0
      #expect(
        !exact || missing == said || (missing > said && report.pagesCutOff > 0)
          || (isRoot && report.pagesCutOff > 0 && hierarchySaid <= hierarchyMissing
            && hierarchyMissing <= hierarchySaid + unaccounted),
        "\(label): \(entity) lost \(missing), \(said) said (hierarchy \(hierarchyMissing), \(hierarchySaid), +\(unaccounted))"
      )
      counts.written += kept.count
      counts.unwritten += missing
      counts.said += said
    }
    let uncounted =
      report.pagesCutOff > 0 || report.badCells > 0 || report.unassignedRows > 0
      || report.entities.values.contains { $0.pagesLostUncounted > 0 }
    #expect(exact || counts.unwritten <= counts.said || uncounted, "\(label): \(counts) lost unsaid")
    return (counts.written, counts.unwritten)
  }
}

/// A row set aside (its columns placed by no proof) is filed under an entity only when its second
/// value — `Z_ENT` in Core Data's layout — numbers an entity stored in that very table.
@Suite struct SalvageSetAsideOwnerTests {
  @Test func aSetAsideRowIsAnEntitysOnlyWhenItsNumberNamesOneOfItsTable() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(
      "objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    var (model, read) = try Salvage.read(store, bundle: nil)
    let schema = StoreSchema(model: model)
    let own = try #require(schema.entities.first { read.tables[$0.table] != nil })
    let other = try #require(schema.entities.first { $0.table != own.table })
    read.tables[own.table]?.setAside = [
      900_001: [.null, .integer(Int64(own.number)), .integer(1)],
      900_002: [.null, .integer(Int64(other.number)), .integer(1)],
      900_003: [.integer(5), .integer(Int64(own.number)), .integer(1)],
    ]
    let report = try Salvage.write(read, model: model, to: folder.url.appendingPathComponent("out.sqlite"))
    // Its own entity's number: filed as that entity's; another table's entity's number, or a first
    // value that is not the NULL of a rowid key: filed under the table, counted as no entity's.
    #expect(report.unplacedTables["MIGRUN_SETASIDE_\(own.name.uppercased())"] == 1, "\(report.unplacedTables)")
    #expect(report.unplacedTables["MIGRUN_SETASIDE_\(own.table)"] == 2, "\(report.unplacedTables)")
    #expect(report.entities[own.name]?.setAside == 1)
    #expect((report.entities[other.name]?.setAside ?? 0) == 0)
  }

  /// The keys an unreadable range held are counted once; a range open at an end, or past the keys
  /// looked at, is said uncounted — never passed over.
  @Test func everyLostRangeIsCountedOrSaidUncounted() {
    var table = SalvageRead.Table(name: "ZITEM", columns: [], sql: nil)
    table.rowids = [3]
    table.setAside = [4: []]
    table.lostRanges = [(after: 1, upTo: 6), (after: 5, upTo: 7), (after: nil, upTo: 9), (after: 10, upTo: 2_000_010)]
    let losses = table.losses
    #expect(losses.keys == [2, 5, 6, 7])
    #expect(losses.uncountedRanges == 2)
  }
}
