import MigrunModel

/// One object's persistent state: attributes, to-one targets and to-many members.
public struct StoredObject: Sendable, Hashable {
  public var id: ObjectID
  /// `Z_OPT`: 1 on insert, +1 on each update (optimistic locking).
  public var version: Int64
  /// Attribute name → value (every stored attribute; `.null` where the row holds NULL).
  public var attributes: [String: StoreValue]
  /// To-one relationship name → target; absent when the relationship is empty.
  public var toOne: [String: ObjectID]
  /// To-many relationship name → members, in order for ordered relationships, else by primary key.
  public var toMany: [String: [ObjectID]]

  public init(
    id: ObjectID, version: Int64 = 1, attributes: [String: StoreValue] = [:], toOne: [String: ObjectID] = [:],
    toMany: [String: [ObjectID]] = [:]
  ) {
    self.id = id
    self.version = version
    self.attributes = attributes
    self.toOne = toOne
    self.toMany = toMany
  }

  /// `Z_OPT` after an update of a row at `version`: one more, wrapping past Int64's largest (a store
  /// file's `Z_OPT` is outside input, and versions are only ever compared for equality).
  package static func version(after version: Int64) -> Int64 { version &+ 1 }
}

/// One object's attributes and to-ones as a store reads them for a context: values in the order of
/// `names` (one array per entity, shared by its rows), no dictionary per row — what a context keeps
/// as the object's snapshot.
package struct StoredRow: Sendable {
  package var id: ObjectID
  package var version: Int64
  package var names: [String]
  package var values: ContiguousArray<StoreValue>
  package var toOne: [String: ObjectID]

  package init(_ object: StoredObject) {
    id = object.id
    version = object.version
    names = Array(object.attributes.keys)
    values = ContiguousArray(object.attributes.values)
    toOne = object.toOne
  }

  package init(
    id: ObjectID, version: Int64, names: [String], values: ContiguousArray<StoreValue>, toOne: [String: ObjectID]
  ) {
    self.id = id
    self.version = version
    self.names = names
    self.values = values
    self.toOne = toOne
  }
}

/// What every store offers: the same behaviour over SQLite and in memory.
package protocol ObjectStore: AnyObject {
  var model: ObjectModel { get }
  /// Seconds a write waits for another connection's lock before failing as in use.
  var busyTimeout: Double { get set }
  var metadata: StoreMetadata { get }
  /// Objects whose entity is exactly `entity` (or also its subentities).
  func count(of entity: String, includingSubentities: Bool) throws -> Int
  /// Every object of `entity` (and its subentities when asked), by primary key, streamed: one at a
  /// time, read in pages, so `body` may read this store again. Without `withToMany`, the objects'
  /// ``StoredObject/toMany`` stays empty and no member is looked up (attributes and to-ones only).
  /// `filter` skips objects it rules out where the store can tell (an SQL condition on the entity's
  /// table); a store that cannot gives every object. The caller still judges each one: a filter only
  /// narrows.
  func forEachObject(
    of entity: String, includingSubentities: Bool, withToMany: Bool, filter: RowFilter?,
    _ body: (StoredObject) throws -> Void
  ) throws
  /// How many objects of `entity` (and its subentities) every condition of `filter` holds for,
  /// counted by the store without reading an object; nil when the store cannot count that way.
  func count(of entity: String, includingSubentities: Bool, filter: RowFilter?) throws -> Int?
  func object(_ id: ObjectID) throws -> StoredObject?
  /// The object without its to-many members when `withToMany` is false (``StoredObject/toMany``
  /// empty: no member looked up).
  func object(_ id: ObjectID, withToMany: Bool) throws -> StoredObject?
  /// The object's relationships only: ``StoredObject/attributes`` may be left empty (what stage 2's
  /// default relationships read, per object).
  func relationships(of id: ObjectID, withToMany: Bool) throws -> StoredObject?
  /// The largest primary key used in `entity`'s hierarchy (0 when empty).
  func maxPrimaryKey(inHierarchyOf entity: String) throws -> Int64
  /// Objects that break the model's rules (required values, relationship counts), at most `limit`,
  /// one line each.
  func ruleViolations(limit: Int) throws -> [String]
  /// The IDs of `entity`'s objects (with its subentities' when asked) that `filter` takes, ordered
  /// by `keys` (attribute names, ascending or not) and then by key, at most `limit` after
  /// skipping `offset`; nil when the store cannot say the filter or the order itself.
  func objectIDs(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, sortedBy keys: [(String, Bool)], limit: Int?,
    offset: Int
  ) throws -> [ObjectID]?
  /// ``forEachObject(of:includingSubentities:withToMany:filter:_:)`` without to-manys, as rows.
  func forEachRow(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, _ body: (StoredRow) throws -> Void
  ) throws
  /// ``objects(_:)`` as rows.
  func rows(_ ids: [ObjectID]) throws -> [StoredRow]
  /// Whether ``forEachObject(of:includingSubentities:withToMany:filter:_:)`` gives exactly the
  /// objects a filter takes (a store that cannot say filters gives every object).
  func says(_ filter: RowFilter?, of entity: String) -> Bool
  /// The objects with these keys (attributes and to-ones, no to-many members), in the order given;
  /// a key naming no object is left out.
  func objects(_ ids: [ObjectID]) throws -> [StoredObject]
  /// Runs `body` in one transaction: all its writes land, or none.
  func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T
}

