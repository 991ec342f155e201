import Foundation
import GRDB
import MigrunModel
import PropertyList

/// What salvage could read of a damaged store, before anything is written: every table's rows that
/// the file still holds — by walking each table's b-tree from its root, then by taking the table leaf
/// pages no walk reached (a broken interior page, a lost schema) and giving each to the table its
/// rows fit (`Z_ENT` for entity tables, else the column count) — and its metadata and cached model
/// where they survive.
package struct SalvageRead: Sendable {
  package struct Table: Sendable {
    package var name: String
    package var columns: [String]
    /// The `CREATE TABLE` statement the schema holds (nil when the schema was lost).
    package var sql: String?
    /// The statement read (nil when the schema was lost, or the statement is no table's definition).
    package var definition: CreateTableStatement?
    /// Each column's `DEFAULT` where it is a literal value (nil where none, or an expression, never
    /// evaluated): what SQLite reads for the columns a row was written without (`ALTER TABLE … ADD
    /// COLUMN` leaves older rows shorter).
    package var defaults: [SQLiteFileImage.Value?] = []
    /// Each column's declared SQL type (upper-cased; empty where none): the statement's, or — the
    /// schema lost — the model's.
    package var types: [String] = []
    /// The tree's readable leaves: its rows are read from them again when written (a big table's
    /// rows are never all held at once).
    package var leaves: [Int] = []
    /// Every rowid read (the tree's, then those of leaves no walk reached).
    package var rowids: Set<Int64> = []
    /// Rows of leaves no walk reached that the tree did not have (kept: they are few, or — the
    /// schema lost — every row, whose table was learned only by reading it).
    package var adopted: [Int64: [SQLiteFileImage.Value]] = [:]
    /// `Z_ENT` values the tree's rows hold (the second column of an entity table).
    package var entityNumbers: Set<Int64> = []
    /// Pages under this table's root that could not be read.
    package var unreadablePages = 0
    /// Cells on its readable pages that did not parse.
    package var badCells = 0
    /// Their keys, where the key itself reads.
    package var badKeys: Set<Int64> = []
    /// Rows found on leaves no walk reached.
    package var fromOrphanLeaves = 0
    /// Key ranges of the unreadable pages, as their parents bound them.
    package var lostRanges: [(after: Int64?, upTo: Int64?)] = []
    /// Key ranges of the tree's readable leaves, as their parents bound them.
    package var readRanges: [(after: Int64?, upTo: Int64?)] = []
    /// Rows found with the schema lost whose columns no proof placed (``SalvagePlacement``): kept
    /// whole, written to a table of their own, never into the entity's columns.
    package var setAside: [Int64: [SQLiteFileImage.Value]] = [:]

    /// What the unreadable pages' ranges lost, worked out once: the keys they hold that no row was
    /// recovered for, with the keys of cells that did not parse (rows known to have existed, in order; rows set aside are not lost), and how
    /// many ranges lost rows that are not counted — open at either end (no neighbour bounds their
    /// keys) or past the 1,000,000 keys looked at per table. A range is never passed over unsaid.
    package var losses: (keys: [Int64], uncountedRanges: Int) {
      var budget: Int64 = 1_000_000
      var lost = Set<Int64>()
      var uncounted = 0
      for range in lostRanges {
        guard let after = range.after, let upTo = range.upTo else {
          uncounted += 1
          continue
        }
        guard upTo > after else { continue }
        guard upTo - after <= budget else {
          uncounted += 1
          continue
        }
        budget -= upTo - after
        lost.formUnion((after + 1...upTo).lazy.filter { !rowids.contains($0) && setAside[$0] == nil })
      }
      // The rows whose cells did not parse (a record or overflow chain damaged), by their keys.
      lost.formUnion(badKeys.filter { !rowids.contains($0) && setAside[$0] == nil })
      return (lost.sorted(), uncounted)
    }
  }

  package var tables: [String: Table] = [:]
  /// The file as read (rows are read from its pages again when written).
  let image: SQLiteFileImage
  /// The schema's indexes (name, table, statement): those of tables other than the model's are
  /// made again for them.
  package var indexes: [(name: String, table: String, sql: String)] = []
  /// The schema's triggers, views and virtual tables (type, name, statement).
  package var others: [(type: String, name: String, sql: String)] = []
  package var metadata: StoreMetadata?
  package var cachedModel: ObjectModel?
  /// `Z_MODELCACHE`'s bytes as the store held them, when they survived and are a model.
  package var cachedModelBytes: [UInt8]?
  /// Whether `sqlite_master` was read (else tables and columns come from the model).
  package var schemaFound = false
  /// With the schema lost, how each model table's rows were placed (``SalvagePlacement/describe``),
  /// by table.
  package var placements: [String: String] = [:]
  /// Model tables whose definition the surviving schema lacks, laid out from the model.
  package var laidOutFromModel: Set<String> = []
  /// Cells on leaves no walk reached that did not parse.
  package var unassignedRows = 0
  /// With the schema lost, pages that each look like `Z_METADATA`'s whole table (``isMetadataTable``)
  /// when more than one do: none is taken for the store's metadata (0 otherwise).
  package var metadataPagesAlike = 0
  /// Rows on leaves no walk reached that fit no table: kept, set aside in `MIGRUN_SALVAGED_ROWS`.
  package var unassigned: [SQLiteFileImage.Row] = []
  /// Rows on leaves no walk reached whose keys their table's readable leaves cover without them:
  /// deleted rows (a freed page the freelist no longer names), left out as SQLite leaves them out.
  package var deletedRowsLeftOut = 0
  /// Pages of the file that no tree, overflow chain or the freelist claims and that are no leaf
  /// (overwritten pages, among them).
  package var pageCount = 0
  package var headerIntact = true
  package var walFramesApplied = 0
  /// The -wal's frames of a transaction never committed, left out as SQLite leaves them out.
  package var walFramesLeftOut: Int { image.walFramesLeftOut }
  /// The -wal's frames not read: its header does not check, as SQLite reads none of them.
  package var walFramesUnread: Int { image.walFramesUnread }
  /// Pages the header counts that the file does not hold (cut short): what they held is lost.
  package var pagesCutOff: Int { image.pagesCutOff }
  /// Pages a hot `-journal` put back: a crashed writer's uncommitted changes undone.
  package var journalPagesRolledBack = 0

  /// Recovered `Z_PRIMARYKEY.Z_MAX` by entity number.
  package var maxKeys: [Int: Int64] {
    var found: [Int: Int64] = [:]
    guard let table = tables["Z_PRIMARYKEY"], let ent = table.columns.firstIndex(of: "Z_ENT"),
      let max = table.columns.firstIndex(of: "Z_MAX")
    else { return found }
    for (rowid, values) in rows(of: table) {
      let number = ent < values.count && values[ent] != .null ? values[ent] : .integer(rowid)
      if case .integer(let entity) = number, max < values.count, case .integer(let key) = values[max] {
        found[Int(entity)] = key
      }
    }
    return found
  }

  /// Rows read in every table.
  package var rowCount: Int { tables.values.reduce(0) { $0 + $1.rowids.count } }

  /// Every row of `table`, in key order (the tree's leaves read again, then the adopted rows); a
  /// row shorter than the table has its missing columns' defaults, as SQLite reads it.
  ///
  /// A key is given once: in a sound tree the leaves' keys only rise, so none can repeat and none is
  /// remembered (at a million rows the set of keys seen was most of the time and memory); the first
  /// key that does not rise (a damaged tree) makes that set, from the leaves read until then.
  package func forEachRow(of table: Table, _ body: (Int64, [SQLiteFileImage.Value]) throws -> Void) rethrows {
    var overflow = Set<Int>()
    var last: Int64?
    var seen: Set<Int64>?
    for (leaf, page) in table.leaves.enumerated() {
      let rows = image.leafRows(page, overflow: &overflow)?.rows ?? []
      for (index, row) in rows.enumerated() {
        if seen == nil, let previous = last, row.rowid <= previous {
          seen = keys(on: table.leaves[..<leaf]).union(rows[..<index].map(\.rowid))
        }
        if seen != nil {
          // Mutated in place (optional chaining copies nothing).
          guard seen?.insert(row.rowid).inserted == true else { continue }
        } else {
          last = row.rowid
        }
        try body(row.rowid, table.completed(row.values))
      }
    }
    guard !table.adopted.isEmpty else { return }
    let known = seen ?? keys(on: table.leaves[...])
    for (rowid, values) in table.adopted.sorted(by: { $0.key < $1.key }) where !known.contains(rowid) {
      try body(rowid, table.completed(values))
    }
  }

  /// The keys of the rows on table leaves `pages`.
  private func keys(on pages: ArraySlice<Int>) -> Set<Int64> {
    var overflow = Set<Int>()
    var keys = Set<Int64>()
    for page in pages {
      for row in image.leafRows(page, overflow: &overflow)?.rows ?? [] { keys.insert(row.rowid) }
    }
    return keys
  }

  /// The rows of a small table (Core Data's own: metadata, model cache, primary keys), held.
  func rows(of table: Table) -> [(Int64, [SQLiteFileImage.Value])] {
    var rows: [(Int64, [SQLiteFileImage.Value])] = []
    forEachRow(of: table) { rows.append(($0, $1)) }
    return rows
  }
  /// Pages of tables that could not be read.
  package var unreadablePages: Int { tables.values.reduce(0) { $0 + $1.unreadablePages } }
  /// Whether anything the file held is known not to have been read.
  package var lostSomething: Bool {
    unreadablePages > 0 || unassignedRows > 0 || pagesCutOff > 0 || tables.values.contains { $0.badCells > 0 }
  }
}

