import Foundation
import GRDB
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// The damage campaign (issue 46): every store of `../shared`, copies damaged in each way a real
/// file is — a page of the biggest table overwritten with garbage (a leaf, an interior page, the
/// root), the file cut short at three points, the header zeroed, a `-wal` whose last frame is torn, a
/// freelist that loops, an index page — and salvaged. Salvage never fails on them, always writes a
/// store `check` calls clean, and keeps every row whose own page (and overflow pages) the damage left
/// intact. Which rows those are the test knows from the intact file's pages, read before the damage
/// (each table's row count checked against SQLite's own first).
@Suite struct SalvageCampaignTests {
  /// Where each row of the intact store lives: table → rowid → its page and overflow pages.
  struct Layout {
    var rows: [String: [Int64: (page: Int, overflow: [Int])]] = [:]
    var roots: [String: Int] = [:]
    var indexRoots: [Int] = []
    /// Tables whose rows salvage writes under their rowid (entity tables and the store's own
    /// tables; join tables get new rowids, and Core Data's own tables are written anew).
    var keyedTables: Set<String> = []
    var pageSize = 4096
  }

  static func layout(of url: URL, model: ObjectModel) throws -> Layout {
    var layout = Layout()
    let queue = try DatabaseQueue(path: url.path)
    defer { try? queue.close() }
    let image = try SQLiteFileImage(url: url)
    layout.pageSize = image.pageSize
    let joinTables = Set(StoreSchema(model: model).tables.filter { !$0.primaryKey.isEmpty }.map(\.name))
    try queue.read { db in
      for row in try Row.fetchAll(db, sql: "SELECT type, name, rootpage FROM sqlite_master WHERE rootpage > 0") {
        let (type, name, root): (String, String, Int) = (row[0], row[1], row[2])
        if type == "index" {
          layout.indexRoots.append(root)
          continue
        }
        guard type == "table", !name.hasPrefix("sqlite_") else { continue }
        layout.roots[name] = root
        var rows: [SQLiteFileImage.Row] = []
        let scan = image.scanTable(root: root) { rows.append($0) }
        #expect(scan.unreadable.isEmpty && scan.badCells == 0, "\(url.lastPathComponent) \(name)")
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name)") ?? -1
        #expect(rows.count == count, "the page reader finds every row of \(name): \(rows.count) of \(count)")
        layout.rows[name] = Dictionary(
          rows.map { ($0.rowid, ($0.page, $0.overflow)) }, uniquingKeysWith: { first, _ in first })
        if !joinTables.contains(name), !["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains(name) {
          layout.keyedTables.insert(name)
        }
      }
    }
    return layout
  }

  /// A damaged copy and the pages the damage touched (nil: every page from there on is gone).
  struct Damage {
    var name: String
    var bytes: [UInt8]
    var wal: [UInt8]? = nil
    var damaged: Set<Int> = []
    var cutAt: Int? = nil
    /// The row a -wal's committed update changed (table, key).
    var updated: (String, Int64)? = nil
  }

  static func damages(of original: [UInt8], layout: Layout, store: URL) throws -> [Damage] {
    let size = layout.pageSize
    func overwrite(_ page: Int, _ name: String) -> Damage {
      var bytes = original
      var generator = StoreFiller.SplitMix(seed: UInt64(page))
      for offset in (page - 1) * size..<page * size { bytes[offset] = UInt8(truncatingIfNeeded: generator.next()) }
      return Damage(name: name, bytes: bytes, damaged: [page])
    }
    var damages: [Damage] = []
    // The biggest table's pages: a leaf, an interior page below the root, the root.
    // The biggest table (by rows, then name: the same one every run).
    if let (table, rows) = layout.rows.max(by: { ($0.value.count, $0.key) < ($1.value.count, $1.key) }),
      let root = layout.roots[table]
    {
      let leaves = Set(rows.values.map(\.page)).sorted()
      if let leaf = leaves.dropFirst(leaves.count / 2).first { damages.append(overwrite(leaf, "leaf of \(table)")) }
      damages.append(overwrite(root, "root of \(table)"))
      let image = SQLiteFileImage(bytes: original)
      let interior = image.scanTable(root: root).pages.subtracting(leaves).subtracting([root]).sorted()
      if let page = interior.first { damages.append(overwrite(page, "interior page of \(table)")) }
    }
    // Cut short at three points.
    let pages = original.count / size
    for fraction in [3, 2] where pages / fraction > 1 {
      let cut = pages - pages / fraction
      damages.append(
        Damage(name: "cut at page \(cut)", bytes: Array(original.prefix(cut * size + size / 3)), cutAt: cut))
    }
    damages.append(Damage(name: "cut in the last page", bytes: Array(original.dropLast(size / 2)), cutAt: pages - 1))
    // The header zeroed.
    var zeroed = original
    for offset in 0..<100 { zeroed[offset] = 0 }
    damages.append(Damage(name: "header zeroed", bytes: zeroed))
    // An index page overwritten.
    if let index = layout.indexRoots.sorted().last { damages.append(overwrite(index, "index page")) }
    damages.append(try freelistLoop(of: store))
    damages.append(try tornWAL(of: store, layout: layout))
    return damages
  }

  /// The store with a freelist (a scratch table filled and dropped) whose first trunk page then
  /// points at itself.
  static func freelistLoop(of store: URL) throws -> Damage {
    let folder = try TemporaryDirectory()
    let copy = folder.url.appendingPathComponent("free.sqlite")
    try FileManager.default.copyItem(at: store, to: copy)
    let queue = try DatabaseQueue(path: copy.path)
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA journal_mode = DELETE")
      try db.execute(sql: "CREATE TABLE JUNK (X); INSERT INTO JUNK VALUES (zeroblob(300000)); DROP TABLE JUNK")
    }
    try queue.close()
    var bytes = Array(try Data(contentsOf: copy))
    let size = Int(bytes[16]) << 8 | Int(bytes[17])
    let trunk = Int(bytes[32]) << 24 | Int(bytes[33]) << 16 | Int(bytes[34]) << 8 | Int(bytes[35])
    if trunk > 0 {
      let at = (trunk - 1) * (size == 1 ? 65536 : size)
      bytes.replaceSubrange(at..<at + 4, with: [bytes[32], bytes[33], bytes[34], bytes[35]])
    }
    return Damage(name: "freelist loop", bytes: bytes)
  }

  /// The store in WAL mode with two committed updates of one row's `Z_OPT` (+100, then +1000) in
  /// its `-wal`, the second's frame cut in half: the first update is expected, the second not.
  static func tornWAL(of store: URL, layout: Layout) throws -> Damage {
    let folder = try TemporaryDirectory()
    let copy = folder.url.appendingPathComponent("wal.sqlite")
    try FileManager.default.copyItem(at: store, to: copy)
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
    let queue = try DatabaseQueue(path: copy.path, configuration: configuration)
    try queue.writeWithoutTransaction { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
    var damage = Damage(name: "torn -wal", bytes: [])
    if let (table, rows) = layout.rows.filter({ layout.keyedTables.contains($0.key) && $0.key.hasPrefix("Z") })
      .max(by: { ($0.value.count, $0.key) < ($1.value.count, $1.key) }), let key = rows.keys.min()
    {
      for step in [100, 1000] {
        try queue.write { db in
          try db.execute(sql: "UPDATE \(table) SET Z_OPT = Z_OPT + ? WHERE Z_PK = ?", arguments: [step, key])
        }
      }
      damage.updated = (table, key)
    }
    // Copied while the connection is open: closing would checkpoint the log into the file.
    damage.bytes = Array(try Data(contentsOf: copy))
    var wal = (try? Data(contentsOf: URL(fileURLWithPath: copy.path + "-wal"))).map { Array($0) } ?? []
    if wal.count > layout.pageSize { wal.removeLast(layout.pageSize / 2) }
    damage.wal = wal
    try queue.close()
    return damage
  }

  /// What a campaign over stores found: damaged copies, rows on intact pages and those recovered,
  /// the recovered kept aside (their table's definition lost), damage kinds, objects compared.
  struct Campaign {
    var cases = 0
    var intactRows = 0
    var recoveredRows = 0
    var keptAside = 0
    var kinds = Set<String>()
    var compared = 0
  }

  @Test func everyDamagedFixtureStoreIsSalvagedWithEveryRowOnAnIntactPage() throws {
    let folder = try TemporaryDirectory()
    var campaign = Campaign()
    try StoreRoundTripTests.forEachFixtureStore(in: folder) { store, url, source in
      try Self.damage(store, at: url, source: source, in: folder, into: &campaign)
    }
    print(
      "salvage campaign: \(campaign.cases) damaged copies, \(campaign.recoveredRows) of \(campaign.intactRows) rows on "
        + "intact pages recovered (\(campaign.keptAside) of them set aside: their table's definition was on a lost page); "
        + "\(campaign.compared) objects written compared value by value with the intact store's, with the model and without"
    )
    #expect(
      campaign.cases > 150 && campaign.intactRows > 100_000, "\(campaign.cases) cases, \(campaign.intactRows) rows")
    #expect(campaign.kinds.count >= 8, "\(campaign.kinds)")
  }

  /// The production schemas (real phones' stores, frameworks 1145–1340) filled with made-up objects
  /// of every attribute type, then damaged every way the fixture stores are (issue 68): every row on
  /// an intact page recovered, every value written the intact store's, nothing lost unsaid.
  @Test func everyDamagedFilledProductionSchemaIsSalvagedWithEveryRowOnAnIntactPage() throws {
    let folder = try TemporaryDirectory()
    var campaign = Campaign()
    let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.url("production-schemas").path)
    for name in names.sorted() where name.hasSuffix(".sqlite") {
      let url = try copyOfFixture("production-schemas/" + name, into: folder)
      let filling = try SQLiteStore(url: url, model: nil, access: .readWrite)
      try StoreFiller.fill(filling, with: StoreFiller.objects(for: filling.model, perEntity: 40, seed: 13))
      try filling.close()
      try DatabaseQueue(path: url.path).writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        try db.execute(sql: "PRAGMA journal_mode = DELETE")
      }
      try Self.damage(name, at: url, source: try SQLiteStore(url: url, model: nil), in: folder, into: &campaign)
    }
    print(
      "filled production schemas damaged: \(campaign.cases) copies, \(campaign.recoveredRows) of \(campaign.intactRows) rows "
        + "on intact pages recovered; \(campaign.compared) objects compared value by value")
    #expect(campaign.cases > 60 && campaign.intactRows > 10_000, "\(campaign.cases) cases, \(campaign.intactRows) rows")
    #expect(campaign.kinds.count >= 6, "\(campaign.kinds)")
  }

  /// One store of a campaign: each damage of it salvaged, its rows on intact pages looked for, its
  /// values compared (``salvagedValues``).
  static func damage(
    _ store: String, at url: URL, source: SQLiteStore, in folder: TemporaryDirectory, into campaign: inout Campaign
  ) throws {
    let model = source.model
    let intact = try SalvageSchemaLossTests.objects(of: source)
    try source.close()
    let layout = try Self.layout(of: url, model: model)
    let original = Array(try Data(contentsOf: url))
    let bundle = try ModelBundle(
      name: "Fixture", url: url, versions: [(model.versionName ?? "Fixture", model)],
      current: model.versionName ?? "Fixture", isOrderGuessed: false)
    for damage in try Self.damages(of: original, layout: layout, store: url) {
      let work = try folder.folder(UUID().uuidString)
      let damaged = work.appendingPathComponent("damaged.sqlite")
      try Data(damage.bytes).write(to: damaged)
      if let wal = damage.wal { try Data(wal).write(to: URL(fileURLWithPath: damaged.path + "-wal")) }
      let before = try Data(contentsOf: damaged)
      let first = try SalvageRead(url: damaged, model: nil)
      let version = try Salvage.version(of: damaged, first: first, bundle: bundle)
      let read = try SalvageRead(url: damaged, model: version)
      let out = work.appendingPathComponent("salvaged.sqlite")
      let report = try Salvage.write(read, model: version, to: out)
      #expect(try Data(contentsOf: damaged) == before, "\(store), \(damage.name): the original is only read")
      #expect(
        report.remaining.allSatisfy { $0.hasPrefix("rows-set-aside: MIGRUN_SETASIDE_") }
          && report.remaining.count >= report.unplacedTables.count,
        "\(store), \(damage.name): \(report.remaining)")
      let queue = try DatabaseQueue(path: out.path)
      defer { try? queue.close() }
      for table in layout.keyedTables.sorted() {
        let expected = (layout.rows[table] ?? [:]).filter { _, place in
          ([place.page] + place.overflow).allSatisfy { page in
            !damage.damaged.contains(page) && damage.cutAt.map { page <= $0 } != false
          }
        }
        let (written, aside) = try queue.read { db -> (Set<Int64>, Set<Int64>) in
          let written =
            try db.tableExists(table) ? Set(try Int64.fetchAll(db, sql: "SELECT rowid FROM \(table)")) : []
          // A table whose definition was lost (the schema's pages cut off): its rows are placed by
          // proof under the model's layout, or kept aside with their rowids (set aside whole when
          // no order is proven, or with their pages when no table of the model is theirs).
          var aside = Set<Int64>()
          let kept = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'MIGRUN_SETASIDE_%'")
          for name in kept + ["MIGRUN_SALVAGED_ROWS"] where try db.tableExists(name) {
            aside.formUnion(try Int64.fetchAll(db, sql: "SELECT Z_ROWID FROM \(name)"))
          }
          return (written, aside)
        }
        let kept = written.union(aside)
        let isAside = !expected.keys.contains { written.contains($0) } && !expected.isEmpty
        let missing = expected.keys.filter { !kept.contains($0) }
        #expect(missing.isEmpty, "\(store), \(damage.name): \(table) lost \(missing.count) rows on intact pages")
        campaign.intactRows += expected.count
        campaign.recoveredRows += expected.count - missing.count
        if isAside { campaign.keptAside += expected.count - missing.count }
      }
      if let (table, key) = damage.updated {
        let opt = try queue.read { db in
          try Int64.fetchOne(db, sql: "SELECT Z_OPT FROM \(table) WHERE Z_PK = ?", arguments: [key])
        }
        let was = try DatabaseQueue(path: url.path).read { db in
          try Int64.fetchOne(db, sql: "SELECT Z_OPT FROM \(table) WHERE Z_PK = ?", arguments: [key])
        }
        #expect(opt == was.map { $0 + 100 }, "\(store): the -wal's committed update is read, its torn one not")
      }
      campaign.compared += try Self.salvagedValues(
        damage, of: store, intact: intact, model: model, bundle: bundle, in: folder)
      campaign.cases += 1
      campaign.kinds.insert(damage.name.split(separator: " ").prefix(2).joined(separator: " "))
    }
  }

  /// The damaged copy salvaged with the model and without: every value written is the intact
  /// store's, nothing lost unsaid (``SalvageSchemaLossTests/compare``). Returns the objects compared.
  static func salvagedValues(
    _ damage: Damage, of store: String, intact: [String: [Int64: StoredObject]], model: ObjectModel,
    bundle: ModelBundle, in folder: TemporaryDirectory
  ) throws -> Int {
    var compared = 0
    for given in [bundle, nil] {
      let label = "\(store), \(damage.name) (\(given == nil ? "no model" : "--model"))"
      guard
        let salvaged = try SalvageSchemaLossTests.salvage(
          damage.bytes, wal: damage.wal, given: given, in: folder, label: label)
      else { continue }
      compared +=
        SalvageSchemaLossTests.compare(
          intact, salvaged.objects, report: salvaged.report, rowsLost: true, exact: false, model: model, label: label
        ).written
    }
    return compared
  }

  /// Every intact store of `../shared` salvaged gives the same export (objects, keys, versions,
  /// values, links, UUID and hashes), the same `Z_PRIMARYKEY` (numbers, names — a stale name Core
  /// Data left after a rename included — supers and `Z_MAX`) and a report that nothing was lost.
  @Test func everyIntactFixtureStoreComesThroughWhole() throws {
    let folder = try TemporaryDirectory()
    var stores = 0
    try StoreRoundTripTests.forEachFixtureStore(in: folder) { store, url, source in
      let model = source.model
      let before = try StoreJSON.export(source)
      try source.close()
      let read = try SalvageRead(url: url, model: model)
      let out = try folder.folder(UUID().uuidString).appendingPathComponent("saved.sqlite")
      let report = try Salvage.write(read, model: model, to: out)
      #expect(!report.lost && report.remaining.isEmpty, "\(store): \(report.remaining)")
      let after = try StoreJSON.export(try SQLiteStore(url: out, model: model))
      let differing = zip(before.split(separator: "\n"), after.split(separator: "\n")).filter { $0 != $1 }.prefix(2)
      #expect(after == before, "\(store): \(differing)")
      let numbering = { (url: URL) in
        try DatabaseQueue(path: url.path).read { db in
          try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
            .map { "\($0[0] as Int64) \($0[1] as String) \($0[2] as Int64) \($0[3] as Int64)" }
        }
      }
      #expect(try numbering(out) == (try numbering(url)), "\(store): Z_PRIMARYKEY")
      stores += 1
    }
    #expect(stores > 20)
  }

  /// An ordered to-many whose middle member was lost: the ordering keys left are kept as stored
  /// (1, 3: Core Data orders by them and spaces them itself), the order the same; a key naming the
  /// lost member cleared and counted as missing.
  @Test func orderingKeysAreKeptAsStoredPastALostMember() throws {
    let model = try XcdatamodelReader.parse(
      Data(
        """
        <model>
          <entity name="Owner"><attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="items" optional="YES" toMany="YES" ordered="YES" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/>
            <relationship name="favourite" optional="YES" maxCount="1" destinationEntity="Item"/></entity>
          <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="owner" optional="YES" maxCount="1" destinationEntity="Owner" inverseName="items" inverseEntity="Owner"/></entity>
        </model>
        """.utf8), file: "Ordered.xcdatamodel/contents", versionName: "Ordered")
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("ordered.sqlite")
    let store = try SQLiteStore.create(at: url, model: model)
    let owner = ObjectID(entity: "Owner", primaryKey: 1)
    let items = (1...3).map { ObjectID(entity: "Item", primaryKey: Int64($0)) }
    try store.insertAll(
      [
        StoredObject(
          id: owner, attributes: ["name": .string("Ann")], toOne: ["favourite": items[1]], toMany: ["items": items])
      ]
        + items.map {
          StoredObject(id: $0, attributes: ["title": .string("item \($0.primaryKey)")], toOne: ["owner": owner])
        },
      metadata: nil)
    try store.close()
    try DatabaseQueue(path: url.path).write { db in try db.execute(sql: "DELETE FROM ZITEM WHERE Z_PK = 2") }
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let report = try Salvage.write(try SalvageRead(url: url, model: model), model: model, to: out)
    #expect(report.danglingKeysCleared == 1, "\(report)")
    #expect(report.entities["Item"]?.missing == 1 && report.remaining.isEmpty, "\(report)")
    let saved = try SQLiteStore(url: out, model: model)
    #expect(try saved.object(owner)?.toMany["items"] == [items[0], items[2]])
    let positions = try DatabaseQueue(path: out.path).read { db in
      try Int.fetchAll(db, sql: "SELECT Z_FOK_OWNER FROM ZITEM ORDER BY Z_PK")
    }
    #expect(positions == [1, 3])
  }

  /// Links to a row set aside (its columns not proven) go aside with it, as they were — the
  /// favourite's key in `MIGRUN_SETASIDE_LINKS`, the join row in `MIGRUN_SETASIDE_<JOIN TABLE>` —
  /// and are not called lost; the object is not called missing. A link to a row truly lost is.
  @Test func linksToASetAsideRowAreKeptAsideWithIt() throws {
    let model = try XcdatamodelReader.parse(
      Data(
        """
        <model>
          <entity name="Owner"><attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="favourite" optional="YES" maxCount="1" destinationEntity="Item"/>
            <relationship name="tagged" optional="YES" toMany="YES" destinationEntity="Item" inverseName="taggers" inverseEntity="Item"/></entity>
          <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="taggers" optional="YES" toMany="YES" destinationEntity="Owner" inverseName="tagged" inverseEntity="Owner"/></entity>
        </model>
        """.utf8), file: "Linked.xcdatamodel/contents", versionName: "Linked")
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("linked.sqlite")
    let store = try SQLiteStore.create(at: url, model: model)
    let items = (1...3).map { ObjectID(entity: "Item", primaryKey: Int64($0)) }
    let owners = (1...2).map { ObjectID(entity: "Owner", primaryKey: Int64($0)) }
    try store.insertAll(
      [
        StoredObject(
          id: owners[0], attributes: ["name": .string("Ann")], toOne: ["favourite": items[1]], toMany: ["tagged": items]
        ),
        StoredObject(
          id: owners[1], attributes: ["name": .string("Bo")], toOne: ["favourite": items[2]],
          toMany: ["tagged": [items[2]]]),
      ] + items.map { StoredObject(id: $0, attributes: ["title": .string("item \($0.primaryKey)")]) },
      metadata: nil)
    let item = try #require(store.schema.layout(of: "Item"))
    try store.close()
    // Item 2's row is one salvage could not place (set aside); item 3's is lost.
    let queue = try DatabaseQueue(path: url.path)
    let row = try queue.read { db in try #require(try Row.fetchOne(db, sql: "SELECT * FROM ZITEM WHERE Z_PK = 2")) }
    try queue.write { db in try db.execute(sql: "DELETE FROM ZITEM WHERE Z_PK IN (2, 3)") }
    try queue.close()
    var read = try SalvageRead(url: url, model: model)
    read.tables[item.table]?.setAside[2] =
      [.null]
      + row.databaseValues.dropFirst().map { value in
        switch value.storage {
        case .int64(let number): .integer(number)
        case .string(let text): .text(text)
        default: .null
        }
      }
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let report = try Salvage.write(read, model: model, to: out)
    #expect(report.linksSetAside == 2, "the favourite and the join row to item 2: \(report)")
    // Item 3 is named missing by each link kind that names it (Bo's favourite, the join rows), item 2
    // by none; the links lost are those to item 3 alone.
    #expect(report.entities["Item"]?.missing == 2 && report.entities["Item"]?.lost == 1, "\(report)")
    #expect(report.entities["Owner"]?.linksLost == ["favourite": 1], "\(report)")
    #expect(report.entities["Item"]?.linksLost == ["taggers": 2], "\(report)")
    let kept = try DatabaseQueue(path: out.path).read { db in
      (
        try Row.fetchAll(db, sql: "SELECT Z_TABLE, Z_PK, Z_COLUMN, Z_VALUE FROM MIGRUN_SETASIDE_LINKS")
          .map { "\($0[0] as String) \($0[1] as Int64) \($0[2] as String) \($0[3] as Int64)" },
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'MIGRUN_SETASIDE_Z%'")
      )
    }
    #expect(kept.0 == ["ZOWNER 1 ZFAVOURITE 2"], "\(kept.0)")
    #expect(kept.1.count == 1, "the join table's rows to item 2, aside: \(kept.1)")
  }

  /// A store with an R-tree fetch index: its shadow tables are the new store's own (made by its
  /// layout, filled by the triggers as the rows go in), never copied over; the index answers as before.
  @Test func anRTreeIndexIsRebuiltFromTheRowsNotCopied() throws {
    let folder = try TemporaryDirectory()
    let url = folder.url.appendingPathComponent("Notes.sqlite")
    let model = try Migrations.model(FetchIndexTests.notes(), "Notes")
    let store = try SQLiteStore.create(at: url, model: model)
    try store.write { writer in
      for key in Int64(1)...3 {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Note", primaryKey: key),
            attributes: ["latitude": .double(Double(key)), "longitude": .double(Double(key) * 2)]))
      }
    }
    try store.close()
    let before = try FetchIndexTests.rtree(url)
    let out = folder.url.appendingPathComponent("saved.sqlite")
    let report = try Salvage.write(try SalvageRead(url: url, model: model), model: model, to: out)
    #expect(!report.lost && report.remaining.isEmpty && report.otherTables.isEmpty, "\(report)")
    #expect(try FetchIndexTests.rtree(out) == before && before.count == 3)
  }

  /// SampleModel2's first store, changed by `change` behind Core Data's back, salvaged with its own
  /// model into `saved.sqlite`: the report and the new store.
  static func salvageSample(in folder: TemporaryDirectory, _ change: (Database) throws -> Void) throws -> (
    SalvageReport, URL
  ) {
    let url = try copyOfFixture("coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: folder)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
    let model = try #require(try SQLiteStore.cachedModel(at: url))
    try DatabaseQueue(path: url.path).write(change)
    let out = folder.url.appendingPathComponent("saved.sqlite")
    return (try Salvage.write(try SalvageRead(url: url, model: model), model: model, to: out), out)
  }

  /// A column the model version's table lacks (an app's `ALTER TABLE`, behind Core Data's back) is
  /// kept as the store declared it, with its values: nothing lost, the column named in the report.
  /// One SQLite will not add to a table (`UNIQUE`) is left out, and its values are counted lost.
  @Test func aColumnTheVersionLacksIsKeptWithItsValues() throws {
    let folder = try TemporaryDirectory()
    let (report, out) = try Self.salvageSample(in: folder) { db in
      try db.execute(sql: "ALTER TABLE ZBOOK ADD COLUMN ZEXTRA VARCHAR DEFAULT 'none'")
      try db.execute(sql: "UPDATE ZBOOK SET ZEXTRA = 'kept ' || Z_PK WHERE Z_PK <= 2")
    }
    #expect(report.columnsKept == ["ZBOOK.ZEXTRA"] && report.valuesLeft.isEmpty && !report.lost, "\(report)")
    let kept = try DatabaseQueue(path: out.path).read { db in
      try String.fetchAll(db, sql: "SELECT ZEXTRA FROM ZBOOK ORDER BY Z_PK")
    }
    #expect(kept.prefix(2) == ["kept 1", "kept 2"] && kept.dropFirst(2).allSatisfy { $0 == "none" }, "\(kept)")

    let other = try TemporaryDirectory()
    let (refused, _) = try Self.salvageSample(in: other) { db in
      // A column SQLite cannot add by ALTER TABLE: the table made again with it, by hand.
      try db.execute(sql: "ALTER TABLE ZBOOK RENAME TO OLDBOOK")
      let statement = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'OLDBOOK'") ?? ""
      try db.execute(
        sql: statement.replacingOccurrences(of: "OLDBOOK", with: "ZBOOK")
          .replacingOccurrences(of: "ZCOVER BLOB", with: "ZCOVER BLOB, ZCODE VARCHAR UNIQUE"))
      try db.execute(sql: "INSERT INTO ZBOOK SELECT *, 'c' || Z_PK FROM OLDBOOK")
      try db.execute(sql: "DROP TABLE OLDBOOK")
    }
    #expect(refused.columnsKept.isEmpty && refused.valuesLeft["ZBOOK.ZCODE"] ?? 0 > 0 && refused.lost, "\(refused)")
  }

  /// The store's own trigger and view on the model's tables are made again from their statements;
  /// nothing counts as lost.
  @Test func aStoresOwnTriggerAndViewAreMadeAgain() throws {
    let folder = try TemporaryDirectory()
    let (report, out) = try Self.salvageSample(in: folder) { db in
      try db.execute(sql: "CREATE VIEW MYBOOKS AS SELECT Z_PK, ZTITLE FROM ZBOOK")
      try db.execute(sql: "CREATE TRIGGER MYTOUCH AFTER UPDATE ON ZBOOK BEGIN SELECT 1; END")
    }
    #expect(Set(report.othersMade) == ["view MYBOOKS", "trigger MYTOUCH"] && !report.lost, "\(report)")
    let made = try DatabaseQueue(path: out.path).read { db in
      try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name IN ('MYBOOKS', 'MYTOUCH') ORDER BY name")
    }
    #expect(made == ["MYBOOKS", "MYTOUCH"])
  }
}
