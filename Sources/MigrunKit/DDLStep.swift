import Foundation
import MigrunModel
import MigrunStore

/// A step done in place on a copy of the store, by DDL: no row is copied. The copy (a reflink
/// clone where the file system offers one) gets `ALTER TABLE … RENAME / ADD / DROP COLUMN`, join
/// tables renamed, created or dropped, one `UPDATE` per entity filling new values (defaults, and
/// `coalesce` where an optional attribute became required), indexes dropped and created where they
/// differ, and new metadata — all in one transaction.
///
/// It applies when the step keeps every entity where it was (same names, numbers, tables and
/// hierarchy) and every row stays the row it was: attributes and relationship columns added,
/// removed or renamed, optionality changed, indexes changed, or nothing but version hashes
/// (modifiers). Anything else — entities added, removed or renamed, hierarchy changes, to-one ↔
/// to-many, a relationship pointing elsewhere, computed values, new uniqueness constraints, tables or
/// triggers the model does not declare — copies rows (``BulkCopy``) or runs object by object; the
/// reason is in ``Decision``, which `migrun plan` shows.
///
/// The result is the store the copy path writes: the same tables and columns (checked here before
/// anything runs, by playing the edits on the source layout), indexes and values. Two things differ
/// by design: columns added by `ADD COLUMN` come last in their table (Core Data reads columns by
/// name), and `Z_PRIMARYKEY.Z_MAX` keeps the source's value (the copy path lowers it to the largest
/// key present; Core Data never reuses a key either way).
struct DDLStep {
  enum Decision {
    case ddl(DDLStep)
    /// Why the step must copy rows.
    case copyRows(String)
  }

  /// Core Data's own tables, in every store beside the model's.
  static let coreDataTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

  /// Join tables of the source that no destination relationship continues.
  let droppedTables: [String]
  /// Join tables renamed: source name → destination name.
  let renamedTables: [(from: String, to: String)]
  /// Source columns no destination column continues (table named as in the destination).
  let droppedColumns: [(table: String, column: String)]
  let renamedColumns: [(table: String, from: String, to: String)]
  let addedColumns: [(table: String, column: StoreSchema.Column)]
  /// New entity and join tables.
  let createdTables: [StoreSchema.Table]
  /// New entities (numbered after the source's): rows for `Z_PRIMARYKEY`.
  let addedEntities: [StoreSchema.EntityLayout]
  /// Per entity whose rows get new values: its `COLUMN = expression` assignments and their arguments.
  let fills: [(mapping: String, entity: StoreSchema.EntityLayout, assignments: [String], arguments: [StoreValue])]
  /// Destination table → source column → destination column, for comparing indexes.
  let columnNames: [String: [String: String]]
  /// Source table → destination table (entity tables keep their names).
  let tableNames: [String: String]
  let destination: StoreSchema
  /// Persistent history's positions the step moves (``HistoryRewrite``), rewritten in the edit.
  let history: HistoryRewrite
  /// The source's R-tree fetch indexes, dropped before the edit (the destination's are built after).
  let sourceRTrees: [StoreSchema.RTreeIndex]
  /// Of ``soleEntityTables``, those (uppercased) the source was seen to hold rows with another
  /// entity's number in — found by reading the source beside the copy (``StoreMigrator``), so the
  /// edit rewrites only these instead of reading every row of every such table inside its
  /// transaction. Nil: not looked at, every such table is fixed as it is read.
  var staleEntityTables: Set<String>?

  /// Whether `mapping` can run as DDL on a store laid out as `schema` whose file holds `tables`
  /// (name → columns) and the triggers and views named in `otherObjects`.
  /// `constrained`: per table (uppercased), the columns (uppercased) a table constraint of its
  /// `CREATE TABLE` names — Core Data writes uniqueness constraints as `CONSTRAINT … UNIQUE (…)`,
  /// and `ALTER TABLE … DROP COLUMN` cannot drop such a column.
  static func decide(
    mapping: MappingModel, schema source: StoreSchema, tables: [String: [String]], otherObjects: [String],
    constrained: [String: Set<String>] = [:]
  ) -> Decision {
    let destination = StoreSchema(model: mapping.destination)
    if let why = movedEntity(source: source, destination: destination, mapping: mapping) { return .copyRows(why) }
    // Core Data's derived-attribute and R-tree triggers are rewritten for the destination; others
    // are not known.
    let rtrees = source.rtreeIndexes.reduce(into: Set<String>()) { $0.formUnion($1.objectNames) }
    if let first = otherObjects.first(where: { !$0.hasPrefix("Z_DA_") && !rtrees.contains($0.uppercased()) }) {
      return .copyRows("the store has triggers or views (\(first)) a DDL edit would have to rewrite")
    }
    do {
      _ = try DerivedAttributes.triggers(of: destination)
    } catch {
      return .copyRows(error.reason)
    }
    if let first = destination.unsupported.first { return .copyRows(first) }
    if let why = undeclaredColumn(in: tables, source: source) { return .copyRows(why) }
    if let why = rowMovingMapping(in: mapping) { return .copyRows(why) }
    var builder = Builder(mapping: mapping, source: source, destination: destination, constrained: constrained)
    return builder.build()
  }

