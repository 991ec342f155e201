import FileDoors
import Foundation
import GRDB
import MigrunModel
import PropertyList

/// A Core Data SQLite store: Apple's own file layout, opened, read, written and created.
///
/// ```swift
/// let store = try SQLiteStore(url: storeURL, model: model)         // checks the hashes
/// let described = try SQLiteStore(url: storeURL)                     // the store's own model (Z_MODELCACHE)
/// try store.forEachObject(of: "Mood", includingSubentities: true) { mood in … }
/// ```
///
/// Opening read-only never changes the file: without a `-wal` beside it the store is opened
/// immutable (no lock or side files); with one, read-only.
public final class SQLiteStore: ObjectStore {
  /// How a store is opened: read-only (never written, not even checkpointed) or read-write.
  public enum Access: Sendable {
    case readOnly
    case readWrite
  }

  public let url: URL
  public let model: ObjectModel
  /// Where values kept outside the store (external binary storage) are read: the store's own
  /// `.NAME_SUPPORT/_EXTERNAL_DATA`, or — for a migration's working copies — the original's.
  package var externalData: ExternalData
  /// Where the store's own cached model (`Z_MODELCACHE`), opened as its model, disagrees with the
  /// hashes its metadata records, entity by entity (empty when they agree): damage to report.
  package private(set) var cacheDisagreement: [EntityDifference] = []
  package let schema: StoreSchema
  public private(set) var metadata: StoreMetadata
  /// Whether ``model`` came from the store's own `Z_MODELCACHE` rather than from the caller.
  public let modelIsFromCache: Bool
  /// The file's tables and their columns as found when it was opened (name → columns).
  public let storedTables: [String: [String]]
  /// Opened read-only on a file that cannot change under it (immutable, or a private copy).
  let readsWithoutTransaction: Bool
  /// A migration's working copy (``create(at:model:metadata:fastWrites:withIndexes:)`` with
  /// `fastWrites`): it may get temporary look-up indexes (``noteLookUp(_:columns:in:)``).
  let isWorkingCopy: Bool
  private var lookUps: [String: Int] = [:]
  /// Counts taken inside ``rememberingCounts(_:)`` (nil outside it).
  private var rememberedCounts: [String: Int]?
  private(set) var lookUpIndexes: [String] = []

  /// Look-ups by the same columns (`find` in a script: find-or-create) after which a working copy
  /// gets an index on them, for the rest of the step.
  static let lookUpsBeforeIndex = 32

  /// Counts a look-up of `table` by `columns`; on a working copy, indexes them once they are looked
  /// up often (a scan per object otherwise). The indexes go before the step ends
  /// (``dropLookUpIndexes()``): the finished store has exactly the model's.
  func noteLookUp(_ db: Database, columns: [String], in table: String) throws {
    guard isWorkingCopy, !columns.isEmpty else { return }
    let key = "\(table)(\(columns.joined(separator: ",")))"
    let count = (lookUps[key] ?? 0) + 1
    lookUps[key] = count
    guard count == Self.lookUpsBeforeIndex else { return }
    let name = "Z_MIGRUN_LOOKUP_\(lookUpIndexes.count + 1)"
    try db.execute(sql: "CREATE INDEX \(name) ON \(table) (\(columns.joined(separator: ", ")))")
    lookUpIndexes.append(name)
  }

  /// Drops the look-up indexes a step made.
  package func dropLookUpIndexes() throws {
    guard !lookUpIndexes.isEmpty else { return }
    try withConnection { db in
      for name in lookUpIndexes { try db.execute(sql: "DROP INDEX IF EXISTS \(name)") }
    }
    lookUpIndexes = []
    lookUps = [:]
  }

  let queue: DatabaseQueue
  /// ``busyTimeout``'s value.
  private var busySeconds: Double
  /// How long a write waits for another connection's lock unless told otherwise (``busyTimeout``).
  static let defaultBusyTimeout: Double = 30
  /// The longest wait SQLite's busy handler takes, in seconds: `busy_timeout` counts milliseconds
  /// in a 32-bit integer (2,147,483 s, some 24 days). A longer wait is this one; `--wait` refuses
  /// more.
  package static let maximumWait: Double = Double(Int32.max / 1000)
  static let pageSize = 500

  /// How one entity's rows are written: its columns and SQL, worked out once per entity.
  struct RowPlan {
    let layout: StoreSchema.EntityLayout
    let rootNumber: Int
    /// Stored attributes (derived ones included), in column order.
    let attributes: [String]
    /// For each of ``attributes``, whether Core Data may keep its values outside the store (written
    /// tagged): an array beside them, so the write loop looks nothing up.
    let external: [Bool]
    let toOnes: [(name: String, hasEntityColumn: Bool)]
    /// The entity's to-ones whose inverse is to-one too (relationship → inverse): both tables hold
    /// a key, and a write keeps the two sides agreeing.
    let oneToOnes: [String: String]
    let insertSQL: String
    let updateSQL: String
  }

  private var rowPlans: [String: RowPlan] = [:]

  /// How one entity's objects are read from a row of `SELECT * FROM <table>`: each stored property's
  /// column by position in the table as the file has it (Z_PK, Z_ENT, Z_OPT first, as Core Data and
  /// migrun lay tables out), worked out once per entity.
  struct ReadPlan {
    let layout: StoreSchema.EntityLayout
    let attributes: [(name: String, index: Int, type: AttributeType, external: Bool)]
    let toOnes: [(name: String, key: Int, keyName: String, entity: Int?, entityName: String?, destination: String)]
    let toMany: [(name: String, storage: StoreSchema.PropertyStorage, destination: String)]
    /// The attributes' names, in their order: shared by every row read as a ``StoredRow``.
    let names: [String]
  }