extension SalvageRead.Table {
  /// `row`, read on a leaf no walk reached, taken as one of the table's.
  mutating func adopt(_ row: SQLiteFileImage.Row) {
    rowids.insert(row.rowid)
    adopted[row.rowid] = row.values
    fromOrphanLeaves += 1
  }

  /// Whether one of the tree's readable leaves is where `rowid` lives (its parent's keys bound it).
  func keepsPlace(of rowid: Int64) -> Bool {
    readRanges.contains { ($0.after.map { rowid > $0 } ?? true) && ($0.upTo.map { rowid <= $0 } ?? true) }
  }

  /// `values` with the columns a short row lacks given their defaults (nil where the table has none).
  func completed(_ values: [SQLiteFileImage.Value]) -> [SQLiteFileImage.Value] {
    guard values.count < columns.count, defaults.count == columns.count else { return values }
    return values + defaults[values.count...].map { $0 ?? .null }
  }
}

extension SQLiteFileImage.Value {
  init(_ value: DatabaseValue) {
    switch value.storage {
    case .null: self = .null
    case .int64(let number): self = .integer(number)
    case .double(let number): self = .real(number)
    case .string(let text): self = .text(text)
    case .blob(let data): self = .blob(Array(data))
    }
  }
}

extension SalvageRead {
  /// Reads what the file at `url` (with its `-wal`) still holds; `model` (the version the caller
  /// expects, when known) lays out the tables when the schema itself is lost. Only reads.
  package init(url: URL, model: ObjectModel?) throws {
    self.init(image: try SQLiteFileImage(url: url), model: model)
  }