  /// Why rows would have to move: an entity of the store removed, renamed, renumbered or moved in
  /// the hierarchy. Every row stays in its table with its Z_ENT only when each entity keeps its
  /// number, parent and table (new entities may come after them).
  static func movedEntity(source: StoreSchema, destination: StoreSchema, mapping: MappingModel) -> String? {
    for layout in source.entities {
      guard let kept = destination.layout(of: layout.name), kept.number == layout.number,
        kept.superNumber == layout.superNumber, kept.table == layout.table
      else {
        // A store numbered otherwise than Core Data numbers (one migrun wrote in byte order) is
        // said as such: its rows are written under Core Data's numbers for the destination.
        if let kept = destination.layout(of: layout.name), kept.table == layout.table,
          StoreSchema(model: mapping.source).layout(of: layout.name)?.number != layout.number
        {
          return "the store numbers entity \(layout.name) \(layout.number), where Core Data numbers it \(kept.number): "
            + "its rows are written under Core Data's numbers"
        }
        return "entity \(layout.name) is removed, renamed, renumbered or moved in the hierarchy: its rows move"
      }
    }
    return nil
  }

  /// A column of one of the model's tables that its model does not declare (a column of the store's
  /// own would be dropped by the copy path's layout, so it is left to that path's checks).
  static func undeclaredColumn(in tables: [String: [String]], source: StoreSchema) -> String? {
    let expected = Dictionary(uniqueKeysWithValues: source.tables.map { ($0.name.uppercased(), $0) })
    for (name, columns) in tables {
      let key = name.uppercased()
      guard !key.hasPrefix("SQLITE_"), !coreDataTables.contains(key) else { continue }
      // The store's own tables (persistent history, CloudKit's, an app's) stay where they are.
      guard let table = expected[key] else { continue }
      let declared = Set(table.columns.map { $0.name.uppercased() })
      if let extra = columns.first(where: { !declared.contains($0.uppercased()) }) {
        return "table \(name) has a column its model does not declare (\(extra))"
      }
    }
    return nil
  }

  /// An entity mapping a DDL edit cannot run: custom, moving objects to another entity, adding a
  /// uniqueness constraint, or changing how an attribute's values are kept.
  static func rowMovingMapping(in mapping: MappingModel) -> String? {
    for entityMapping in mapping.entityMappings {
      switch entityMapping.kind {
      case .copy, .transform: break
      case .add, .remove: continue  // entities without rows (abstract), or caught by the check above
      case .custom: return "entity mapping \(entityMapping.name) is custom"
      }
      guard entityMapping.sourceEntity == entityMapping.destinationEntity else {
        return "entity mapping \(entityMapping.name) moves objects to another entity"
      }
      guard let from = entityMapping.sourceEntity.flatMap(mapping.source.entity(named:)),
        let to = entityMapping.destinationEntity.flatMap(mapping.destination.entity(named:))
      else { return "entity mapping \(entityMapping.name) names an unknown entity" }
      guard
        BulkCopy.keepsConstraints(entityMapping, from: from, in: mapping.source, to: to, in: mapping.destination)
      else { return "\(to.name) gets a uniqueness constraint its rows may break" }
      if let attribute = ExternalData.rewrittenAttribute(
        entityMapping, from: from, in: mapping.source, to: to, in: mapping.destination)
      {
        return "\(to.name).\(attribute) changes how its values are kept (external binary storage)"
      }
    }
    return nil
  }

  /// The decision for the step `mapping` on a store migrun wrote: laid out as a new store of the
  /// step's source version, nothing else in it (what `migrun plan` assumes for steps after the first).
  static func decide(mapping: MappingModel) -> Decision {
    let schema = StoreSchema(model: mapping.source)
    var tables = Dictionary(uniqueKeysWithValues: schema.tables.map { ($0.name, $0.columns.map(\.name)) })
    for table in coreDataTables { tables[table] = [] }
    return decide(mapping: mapping, schema: schema, tables: tables, otherObjects: [])
  }

