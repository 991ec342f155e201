import MigrunModel
import MigrunStore

/// An object as one context sees it: Core Data's `NSManagedObject`. It reads its committed values
/// from the snapshot taken when it was fetched, holds its pending changes until the context
/// saves, and finds related objects through its context (faulting them in on access).
///
/// ```swift
/// let ada = try context.fetch("Employee", matching: try FormatPredicate("name == %@", arguments: [.string("Ada")]))[0]
/// try ada.set("salary", .double(5200))
/// let department = try ada.object("department")      // a managed object, read when first asked for
/// try context.save()
/// ```
///
/// An object lives as long as someone holds it: a context keeps unchanged objects weakly, so
/// fetched objects that are let go take their snapshots with them. An object keeps its context
/// alive (a context's pending objects keep it alive until saved, rolled back or reset).
public final class ManagedObject: CustomStringConvertible {
  /// Entity and primary key; a new object's key is negative (temporary) until it is saved.
  public internal(set) var id: ObjectID
  /// The entity, shared by every object of it in the context (not copied per object).
  let entityReference: EntityReference
  public var entity: Entity { entityReference.entity }
  var context: ObjectContext?
  /// The persistent values read from the store, shared with other contexts holding the same
  /// version (Core Data's row cache); nil for a new object and for a fault.
  private var row: Snapshot?
  /// What is pending or read lazily, made on first need (most fetched objects never need it).
  private var extra: Extra?
  /// A fault's fetch: its keys, and this object's place among them. Firing the fault reads its
  /// row with the rows of the faults after it (a batch), as a walk over a fetch reads them in turn.
  var faultGroup: FaultGroup?
  var faultIndex: Int32 = 0

  final class Extra {
    var committedToMany: [String: [ObjectID]] = [:]
    var changedAttributes: [String: StoreValue] = [:]
    var changedToOne: [String: ObjectID?] = [:]
    var changedToMany: [String: [ObjectID]] = [:]
    var defaulted: Set<String> = []
    var mergedInto: ObjectID?
  }

  private func extras() -> Extra {
    if let extra { return extra }
    let made = Extra()
    extra = made
    return made
  }

  /// Whether the object's values have not been read yet (Core Data's `isFault`): they are read
  /// from the store when first used.
  public var isFault: Bool { faultGroup != nil }

  /// The persistent values read from the store (attributes and to-one targets); `nil` when new
  /// (a fault's are read first).
  var snapshot: StoredObject? {
    if faultGroup != nil { try? fire() }
    return row?.stored
  }

  /// Committed to-many members, read on first access.
  var committedToMany: [String: [ObjectID]] {
    get { extra?.committedToMany ?? [:] }
    _modify { yield &extras().committedToMany }
  }

  /// Takes `row` as what the store holds: its to-many members as the committed lists, the rest as
  /// the (shared) snapshot.
  func commit(_ row: StoredObject) {
    if !row.toMany.isEmpty || extra != nil { committedToMany = row.toMany }
    self.row = entityReference.snapshots.snapshot(of: StoredRow(row), shape: entityReference)
    faultGroup = nil
  }

  /// Takes `row` (no to-many members read) as what the store holds.
  func commit(_ row: StoredRow) {
    if extra != nil { committedToMany = [:] }
    self.row = entityReference.snapshots.snapshot(of: row, shape: entityReference)
    faultGroup = nil
  }

  var changedAttributes: [String: StoreValue] {
    get { extra?.changedAttributes ?? [:] }
    set { if extra != nil || !newValue.isEmpty { extras().changedAttributes = newValue } }
    _modify { yield &extras().changedAttributes }
  }
  var changedToOne: [String: ObjectID?] {
    get { extra?.changedToOne ?? [:] }
    set { if extra != nil || !newValue.isEmpty { extras().changedToOne = newValue } }
    _modify { yield &extras().changedToOne }
  }
  var changedToMany: [String: [ObjectID]] {
    get { extra?.changedToMany ?? [:] }
    set { if extra != nil || !newValue.isEmpty { extras().changedToMany = newValue } }
    _modify { yield &extras().changedToMany }
  }
  public internal(set) var isInserted = false
  public internal(set) var isDeleted = false
  /// Set when a save folded this object into another one on a uniqueness constraint.
  public internal(set) var mergedInto: ObjectID? {
    get { extra?.mergedInto }
    set { if extra != nil || newValue != nil { extras().mergedInto = newValue } }
  }