  private var readPlans: [Int: ReadPlan?] = [:]

  private var tablePositions: [String: [String: Int]] = [:]

  /// Column name (uppercased) → position in a row of `SELECT * FROM table`, as the file has it.
  private func positions(in table: String) -> [String: Int] {
    if let known = tablePositions[table] { return known }
    let columns = storedTables.first { $0.key.uppercased() == table.uppercased() }?.value ?? []
    var positions: [String: Int] = [:]
    for (index, name) in columns.enumerated() where positions[name.uppercased()] == nil {
      positions[name.uppercased()] = index
    }
    tablePositions[table] = positions
    return positions
  }

  private var keyPositions: [String: (primaryKey: Int, entity: Int, version: Int, sole: Int?)] = [:]

  /// Where Z_PK, Z_ENT and Z_OPT are in a row of `SELECT * FROM table`, and the number of the entity
  /// that owns every row when it is alone in the table (``StoreSchema/soleEntity(ofTable:)``) — asked
  /// once per object read: worked out once per table.
  func keyColumns(of table: String) throws -> (primaryKey: Int, entity: Int, version: Int, sole: Int?) {
    if let known = keyPositions[table] { return known }
    let positions = positions(in: table)
    guard let primaryKey = positions["Z_PK"], let entity = positions["Z_ENT"], let version = positions["Z_OPT"] else {
      throw StoreError(.layoutMismatch, reason: "table \(table) lacks Z_PK, Z_ENT or Z_OPT")
    }
    let found = (primaryKey, entity, version, schema.soleEntity(ofTable: table)?.number)
    keyPositions[table] = found
    return found
  }

  private var toOnesSQL: [Int: String] = [:]

  /// `SELECT Z_ENT, Z_OPT, <each to-one's key column [, entity column]>` of one object by key, in
  /// the read plan's order (built once per entity).
  func toOnesSQL(of plan: ReadPlan) -> String {
    if let known = toOnesSQL[plan.layout.number] { return known }
    let columns = ["Z_ENT", "Z_OPT"] + plan.toOnes.flatMap { [$0.keyName] + ($0.entityName.map { [$0] } ?? []) }
    let sql =
      "SELECT \(columns.joined(separator: ", ")) FROM \(plan.layout.table) WHERE Z_PK = ?"
      + " AND \(schema.rowPredicate(plan.layout))"
    toOnesSQL[plan.layout.number] = sql
    return sql
  }

  private struct PropertyKey: Hashable {
    let entity: String
    let property: String
  }

  private var toOneUpdates: [PropertyKey: (sql: String, hasEntityColumn: Bool)] = [:]

  /// `UPDATE` of one to-one's columns of `id`'s entity by key (built once per relationship).
  func toOneUpdate(of id: ObjectID, _ relationship: String) throws -> (sql: String, hasEntityColumn: Bool) {
    let entity = id.entity
    let key = PropertyKey(entity: entity, property: relationship)
    if let known = toOneUpdates[key] { return known }
    guard let layout = schema.layout(of: entity), model.entity(named: entity) != nil else {
      throw StoreError(
        .unknownEntity, entity: entity, primaryKey: id.primaryKey, reason: "the model has no such entity")
    }
    guard case .toOne(let column, let entityColumn, _)? = layout.properties[relationship] else {
      throw StoreError(.unknownProperty, entity: entity, reason: "'\(relationship)' is not a to-one relationship")
    }
    let sets = [column.name] + (entityColumn.map { [$0.name] } ?? [])
    let update = (
      sql: "UPDATE \(layout.table) SET \(sets.map { "\($0) = ?" }.joined(separator: ", ")) WHERE Z_PK = ?",
      hasEntityColumn: entityColumn != nil
    )
    toOneUpdates[key] = update
    return update
  }

  private var objectSQL: [Int: String] = [:]

  /// `SELECT *` of one object of `layout`'s entity or a subentity by key (built once per entity).
  func objectSQL(of layout: StoreSchema.EntityLayout) -> String {
    if let known = objectSQL[layout.number] { return known }
    let sql = "SELECT * FROM \(layout.table) WHERE Z_PK = ? AND \(schema.rowPredicate(layout))"
    objectSQL[layout.number] = sql
    return sql
  }

  /// The read plan of entity number `number`, or nil when the model has no such entity.
  func readPlan(number: Int) throws -> ReadPlan? {
    if let plan = readPlans[number] { return plan }
    guard let layout = schema.layout(number: number), let entity = model.entity(named: layout.name) else {
      readPlans[number] = .some(nil)
      return nil
    }
    let positions = positions(in: layout.table)
    func position(_ column: StoreSchema.Column) throws -> Int {
      guard let index = positions[column.name.uppercased()] else {
        throw StoreError(
          .layoutMismatch, entity: layout.name, reason: "table \(layout.table) has no column \(column.name)")
      }
      return index
    }
    var attributes: [(name: String, index: Int, type: AttributeType, external: Bool)] = []
    for attribute in model.attributes(of: entity) {
      guard case .attribute(let column)? = layout.properties[attribute.name] else { continue }
      attributes.append((attribute.name, try position(column), attribute.type, attribute.storesExternally))
    }
    var toOnes: [(name: String, key: Int, keyName: String, entity: Int?, entityName: String?, destination: String)] =
      []
    var toMany: [(name: String, storage: StoreSchema.PropertyStorage, destination: String)] = []
    for relationship in model.relationships(of: entity) {
      switch layout.properties[relationship.name] {
      case .toOne(let key, let entityColumn, _)?:
        toOnes.append(
          (
            relationship.name, try position(key), key.name, try entityColumn.map(position), entityColumn?.name,
            relationship.destinationEntity
          ))
      case let storage? where relationship.isToMany:
        toMany.append((relationship.name, storage, relationship.destinationEntity))
      default:
        continue
      }
    }
    let plan = ReadPlan(
      layout: layout, attributes: attributes, toOnes: toOnes, toMany: toMany, names: attributes.map(\.name))
    readPlans[number] = plan
    return plan
  }

