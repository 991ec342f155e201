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
  private(set) var busySeconds: Double
  /// How long a write waits for another connection's lock unless told otherwise (``busyTimeout``).
  static let defaultBusyTimeout: Double = 30
  /// The longest wait SQLite's busy handler takes, in seconds: `busy_timeout` counts milliseconds
  /// in a 32-bit integer (2,147,483 s, some 24 days). A longer wait is this one; `--wait` refuses
  /// more.
  package static let maximumWait: Double = Double(Int32.max / 1000)
  static let pageSize = 500

  var rowPlans: [String: RowPlan] = [:]
  var readPlans: [Int: ReadPlan?] = [:]
  var tablePositions: [String: [String: Int]] = [:]
  var keyPositions: [String: (primaryKey: Int, entity: Int, version: Int, sole: Int?)] = [:]
  var toOnesSQL: [Int: String] = [:]
  var toOneUpdates: [PropertyKey: (sql: String, hasEntityColumn: Bool)] = [:]
  var objectSQL: [Int: String] = [:]

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
    let chosen = try Self.choose(model, metadata: metadata, file: url.path) {
      if let read = session?.cachedModelIfRead { return read }
      return try Self.readCachedModel(queue, file: url.path)
    }
    modelIsFromCache = chosen.isFromCache
    cacheDisagreement = chosen.disagreement
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
    let laidOut = Self.layOut(
      chosen.model, existing: existing, framework: metadata.frameworkVersion, numbers: Self.readNumbers(queue))
    self.model = laidOut.model
    schema = laidOut.schema
    if let first = laidOut.problems.first {
      throw StoreError(
        .layoutMismatch, file: url.path,
        reason: "the store is not laid out as model version '\(self.model.versionName ?? "?")' implies: \(first)"
          + (laidOut.problems.count > 1 ? " (and \(laidOut.problems.count - 1) more)" : ""))
    }
  }

  /// The model a store is read with: the one given when the store's hashes are its, else the
  /// store's own cached model (`cachedModel`, read only when needed).
  private static func choose(
    _ model: ObjectModel?, metadata: StoreMetadata, file: String, cachedModel: () throws -> ObjectModel?
  ) throws -> (model: ObjectModel, isFromCache: Bool, disagreement: [EntityDifference]) {
    guard let model else {
      guard let cached = try cachedModel() else {
        throw StoreError(.noModel, file: file, reason: "the store has no model cache (Z_MODELCACHE): give its model")
      }
      return (cached, true, [])
    }
    let differences = metadata.differences(from: model)
    guard !differences.isEmpty else { return (model, false, []) }
    // The store's own cached model is taken even where its hashes disagree with the metadata's
    // (a store written by one build and cached by another): Core Data falls back to the cache
    // when no version has the store's hashes, and so does migrun — the layout check still holds
    // it to the tables. The disagreement is kept, for reports.
    if let cached = try? cachedModel(), cached.entityVersionHashes == model.entityVersionHashes {
      return (model, false, differences)
    }
    throw StoreError(
      .incompatibleModel, file: file,
      reason: "the store does not fit model version '\(model.versionName ?? "?")':\n  "
        + differences.map(\.description).joined(separator: "\n  "))
  }

  /// The layout `model` implies for a store's `existing` tables, and where the tables differ from
  /// it. Its indexes are those of the framework that wrote the store (``StoreSchema/LegacyIndexForm``),
  /// its entity numbers the store's own (``StoreSchema/init(model:existing:framework:numbers:)``).
  private static func layOut(
    _ model: ObjectModel, existing: [String: [String]], framework: Int64?, numbers: [String: Int]
  ) -> (model: ObjectModel, schema: StoreSchema, problems: [String]) {
    let schema = StoreSchema(model: model, existing: existing, framework: framework, numbers: numbers)
    let problems = schema.mismatches(existing: existing)
    // A store written for one configuration holds that configuration's tables alone (Core Data
    // before today's ignored no configuration): read with the model of that configuration.
    guard !problems.isEmpty, model.wholeModel == nil,
      let configuration = model.configuration(ofStoreTables: Set(existing.keys)),
      let restricted = try? model.restricted(toConfiguration: configuration)
    else { return (model, schema, problems) }
    let restrictedSchema = StoreSchema(model: restricted, existing: existing, framework: framework, numbers: numbers)
    return (restricted, restrictedSchema, restrictedSchema.mismatches(existing: existing))
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
}
