import MigrunModel
import MigrunStore

/// Core Data's `NSEntityMigrationPolicy`: the seven hooks a migration calls for each entity
/// mapping. Every hook has a default; a policy implements the ones it needs (the Lua policies of
/// MigrunScripting implement them with scripts).
///
/// Stage 1 calls ``begin(_:_:)``, ``createDestinationInstances(for:_:_:)`` per source object and
/// ``endInstanceCreation(_:_:)``; stage 2 ``createRelationships(for:_:_:)`` per destination object
/// and ``endRelationshipCreation(_:_:)``; stage 3 ``performCustomValidation(_:_:)`` and ``end(_:_:)``.
public protocol EntityMigrationPolicy: AnyObject {
  func begin(_ mapping: EntityMapping, _ manager: MigrationManager) throws
  /// Creates 0, 1 or many destination objects for `source` and associates them with it.
  func createDestinationInstances(for source: StoredObject, _ mapping: EntityMapping, _ manager: MigrationManager)
    throws
  func endInstanceCreation(_ mapping: EntityMapping, _ manager: MigrationManager) throws
  /// Sets `destination`'s relationships.
  func createRelationships(for destination: ObjectID, _ mapping: EntityMapping, _ manager: MigrationManager) throws
  func endRelationshipCreation(_ mapping: EntityMapping, _ manager: MigrationManager) throws
  func performCustomValidation(_ mapping: EntityMapping, _ manager: MigrationManager) throws
  /// Core Data's `end(_:manager:)`.
  func end(_ mapping: EntityMapping, _ manager: MigrationManager) throws
  /// The policy as a function of one source row — when all it does is compute attributes of the
  /// one destination object each source object gets (no hook of its own) — so the step can run as
  /// a bulk copy. `inputs`: the source attributes the transform receives, in order. nil (the
  /// default): the step runs object by object.
  func rowTransform(for mapping: EntityMapping, inputs: [String], _ manager: MigrationManager) throws
    -> (any RowTransform)?
  /// Whether stage 1 makes exactly the default: one destination object per source object (then
  /// with the source's key), whatever else the hooks do. Lets the rest of a step be copied as rows
  /// around this mapping's objects (a mixed step). Default false: unknown.
  var makesDefaultDestinations: Bool { get }
  /// Whether the policy only computes attributes (no hook, no filter) — so that
  /// ``rowTransform(for:inputs:_:)`` will give a transform; what `migrun plan` goes by before the
  /// step runs. Default false.
  var computesAttributesOnly: Bool { get }
}

extension EntityMigrationPolicy {
  public var makesDefaultDestinations: Bool { false }
  public var computesAttributesOnly: Bool { false }
  public func rowTransform(for mapping: EntityMapping, inputs: [String], _ manager: MigrationManager) throws
    -> (any RowTransform)?
  { nil }
  public func begin(_ mapping: EntityMapping, _ manager: MigrationManager) throws {}
  public func createDestinationInstances(
    for source: StoredObject, _ mapping: EntityMapping, _ manager: MigrationManager
  )
    throws
  {
    try manager.createDefaultDestination(for: source, mapping)
  }
  public func endInstanceCreation(_ mapping: EntityMapping, _ manager: MigrationManager) throws {}
  public func createRelationships(for destination: ObjectID, _ mapping: EntityMapping, _ manager: MigrationManager)
    throws
  {
    try manager.createDefaultRelationships(for: destination, mapping)
  }
  public func endRelationshipCreation(_ mapping: EntityMapping, _ manager: MigrationManager) throws {}
  public func performCustomValidation(_ mapping: EntityMapping, _ manager: MigrationManager) throws {}
  public func end(_ mapping: EntityMapping, _ manager: MigrationManager) throws {}
}

/// The policy of every mapping without one: copy by the mapping's attribute sources, rebuild
/// relationships through the associations.
package final class DefaultMigrationPolicy: EntityMigrationPolicy {
  package init() {}
  package var makesDefaultDestinations: Bool { true }
}

/// A policy reduced to a function of one source row: what the bulk copy of a step calls when an
/// entity mapping's policy only computes attributes (see ``EntityMigrationPolicy/rowTransform(for:inputs:_:)``).
public protocol RowTransform: AnyObject {
  /// The destination attributes it computes, in the order ``transform(_:_:)`` returns them.
  var outputs: [String] { get }
  /// The computed values for the source object `id`, whose attributes come in the order of the
  /// `inputs` the transform was made for.
  func transform(_ id: ObjectID, _ attributes: [StoreValue]) throws -> [StoreValue]
}

/// A row transform that runs the bulk copy's whole row loop itself (Lua policies: in C, values
/// straight from SQLite into Lua and back), handing back the rows whose values it leaves to the host.
package protocol RowLoopTransform: RowTransform {
  /// Steps `select` and inserts through `insert` — prepared `sqlite3_stmt`s of two connections: the
  /// first `plainCount` columns (Z_PK first) bound unchanged, then the transform's inputs (of
  /// `inputTypes`), its outputs bound after the plain columns — until the select is done, `limit`
  /// rows are in, or a row needs the host. `currentObject` names the row the select is on (for errors).
  func runRows(
    select: OpaquePointer, insert: OpaquePointer, plainCount: Int, inputTypes: [AttributeType], limit: Int,
    currentObject: () -> ObjectID
  ) throws -> (rows: Int, stop: RowLoopStop)
}

/// Why ``RowLoopTransform/runRows(select:insert:plainCount:inputTypes:limit:currentObject:)`` returned.
package enum RowLoopStop: Sendable, Equatable {
  case finished
  case paused
  /// The select is on a row whose inputs the host reads: it does the whole row.
  case hostRow
  /// The computed values of the row the select is on: the host binds them after the plain columns
  /// (already bound) and runs the insert.
  case hostOutputs([StoreValue])
  /// The select failed, or the insert of the row with key `insertOf` (left unreset); the
  /// connection's message says why.
  case sqliteFailed(insertOf: Int64?)
}

/// Decides what survives when two destination objects of a migration collide on a uniqueness
/// constraint (two source objects mapped to one unique destination object).
package protocol MigrationMergeRule: AnyObject {
  /// Whether the rule has an answer for `entity` (a destination entity, or an ancestor of one).
  func handles(_ entity: String) -> Bool
  /// The attribute values the surviving object (`existing`, already written) takes when `incoming`
  /// (not written) collides with it; attributes left out keep `existing`'s value. Relationships of
  /// both sources are joined in stage 2 (to-many: the union; to-one: the first source's target).
  func merge(entity: String, existing: StoredObject, incoming: StoredObject) throws -> [String: StoreValue]
}