  func rowPlan(for entityName: String) throws -> RowPlan {
    if let plan = rowPlans[entityName] { return plan }
    guard let layout = schema.layout(of: entityName), let entity = model.entity(named: entityName),
      let root = schema.layout(of: model.root(of: entity).name)
    else { throw StoreError(.unknownEntity, entity: entityName, reason: "the model has no such entity") }
    var columns: [String] = []
    var attributes: [String] = []
    var external: [Bool] = []
    for attribute in model.attributes(of: entity) {
      guard case .attribute(let column)? = layout.properties[attribute.name] else { continue }
      columns.append(column.name)
      attributes.append(attribute.name)
      external.append(attribute.storesExternally)
    }
    var toOnes: [(name: String, hasEntityColumn: Bool)] = []
    var oneToOnes: [String: String] = [:]
    for relationship in model.relationships(of: entity) {
      guard case .toOne(let key, let entityColumn, _)? = layout.properties[relationship.name] else { continue }
      columns.append(key.name)
      if let entityColumn { columns.append(entityColumn.name) }
      toOnes.append((relationship.name, entityColumn != nil))
      if let inverse = model.inverse(of: relationship), !inverse.isToMany {
        oneToOnes[relationship.name] = inverse.name
      }
    }
    let inserted = ["Z_PK", "Z_ENT", "Z_OPT"] + columns
    let placeholders = inserted.map { _ in "?" }.joined(separator: ", ")
    let assignments = (["Z_OPT"] + columns).map { "\($0) = ?" }.joined(separator: ", ")
    let plan = RowPlan(
      layout: layout, rootNumber: root.number, attributes: attributes, external: external, toOnes: toOnes,
      oneToOnes: oneToOnes,
      insertSQL: "INSERT INTO \(layout.table) (\(inserted.joined(separator: ", "))) VALUES (\(placeholders))",
      updateSQL: "UPDATE \(layout.table) SET \(assignments) WHERE Z_PK = ?")
    rowPlans[entityName] = plan
    return plan
  }

  /// Opens the store at `url`. With a model, the store's entity hashes must equal the model's
  /// (``StoreError/Code/incompatibleModel`` lists the differences); without one, the store's own
  /// model (`Z_MODELCACHE`) is used.
  public convenience init(url: URL, model: ObjectModel? = nil, access: Access = .readOnly) throws {
    try self.init(url: url, model: model, access: access, fastWrites: false)
  }

  /// `session`: what the job read of the store already (its metadata, tables, model cache, its
  /// connection — taken — and its read wait), for a read-only opening of `session.url`.
  package init(
    url: URL, model: ObjectModel?, access: Access, fastWrites: Bool, session given: StoreSession? = nil
  ) throws {
    self.url = url
    externalData = ExternalData(store: url)
    let session = access == .readOnly && !fastWrites && given?.url == url ? given : nil
    // The session's reads first: its connection is then the one taken.
    let known = try session.map { (metadata: try $0.metadata(), tables: try $0.tables()) }
    let (queue, immutable) =
      try session?.takeConnection().map { ($0, true) }
      ?? Self.openConnection(url, access: access, fastWrites: fastWrites, session: session)
    let metadata = try known?.metadata ?? Self.readMetadata(queue, file: url.path)
    let cachedModel = { () throws -> ObjectModel? in
      if let read = session?.cachedModelIfRead { return read }
      return try Self.readCachedModel(queue, file: url.path)
    }
    var chosen: ObjectModel
    if let model {
      let differences = metadata.differences(from: model)
      // The store's own cached model is taken even where its hashes disagree with the metadata's
      // (a store written by one build and cached by another): Core Data falls back to the cache
      // when no version has the store's hashes, and so does migrun — the layout check below still
      // holds it to the tables. The disagreement is kept, for reports.
      if !differences.isEmpty, let cached = try? cachedModel(),
        cached.entityVersionHashes == model.entityVersionHashes
      {
        cacheDisagreement = differences
      } else if !differences.isEmpty {
        throw StoreError(
          .incompatibleModel, file: url.path,
          reason: "the store does not fit model version '\(model.versionName ?? "?")':\n  "
            + differences.map(\.description).joined(separator: "\n  "))
      }
      chosen = model
      modelIsFromCache = false
    } else {
      guard let cached = try cachedModel() else {
        throw StoreError(
          .noModel, file: url.path, reason: "the store has no model cache (Z_MODELCACHE): give its model")
      }
      chosen = cached
      modelIsFromCache = true
    }
    self.queue = queue
    // A read waits as long as its session says (`--wait`; 0 without one).
    busySeconds = access == .readOnly ? session?.readWait ?? 0 : Self.defaultBusyTimeout
    self.metadata = metadata
    // The store's own names where Core Data's depend on an order migrun cannot know; then every
    // table and column the model implies must be there, before anything reads a row.
    let existing = try known?.tables ?? Self.readTables(queue, file: url.path)
    storedTables = existing
    isWorkingCopy = fastWrites
    readsWithoutTransaction = access == .readOnly && immutable
    // Its indexes are those of the framework that wrote it (``StoreSchema/LegacyIndexForm``), its
    // entity numbers its own (``StoreSchema/init(model:existing:framework:numbers:)``).
    let numbers = Self.readNumbers(queue)
    var built = StoreSchema(model: chosen, existing: existing, framework: metadata.frameworkVersion, numbers: numbers)
    var problems = built.mismatches(existing: existing)
    // A store written for one configuration holds that configuration's tables alone (Core Data
    // before today's ignored no configuration): read with the model of that configuration.
    if !problems.isEmpty, chosen.wholeModel == nil,
      let configuration = chosen.configuration(ofStoreTables: Set(existing.keys)),
      let restricted = try? chosen.restricted(toConfiguration: configuration)
    {
      chosen = restricted
      built = StoreSchema(
        model: restricted, existing: existing, framework: metadata.frameworkVersion, numbers: numbers)
      problems = built.mismatches(existing: existing)
    }
    self.model = chosen
    schema = built
    if let first = problems.first {
      throw StoreError(
        .layoutMismatch, file: url.path,
        reason: "the store is not laid out as model version '\(self.model.versionName ?? "?")' implies: \(first)"
          + (problems.count > 1 ? " (and \(problems.count - 1) more)" : ""))
    }
  }