  /// The decision for the step `mapping` on the store `store` (its layout and file as they are).
  static func decide(mapping: MappingModel, store: SQLiteStore) throws -> Decision {
    let others = try store.triggerAndViewNames()
    var constrained: [String: Set<String>] = [:]
    for (name, sql) in try store.tableStatements() {
      constrained[name.uppercased()] = tableConstraintColumns(sql)
    }
    return decide(
      mapping: mapping, schema: store.schema, tables: store.storedTables, otherObjects: others,
      constrained: constrained)
  }

  /// The columns (uppercased) named by the table constraints (`UNIQUE (…)`, `PRIMARY KEY (…)`,
  /// `CHECK (…)`) of a `CREATE TABLE` statement.
  static func tableConstraintColumns(_ sql: String) -> Set<String> {
    // In bytes, each part of the statement read once: the statement is the file's (outside input),
    // and one of a megabyte repeating `CHECK (` in a string literal took a search per keyword to
    // the end of the text (hours).
    let upper = Array(sql.uppercased().utf8)
    var columns: Set<String> = []
    for keyword in ["UNIQUE", "PRIMARY KEY", "CHECK"].map({ Array($0.utf8) }) {
      var index = 0
      // Where the last list read closed: a keyword inside it names a part of the same list.
      var readTo = 0
      while index + keyword.count <= upper.count {
        guard upper[index..<index + keyword.count].elementsEqual(keyword) else {
          index += 1
          continue
        }
        index += keyword.count
        var open = index
        while open < upper.count, [0x20, 0x09, 0x0A].contains(upper[open]) { open += 1 }
        guard open < upper.count, upper[open] == UInt8(ascii: "("), open >= readTo else { continue }
        guard let close = upper[open...].firstIndex(of: UInt8(ascii: ")")) else { break }
        readTo = close
        let inside = String(decoding: upper[(open + 1)..<close], as: UTF8.self)
        for part in inside.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }) {
          columns.insert(String(part))
        }
      }
    }
    return columns
  }

  // MARK: - Running

  /// The tables whose rows the edit rewrites (SQLite rewrites a table to drop a column). No other
  /// statement of the edit inserts or deletes a row of a table it keeps, or writes a key or join
  /// column: it renames tables and columns, adds columns, fills new attributes and fixes stale
  /// `Z_ENT`s — so every other kept table holds the rows and links it held (``Conservation``
  /// counts only these again).
  var rewrittenTables: Set<String> { Set(droppedColumns.map { $0.table.uppercased() }) }

  /// The tables an entity has alone (as the destination lays them out), with its number: rows
  /// there with another number are given it by the edit.
  var soleEntityTables: [(table: String, number: Int)] {
    destination.entities.filter { destination.soleEntity(ofTable: $0.table) == $0 }.map { ($0.table, $0.number) }
  }

  /// The destination's tables (uppercased) the edit neither rewrites nor creates: they must come out
  /// with the rows and key columns the source held — checked as the edit runs (`StoreEdit.KeptRows`), so a
  /// count after the step has nothing to find in them.
  var untouchedTables: Set<String> {
    Set(destination.tables.map { $0.name.uppercased() }).subtracting(rewrittenTables)
      .subtracting(createdTables.map { $0.name.uppercased() })
  }

  /// Per table (uppercased), the columns that hold identity and links: `Z_PK`, `Z_ENT` where the
  /// table holds several entities (it says which object is which), every to-one's key, entity and
  /// order columns, every column of a join table. (`Z_ENT` of a table one entity has alone is what
  /// the edit fixes in stale rows.)
  var keyColumns: [String: Set<String>] {
    var keys: [String: Set<String>] = [:]
    for layout in destination.entities {
      let table = layout.table.uppercased()
      keys[table, default: []].insert("Z_PK")
      if destination.soleEntity(ofTable: layout.table) == nil { keys[table, default: []].insert("Z_ENT") }
      for case .toOne(let key, let entity, let order) in layout.properties.values {
        keys[table, default: []].formUnion([key, entity, order].compactMap { $0?.name.uppercased() })
      }
    }
    for table in destination.tables where table.primaryKey.count == 2 {
      keys[table.name.uppercased()] = Set(table.columns.map { $0.name.uppercased() })
    }
    return keys
  }

  /// Edits the store at `url` (migrun's own copy, with no sidecars) into the destination layout and
  /// writes `metadata`. One transaction; on any error the copy is to be thrown away.
  /// `whileEditing`: run inside the edit's transaction, before it commits (tests damage the edit
  /// with it, as a faulty statement would).
  /// Returns what it rewrote in persistent history.
  @discardableResult
  func run(
    on url: URL, metadata: StoreMetadata, progress: (MigrationProgress) -> Void,
    whileEditing: ((StoreEdit) throws -> Void)? = nil
  ) throws -> HistoryRewritten {
    let modelCache = try destination.model.modelCache()
    do {
      return try StoreEdit.editFile(at: url, keeping: .init(untouched: untouchedTables, keys: keyColumns)) { store in
        let history = try edit(store, metadata: metadata, modelCache: modelCache, progress: progress)
        try whileEditing?(store)
        return history
      }
    } catch let error as StoreEdit.KeptRowsWritten {
      throw MigrationError(
        .validation,
        reason:
          "the step's DDL edit would change rows it must keep ("
          + error.written.sorted { $0.key < $1.key }.map { "\($0.value) row\($0.value == 1 ? "" : "s") \($0.key)" }
          .joined(separator: ", ")
          + "): the step would lose objects or relationships; the store is unchanged")
    } catch let error as StoreError {
      throw error
    } catch let error as MigrationError {
      throw error
    } catch {
      throw StoreError(
        .sqlite, file: url.lastPathComponent, reason: "the DDL edit failed (\(error))", underlying: error)
    }
  }

  /// The edit, inside its transaction: Core Data's derived-attribute triggers and R-tree indexes
  /// dropped, the tables and columns edited and filled, indexes, triggers and R-trees made the
  /// destination's, persistent history rewritten, the metadata and model cache written.
  private func edit(
    _ store: StoreEdit, metadata: StoreMetadata, modelCache: [UInt8], progress: (MigrationProgress) -> Void
  ) throws -> HistoryRewritten {
    // Core Data's derived-attribute triggers go first (they name columns the edits change)
    // and come back as the destination's at the end.
    try store.dropDerivedAttributeTriggers()
    // Core Data's R-tree indexes likewise: dropped, and built again from the edited rows.
    for index in sourceRTrees { try store.dropRTree(index) }
    let kept = try editTables(store, progress: progress)
    for index in destination.indexes where !kept.contains(index.name.uppercased()) {
      try store.createIndex(index)
    }
    try store.installDerivedAttributesAndRTrees(destination)
    let history = try store.hasTable("ACHANGE") ? try self.history.apply(store) : HistoryRewritten()
    try store.setMetadata(metadata)
    // The cache describes the store's model, now the destination.
    try store.setModelCache(modelCache)
    return history
  }

  /// Tables and columns dropped, renamed, added and created, new entities numbered, rows of an
  /// entity alone in its table given its number, new values filled. Returns the indexes kept.
  private func editTables(_ store: StoreEdit, progress: (MigrationProgress) -> Void) throws -> Set<String> {
    let kept = try dropChangedIndexes(store)
    for table in droppedTables { try store.dropTable(table) }
    try store.renameTables(renamedTables)
    for (table, column) in droppedColumns { try store.dropColumn(column, of: table) }
    try store.renameColumns(renamedColumns)
    for (table, column) in addedColumns { try store.addColumn(column, to: table) }
    for table in createdTables { try store.createTable(table) }
    for layout in addedEntities { try store.addEntityKey(layout) }
    // Rows an older app version left with another entity's number in a table its entity is
    // alone in are that entity's objects (Core Data fetches them): they get its number, as
    // the copy path writes them. A table the source was read to have none of is left alone (the
    // copy holds the source's rows: the statement would change nothing).
    for layout in destination.entities where destination.soleEntity(ofTable: layout.table) == layout {
      guard staleEntityTables?.contains(layout.table.uppercased()) ?? true else { continue }
      try store.claimRows(for: layout)
    }
    for fill in fills {
      let rows = try store.fill(fill.entity, of: destination, assignments: fill.assignments, arguments: fill.arguments)
      progress(MigrationProgress(stage: .instances, mapping: fill.mapping, done: rows, total: rows))
    }
    return kept
  }

  /// The destination's tables whose columns the edit leaves exactly as they are: the untouched ones
  /// (``untouchedTables``) without a column renamed or added, not renamed themselves.
  var tablesLeftAlone: Set<String> {
    let changed = renamedColumns.map(\.table) + addedColumns.map(\.table) + renamedTables.map(\.to)
    return untouchedTables.subtracting(changed.map { $0.uppercased() })
  }

  /// Drops every index of the source that the destination does not have exactly (same name, table,
  /// uniqueness and columns after the renames); returns the kept indexes' names, uppercased. On a
  /// table the edit leaves alone, an index of the form before framework 847 that the destination's
  /// declarations still call for stays too, as Core Data keeps it beside today's form when it
  /// migrates a store in place (`../shared/fixtures/facts/index-naming.json`, framework 847).
  private func dropChangedIndexes(_ store: StoreEdit) throws -> Set<String> {
    let leftAlone = tablesLeftAlone
    let older = destination.olderFormIndexes.filter { leftAlone.contains($0.table.uppercased()) }
    let wanted = Dictionary(
      (destination.indexes + older).map { index in
        (index.name.uppercased(), Self.shape(table: index.table, unique: index.isUnique, columns: index.columns))
      }, uniquingKeysWith: { first, _ in first })
    var kept: Set<String> = []
    let modelTables = Set(
      (Array(tableNames.keys) + droppedTables + destination.tables.map(\.name)).map { $0.uppercased() })
    for (name, sourceTable) in try store.indexNames() {
      // Indexes of the store's own tables (persistent history's, an app's) stay as they are.
      guard modelTables.contains(sourceTable.uppercased()) else { continue }
      let index = try store.index(name, of: sourceTable)
      let table = tableNames[index.table.uppercased()] ?? index.table
      let renames = columnNames[table.uppercased()] ?? [:]
      var described: [String] = []
      // A partial index's condition names columns too: such an index is rebuilt.
      var complete = !index.isPartial
      for column in index.columns {
        // An expression column has no name: such an index is rebuilt.
        guard let source = column.name, let target = renames[source.uppercased()] else {
          complete = false
          break
        }
        described.append(
          "\(target.uppercased()) \(column.collation.uppercased()) \(column.descending ? "DESC" : "ASC")")
      }
      if complete, wanted[index.name.uppercased()] == "\(table.uppercased()) \(index.isUnique) \(described)" {
        kept.insert(index.name.uppercased())
      } else {
        try store.dropIndex(index.name)
      }
    }
    return kept
  }

  /// An index's table, uniqueness and columns (`ZA COLLATE BINARY ASC` → `ZA BINARY ASC`), comparable
  /// with what `pragma_index_xinfo` tells of an existing one.
  static func shape(table: String, unique: Bool, columns: [String]) -> String {
    let described = columns.map { expression -> String in
      let words = expression.split(separator: " ").map { $0.uppercased() }
      var collation = "BINARY"
      if let at = words.firstIndex(of: "COLLATE"), at + 1 < words.count { collation = words[at + 1] }
      let descending = words.dropFirst().contains("DESC")
      return "\(words.first ?? "") \(collation) \(descending ? "DESC" : "ASC")"
    }
    return "\(table.uppercased()) \(unique) \(described)"
  }
}

