import MigrunModel

/// A store that cannot be opened, read or written, or that does not fit a model.
///
/// The message names the store file and, where known, the entity and the object:
///
/// ```
/// Moody.sqlite: not a SQLite database (file is not a database)
/// Moody.sqlite: entity 'Mood', object 12: NOT NULL constraint failed: ZMOOD.ZDATE
/// ```
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible, CarriesCause {
  /// The kind of failure, to match on.
  public enum Code: String, Sendable, Hashable, CaseIterable {
    case notFound
    case notSQLite
    /// A SQLite file without Core Data's tables (`Z_METADATA`, `Z_PRIMARYKEY`).
    case notACoreDataStore
    case badMetadata
    /// The store's entity version hashes differ from the model's.
    case incompatibleModel
    /// No model was given and the store carries none (`Z_MODELCACHE`).
    case noModel
    /// The store's tables and columns are not the ones its model implies.
    case layoutMismatch
    case badModelCache
    /// A derived attribute whose derivation migrun cannot keep current (no Z_DA_ triggers known).
    case unsupportedDerivation
    /// A fetch index migrun cannot write as Core Data does (`StoreSchema/unsupported`).
    case unsupportedIndex
    /// A value a store of another type (XML, binary) cannot hold as Core Data would, or that
    /// migrun cannot yet read or write there (a composite, a custom transformer's data).
    case unsupportedValue
    case unknownEntity
    case unknownProperty
    case badValue
    /// A write broke a uniqueness constraint.
    case constraint
    case readOnly
    case sqlite
    case io
    /// Another process has the store open (`StoreUse`), or wrote to it during a migration.
    case inUse
    /// Not enough free space beside the store for a migration's working files.
    case noSpace
    /// An entry under one of the names migrun writes beside a store (its lock, swap journal,
    /// working copies, backups) that migrun did not write as it would: a symbolic link, a folder, a
    /// hard link, content it does not recognise (`WorkingFiles`). Never followed or removed.
    case foreignFile
  }

  public let code: Code
  public let file: String?
  public let entity: String?
  /// The object's primary key (`Z_PK`), when one object is concerned.
  public let primaryKey: Int64?
  public let reason: String
  /// The error underneath (SQLite's, the file system's), when another failure caused this one.
  package let cause: ErrorCause?

  /// The error underneath (SQLite's, the file system's), when another failure caused this one.
  public var underlyingError: (any Error)? { cause?.error }

  public init(
    _ code: Code, file: String? = nil, entity: String? = nil, primaryKey: Int64? = nil, reason: String,
    underlying: (any Error)? = nil
  ) {
    self.code = code
    self.file = file
    self.entity = entity
    self.primaryKey = primaryKey
    self.reason = reason
    cause = underlying.map(ErrorCause.init)
  }

  /// A model archive that cannot be read or written, as a store's error (`badModelCache`).
  package init(_ error: ModelCacheError, file: String? = nil) {
    self.init(.badModelCache, file: file, entity: error.entity, reason: error.reason, underlying: error)
  }

  public var description: String {
    ErrorMessage.line(file, entity: entity, detail: primaryKey.map { "object \($0)" }, reason)
  }

  /// The key after `largest` in `entity`'s hierarchy, or an error when `largest` is Int64's largest
  /// (a store whose keys reach it can take no new object: the next would overflow).
  package static func key(after largest: Int64, entity: String) throws(StoreError) -> Int64 {
    let (next, overflow) = largest.addingReportingOverflow(1)
    guard overflow else { return next }
    throw StoreError(
      .badValue, entity: entity,
      reason: "the hierarchy's largest key is \(largest), the largest a key can be: no new object can be numbered "
        + "after it (`migrun check` names the store's keys)")
  }

  func inFile(_ path: String) -> StoreError {
    file == nil
      ? StoreError(code, file: path, entity: entity, primaryKey: primaryKey, reason: reason, underlying: cause?.error)
      : self
  }
}