  /// The store's metadata alone — no entity table is read. Answers "does this store need
  /// migrating?" cheaply.
  public static func metadata(at url: URL) throws -> StoreMetadata {
    try StoreSession(url).metadata()
  }

  /// The names of the store's tables.
  public static func tableNames(at url: URL) throws -> Set<String> {
    try StoreSession(url).tableNames()
  }

  /// The model the store carries in `Z_MODELCACHE`, or `nil` when it has none.
  public static func cachedModel(at url: URL) throws -> ObjectModel? {
    try StoreSession(url).cachedModel()
  }

  /// Creates an empty store for `model` at `url` (which must not exist), with Core Data's tables,
  /// columns, join tables and indexes, and metadata carrying the model's hashes.
  @discardableResult
  public static func create(at url: URL, model: ObjectModel, metadata: StoreMetadata? = nil) throws -> SQLiteStore {
    try create(at: url, model: model, metadata: metadata, fastWrites: false)
  }

  /// `fastWrites`: no rollback journal and no fsync per transaction — for a migration's working
  /// copy, which is thrown away on any failure and synced once when complete.
  /// `withIndexes: false` leaves the indexes out (a bulk copy builds them after the rows).
  /// `withTriggers: false` leaves the derived attributes' triggers out (a migration step installs
  /// them after its rows, ``installDerivedAttributes()``).
  /// `numbers`: the entity numbers of the store this one replaces, kept where they fit (salvage).
  package static func create(
    at url: URL, model: ObjectModel, metadata: StoreMetadata?, fastWrites: Bool, withIndexes: Bool = true,
    withTriggers: Bool = true, numbers: [String: Int] = [:]
  ) throws -> SQLiteStore {
    guard !FileManager.default.fileExists(atPath: url.path) else {
      throw StoreError(.io, file: url.path, reason: "a file is already there; migrun does not overwrite it")
    }
    let storeMetadata = metadata ?? StoreMetadata(model: model)
    // The layout of the framework the metadata names (its indexes' form): the one a check of the
    // store judges it by.
    let schema = StoreSchema(model: model, framework: storeMetadata.frameworkVersion, numbers: numbers)
    // A derivation migrun cannot keep current, or an index it cannot write, is refused before the
    // file exists.
    let triggers = try DerivedAttributes.triggers(of: schema)
    if let first = schema.unsupported.first {
      throw StoreError(.unsupportedIndex, file: url.path, reason: first)
    }
    let modelCache: [UInt8]
    do {
      modelCache = try model.modelCache()
    } catch {
      throw StoreError(error, file: url.path)
    }
    do {
      let queue = try DatabaseQueue(path: url.path, configuration: configuration(readOnly: false))
      try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA auto_vacuum = 2")
        try db.inTransaction {
          try writeLayout(
            db, schema: schema, metadata: storeMetadata, modelCache: modelCache,
            triggers: withTriggers ? triggers : nil, withIndexes: withIndexes)
          return .commit
        }
      }
    } catch let error as StoreError {
      throw error
    } catch {
      try? FileManager.default.removeItem(at: url)
      throw StoreError(.sqlite, file: url.path, reason: "cannot create the store (\(error))", underlying: error)
    }
    return try SQLiteStore(url: url, model: model, access: .readWrite, fastWrites: fastWrites)
  }

  /// A new store's tables, as Core Data writes them: `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`,
  /// the model's tables, indexes and derived attributes' triggers (`nil`: left for later).
  private static func writeLayout(
    _ db: Database, schema: StoreSchema, metadata storeMetadata: StoreMetadata, modelCache: [UInt8],
    triggers: [DerivedAttributes.Trigger]?, withIndexes: Bool
  ) throws {
    try db.execute(
      sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
    )
    try db.execute(
      sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
    try db.execute(sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
    try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [Data(modelCache)])
    for table in schema.tables { try db.execute(sql: table.createStatement) }
    if withIndexes { try createIndexes(db, schema) }
    if let triggers {
      for trigger in triggers { try db.execute(sql: trigger.sql) }
      try Self.installRTrees(db, schema)
    }
    for layout in schema.entities {
      try db.execute(
        sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
        arguments: [layout.number, layout.name, layout.superNumber])
    }
    try db.execute(
      sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
      arguments: [storeMetadata.uuid, Data(storeMetadata.plist.binaryEncoded())])
  }

  // MARK: - ObjectStore

  public func count(of entity: String, includingSubentities: Bool) throws -> Int {
    let layout = try layout(entity)
    // When the table holds only these kinds, no Z_ENT test — as Core Data's own SQL for an entity
    // alone in its table: SQLite then counts the smallest index instead of reading every row.
    let condition = schema.rowCondition(layout, includingSubentities: includingSubentities)
    return try countRows("SELECT count(*) FROM \(layout.table)" + (condition.map { " WHERE \($0)" } ?? ""))
  }

  /// Runs `body` with its counts remembered: a `count(*)` query asked again inside it (an edge
  /// counted from both of its ends, an entity counted for two reports) is answered from the first
  /// time, not read again. For a look at a store that does not change meanwhile — a migration's
  /// source, read once per step.
  package func rememberingCounts<T>(_ body: () throws -> T) rethrows -> T {
    let outermost = rememberedCounts == nil
    if outermost { rememberedCounts = [:] }
    defer { if outermost { rememberedCounts = nil } }
    return try body()
  }

  /// The `SELECT count(*) …` query `sql`, once per query inside ``rememberingCounts(_:)``.
  func countRows(_ sql: String) throws -> Int {
    if let known = rememberedCounts?[sql] { return known }
    let counted = try read { db in try Int.fetchOne(db, sql: sql) ?? 0 }
    rememberedCounts?[sql] = counted
    return counted
  }

  /// Counted in SQL: `SELECT count(*)` with the filter, no object read; nil when the store cannot
  /// say the filter.
  package func count(of entity: String, includingSubentities: Bool, filter: RowFilter?) throws -> Int? {
    let layout = try layout(entity)
    guard
      let (sql, values) = filteredQuery(
        layout, includingSubentities: includingSubentities, filter: filter, select: "count(*)")
    else { return nil }
    return try read { db in try Int.fetchOne(db, sql: sql, arguments: StatementArguments(values)) ?? 0 }
  }

  package func forEachObject(
    of entity: String, includingSubentities: Bool, withToMany: Bool, filter: RowFilter?,
    _ body: (StoredObject) throws -> Void
  ) throws {
    try forEachPage(
      of: entity, includingSubentities: includingSubentities, filter: filter, key: \.id.primaryKey,
      make: { try $0.object(from: $1, table: $2, withToMany: withToMany) }, body: body)
  }

  package func forEachRow(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, _ body: (StoredRow) throws -> Void
  ) throws {
    try forEachPage(
      of: entity, includingSubentities: includingSubentities, filter: filter, key: \.id.primaryKey,
      make: { try $0.storedRow(from: $1, table: $2) }, body: body)
  }

  /// The rows of `entity`'s objects `filter` takes (every one when the filter cannot be said), by
  /// key, read a page at a time and each made by `make`; a page is handed out outside the read, so
  /// `body` may use this store again.
  private func forEachPage<T>(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, key: (T) -> Int64,
    make: (SQLiteObjectReader, Row, String) throws -> T, body: (T) throws -> Void
  ) throws {
    let layout = try layout(entity)
    // A filter the store cannot say narrows nothing: every object is given (the caller judges).
    guard
      let (query, values) =
        filteredQuery(layout, includingSubentities: includingSubentities, filter: filter, select: "t0.*")
        ?? filteredQuery(layout, includingSubentities: includingSubentities, filter: nil, select: "t0.*")
    else { return }
    let sql = query + " AND t0.Z_PK > ? ORDER BY t0.Z_PK LIMIT \(Self.pageSize)"
    var after: Int64 = .min
    while true {
      let page = try read { db -> [T] in
        let reader = SQLiteObjectReader(store: self, db: db)
        return try Row.fetchAll(
          db.cachedStatement(sql: sql), arguments: StatementArguments(values + [after.databaseValue])
        ).map { try make(reader, $0, layout.table) }
      }
      for item in page { try body(item) }
      guard page.count == Self.pageSize, let last = page.last else { return }
      after = key(last)
    }
  }

  public func maxPrimaryKey(inHierarchyOf entity: String) throws -> Int64 {
    let layout = try layout(entity)
    return try read { db in try Int64.fetchOne(db, sql: "SELECT max(Z_PK) FROM \(layout.table)") ?? 0 }
  }

  /// Seconds a write — a context's save — waits for another connection's or process's lock on the
  /// store before it fails with ``StoreError/Code/inUse`` (a save: `ContextError.Code.inUse`):
  /// 30 for a store opened read-write; 0 fails at once.
  ///
  /// ```swift
  /// store.busyTimeout = 2
  /// ```
  public var busyTimeout: Double {
    get { busySeconds }
    set {
      busySeconds = max(0, newValue)
      // Fails only on a closed store, which has nothing left to wait for.
      try? queue.inDatabase { db in
        try db.execute(sql: "PRAGMA busy_timeout = \(Self.milliseconds(busySeconds))")
      }
    }
  }

  /// `seconds` as SQLite's `busy_timeout` takes them.
  static func milliseconds(_ seconds: Double) -> Int32 { Int32(min(max(0, seconds) * 1000, Double(Int32.max))) }

  /// Closes the connection; the store cannot be used afterwards.
  public func close() throws {
    try queue.close()
  }

  public func object(_ id: ObjectID) throws -> StoredObject? {
    try object(id, withToMany: true)
  }

  public func object(_ id: ObjectID, withToMany: Bool) throws -> StoredObject? {
    let layout = try layout(id.entity)
    return try read { db in
      try SQLiteObjectReader(store: self, db: db).object(id, layout: layout, withToMany: withToMany)
    }
  }

  public func relationships(of id: ObjectID, withToMany: Bool) throws -> StoredObject? {
    let layout = try layout(id.entity)
    return try read { db in
      let reader = SQLiteObjectReader(store: self, db: db)
      return try withToMany
        ? reader.object(id, layout: layout, withToMany: true, withAttributes: false)
        : reader.toOnes(of: id, layout: layout)
    }
  }

  package func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T {
    try StoreAccesses.enter(self, file: url.lastPathComponent)
    defer { StoreAccesses.leave(self) }
    do {
      return try queue.write { db in
        let writer = SQLiteObjectWriter(store: self, db: db)
        let result = try body(writer)
        if let metadata = writer.newMetadata { self.metadata = metadata }
        return result
      }
    } catch {
      throw writeError(error)
    }
  }

  /// Object counts per entity (exactly that entity's `Z_ENT`), for every entity of the model.
  /// Whether `table` holds a row whose `Z_ENT` is not `number` — in a table one entity has alone,
  /// a row an older app version left with another entity's number. False for a table the file
  /// does not have. Reads every row of the table (no index holds `Z_ENT`).
  package func holdsRows(in table: String, ofAnotherEntityThan number: Int) throws -> Bool {
    guard storedTables.keys.contains(where: { $0.uppercased() == table.uppercased() }) else { return false }
    return try read { db in
      try Bool.fetchOne(
        db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE Z_ENT IS NOT ?)", arguments: [number]) ?? false
    }
  }

  public func entityCounts() throws -> [String: Int] { try entityCounts(known: [:]) }

  /// Objects per entity, those in `known` taken from it instead of counted (an in-place step's
  /// tables it did not touch hold what its source held, counted there).
  package func entityCounts(known: [String: Int]) throws -> [String: Int] {
    var counts: [String: Int] = [:]
    for layout in schema.entities {
      counts[layout.name] = try known[layout.name] ?? count(of: layout.name, includingSubentities: false)
    }
    return counts
  }

  // MARK: - Non public

  func layout(_ entity: String) throws -> StoreSchema.EntityLayout {
    guard let layout = schema.layout(of: entity) else {
      throw StoreError(
        .unknownEntity, file: url.lastPathComponent, entity: entity, reason: "the model has no such entity")
    }
    return layout
  }

  package func read<T>(_ body: (Database) throws -> T) throws -> T {
    try StoreAccesses.enter(self, file: url.lastPathComponent)
    defer { StoreAccesses.leave(self) }
    do {
      // A file no one can change (opened immutable) needs no transaction around a read; a
      // transaction per read (BEGIN + COMMIT) cost more than the read itself on the object path.
      return try readsWithoutTransaction ? queue.inDatabase(body) : queue.read(body)
    } catch let error as StoreError {
      throw error.inFile(url.lastPathComponent)
    } catch {
      if StoreFailure.isInUse(error) { throw StoreUse.inUseError(url, cause: error, waited: busySeconds) }
      throw StoreError(.sqlite, file: url.lastPathComponent, reason: StoreFailure.words(error), underlying: error)
    }
  }

  static func list(_ numbers: [Int]) -> String { numbers.map(String.init).joined(separator: ",") }

  /// `readWait`: how long a read waits for another process's write lock (`--wait`), in seconds.
  package static func configuration(readOnly: Bool, fastWrites: Bool = false, readWait: Double = 0) -> Configuration {
    var configuration = Configuration()
    configuration.readonly = readOnly
    configuration.label = "migrun"
    // A reader meeting a writer's commit waits as long as it was told to (--wait), then is refused.
    // GRDB converts the timeout to SQLite's 32-bit milliseconds with a conversion that traps past them.
    if readOnly, readWait > 0 { configuration.busyMode = .timeout(min(readWait, maximumWait)) }
    if !readOnly {
      // Several processes may write one store: a write waits its turn (up to 30 s). GRDB begins
      // write transactions IMMEDIATE, so a read-then-write save cannot deadlock with another.
      configuration.busyMode = .timeout(defaultBusyTimeout)
    }
    configuration.prepareDatabase { db in
      // Core Data's derived-attribute triggers call these functions; writes to such stores need them.
      for name in [
        "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
      ] {
        db.add(function: DatabaseFunction(name, pure: false) { _ in nil })
      }
      DerivedAttributes.addFunctions(to: db)
      // Fetches test strings as predicates do through it.
      db.add(function: PredicateStringFunction.function)
      if fastWrites {
        try db.execute(sql: "PRAGMA journal_mode = OFF")
        try db.execute(sql: "PRAGMA synchronous = OFF")
        // migrun's own working file, which no other process opens: read through a memory map (a
        // scan of a large table reads its pages in place instead of copying each one).
        try db.execute(sql: "PRAGMA mmap_size = 2147483648")
      }
    }
    return configuration
  }

  static func openQueue(_ url: URL, access: Access, fastWrites: Bool = false) throws -> DatabaseQueue {
    try openConnection(url, access: access, fastWrites: fastWrites).queue
  }

  /// ``openQueue(_:access:fastWrites:)``, and whether the connection is immutable (reads the file
  /// as it is, with no locks: it needs no read transaction). `session`: the job's look at the store
  /// (whether another process holds it; how long a read waits).
  static func openConnection(_ url: URL, access: Access, fastWrites: Bool = false, session: StoreSession? = nil)
    throws -> (queue: DatabaseQueue, immutable: Bool)
  {
    try checkOpenable(url)
    var copy: URL?
    defer { if let copy { ScratchFolder.remove(copy.deletingLastPathComponent()) } }
    let path: String
    if access == .readWrite {
      path = url.path
    } else if let direct = readOnlyPath(url, isHeld: session?.isHeld) {
      path = direct
    } else {
      // Committed transactions in a -wal with no -shm, or a hot journal: SQLite cannot read them
      // without writing beside the store, so a copy is read instead. Once open, the copy is unlinked
      // (the connection keeps its file open; an immutable connection opens nothing else).
      let folder = try ScratchFolder.make("read")
      let target = folder.appendingPathComponent(url.lastPathComponent)
      copy = target
      if RollbackJournal.isHot(url) {
        try RollbackJournal.rolledBackCopy(of: url, to: target)
      } else {
        try StoreFiles.snapshot(url, to: target)
      }
      path = StoreFiles.immutableURI(target)
    }
    do {
      let queue = try DatabaseQueue(
        path: path,
        configuration: configuration(
          readOnly: access == .readOnly, fastWrites: fastWrites, readWait: session?.readWait ?? 0))
      _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
      return (queue, path.hasSuffix("immutable=1"))
    } catch {
      throw openFailure(error, url: url, waited: session?.readWait ?? 0)
    }
  }

  /// A store file is there (not a folder), its sidecars are plain files or absent
  /// (``StoreFiles/checkSidecars(of:)``), and no interrupted swap left the old file in its place.
  private static func checkOpenable(_ url: URL) throws {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
      throw StoreError(.notFound, file: url.path, reason: "no such file")
    }
    guard !isFolder.boolValue else {
      throw StoreError(.notSQLite, file: url.path, reason: StoreFiles.folderGivenAsStore(url))
    }
    // Through the door before SQLite opens it: a FIFO or a device would block SQLite's open.
    do {
      try InputFile.check(url, origin: .named)
    } catch let error as InputFileError {
      throw StoreError(.io, file: url.path, reason: error.reason, underlying: error)
    }
    // The names SQLite reads beside the store as its own: never an output of the command.
    ReadFiles.note(names: (StoreFiles.sidecarSuffixes + ["-journal"]).map { url.path + $0 }, of: url.path)
    try StoreFiles.checkSidecars(of: url)
    // Between a crash and the next `migrate`, the main file is the old store without its -wal.
    if StoreFiles.pendingSwap(of: url) != nil {
      throw StoreError(
        .io, file: url.path,
        reason: "a migration was interrupted while putting the new store in place; "
          + "run `migrun migrate` on the store again to complete it")
    }
  }

  /// A URI that opens `url` for reading without ever changing any of its files, or `nil` when only a
  /// copy can be read that way (a `-wal` with content and no `-shm`, or a hot `-journal`, which
  /// SQLite would roll back first: ``RollbackJournal``):
  /// - with a `-shm`: read-only, sharing the `-shm` read-only (`readonly_shm`) — the WAL is read as
  ///   any reader would, with or without a live writer, and no byte of the three files is written;
  /// - held by another process (rollback journal): read-only with SQLite's locks, which write nothing;
  /// - else immutable: no locks, no side files.
  ///
  /// `isHeld`: whether another process holds the store, when the caller knows (its session's look,
  /// or its own file); nil: asked now (``StoreUse/holder(of:)``).
  package static func readOnlyPath(_ url: URL, isHeld: Bool? = nil) -> String? {
    let encoded = StoreFiles.encodedPath(url)
    if RollbackJournal.isHot(url) { return nil }
    if FileManager.default.fileExists(atPath: url.path + "-shm") {
      return "file:\(encoded)?mode=ro&readonly_shm=1"
    }
    if StoreFiles.hasWALContent(url) { return nil }
    return isHeld ?? (StoreUse.holder(of: url) != nil) ? "file:\(encoded)?mode=ro" : StoreFiles.immutableURI(url)
  }

  /// Creates the schema's indexes (a store made `withIndexes: false`).
  /// Fills every derived attribute and creates Core Data's `Z_DA_…` triggers (the end of a
  /// migration step, after its rows).
  package func installDerivedAttributes() throws {
    try withConnection { db in
      try db.inTransaction {
        try DerivedAttributes.install(db, schema)
        try Self.installRTrees(db, schema)
        return .commit
      }
    }
  }

  /// Creates the schema's R-tree fetch indexes with their triggers and fills them from the rows.
  package static func installRTrees(_ db: Database, _ schema: StoreSchema) throws {
    for index in schema.rtreeIndexes {
      for statement in index.createStatements { try db.execute(sql: statement) }
      try db.execute(sql: index.fillStatement)
    }
  }

  package func createIndexes() throws {
    try withConnection { db in
      try db.inTransaction {
        try Self.createIndexes(db, schema)
        return .commit
      }
    }
  }

  package static func createIndexes(_ db: Database, _ schema: StoreSchema) throws {
    for index in schema.indexes { try db.execute(sql: index.createStatement) }
  }

  /// Runs `body` on the connection outside any transaction (for ATTACH, which needs that).
  /// Commits stop waiting for the disk (`PRAGMA synchronous = OFF`), the journal kept (a failed
  /// transaction still rolls back): for migrun's own working files, which are fsynced once, whole,
  /// before they replace a store — a stage saving a batch at a time over a million objects would
  /// otherwise wait for a thousand fsyncs.
  package func deferSyncToTheEnd() throws {
    try withConnection { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
  }

  package func withConnection<T>(_ body: (Database) throws -> T) throws -> T {
    try StoreAccesses.enter(self, file: url.lastPathComponent)
    defer { StoreAccesses.leave(self) }
    do {
      return try queue.writeWithoutTransaction(body)
    } catch {
      throw writeError(error)
    }
  }

  /// A write's failure as a store error naming this file (a unique-index violation as a constraint).
  private func writeError(_ error: any Error) -> any Error {
    switch error {
    case let error as StoreError: error.inFile(url.lastPathComponent)
    case _ where StoreFailure.isInUse(error):
      StoreError(
        .inUse, file: url.lastPathComponent,
        reason: "the store is in use: another connection or process holds its write lock (still after waiting "
          + "\(busySeconds) s); nothing was written: save again once it lets go, or wait longer "
          + "(ObjectContext.busyTimeout)", underlying: error)
    case _ where StoreFailure.isDiskFull(error):
      StoreError(
        .noSpace, file: url.lastPathComponent, reason: "the disk is full; nothing was written", underlying: error)
    case let error as DatabaseError:
      StoreError(
        error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE ? .constraint : .sqlite, file: url.lastPathComponent,
        reason: error.message ?? "\(error)", underlying: error)
    default: error
    }
  }

  static func readMetadata(_ queue: DatabaseQueue, file: String) throws -> StoreMetadata {
    let row: Row?
    do {
      row = try queue.read { db -> Row? in
        guard try db.tableExists("Z_METADATA") else { return nil }
        return try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
      }
    } catch {
      throw StoreError(.notSQLite, file: file, reason: "cannot read the store (\(error))", underlying: error)
    }
    guard let row else {
      throw StoreError(.notACoreDataStore, file: file, reason: "not a Core Data store: it has no Z_METADATA")
    }
    let uuid: String
    let stored: Data?
    do {
      uuid = try row.value("Z_UUID", as: String.self) ?? ""
      stored = try row.value("Z_PLIST", as: Data.self)
    } catch {
      throw StoreError(.badMetadata, file: file, reason: "Z_METADATA: \(error.reason)", underlying: error)
    }
    guard let data = stored else {
      throw StoreError(.badMetadata, file: file, reason: "Z_METADATA has no property list")
    }
    let plist: PropertyListValue
    do {
      plist = try PropertyListValue(decoding: Array(data))
    } catch {
      throw StoreError(
        .badMetadata, file: file, reason: "Z_METADATA.Z_PLIST is not a property list (\(error))", underlying: error)
    }
    do {
      return try StoreMetadata(uuid: uuid, plist: plist)
    } catch {
      throw error.inFile(file)
    }
  }

  /// The compressed bytes of the store's `Z_MODELCACHE`, or nil when it has none.
  static func rawModelCache(at url: URL) throws -> [UInt8]? {
    let queue = try openQueue(url, access: .readOnly)
    defer { try? queue.close() }
    return try rawModelCache(queue, file: url.path)
  }

  /// `Z_MODELCACHE.Z_CONTENT` as stored (raw DEFLATE), nil without the table or an empty one.
  static func rawModelCache(_ queue: DatabaseQueue, file: String) throws -> [UInt8]? {
    do {
      return try queue.read { db -> [UInt8]? in
        guard try db.tableExists("Z_MODELCACHE") else { return nil }
        return try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1").map { Array($0) }
      }
    } catch {
      throw StoreError(.sqlite, file: file, reason: "cannot read Z_MODELCACHE (\(error))", underlying: error)
    }
  }

  static func readCachedModel(_ queue: DatabaseQueue, file: String) throws -> ObjectModel? {
    let data = try rawModelCache(queue, file: file)
    guard let data, !data.isEmpty else { return nil }
    do {
      return try ModelCache.model(fromCompressed: data)
    } catch {
      throw StoreError(error, file: file)
    }
  }
}