  /// Reads what `image` still holds (see ``init(url:model:)``).
  package init(image: SQLiteFileImage, model: ObjectModel?) {
    self.image = image
    pageCount = image.pageCount
    headerIntact = image.headerIntact
    walFramesApplied = image.walFramesApplied
    journalPagesRolledBack = image.journalPagesRolledBack
    var claimed = image.freelistPages()
    let free = claimed
    // The schema: sqlite_master's tree from page 1, and rows of it on leaves no walk reaches (its
    // interior page damaged).
    var masterRows: [SQLiteFileImage.Row] = []
    let master = image.scanTable(root: 1, avoid: free) { masterRows.append($0) }
    claimed.formUnion(master.pages)
    claimed.formUnion(master.overflow)
    var overflow = Set<Int>()
    let orphanSchemaRows = image.orphanLeaves(excluding: claimed).flatMap { number in
      image.leafRows(number, overflow: &overflow)?.rows.filter(Self.isSchemaRow) ?? []
    }
    let roots = readSchema(masterRows + orphanSchemaRows)
    schemaFound = !tables.isEmpty
    if !schemaFound {
      for table in model.map({ StoreSchema(model: $0).tables }) ?? [] {
        tables[table.name] = Table(name: table.name, columns: table.columns.map(\.name), sql: nil)
        tables[table.name]?.types = table.columns.map(\.type)
      }
      // Core Data's own tables are always there: their rows are known by their content.
      for (name, columns) in Self.coreDataTables { tables[name] = Table(name: name, columns: columns, sql: nil) }
    } else if let model {
      // The schema partly lost (a page of sqlite_master cut off or overwritten): a model table whose
      // definition is gone is laid out from the model, and its rows — on leaves no tree reaches —
      // are placed by proof, as with the whole schema lost.
      let found = Set(tables.keys.map { $0.uppercased() })
      for table in StoreSchema(model: model, numbers: storeNumbers).tables
      where !found.contains(table.name.uppercased()) {
        tables[table.name] = Table(name: table.name, columns: table.columns.map(\.name), sql: nil)
        tables[table.name]?.types = table.columns.map(\.type)
        laidOutFromModel.insert(table.name)
      }
    }
    // Each table's tree.
    for (name, root) in roots.sorted(by: { $0.value < $1.value }) {
      guard var table = tables[name] else { continue }
      let isEntityTable = table.columns.dropFirst().first == "Z_ENT"
      let scan = image.scanTable(root: root, avoid: free) { row in
        table.rowids.insert(row.rowid)
        if isEntityTable, row.values.count > 1, case .integer(let number) = row.values[1] {
          table.entityNumbers.insert(number)
        }
      }
      claimed.formUnion(scan.pages)
      claimed.formUnion(scan.overflow)
      table.leaves = scan.leaves
      table.unreadablePages = scan.unreadable.subtracting(free).count
      table.badCells = scan.badCells
      table.badKeys = Set(scan.badKeys)
      table.lostRanges = scan.lostRanges
      table.readRanges = scan.readRanges
      tables[name] = table
    }
    // Freed pages keep their rows: with the header lost, the freelist is found by its trunk pages.
    claimed.formUnion(image.freelistPagesByContent(excluding: claimed))
    adoptOrphans(image, claimed: claimed, model: model)
    // The metadata first: its framework names the column order the placement proves.
    metadata = metadata(in: tables["Z_METADATA"])
    if let model, !schemaFound || !laidOutFromModel.isEmpty {
      placeBySchemaLost(model, only: schemaFound ? laidOutFromModel : nil)
    }
    (cachedModel, cachedModelBytes) = cachedModel(in: tables["Z_MODELCACHE"])
  }