/// Writes inside one store transaction.
package protocol StoreWriter {
  /// A primary key not used yet in `entity`'s hierarchy (Z_PRIMARYKEY.Z_MAX kept right).
  func newPrimaryKey(for entity: String) throws -> Int64
  /// Inserts the object's row and to-one columns; `toMany` is written by ``setToMany(_:_:_:)``.
  func insert(_ object: StoredObject) throws
  /// Writes the object's attributes and to-one columns, and `Z_OPT`: its version + 1 when
  /// `bumpingVersion` (a change, for optimistic locking), else its version as it is (a migration
  /// filling in an object it made).
  func update(_ object: StoredObject, bumpingVersion: Bool) throws
  /// Keys up to `key` count as used in `entity`'s hierarchy: later ``newPrimaryKey(for:)`` go above.
  func reservePrimaryKeys(for entity: String, through key: Int64) throws
  /// Writes a to-one relationship's columns only (the version is not bumped).
  func setToOne(_ id: ObjectID, _ relationship: String, _ target: ObjectID?) throws
  /// Replaces a to-many relationship's members (join rows, or the members' inverse column).
  func setToMany(_ id: ObjectID, _ relationship: String, _ members: [ObjectID]) throws
  /// Removes the object's row and its join rows (delete rules are the context's business).
  func delete(_ id: ObjectID) throws
  /// Replaces the store's metadata.
  func setMetadata(_ metadata: StoreMetadata) throws
  /// Reads an object inside the transaction (sees its writes).
  func object(_ id: ObjectID) throws -> StoredObject?
  /// Whether the object exists inside the transaction: its row, of its own entity (no values read).
  func contains(_ id: ObjectID) throws -> Bool
  /// The first object of `entity` (or a subentity), by primary key, whose attributes equal `values`.
  func firstObject(of entity: String, matching values: [String: StoreValue]) throws -> ObjectID?
  /// The IDs of `entity`'s objects (and its subentities') `filter` takes, as written so far, ordered
  /// by `keys` (attribute, ascending) then by key, at most `limit`; nil when the store cannot say
  /// the filter or the order.
  func objectIDs(of entity: String, filter: RowFilter?, sortedBy keys: [(String, Bool)], limit: Int?) throws
    -> [ObjectID]?
  /// Records a context's save in the store's persistent history, when the store keeps one (Core
  /// Data writes a transaction for every save of a store with history tracking); a store without
  /// history records nothing.
  func recordHistory(_ save: SavedChanges) throws
}

/// What one context save changed, for persistent history: the transaction's author and context
/// name, the objects inserted, the properties each update wrote, and each deleted object as it was.
package struct SavedChanges: Sendable {
  package var author: String?
  package var contextName: String?
  package var inserted: [ObjectID] = []
  package var updated: [(id: ObjectID, properties: Set<String>)] = []
  package var deleted: [(id: ObjectID, row: StoredObject?)] = []

  package init(author: String? = nil, contextName: String? = nil) {
    self.author = author
    self.contextName = contextName
  }

  package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

extension ObjectStore {
  /// A store that cannot test a filter itself does not count with one.
  package func count(of entity: String, includingSubentities: Bool, filter: RowFilter?) throws -> Int? {
    filter == nil ? try count(of: entity, includingSubentities: includingSubentities) : nil
  }

  package func says(_ filter: RowFilter?, of entity: String) -> Bool { filter == nil }

  /// A store that cannot select in SQL selects nothing itself.
  package func objectIDs(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, sortedBy keys: [(String, Bool)], limit: Int?,
    offset: Int
  ) throws -> [ObjectID]? { nil }

  package func objects(_ ids: [ObjectID]) throws -> [StoredObject] {
    try ids.compactMap { try object($0, withToMany: false) }
  }

  package func forEachRow(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, _ body: (StoredRow) throws -> Void
  ) throws {
    try forEachObject(of: entity, includingSubentities: includingSubentities, withToMany: false, filter: filter) {
      try body(StoredRow($0))
    }
  }

  package func rows(_ ids: [ObjectID]) throws -> [StoredRow] { try objects(ids).map(StoredRow.init) }

  /// Writes `objects` (with their keys, attributes, to-ones and to-manys) and, when given, the
  /// metadata, in one transaction: an import's and a conversion's last step.
  package func insertAll(_ objects: [StoredObject], metadata: StoreMetadata?) throws {
    try write { writer in
      if let metadata { try writer.setMetadata(metadata) }
      for object in objects { try writer.insert(object) }
      for object in objects {
        for (relationship, members) in object.toMany.sorted(by: { $0.key < $1.key }) {
          try writer.setToMany(object.id, relationship, members)
        }
      }
    }
  }

  /// Every object of `entity` (and its subentities when asked), by primary key, streamed.
  package func forEachObject(
    of entity: String, includingSubentities: Bool, withToMany: Bool, _ body: (StoredObject) throws -> Void
  ) throws {
    try forEachObject(
      of: entity, includingSubentities: includingSubentities, withToMany: withToMany, filter: nil, body)
  }

  /// Every object with its to-many members (see ``forEachObject(of:includingSubentities:withToMany:_:)``).
  package func forEachObject(of entity: String, includingSubentities: Bool, _ body: (StoredObject) throws -> Void)
    throws
  {
    try forEachObject(of: entity, includingSubentities: includingSubentities, withToMany: true, body)
  }
}

extension StoreWriter {
  /// Writes the object as changed: `Z_OPT` becomes its version + 1.
  package func update(_ object: StoredObject) throws {
    try update(object, bumpingVersion: true)
  }
}