/// The stores a thread is reading or writing now, in that thread's own storage (no lock: only the
/// thread itself reads its list). GRDB traps on a nested access to a queue (it cannot be made safe),
/// so a nested one is refused with an error first: whatever reached it — a script's host call from
/// inside a row loop — fails by name and the process goes on.
final class StoreAccesses {
  private var stores: [ObjectIdentifier] = []

  /// Enters `store`'s access on this thread, refused when it is inside one already. `file` is
  /// worked out only for the error (a URL's last component costs a parse per call).
  static func enter(_ store: AnyObject, file: @autoclosure () -> String) throws {
    let accesses = ofThisThread
    let id = ObjectIdentifier(store)
    guard !accesses.stores.contains(id) else {
      throw StoreError(
        .sqlite, file: file(),
        reason: "the store is being read or written here already: objects cannot be read or written from inside "
          + "this step (a row function reads only its own row)")
    }
    accesses.stores.append(id)
  }

  static func leave(_ store: AnyObject) {
    let accesses = ofThisThread
    if let index = accesses.stores.lastIndex(of: ObjectIdentifier(store)) { accesses.stores.remove(at: index) }
  }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
      if let pointer { Unmanaged<StoreAccesses>.fromOpaque(pointer).release() }
    }
    return key
  }()

  private static var ofThisThread: StoreAccesses {
    if let pointer = pthread_getspecific(key) {
      return Unmanaged<StoreAccesses>.fromOpaque(pointer).takeUnretainedValue()
    }
    let accesses = StoreAccesses()
    pthread_setspecific(key, Unmanaged.passRetained(accesses).toOpaque())
    return accesses
  }
}