  /// Whether a row is one of sqlite_master's (`type, name, tbl_name, rootpage, sql`).
  static func isSchemaRow(_ row: SQLiteFileImage.Row) -> Bool {
    guard row.values.count == 5, case .text(let type) = row.values[0], case .text = row.values[1],
      case .text = row.values[2]
    else { return false }
    return ["table", "index", "view", "trigger"].contains(type)
  }

  /// The tables (and the other tables' indexes) the schema rows name; each table's root page.
  private mutating func readSchema(_ rows: [SQLiteFileImage.Row]) -> [String: Int] {
    var roots: [String: Int] = [:]
    for row in rows where row.values.count >= 5 {
      guard case .text(let type) = row.values[0], case .text(let name) = row.values[1],
        case .text(let table) = row.values[2], case .text(let sql) = row.values[4], !name.hasPrefix("sqlite_")
      else { continue }
      if type == "index" {
        if !indexes.contains(where: { $0.name == name }) { indexes.append((name, table, sql)) }
        continue
      }
      // Triggers, views and virtual tables: made again by the writer where the new store lacks them.
      guard type == "table", !sql.uppercased().contains("VIRTUAL TABLE"), case .integer(let root) = row.values[3],
        roots[name] == nil
      else {
        if !others.contains(where: { $0.name == name }) { others.append((type, name, sql)) }
        continue
      }
      let definition = CreateTableStatement(sql: sql)
      tables[name] = Table(name: name, columns: definition?.columns.map(\.name) ?? [], sql: sql)
      tables[name]?.definition = definition
      tables[name]?.defaults = Self.defaults(of: definition)
      tables[name]?.types = definition?.columns.map(\.type) ?? []
      roots[name] = Int(root)
    }
    return roots
  }