extension DDLStep {
  /// Works out, column by column, where each destination column comes from, then plays the edits on
  /// the source layout and checks that they give the destination's.
  fileprivate struct Builder {
    let mapping: MappingModel
    let source: StoreSchema
    let destination: StoreSchema
    /// Destination table (uppercased) → destination column (uppercased) → source column, or nil for a new one.
    var origins: [String: [String: String?]] = [:]
    /// Destination join table (uppercased) → its source table, or nil for a new one.
    var joinOrigins: [String: String?] = [:]
    /// Per destination entity number: assignments and arguments of its fill.
    var fills: [Int: (mapping: String, assignments: [String], arguments: [StoreValue])] = [:]

    let constrained: [String: Set<String>]

    init(mapping: MappingModel, source: StoreSchema, destination: StoreSchema, constrained: [String: Set<String>]) {
      self.mapping = mapping
      self.source = source
      self.destination = destination
      self.constrained = constrained
    }

    /// Records that destination `column` of `table` continues `origin` (nil: new); false when
    /// another mapping said otherwise.
    private mutating func claim(_ table: String, _ column: String, _ origin: String?) -> Bool {
      let (table, column) = (table.uppercased(), column.uppercased())
      if let existing = origins[table]?[column] { return existing == origin?.uppercased() }
      origins[table, default: [:]][column] = .some(origin?.uppercased())
      return true
    }

    /// Records a new column unless a mapping already said where it comes from.
    private mutating func claimIfFree(_ table: String, _ column: String) {
      if origins[table.uppercased()]?[column.uppercased()] == nil { _ = claim(table, column, nil) }
    }

    mutating func build() -> Decision {
      for table in destination.tables where !isJoin(table.name) {
        for column in ["Z_PK", "Z_ENT", "Z_OPT"] { _ = claim(table.name, column, column) }
      }
      for entityMapping in mapping.entityMappings where [.copy, .transform].contains(entityMapping.kind) {
        guard let name = entityMapping.destinationEntity, let from = source.layout(of: name),
          let to = destination.layout(of: name)
        else { return .copyRows("entity mapping \(entityMapping.name) names an unknown entity") }
        if let reason = map(entityMapping, from: from, to: to) { return .copyRows(reason) }
      }
      // A new entity's own columns (and join tables) are new; inherited ones are its parent's.
      for layout in destination.entities where source.layout(of: layout.name) == nil {
        for storage in layout.properties.values {
          switch storage {
          case .attribute(let column): claimIfFree(layout.table, column.name)
          case .toOne(let key, let entity, let order):
            for column in [key, entity, order].compactMap({ $0 }) { claimIfFree(layout.table, column.name) }
          case .manyToMany(let table, let own, let other, let order):
            let key = table.uppercased()
            if joinOrigins[key] == nil { joinOrigins[key] = .some(nil) }
            for column in [own, other, order].compactMap({ $0 }) { claimIfFree(table, column) }
          case .toManyThroughInverse: break
          }
        }
      }
      return assemble()
    }

    private func isJoin(_ table: String) -> Bool {
      !destination.entities.contains { $0.table.uppercased() == table.uppercased() }
    }

    /// The source relationship a destination relationship (or hidden to-one, `<n><name>`) continues.
    private func origin(of property: String, in entityMapping: EntityMapping) -> String? {
      guard StoreSchema.isHiddenToOne(property) else { return entityMapping.relationships[property] }
      // A to-many without inverse of entity n: its owner's mapping names the source relationship.
      let digits = property.prefix { $0.isNumber }
      let name = String(property.dropFirst(digits.count))
      guard let number = Int(digits), let owner = destination.layout(number: number) else { return nil }
      for other in mapping.entityMappings {
        guard let entity = other.destinationEntity, let layout = destination.layout(of: entity),
          owner.kindNumbers.contains(layout.number), let old = other.relationships[name]
        else { continue }
        return "\(number)\(old)"
      }
      return nil
    }

    private mutating func map(
      _ entityMapping: EntityMapping, from: StoreSchema.EntityLayout, to: StoreSchema.EntityLayout
    ) -> String? {
      var assignments: [String] = []
      var arguments: [StoreValue] = []
      for (name, storage) in to.properties.sorted(by: { $0.key < $1.key }) {
        let refusal: String?
        switch storage {
        case .attribute(let column):
          refusal = mapAttribute(
            name, column, entityMapping, from: from, to: to, assignments: &assignments, arguments: &arguments)
        case .toOne(let key, let entityColumn, let order):
          refusal = mapToOne(name, key, entityColumn, order, entityMapping, from: from, to: to)
        case .toManyThroughInverse:
          guard let old = origin(of: name, in: entityMapping) else { continue }
          guard case .toManyThroughInverse? = from.properties[old], sameDestination(name, old, of: to.name) else {
            return "\(to.name).\(name) changes between to-many and many-to-many or to-one"
          }
          refusal = nil
        case .manyToMany(let joinTable, let own, let other, let order):
          refusal = mapManyToMany(name, joinTable, [own, other, order], entityMapping, from: from, to: to)
        }
        if let refusal { return refusal }
      }
      if !assignments.isEmpty { fills[to.number] = (entityMapping.name, assignments, arguments) }
      return nil
    }

    /// An attribute's column: where it comes from, and what fills it over its old values.
    private mutating func mapAttribute(
      _ name: String, _ column: StoreSchema.Column, _ entityMapping: EntityMapping, from: StoreSchema.EntityLayout,
      to: StoreSchema.EntityLayout, assignments: inout [String], arguments: inout [StoreValue]
    ) -> String? {
      let table = to.table
      var old: String?
      switch entityMapping.attributes[name] {
      case .computed?:
        return "\(to.name).\(name) is computed by a script"
      case .converted(_, let conversion, _)?:
        return "\(to.name).\(name) changes type (\(conversion)): its values are converted"
      case let source?:
        // The column stays (renamed); a default or a constant is filled in over it, as the row
        // copy would make it (AttributeSource.sql, the one decision).
        old = source.carriedAttribute
        if source != .constant(.null), let made = source.sql(column: column.name), made.expression != column.name {
          assignments.append("\(column.name) = \(made.expression)")
          arguments += made.constants
        }
      case nil:
        break
      }
      var oldColumn: String?
      if let old {
        guard case .attribute(let sourceColumn)? = from.properties[old], sourceColumn.type == column.type else {
          return "\(to.name).\(name) changes how it is stored"
        }
        oldColumn = sourceColumn.name
      }
      guard claim(table, column.name, oldColumn) else { return "column \(table).\(column.name) has two origins" }
      return nil
    }

    /// A to-one's key, entity and order columns: the same relationship's, pointing the same way.
    private mutating func mapToOne(
      _ name: String, _ key: StoreSchema.Column, _ entityColumn: StoreSchema.Column?, _ order: StoreSchema.Column?,
      _ entityMapping: EntityMapping, from: StoreSchema.EntityLayout, to: StoreSchema.EntityLayout
    ) -> String? {
      let table = to.table
      let old = origin(of: name, in: entityMapping)
      guard let old else {
        for column in [key, entityColumn, order].compactMap({ $0 }) {
          guard claim(table, column.name, nil) else { return "column \(table).\(column.name) has two origins" }
        }
        return nil
      }
      guard case .toOne(let oldKey, let oldEntity, let oldOrder)? = from.properties[old] else {
        return "\(to.name).\(name) changes between to-one and to-many"
      }
      guard sameDestination(name, old, of: to.name),
        (entityColumn == nil || oldEntity != nil) && (order == nil || oldOrder != nil)
      else { return "\(to.name).\(name) points to another entity or changes its order" }
      let pairs = [(key, oldKey), (entityColumn, oldEntity), (order, oldOrder)]
      for case (let column?, let oldColumn?) in pairs {
        guard claim(table, column.name, oldColumn.name) else {
          return "column \(table).\(column.name) has two origins"
        }
      }
      return nil
    }

    /// A many-to-many's join table and columns: the same relationship's, with the same target and order.
    private mutating func mapManyToMany(
      _ name: String, _ joinTable: String, _ columns: [String?], _ entityMapping: EntityMapping,
      from: StoreSchema.EntityLayout, to: StoreSchema.EntityLayout
    ) -> String? {
      let (own, other, order) = (columns[0], columns[1], columns[2])
      let old = origin(of: name, in: entityMapping)
      var oldColumns: [String?] = [nil, nil, nil]
      var oldTable: String?
      if let old {
        guard case .manyToMany(let sourceTable, let oldOwn, let oldOther, let oldOrder)? = from.properties[old],
          sameDestination(name, old, of: to.name), (order == nil) == (oldOrder == nil)
        else { return "\(to.name).\(name) changes between many-to-many and to-many, its target or order" }
        oldTable = sourceTable
        oldColumns = [oldOwn, oldOther, oldOrder]
      }
      let key = joinTable.uppercased()
      if let existing = joinOrigins[key], existing?.uppercased() != oldTable?.uppercased() {
        return "join table \(joinTable) has two origins"
      }
      joinOrigins[key] = .some(oldTable)
      for (column, oldColumn) in zip([own, other, order], oldColumns) {
        guard let column, column != "REFLEXIVE" || oldColumn == "REFLEXIVE" else { continue }
        guard claim(joinTable, column, oldColumn) else { return "column \(joinTable).\(column) has two origins" }
      }
      return nil
    }

    /// Whether destination relationship `name` of `entity` and source relationship `old` point to
    /// the same entity (hidden to-ones: their owners are the same by number).
    private func sameDestination(_ name: String, _ old: String, of entity: String) -> Bool {
      guard !StoreSchema.isHiddenToOne(name) else { return true }
      guard
        let new = mapping.destination.entity(named: entity).flatMap({ mapping.destination.relationships(of: $0) })?
          .first(where: { $0.name == name }),
        let previous = mapping.source.entity(named: entity).flatMap({ mapping.source.relationships(of: $0) })?
          .first(where: { $0.name == old })
      else { return false }
      return new.destinationEntity == previous.destinationEntity && new.isOrdered == previous.isOrdered
    }

    /// The edits, once every destination column has an origin; checked by playing them on the source.
    private func assemble() -> Decision {
      var edits = Edits(source: source)
      if let reason = planTables(&edits) ?? planColumns(&edits) { return .copyRows(reason) }
      // The edits must give exactly the destination's tables and columns.
      let wanted = Dictionary(
        destination.tables.map { table in
          (
            table.name.uppercased(),
            Dictionary(
              table.columns.map { ($0.name.uppercased(), $0.type.uppercased()) },
              uniquingKeysWith: { first, _ in first })
          )
        }, uniquingKeysWith: { first, _ in first })
      guard edits.tablesAfter == wanted else { return .copyRows("the edits would not give the destination layout") }
      let fillStatements = fills.keys.sorted().compactMap {
        number -> (String, StoreSchema.EntityLayout, [String], [StoreValue])? in
        guard let fill = fills[number], let layout = destination.layout(number: number) else { return nil }
        return (fill.mapping, layout, fill.assignments, fill.arguments)
      }
      return .ddl(
        DDLStep(
          droppedTables: edits.droppedTables, renamedTables: edits.renamedTables, droppedColumns: edits.droppedColumns,
          renamedColumns: edits.renamedColumns, addedColumns: edits.addedColumns, createdTables: edits.createdTables,
          addedEntities: destination.entities.filter { source.layout(of: $0.name) == nil },
          fills: fillStatements, columnNames: edits.columnNames, tableNames: edits.tableNames,
          destination: destination,
          history: HistoryRewrite(mapping: mapping, source: source, destination: destination),
          sourceRTrees: source.rtreeIndexes))
    }

    /// The edits of a step as they are planned, and the tables they leave (table → column → type,
    /// all uppercased), played on the source's.
    private struct Edits {
      var tablesAfter: [String: [String: String]] = [:]
      var sourceTables: [String: StoreSchema.Table] = [:]
      var droppedTables: [String] = []
      var renamedTables: [(from: String, to: String)] = []
      var createdTables: [StoreSchema.Table] = []
      var tableNames: [String: String] = [:]
      var droppedColumns: [(table: String, column: String)] = []
      var renamedColumns: [(table: String, from: String, to: String)] = []
      var addedColumns: [(table: String, column: StoreSchema.Column)] = []
      var columnNames: [String: [String: String]] = [:]

      init(source: StoreSchema) {
        for table in source.tables {
          sourceTables[table.name.uppercased()] = table
          tablesAfter[table.name.uppercased()] = Dictionary(
            table.columns.map { ($0.name.uppercased(), $0.type.uppercased()) }, uniquingKeysWith: { first, _ in first })
        }
      }
    }

    /// Tables dropped, renamed and created; nil, or why the step cannot be done by DDL.
    private func planTables(_ edits: inout Edits) -> String? {
      let usedJoins = Set(joinOrigins.values.compactMap { $0?.uppercased() })
      for table in source.tables where isSourceJoin(table.name) && !usedJoins.contains(table.name.uppercased()) {
        edits.droppedTables.append(table.name)
        edits.tablesAfter[table.name.uppercased()] = nil
      }
      for table in destination.tables {
        let key = table.name.uppercased()
        if isJoin(table.name) {
          guard let origin = joinOrigins[key] else { return "join table \(table.name) has no origin" }
          guard let origin else {
            edits.createdTables.append(table)
            continue
          }
          edits.tableNames[origin.uppercased()] = table.name
          if origin.uppercased() != key { edits.renamedTables.append((origin, table.name)) }
        } else if edits.sourceTables[key] == nil {
          edits.createdTables.append(table)
        } else {
          edits.tableNames[key] = table.name
        }
      }
      // Table renames, played (through temporary names, as they run).
      var moved: [String: [String: String]] = [:]
      for (from, to) in edits.renamedTables {
        moved[to.uppercased()] = edits.tablesAfter.removeValue(forKey: from.uppercased())
      }
      edits.tablesAfter.merge(moved) { _, new in new }
      return nil
    }

    /// Columns dropped, renamed and added, table by table; nil, or why the step cannot be done by DDL.
    private func planColumns(_ edits: inout Edits) -> String? {
      for table in destination.tables {
        let key = table.name.uppercased()
        guard !edits.createdTables.contains(where: { $0.name == table.name }) else {
          edits.tablesAfter[key] = Dictionary(
            table.columns.map { ($0.name.uppercased(), $0.type.uppercased()) }, uniquingKeysWith: { first, _ in first })
          continue
        }
        guard var columns = edits.tablesAfter[key], let tableOrigins = origins[key] else {
          return "table \(table.name) has no origin"
        }
        let continued = Set(tableOrigins.values.compactMap { $0 })
        guard continued.count == tableOrigins.values.compactMap({ $0 }).count else {
          return "a column of \(table.name) continues in two columns"
        }
        for name in columns.keys.sorted() where !continued.contains(name) {
          let sourceTable = edits.tableNames.first { $0.value.uppercased() == key }?.key.uppercased() ?? key
          if constrained[sourceTable]?.contains(name) == true || constrained[key]?.contains(name) == true {
            return "column \(table.name).\(name) is in a table constraint: DROP COLUMN cannot remove it"
          }
          edits.droppedColumns.append((table.name, name))
          columns[name] = nil
        }
        var renamed: [String: String] = [:]
        for column in table.columns {
          let name = column.name.uppercased()
          guard let origin = tableOrigins[name] else { return "column \(table.name).\(column.name) has no origin" }
          if let origin {
            guard let type = columns[origin], type == column.type.uppercased() else {
              return "column \(table.name).\(column.name) changes type"
            }
            renamed[name] = type
            edits.columnNames[key, default: [:]][origin] = name
            if origin != name { edits.renamedColumns.append((table.name, origin, column.name)) }
          } else {
            edits.addedColumns.append((table.name, column))
          }
        }
        for column in table.columns where tableOrigins[column.name.uppercased()] == .some(nil) {
          renamed[column.name.uppercased()] = column.type.uppercased()
        }
        edits.tablesAfter[key] = renamed
      }
      return nil
    }

    private func isSourceJoin(_ table: String) -> Bool {
      !source.entities.contains { $0.table.uppercased() == table.uppercased() }
    }
  }
}