  init(id: ObjectID, entity: EntityReference, context: ObjectContext) {
    self.id = id
    self.entityReference = entity
    self.context = context
  }

  deinit {
    context?.forget(id, self)
  }

  /// Whether the object was deleted and the deletion saved: it is out of its context for good
  /// (a stage lets go of it with its batch; a deletion not yet saved is a change).
  package var isGone: Bool { isDeleted && context?.registeredObject(id) !== self }

  /// Whether the object has changes the context has not saved.
  public var hasChanges: Bool {
    guard !isInserted, !isDeleted else { return true }
    guard let extra else { return false }
    return !extra.changedAttributes.isEmpty || !extra.changedToOne.isEmpty || !extra.changedToMany.isEmpty
  }

  /// Attributes of a new object that still hold the model's default.
  var defaulted: Set<String> {
    get { extra?.defaulted ?? [] }
    _modify { yield &extras().defaulted }
  }

  /// Names of the properties changed since the last save (for a new object: given a value).
  public var changedProperties: Set<String> {
    guard let extra else { return [] }
    return Set(extra.changedAttributes.keys).subtracting(extra.defaulted).union(extra.changedToOne.keys).union(
      extra.changedToMany.keys)
  }

  /// The values read from the store (Core Data's `committedValues`); `nil` for a new object.
  public var committedValues: StoredObject? { snapshot }

  /// The version (`Z_OPT`) the context read; 0 for a new object.
  public var version: Int64 {
    if faultGroup != nil { try? fire() }
    return row?.version ?? 0
  }

  /// The object's state in this context: snapshot plus changes (to-many lists as far as read or changed).
  public var state: StoredObject {
    var state = snapshot ?? StoredObject(id: id, version: 0)
    state.id = id
    guard let extra else { return state }
    for (name, value) in extra.changedAttributes { state.attributes[name] = value }
    for (name, target) in extra.changedToOne { state.toOne[name] = target }
    for (name, members) in extra.committedToMany where extra.changedToMany[name] == nil { state.toMany[name] = members }
    for (name, members) in extra.changedToMany { state.toMany[name] = members }
    return state
  }

  /// A committed attribute value without making a copy of the snapshot.
  func committedValue(_ name: String) -> StoreValue? {
    if faultGroup != nil { try? fire() }
    return row?.value(name)
  }

  /// A committed to-one target without making a copy of the snapshot.
  func committedTarget(_ name: String) -> ObjectID? {
    if faultGroup != nil { try? fire() }
    return row?.toOne[name]
  }

  /// Reads a fault's values (and those of the faults after it in its fetch); an error when its
  /// row is gone from the store.
  func fire() throws {
    guard let group = faultGroup else { return }
    let context = try liveContext()
    try context.fire(group, from: Int(faultIndex))
    if faultGroup != nil {
      faultGroup = nil
      throw ContextError(
        .noSuchObject, object: id, reason: "the store no longer has this object (a fault that cannot be read)")
    }
  }

  // MARK: - Attributes

  /// An attribute's value: the pending change, else the committed value.
  public func value(_ name: String) throws -> StoreValue {
    _ = try attribute(name)
    if let changed = extra?.changedAttributes[name] { return changed }
    try fire()
    return row?.value(name) ?? .null
  }

  public subscript(_ name: String) -> StoreValue? { try? value(name) }

  /// Changes an attribute; the value is converted to the attribute's type (an integer into a Double,
  /// a Boolean from 0/1) or refused when it cannot be.
  public func set(_ name: String, _ value: StoreValue) throws {
    let attribute = try attribute(name)
    let converted = try ObjectContext.convert(value, to: attribute, entity: entity.name)
    defaulted.remove(name)
    guard !attribute.isTransient else {
      changedAttributes[name] = converted
      return
    }
    if !isInserted, committedValue(name) == converted {
      changedAttributes[name] = nil
    } else {
      changedAttributes[name] = converted
    }
    try liveContext().noteChange(self)
  }

  // MARK: - Relationships

  /// A to-one relationship's target (read from the store when first asked for), or `nil`.
  public func object(_ relationship: String) throws -> ManagedObject? {
    let context = try liveContext()
    return try context.toOneTarget(self, try context.relationship(relationship, of: self, toMany: false)).map {
      try context.object(with: $0)
    }
  }

  /// Sets a to-one relationship; the inverse side follows.
  public func set(_ relationship: String, to target: ManagedObject?) throws {
    let context = try liveContext()
    try context.setToOne(self, try context.relationship(relationship, of: self, toMany: false), target)
  }