  /// Each column's `DEFAULT` in a `CREATE TABLE` statement, where it is a literal value
  /// (``CreateTableStatement``): what SQLite reads for a column a short row lacks. Nothing of the
  /// statement is run or evaluated; a default that is an expression gives none (nil).
  package static func defaults(of sql: String, columns: [String]) -> [SQLiteFileImage.Value?] {
    let found = defaults(of: CreateTableStatement(sql: sql))
    let names = CreateTableStatement(sql: sql)?.columns.map { $0.name.uppercased() } ?? []
    let byName = Dictionary(zip(names, found), uniquingKeysWith: { first, _ in first })
    return columns.map { byName[$0.uppercased()] ?? nil }
  }

  /// Each column's literal default, in the definition's order (nil where none or an expression).
  static func defaults(of definition: CreateTableStatement?) -> [SQLiteFileImage.Value?] {
    (definition?.columns ?? []).map { column in
      if case .literal(let value)? = column.defaultValue { value } else { nil }
    }
  }

  /// With the schema lost, each model table's rows are placed by proof (``SalvagePlacement``): the
  /// column orders no row refutes; a row the orders left place alike is rewritten in the model's
  /// column order, any other set aside whole (``Table/setAside``) — never written into the entity's
  /// columns.
  private mutating func placeBySchemaLost(_ model: ObjectModel, only: Set<String>? = nil) {
    let schema = StoreSchema(model: model, numbers: storeNumbers)
    for table in schema.tables where only?.contains(table.name) ?? true {
      guard var read = tables[table.name], !read.adopted.isEmpty else { continue }
      let placement = SalvagePlacement(table: table, schema: schema)
      let orders = placement.orders(admitting: read.adopted.values)
      placements[table.name] = placement.describe(orders, framework: metadata?.frameworkVersion)
      read.columns = table.columns.map(\.name)
      for (rowid, values) in read.adopted {
        if let named = placement.place(values, orders: orders) {
          read.adopted[rowid] = read.columns.map { named[$0] ?? .null }
        } else {
          read.adopted[rowid] = nil
          read.rowids.remove(rowid)
          read.setAside[rowid] = values
        }
      }
      tables[table.name] = read
    }
  }

  /// Whether a stored value fits a column of Core Data's SQL `type`.
  static func fits(_ value: SQLiteFileImage.Value, _ type: String) -> Bool {
    switch (value, type) {
    case (.null, _): true
    case (.integer, "INTEGER"), (.integer, "FLOAT"), (.integer, "DECIMAL"), (.integer, "TIMESTAMP"): true
    case (.real, "FLOAT"), (.real, "DECIMAL"), (.real, "TIMESTAMP"): true
    case (.text, "VARCHAR"): true
    case (.blob, "BLOB"): true
    default: false
    }
  }

  /// Core Data's own tables, as laid out when the schema is lost.
  static let coreDataTables: [String: [String]] = [
    "Z_PRIMARYKEY": ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"], "Z_METADATA": ["Z_VERSION", "Z_UUID", "Z_PLIST"],
    "Z_MODELCACHE": ["Z_CONTENT"],
  ]

