import MigrunModel

/// Core Data's SQLite layout for a model: entity numbers, tables, columns, join tables and indexes,
/// named exactly as Core Data names them (SPEC §2.1). `StoreSchema+Builder.swift` holds the rules
/// and where each one comes from.
///
/// - Entities are numbered depth-first through the inheritance forest, roots and siblings by name.
/// - One table per root entity, `Z` + the uppercased name, holding its whole hierarchy
///   (`Z_PK`, `Z_ENT`, `Z_OPT`, then a column per stored property of every entity in it).
/// - A to-one relationship is a column with the destination's `Z_PK`, plus `Z<ent>_<NAME>` with its
///   `Z_ENT` when the destination has subentities and `Z_FOK_<NAME>` when the inverse is ordered.
/// - A to-many whose inverse is to-one is the inverse's column; a to-many **without** an inverse is a
///   hidden to-one on the destination's table, `Z<ent><NAME>` (Core Data's "virtual" to-one).
/// - A many-to-many relationship is a join table `Z_<ent><NAME>`.
/// - Column names are unique per table through Core Data's own scheme: the second use of a base
///   name gets `1`, the third `2`, … — join-table columns included.
///
/// A schema built for an existing store (``init(model:existing:)``) takes the names the store really
/// has where Core Data's choice depends on an order migrun cannot reproduce (which side of a
/// self-referential many-to-many names the table, which of two colliding columns got the suffix).
package struct StoreSchema: Sendable {
  /// Where one entity lives.
  package struct EntityLayout: Sendable, Hashable {
    package let name: String
    package let number: Int
    /// The parent's number, or 0.
    package let superNumber: Int
    /// The table of the entity's root.
    package let table: String
    /// The entity's number and those of all its subentities (the `Z_ENT` values of its objects).
    package let kindNumbers: [Int]
    /// Stored property name → where it is stored (declared and inherited properties).
    package let properties: [String: PropertyStorage]
  }

  /// How a property is stored.
  package enum PropertyStorage: Sendable, Hashable {
    /// An attribute's column.
    case attribute(Column)
    /// A to-one relationship's columns.
    case toOne(key: Column, entity: Column?, order: Column?)
    /// A to-many whose inverse is to-one: the inverse's column in the destination's table. For a
    /// to-many without an inverse, `inverse` names the hidden to-one Core Data adds to the
    /// destination (`"<ent><name>"`, see ``isHiddenToOne(_:)``), found in the destination's layout.
    case toManyThroughInverse(destination: String, inverse: String)
    /// A many-to-many: a join table; `ownColumn` holds this object's key, `otherColumn` the
    /// destination's, `order` (ordered relationships) the destination's position in this object's list.
    case manyToMany(table: String, ownColumn: String, otherColumn: String, order: String?)
  }

  /// Whether a layout property is the hidden to-one of a to-many without an inverse (Core Data names
  /// it `"<source entity number><relationship name>"`, which no model property can be called).
  package static func isHiddenToOne(_ name: String) -> Bool {
    name.first?.isNumber ?? false
  }

  package struct Column: Sendable, Hashable {
    package let name: String
    /// INTEGER, FLOAT, TIMESTAMP, DECIMAL, VARCHAR or BLOB, as Core Data declares them.
    package let type: String
  }

  package struct Index: Sendable, Hashable {
    package let name: String
    package let table: String
    /// Column expressions as written (`ZA`, or `ZA COLLATE BINARY ASC`).
    package let columns: [String]
    package let isUnique: Bool
    /// A partial index's condition (the rows it holds), as SQL.
    package var condition: String? = nil

    package var createStatement: String {
      "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(name) ON \(table) (\(columns.joined(separator: ", ")))"
        + (condition.map { " WHERE \($0)" } ?? "")
    }
  }

  /// An R-tree fetch index as Core Data writes it (`NSSQLRTreeIndex`, public decompilation): the
  /// virtual table `Z_<Entity>_<index>` `USING RTREE (Z_PK INTEGER PRIMARY KEY, <col>_MIN, <col>_MAX,
  /// …)` — each element one dimension, an object a point — kept current by the triggers
  /// `<name>_INSERT`, `<name>_UPDATE` and `<name>_DELETE` on the entity's table, and filled from the
  /// rows whose every indexed column is set.
  package struct RTreeIndex: Sendable, Hashable {
    package let name: String
    package let table: String
    package let columns: [String]

    var ranges: String { columns.map { "\($0)_MIN, \($0)_MAX" }.joined(separator: ", ") }
    var pairs: String { columns.map { "NEW.\($0), NEW.\($0)" }.joined(separator: ", ") }

    /// The virtual table and its triggers.
    package var createStatements: [String] {
      [
        "CREATE VIRTUAL TABLE \(name) USING RTREE (Z_PK INTEGER PRIMARY KEY, \(ranges))",
        "CREATE TRIGGER \(name)_INSERT AFTER INSERT ON \(table) FOR EACH ROW BEGIN INSERT OR REPLACE INTO \(name) (Z_PK, \(ranges)) VALUES (NEW.Z_PK, \(pairs)) ; END",
        "CREATE TRIGGER \(name)_UPDATE AFTER UPDATE ON \(table) FOR EACH ROW BEGIN DELETE FROM \(name) WHERE Z_PK = NEW.Z_PK ; INSERT INTO \(name) (Z_PK, \(ranges)) VALUES (NEW.Z_PK, \(pairs)) ; END",
        "CREATE TRIGGER \(name)_DELETE AFTER DELETE ON \(table) FOR EACH ROW BEGIN DELETE FROM \(name) WHERE Z_PK = OLD.Z_PK ; END",
      ]
    }

    /// Fills the index from the table's rows.
    package var fillStatement: String {
      "INSERT OR REPLACE INTO \(name) (Z_PK, \(ranges)) SELECT Z_PK, \(columns.map { "\($0), \($0)" }.joined(separator: ", ")) FROM \(table) WHERE \(columns.map { "\($0) NOT NULL" }.joined(separator: " AND "))"
    }

    /// The objects SQLite and Core Data make for it: the virtual table, its shadow tables and the triggers.
    package var objectNames: Set<String> {
      Set(
        [name, "\(name)_node", "\(name)_parent", "\(name)_rowid", "\(name)_INSERT", "\(name)_UPDATE", "\(name)_DELETE"]
          .map { $0.uppercased() })
    }
  }

  package struct Table: Sendable, Hashable {
    package let name: String
    package let columns: [Column]
    /// Declared primary key columns (join tables); entity tables use `Z_PK INTEGER PRIMARY KEY`.
    package let primaryKey: [String]
    /// Uniqueness constraints written in the statement, each its columns: frameworks before 847
    /// wrote `CONSTRAINT ZA_ZB UNIQUE (ZA, ZB)` where later ones write a `Z_<Entity>_UNIQUE_…`
    /// index (Moody's stores at framework 637; SampleModel's at 1044). Guess: the constraint's
    /// name is its columns joined by `_` for one column too; no store shows one.
    package var uniqueConstraints: [[String]] = []
    /// An entity table's columns in the order the hierarchy adds them, before Core Data's statement
    /// sorts them by type: the order migrun wrote tables in before it wrote Core Data's (salvage
    /// weighs it for a store whose schema is lost). Empty for a join table.
    package var columnsAsAdded: [String] = []

    package init(
      name: String, columns: [Column], primaryKey: [String], uniqueConstraints: [[String]] = [],
      columnsAsAdded: [String] = []
    ) {
      self.name = name
      self.columns = columns
      self.primaryKey = primaryKey
      self.uniqueConstraints = uniqueConstraints
      self.columnsAsAdded = columnsAsAdded
    }

    package var createStatement: String {
      var parts = columns.map { column in
        column.name == "Z_PK" && primaryKey.isEmpty ? "Z_PK INTEGER PRIMARY KEY" : "\(column.name) \(column.type)"
      }
      if !primaryKey.isEmpty { parts.append("PRIMARY KEY (\(primaryKey.joined(separator: ", ")))") }
      for constraint in uniqueConstraints {
        parts.append(
          "CONSTRAINT \(constraint.joined(separator: "_")) UNIQUE (\(constraint.joined(separator: ", ")))")
      }
      return "CREATE TABLE \(name) ( \(parts.joined(separator: ", ")) )"
    }
  }

  package let model: ObjectModel
  /// The form of the legacy indexes among ``indexes``.
  package let legacyIndexes: LegacyIndexForm
  /// Entities in number order.
  package let entities: [EntityLayout]
  package let tables: [Table]
  package let indexes: [Index]
  /// R-tree fetch indexes: virtual tables Core Data keeps current with triggers.
  package let rtreeIndexes: [RTreeIndex]
  /// What of the model a store cannot be written with as Core Data writes it, one line each
  /// (refused by ``SQLiteStore/create(at:model:metadata:)`` and by every step that writes a store).
  package let unsupported: [String]

  private let byName: [String: Int]
  /// Entity number → its position in ``entities`` (a configuration's store numbers its entities
  /// among the whole model's, so the numbers need not run from 1 without a gap).
  private let byNumber: [Int: Int]
  /// Table (as laid out, and uppercased) → the numbers of the entities stored in it (read per row:
  /// kept, not derived).
  private let numbersByTable: [String: [Int]]

  /// How a framework writes a model's legacy indexes — an attribute marked indexed and each compound
  /// index. Foreign-key indexes of to-ones, a hierarchy's `Z_ENT` index and join-table indexes keep
  /// their names in every framework.
  package enum LegacyIndexForm: Sendable, Hashable {
    /// Frameworks before 847 (iOS 10, macOS 10.12 and older): `<TABLE>_<COLUMN>_INDEX` on the
    /// column, and `<TABLE>_<COLUMN>_<COLUMN>…` for a compound index.
    case tableAndColumns
    /// Framework 847 (iOS 11, macOS 10.13) and later: fetch indexes named after their elements,
    /// `Z_<Entity>_<property>` and `Z_<Entity>_<a>_<b>`, each column `COLLATE BINARY ASC`; none for
    /// an attribute a fetch index already covers (``Builder/effectiveFetchIndexes(of:)``).
    case fetchIndexes

    /// The form the framework numbered `version` (`NSPersistenceFrameworkVersion`) writes; today's
    /// when the store does not say. Real stores show 754 writing the old form and 847 the new
    /// (`../shared/fixtures/facts/index-naming.json`); 847 is the first framework with fetch indexes
    /// (iOS 11). Guess: no framework between 755 and 846 is known to us, and they are taken as old.
    package init(framework version: Int64?) {
      self = (version ?? StoreMetadata.frameworkVersionWritten) < 847 ? .tableAndColumns : .fetchIndexes
    }
  }

  /// The layout Core Data gives a new store of `model`: today's, or the one the framework numbered
  /// `framework` gave it (for comparing a store with what the framework that wrote it writes).
  /// `numbers`: a store's own entity numbers, taken as ``init(model:existing:framework:numbers:)``
  /// takes them (a store salvaged or rewritten keeps its numbering).
  package init(model: ObjectModel, framework: Int64? = nil, numbers: [String: Int] = [:]) {
    self.init(
      model: model,
      builder: Builder(
        model: model, existing: nil, legacyIndexes: LegacyIndexForm(framework: framework), storeNumbers: numbers))
  }

  /// The layout of a new store of `model` with its legacy indexes in `legacyIndexes`' form.
  init(model: ObjectModel, legacyIndexes: LegacyIndexForm) {
    self.init(model: model, builder: Builder(model: model, existing: nil, legacyIndexes: legacyIndexes))
  }

  /// The layout of an existing store of `model`, whose tables hold `existing` columns (table name →
  /// column names, as `PRAGMA table_info` gives them). Where Core Data's naming depends on an order
  /// (see the type's notes), the store's own names are taken; anything still missing is left as the
  /// model implies, for ``mismatches(existing:)`` to report. Its indexes are those the framework
  /// numbered `framework` writes (today's when nil).
  ///
  /// Its entities carry the store's own numbers, `numbers` (`Z_PRIMARYKEY`: name → `Z_ENT`), for
  /// every entity the store names, when that leaves no two entities of the model on one number: a
  /// store numbered otherwise than Core Data numbers today (one migrun numbered in byte order
  /// before it knew Core Data's order) is read as it is, never renumbered. An entity the store
  /// does not name (renamed since) takes Core Data's number.
  package init(
    model: ObjectModel, existing: [String: [String]], framework: Int64? = nil, numbers: [String: Int] = [:]
  ) {
    self.init(
      model: model,
      builder: Builder(
        model: model, existing: Self.normalized(existing), legacyIndexes: LegacyIndexForm(framework: framework),
        storeNumbers: numbers))
  }

  private init(model: ObjectModel, builder: Builder) {
    self.model = model
    legacyIndexes = builder.legacyIndexes
    var builder = builder
    builder.build()
    entities = builder.layouts
    tables = builder.tables
    indexes = builder.indexes
    rtreeIndexes = builder.rtreeIndexes
    unsupported = builder.unsupported
    byName = Dictionary(uniqueKeysWithValues: builder.layouts.enumerated().map { ($1.name, $0) })
    byNumber = Dictionary(builder.layouts.enumerated().map { ($1.number, $0) }, uniquingKeysWith: { first, _ in first })
    // Under the name as laid out (what the readers pass, no case folding per row) and uppercased.
    var numbers = Dictionary(grouping: builder.layouts, by: { $0.table.uppercased() }).mapValues { $0.map(\.number) }
    for layout in builder.layouts { numbers[layout.table] = numbers[layout.table.uppercased()] }
    numbersByTable = numbers
  }

  package func layout(of entity: String) -> EntityLayout? {
    byName[entity].map { entities[$0] }
  }

  package func layout(number: Int) -> EntityLayout? {
    byNumber[number].map { entities[$0] }
  }

  /// The entity stored alone in `table` (a root without subentities), if it is. Core Data fetches
  /// such an entity from its table with no `Z_ENT` condition, so every row of the table is one of
  /// its objects — a row an older app version left with another entity's number included — and a
  /// migration carries it with the right number.
  package func soleEntity(ofTable table: String) -> EntityLayout? {
    guard let stored = numbersByTable[table] ?? numbersByTable[table.uppercased()], stored.count == 1 else {
      return nil
    }
    return layout(number: stored[0])
  }

  /// The one row predicate of `layout`'s objects (with its subentities' when `includingSubentities`),
  /// as Core Data fetches them: nil when that is every row of the table (the entity is alone in it,
  /// or the kinds are all the table holds), else `Z_ENT IN (…)` on `alias` when given. Every path,
  /// count and rule check selects rows through it.
  package func rowCondition(_ layout: EntityLayout, includingSubentities: Bool = true, alias: String? = nil)
    -> String?
  {
    let kinds = includingSubentities ? layout.kindNumbers : [layout.number]
    guard Set(numbersByTable[layout.table] ?? []) != Set(kinds) else { return nil }
    let column = alias.map { "\($0).Z_ENT" } ?? "Z_ENT"
    return kinds.count == 1
      ? "\(column) = \(kinds[0])" : "\(column) IN (\(kinds.map(String.init).joined(separator: ", ")))"
  }

  /// ``rowCondition(_:includingSubentities:alias:)`` as a `WHERE` clause body: `1` for every row.
  package func rowPredicate(_ layout: EntityLayout, includingSubentities: Bool = true, alias: String? = nil) -> String {
    rowCondition(layout, includingSubentities: includingSubentities, alias: alias) ?? "1"
  }

  /// Tables and columns the model implies that `existing` (table name → column names) lacks, one
  /// line each, naming the table, the column, what it stores and what the table has instead.
  package func mismatches(existing: [String: [String]]) -> [String] {
    let found = Self.normalized(existing)
    var problems: [String] = []
    for table in tables {
      guard let columns = found[table.name.uppercased()] else {
        problems.append("table \(table.name) is missing (the store has \(Self.list(found.keys)))")
        continue
      }
      let missing = table.columns.filter { !columns.contains($0.name.uppercased()) }
      guard !missing.isEmpty else { continue }
      let expected = Set(table.columns.map { $0.name.uppercased() })
      let extra = columns.subtracting(expected)
      problems.append(
        "table \(table.name) has no column \(missing.map(\.name).joined(separator: ", "))"
          + (extra.isEmpty ? "" : " (it has \(Self.list(extra)) instead)"))
    }
    return problems
  }

  /// Columns the model's tables have in `existing` that the model does not imply, by table (in
  /// name order): a column added by hand with `ALTER TABLE`, which Core Data neither reads nor
  /// writes. Tables the model does not have are not looked at.
  package func extraColumns(existing: [String: [String]]) -> [(table: String, columns: [String])] {
    let byName = Dictionary(existing.map { ($0.key.uppercased(), $0.value) }) { first, _ in first }
    return tables.sorted { $0.name < $1.name }.compactMap { table in
      let expected = Set(table.columns.map { $0.name.uppercased() })
      let extra = (byName[table.name.uppercased()] ?? []).filter { !expected.contains($0.uppercased()) }
      return extra.isEmpty ? nil : (table.name, extra.sorted())
    }
  }

  /// Table and column names uppercased (SQLite compares identifiers without case).
  private static func normalized(_ existing: [String: [String]]) -> [String: Set<String>] {
    Dictionary(existing.map { ($0.key.uppercased(), Set($0.value.map { $0.uppercased() })) }) { first, _ in first }
  }

  private static func list<S: Sequence>(_ names: S) -> String where S.Element == String {
    let sorted = names.sorted()
    return sorted.isEmpty ? "none" : sorted.joined(separator: ", ")
  }

  /// The indexes the model's legacy declarations (indexed attributes, compound indexes) got in the
  /// form before framework 847 and have under another name in this layout: what a store Core Data
  /// migrated in place keeps on a table the migration left alone, beside today's form.
  package var olderFormIndexes: [Index] {
    guard legacyIndexes == .fetchIndexes else { return [] }
    let current = Set(indexes.map { $0.name.uppercased() })
    return StoreSchema(model: model, legacyIndexes: .tableAndColumns).indexes.filter {
      !current.contains($0.name.uppercased())
    }
  }

  /// The SQL that creates the tables and indexes (not Core Data's own Z_PRIMARYKEY/Z_METADATA tables).
  package var createStatements: [String] {
    tables.map(\.createStatement) + indexes.map(\.createStatement)
  }
}

extension ObjectModel {
  /// The configuration a store of this model was written for, found from its tables: the one
  /// configuration whose tables the store holds while it holds none of the model's other tables.
  /// Nil when the store holds every table of the model, or no single configuration fits.
  public func configuration(ofStoreTables tables: Set<String>) -> String? {
    let stored = Set(tables.map { $0.uppercased() })
    let whole = Set(StoreSchema(model: self).tables.map { $0.name.uppercased() })
    guard !whole.isSubset(of: stored), wholeModel == nil else { return nil }
    var found: [String] = []
    for name in configurations.keys.sorted() {
      guard let restricted = try? restricted(toConfiguration: name) else { continue }
      let own = Set(StoreSchema(model: restricted).tables.map { $0.name.uppercased() })
      if own.isSubset(of: stored), whole.subtracting(own).isDisjoint(with: stored) { found.append(name) }
    }
    return found.count == 1 ? found[0] : nil
  }
}
