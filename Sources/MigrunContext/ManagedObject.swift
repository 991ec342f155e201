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
  /// The registry holding ``snapshot`` (released with the object).
  let registry: SnapshotRegistry
  /// The persistent values read from the store (attributes and to-one targets); `nil` when new.
  var snapshot: StoredObject? {
    didSet {
      if let oldValue { registry.release(oldValue) }
    }
  }
  /// Committed to-many members, read on first access.
  var committedToMany: [String: [ObjectID]] = [:]

  /// Takes `row` as what the store holds: its to-many members as the committed lists, the rest as
  /// the (shared) snapshot.
  func commit(_ row: StoredObject) {
    var row = row
    committedToMany = row.toMany
    row.toMany = [:]
    snapshot = registry.retain(row)
  }
  var changedAttributes: [String: StoreValue] = [:]
  var changedToOne: [String: ObjectID?] = [:]
  var changedToMany: [String: [ObjectID]] = [:]
  public internal(set) var isInserted = false
  public internal(set) var isDeleted = false
  /// Set when a save folded this object into another one on a uniqueness constraint.
  public internal(set) var mergedInto: ObjectID?

  init(id: ObjectID, entity: EntityReference, context: ObjectContext, registry: SnapshotRegistry) {
    self.id = id
    self.entityReference = entity
    self.context = context
    self.registry = registry
  }

  deinit {
    if let snapshot { registry.release(snapshot) }
    context?.forget(id)
  }

  /// Whether the object has changes the context has not saved.
  public var hasChanges: Bool {
    isInserted || isDeleted || !changedAttributes.isEmpty || !changedToOne.isEmpty || !changedToMany.isEmpty
  }

  /// Attributes of a new object that still hold the model's default.
  var defaulted: Set<String> = []

  /// Names of the properties changed since the last save (for a new object: given a value).
  public var changedProperties: Set<String> {
    Set(changedAttributes.keys).subtracting(defaulted).union(changedToOne.keys).union(changedToMany.keys)
  }

  /// The values read from the store (Core Data's `committedValues`); `nil` for a new object.
  public var committedValues: StoredObject? { snapshot }

  /// The version (`Z_OPT`) the context read; 0 for a new object.
  public var version: Int64 { snapshot?.version ?? 0 }

  /// The object's state in this context: snapshot plus changes (to-many lists as far as read or changed).
  public var state: StoredObject {
    var state = snapshot ?? StoredObject(id: id, version: 0)
    state.id = id
    for (name, value) in changedAttributes { state.attributes[name] = value }
    for (name, target) in changedToOne { state.toOne[name] = target }
    for (name, members) in committedToMany where changedToMany[name] == nil { state.toMany[name] = members }
    for (name, members) in changedToMany { state.toMany[name] = members }
    return state
  }

  // MARK: - Attributes

  /// An attribute's value: the pending change, else the committed value.
  public func value(_ name: String) throws -> StoreValue {
    _ = try attribute(name)
    if let changed = changedAttributes[name] { return changed }
    return snapshot?.attributes[name] ?? .null
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
    if snapshot?.attributes[name] == converted, !isInserted {
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
    guard let attribute = try liveContext().model.attributes(of: entity).first(where: { $0.name == name }) else {
      throw ContextError(.unknownProperty, object: id, reason: "entity '\(entity.name)' has no attribute '\(name)'")
    }
    return attribute
  }
}

/// One entity held once per context for its objects.
final class EntityReference {
  let entity: Entity
  init(_ entity: Entity) { self.entity = entity }
}