  /// The table leaves no walk reached, each row given to the table it fits: an entity table by its
  /// `Z_ENT` (the second column) — numbered by `model`, by the rows the table's own tree gave, or by
  /// `Z_PRIMARYKEY`'s names (`CHANGE` → `ACHANGE`) — else the one table with as many columns; rows
  /// that fit none are kept in ``unassigned``.
  private mutating func adoptOrphans(_ image: SQLiteFileImage, claimed: Set<Int>, model: ObjectModel?) {
    var overflow = Set<Int>()
    let orphans = image.orphanLeaves(excluding: claimed)
    var entityTables: [Int64: String] = [:]
    for table in tables.values {
      for number in table.entityNumbers { entityTables[number] = table.name }
    }
    for (number, name) in entityNames() {
      for table in ["Z" + name.uppercased(), "A" + name.uppercased()] where tables[table] != nil {
        entityTables[number] = entityTables[number] ?? table
      }
    }
    if let model {
      // The store's own numbering where its Z_PRIMARYKEY still names the entities: a row's Z_ENT is
      // one of the store's numbers, never Core Data's for another entity.
      for layout in StoreSchema(model: model, numbers: storeNumbers).entities {
        entityTables[Int64(layout.number)] = layout.table
      }
    }
    let metadataPage = metadataTablePage(image, among: orphans)
    for number in orphans {
      guard let (rows, bad) = image.leafRows(number, overflow: &overflow) else { continue }
      unassignedRows += bad
      if number == metadataPage, let row = rows.first {
        tables["Z_METADATA"]?.adopt(row)
        continue
      }
      for row in rows where !Self.isSchemaRow(row) {
        guard let table = home(of: row.values, entityTables: entityTables) else {
          unassigned.append(row)
          continue
        }
        // A key whose own cell did not parse: this copy may be the row or an older one (a freed
        // page) — kept whole and set aside, never placed as the row, never called deleted.
        if tables[table]?.badKeys.contains(row.rowid) == true {
          if tables[table]?.setAside[row.rowid] == nil { tables[table]?.setAside[row.rowid] = row.values }
          continue
        }
        // The table's own readable leaf is where the key lives: a copy elsewhere is a deleted row
        // (a freed page the freelist no longer names), as SQLite — which reads the tree — has it.
        if tables[table]?.keepsPlace(of: row.rowid) == true {
          deletedRowsLeftOut += 1
          continue
        }
        if tables[table]?.rowids.insert(row.rowid).inserted == true {
          tables[table]?.adopted[row.rowid] = row.values
          tables[table]?.fromOrphanLeaves += 1
        }
      }
    }
  }

  /// `Z_PRIMARYKEY`'s entity names by number.
  /// The store's own entity numbers (name → `Z_ENT`) as its recovered `Z_PRIMARYKEY` has them.
  package var storeNumbers: [String: Int] {
    Dictionary(entityNames().map { ($0.value, Int($0.key)) }, uniquingKeysWith: { first, _ in first })
  }

  private func entityNames() -> [Int64: String] {
    guard let table = tables["Z_PRIMARYKEY"], let name = table.columns.firstIndex(of: "Z_NAME") else { return [:] }
    var names: [Int64: String] = [:]
    for (rowid, values) in rows(of: table) where name < values.count {
      if case .text(let text) = values[name] { names[rowid] = text }
    }
    return names
  }

  /// The table a row found on an unclaimed leaf belongs to.
  ///
  /// An entity table's row is known by its shape first: its `Z_PK` is the table's rowid, which
  /// SQLite stores in the record as NULL. A join table's row (two keys and maybe their order) holds
  /// its first key in the record — its second number is the other object's key, never a `Z_ENT`,
  /// and it is never taken for an entity's row.
  private func home(of values: [SQLiteFileImage.Value], entityTables: [Int64: String]) -> String? {
    if !schemaFound, let own = Self.coreDataTable(holding: values) { return own }
    if values.count > 2, values[0] == .null, case .integer(let entity) = values[1],
      let table = entityTables[entity],
      tables[table]?.columns.count ?? 0 >= values.count, tables[table]?.columns.dropFirst().first == "Z_ENT"
    {
      return table
    }
    // Else the one table of no entity with as many columns whose types the values fit, the rowid
    // where the table keeps it. Core Data's own tables are known by their content alone (above):
    // with the schema lost, a row of a table the model does not name (history's
    // `ATRANSACTIONSTRING`: four values) is no `Z_PRIMARYKEY` row.
    let fitting = tables.values.filter { table in
      table.columns.count == values.count && table.columns.dropFirst().first != "Z_ENT"
        && (schemaFound || Self.coreDataTables[table.name] == nil) && fits(values, table)
        && (values.first == .null) == Self.storesRowidAsNull(table)
    }
    return fitting.count == 1 ? fitting.first?.name : nil
  }

  /// Whether the table's first column is its rowid (`INTEGER PRIMARY KEY`), stored in each record
  /// as NULL: as its statement declares, or (the schema lost) a table of Core Data's that begins
  /// with `Z_PK` or is one of its own keyed by the rowid.
  static func storesRowidAsNull(_ table: Table) -> Bool {
    if table.sql != nil {
      guard let definition = table.definition, let rowid = definition.rowidColumn else { return false }
      return definition.columns.first?.name == rowid
    }
    return table.columns.first == "Z_PK" || ["Z_PRIMARYKEY", "Z_METADATA"].contains(table.name)
  }

