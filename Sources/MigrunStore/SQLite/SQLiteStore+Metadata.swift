import Foundation
import GRDB
import MigrunModel
import PropertyList

/// What a store file says about itself: its metadata (`Z_METADATA`) and its cached model (`Z_MODELCACHE`).
extension SQLiteStore {
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