  /// A to-many relationship's members (in order where ordered), pending changes included.
  public func members(_ relationship: String) throws -> [ManagedObject] {
    let context = try liveContext()
    return try context.members(self, try context.relationship(relationship, of: self, toMany: true)).map {
      try context.object(with: $0)
    }
  }

  /// Replaces a to-many relationship's members; the inverse side follows.
  public func setMembers(_ relationship: String, _ members: [ManagedObject]) throws {
    let context = try liveContext()
    try context.setMembers(self, try context.relationship(relationship, of: self, toMany: true), members.map(\.id))
  }

  public func add(_ member: ManagedObject, to relationship: String) throws {
    try changeMembers(relationship) { if !$0.contains(member.id) { $0.append(member.id) } }
  }

  public func remove(_ member: ManagedObject, from relationship: String) throws {
    try changeMembers(relationship) { $0.removeAll { $0 == member.id } }
  }

  public var description: String {
    "\(id)\(isInserted ? " (new)" : "")\(isDeleted ? " (deleted)" : "")"
  }

  // MARK: - Non public

  private func changeMembers(_ name: String, _ change: (inout [ObjectID]) -> Void) throws {
    let context = try liveContext()
    let relationship = try context.relationship(name, of: self, toMany: true)
    var members = try context.members(self, relationship)
    change(&members)
    try context.setMembers(self, relationship, members)
  }

  func liveContext() throws -> ObjectContext {
    guard let context else {
      throw ContextError(.wrongContext, object: id, reason: "the object's context is gone")
    }
    return context
  }

  private func attribute(_ name: String) throws -> Attribute {
    _ = try liveContext()
    guard let attribute = entityReference.attributes[name] else {
      throw ContextError(.unknownProperty, object: id, reason: "entity '\(entity.name)' has no attribute '\(name)'")
    }
    return attribute
  }
}

/// One entity held once per context for its objects: the entity, where each stored attribute's
/// value sits in a snapshot, and the coordinator's snapshots.
final class EntityReference {
  let entity: Entity
  /// Attribute name → place in ``Snapshot/values`` (the names in the order of the first row read).
  private(set) var places: [String: Int] = [:]
  private(set) var names: [String] = []
  let snapshots: SnapshotRegistry
  /// The entity's attributes (inherited ones too) by name: looked up on every read and write.
  let attributes: [String: Attribute]

  init(_ entity: Entity, model: ObjectModel, snapshots: SnapshotRegistry) {
    self.entity = entity
    self.snapshots = snapshots
    attributes = Dictionary(model.attributes(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
  }

  /// The places of `names`, in order, learning the names it has not met.
  func places(of attributes: some Sequence<String>) -> [Int] {
    attributes.map { name in
      if let place = places[name] { return place }
      places[name] = names.count
      names.append(name)
      return names.count - 1
    }
  }
}

/// One version of one row's persistent values, shared by every object (of any context of the
/// coordinator) that read that version: attribute values by place (``EntityReference``), to-one
/// targets by name. Compact on purpose: a context holding a million objects holds a million of these.
final class Snapshot {
  let id: ObjectID
  let version: Int64
  let shape: EntityReference
  let values: ContiguousArray<StoreValue>
  let toOne: [String: ObjectID]
  private let registry: SnapshotRegistry

  init(_ row: StoredRow, shape: EntityReference, registry: SnapshotRegistry) {
    id = row.id
    version = row.version
    self.shape = shape
    if shape.names.isEmpty { _ = shape.places(of: row.names) }
    if shape.names == row.names {
      // The rows of one entity come in one order: taken as they are.
      values = row.values
    } else {
      let places = shape.places(of: row.names)
      var values = ContiguousArray(repeating: StoreValue.null, count: shape.names.count)
      for (place, value) in zip(places, row.values) { values[place] = value }
      self.values = values
    }
    toOne = row.toOne
    self.registry = registry
  }

  deinit { registry.forget(self) }

  func value(_ name: String) -> StoreValue? {
    guard let place = shape.places[name], place < values.count else { return nil }
    return values[place]
  }

  /// The snapshot as a stored object (every attribute it holds, to-ones; no to-many).
  var stored: StoredObject {
    var attributes: [String: StoreValue] = [:]
    attributes.reserveCapacity(values.count)
    for (place, value) in values.enumerated() { attributes[shape.names[place]] = value }
    return StoredObject(id: id, version: version, attributes: attributes, toOne: toOne)
  }
}
