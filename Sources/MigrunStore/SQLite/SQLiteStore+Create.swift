import Foundation
import GRDB
import MigrunModel

/// A new store: its file, tables, metadata and model cache, and what is built after the rows
/// (indexes, derived attributes' triggers, R-trees).
extension SQLiteStore {
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
  /// Creates the schema's indexes (a store made `withIndexes: false`).
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
}