  /// Whether `values` fit `table`'s columns' types: with the schema lost, the model's (a join
  /// table's keys are integers); with it found, what its statement declares, as far as Core Data's
  /// column types say (an undeclared or other type admits any value).
  private func fits(_ values: [SQLiteFileImage.Value], _ table: Table) -> Bool {
    guard table.types.count == table.columns.count else { return true }
    return zip(values, table.types).allSatisfy { value, type in
      ["INTEGER", "FLOAT", "DECIMAL", "TIMESTAMP", "VARCHAR", "BLOB"].contains(type) ? Self.fits(value, type) : true
    }
  }

  /// Core Data's own table a row is known by its content to belong to, with the schema lost:
  /// `Z_PRIMARYKEY` (its rowid the entity number, name text, super and max integers), `Z_MODELCACHE`
  /// (one blob). `Z_METADATA`'s row is known by its page, never its content (``isMetadataTable``).
  static func coreDataTable(holding values: [SQLiteFileImage.Value]) -> String? {
    switch values.count {
    case 4:
      guard values[0] == .null, case .text = values[1], case .integer = values[2], case .integer = values[3] else {
        return nil
      }
      return "Z_PRIMARYKEY"
    case 1:
      guard case .blob(let bytes) = values[0], bytes.count > 16 else { return nil }
      return "Z_MODELCACHE"
    default: return nil
    }
  }

  /// With the schema lost, `Z_METADATA` is known by its table, not by a property list's look: the one
  /// page of `orphans` that is a whole table of one row shaped as Core Data's (``isMetadataTable``).
  /// Two such pages cannot be told apart: neither is taken, and ``metadataPagesAlike`` says so (an
  /// app's table of plists once gave its row as the store's metadata).
  private mutating func metadataTablePage(_ image: SQLiteFileImage, among orphans: [Int]) -> Int? {
    guard !schemaFound else { return nil }
    let pages = orphans.filter { Self.isMetadataTable(image, page: $0) }
    metadataPagesAlike = pages.count > 1 ? pages.count : 0
    return pages.count == 1 ? pages.first : nil
  }

  /// Whether table leaf `page` is, whole, Core Data's `Z_METADATA` as a table of one row: a single
  /// cell, rowid 1 (Core Data's `Z_VERSION`), its values shaped as the table's columns are declared
  /// (`Z_VERSION INTEGER PRIMARY KEY` — stored as NULL — `Z_UUID VARCHAR`, `Z_PLIST BLOB`).
  static func isMetadataTable(_ image: SQLiteFileImage, page: Int) -> Bool {
    var ignored = Set<Int>()
    guard let (rows, bad) = image.leafRows(page, overflow: &ignored), bad == 0, rows.count == 1,
      let row = rows.first, row.rowid == 1, row.values.count == 3, row.values[0] == .null,
      case .text = row.values[1], case .blob = row.values[2]
    else { return false }
    return true
  }

  /// The column names of a `CREATE TABLE` statement (constraints left out; none when it is not
  /// one table's definition).
  package static func columns(of sql: String) -> [String] {
    CreateTableStatement(sql: sql)?.columns.map(\.name) ?? []
  }

  private func metadata(in table: Table?) -> StoreMetadata? {
    guard let table, let uuidColumn = table.columns.firstIndex(of: "Z_UUID"),
      let plistColumn = table.columns.firstIndex(of: "Z_PLIST")
    else { return nil }
    for values in rows(of: table).map(\.1) where plistColumn < values.count {
      guard case .blob(let bytes) = values[plistColumn], let plist = try? PropertyListValue(decoding: bytes) else {
        continue
      }
      let uuid: String? = if uuidColumn < values.count, case .text(let text) = values[uuidColumn] { text } else { nil }
      if let metadata = try? StoreMetadata(uuid: uuid ?? UUID().uuidString, plist: plist) { return metadata }
    }
    return nil
  }

  private func cachedModel(in table: Table?) -> (ObjectModel?, [UInt8]?) {
    guard let table, let column = table.columns.firstIndex(of: "Z_CONTENT") else { return (nil, nil) }
    for values in rows(of: table).map(\.1) where column < values.count {
      if case .blob(let bytes) = values[column], let model = try? ModelCache.model(fromCompressed: bytes) {
        return (model, bytes)
      }
    }
    return (nil, nil)
  }
}
