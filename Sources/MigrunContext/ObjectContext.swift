import Foundation
import MigrunModel
import MigrunStore

/// One store shared by several contexts: Core Data's persistent store coordinator. It holds the
/// snapshots its contexts' objects use (one per object version, released with the last user).
///
/// ```swift
/// let coordinator = StoreCoordinator(store: try SQLiteStore(url: url, model: model, access: .readWrite))
/// let left = coordinator.newContext()                                   // merge policy: error
/// let right = coordinator.newContext(mergePolicy: .mergeByPropertyObjectTrump)
/// ```
public final class StoreCoordinator {
  package let store: any ObjectStore
  let snapshots = SnapshotRegistry()

  package init(store: any ObjectStore) {
    self.store = store
  }

  /// A coordinator over an open SQLite store: its contexts read and save through it.
  public convenience init(store: SQLiteStore) {
    self.init(store: store as any ObjectStore)
  }

  public func newContext(mergePolicy: MergePolicy = .error) -> ObjectContext {
    ObjectContext(coordinator: self, mergePolicy: mergePolicy)
  }

  /// Snapshots held for the objects of every context (bounded by the objects alive).
  public var snapshotCount: Int { snapshots.count }
}

/// What a save changed, by object ID: Core Data's did-save notification. Hand it to another
/// context's ``ObjectContext/mergeChanges(_:)``.
public struct ChangeSet: Sendable, Hashable {
  public var inserted: [ObjectID] = []
  public var updated: [ObjectID] = []
  public var deleted: [ObjectID] = []
  /// Objects folded into another on a uniqueness constraint: old (or temporary) ID → the survivor.
  public var merged: [ObjectID: ObjectID] = [:]

  public init(inserted: [ObjectID] = [], updated: [ObjectID] = [], deleted: [ObjectID] = []) {
    self.inserted = inserted
    self.updated = updated
    self.deleted = deleted
  }

  public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// A scratch pad of objects over a store: Core Data's `NSManagedObjectContext`. Fetch, change,
/// insert and delete objects, then ``save()`` them in one transaction, checked against what the
/// store holds now (optimistic locking) and resolved by the context's ``mergePolicy``.
///
/// ```swift
/// let context = coordinator.newContext(mergePolicy: .mergeByPropertyStoreTrump)
/// let ada = try context.fetch("Employee", matching: try FormatPredicate("name == %@", arguments: [.string("Ada")]))[0]
/// try ada.set("salary", .double(5200))
/// let changes = try context.save()          // inserted, updated, deleted object IDs
/// try otherContext.mergeChanges(changes)
/// ```
///
/// A context is used from one thread at a time. It holds objects with pending changes strongly and
/// every other object weakly.
public final class ObjectContext {
  public let coordinator: StoreCoordinator
  public var mergePolicy: MergePolicy
  /// Who makes this context's saves, as persistent history records it (Core Data's
  /// `transactionAuthor`).
  public var transactionAuthor: String?
  /// The context's name, as persistent history records it with each save (Core Data's `name`).
  public var name: String?

  /// Objects by entity and key, not retained: an object leaves as it goes (its `deinit` calls
  /// ``forget(_:_:)``), so an entry never names a freed object. Keyed by entity, then key, for
  /// memory: a million objects registered take 16 bytes a slot, not an ID's 24 and a weak box.
  private var registered: [String: [Int64: Unmanaged<ManagedObject>]] = [:]
  private var registeredTotal = 0
  private var registeredPeak = 0
  /// Objects this context has made from rows or inserted, over its life (what a count in SQL does
  /// without: tests read it).
  package private(set) var objectsMade = 0
  /// Objects with pending changes, held until saved or rolled back.
  var pending: [ObjectID: ManagedObject] = [:]
  /// The model's rules, checked on every save: worked out once per context.
  lazy var rules = ModelRules(model: model)
  private var nextTemporaryKey: Int64 = -1

  init(coordinator: StoreCoordinator, mergePolicy: MergePolicy) {
    self.coordinator = coordinator
    self.mergePolicy = mergePolicy
  }

  var store: any ObjectStore { coordinator.store }
  public var model: ObjectModel { coordinator.store.model }

  /// Seconds a ``save()`` waits for another connection's or process's lock on the store before it
  /// fails with ``ContextError/Code/inUse`` (30 unless set; 0 fails at once). It is the store's
  /// connection's, so every context of the coordinator shares it.
  ///
  /// ```swift
  /// context.busyTimeout = 2
  /// ```
  public var busyTimeout: Double {
    get { coordinator.store.busyTimeout }
    set { coordinator.store.busyTimeout = newValue }
  }

  /// Whether anything is inserted, changed or deleted and not saved.
  public var hasChanges: Bool { pending.values.contains { $0.hasChanges } }
  public var insertedObjects: [ManagedObject] { ordered(pending.values.filter { $0.isInserted && !$0.isDeleted }) }
  public var updatedObjects: [ManagedObject] {
    ordered(pending.values.filter { !$0.isInserted && !$0.isDeleted && $0.hasChanges })
  }
  public var deletedObjects: [ManagedObject] { ordered(pending.values.filter { $0.isDeleted && !$0.isInserted }) }
  /// Objects this context holds now (pending ones and those someone still uses).
  public var registeredCount: Int { registeredTotal }

  // MARK: - Fetching

  /// Objects of `entity` (and its subentities) that pass `filter`, in `sortedBy` order (then by
  /// primary key). Pending changes count: inserted objects that match are included, deleted ones
  /// left out, changed ones judged by their changed values.
  package func fetch(
    _ entityName: String, where filter: Filter? = nil, sortedBy keys: [SortKey] = [], includingSubentities: Bool = true
  ) throws -> [ManagedObject] {
    try fetch(entityName, where: filter, sortedBy: keys, includingSubentities: includingSubentities, rowFilter: nil)
  }

  /// As ``fetch(_:where:sortedBy:includingSubentities:)``, the store skipping rows `rowFilter` rules
  /// out; objects with pending changes are judged by their changed values whatever their row holds.
  func fetch(
    _ entityName: String, where filter: Filter?, sortedBy keys: [SortKey], includingSubentities: Bool,
    rowFilter: RowFilter?
  ) throws -> [ManagedObject] {
    let entity = try entity(entityName)
    let names = Set(model.attributes(of: entity).map(\.name)).union(model.relationships(of: entity).map(\.name))
    for name in (filter?.names ?? []) + keys.map(\.name) where !names.contains(name) {
      throw ContextError(
        .unknownProperty, entity: entityName, reason: "entity '\(entityName)' has no property '\(name)'")
    }
    var found: [(ManagedObject, StoredObject)] = []
    var seen: Set<ObjectID> = []
    func isFetched(_ object: ManagedObject) -> Bool {
      object.entity.name == entityName || (includingSubentities && model.entity(object.entity, isKindOf: entityName))
    }
    do {
      try store.forEachObject(
        of: entityName, includingSubentities: includingSubentities, withToMany: false, filter: rowFilter
      ) { row in
        let object = try self.registeredObject(row.id) ?? self.adopt(row)
        seen.insert(object.id)
        guard !object.isDeleted else { return }
        let state = object.hasChanges ? object.state : (object.snapshot ?? row)
        if filter?.matches(state) ?? true { found.append((object, state)) }
      }
    } catch let error as ContextError {
      throw error
    } catch {
      throw ContextError(.store, entity: entityName, reason: "\(error)", underlying: error)
    }
    // A changed object whose row the filter ruled out may match by its changed values (kept in the
    // store's order, by key).
    if rowFilter != nil {
      let added = changedMatches(filter, excluding: seen, isFetched)
      if !added.isEmpty { found = (found + added).sorted { $0.0.id.primaryKey < $1.0.id.primaryKey } }
    }
    for object in insertedObjects where isFetched(object) {
      let state = object.state
      if filter?.matches(state) ?? true { found.append((object, state)) }
    }
    // Without keys the order is already the store's (by key) followed by new objects.
    if !keys.isEmpty { found.sort { SortKey.precedes($0.1, $1.1, by: keys) } }
    return found.map(\.0)
  }

  /// Changed objects (neither inserted nor deleted) not among `seen` that are fetched and whose
  /// changed values pass `filter`.
  private func changedMatches(
    _ filter: Filter?, excluding seen: Set<ObjectID>, _ isFetched: (ManagedObject) -> Bool
  ) -> [(ManagedObject, StoredObject)] {
    pending.values.filter { $0.hasChanges && !$0.isInserted && !$0.isDeleted }.compactMap { object in
      guard !seen.contains(object.id), isFetched(object) else { return nil }
      let state = object.state
      return filter?.matches(state) ?? true ? (object, state) : nil
    }
  }

  /// The object with `id` in this context (read from the store when not registered yet).
  public func object(with id: ObjectID) throws -> ManagedObject {
    if let object = registeredObject(id) { return object }
    guard id.primaryKey > 0 else {
      throw ContextError(.noSuchObject, object: id, reason: "no such object in this context")
    }
    _ = try entity(id.entity)
    let row: StoredObject?
    do {
      row = try store.object(id)
    } catch {
      throw ContextError(.store, object: id, reason: "\(error)", underlying: error)
    }
    guard let row else { throw ContextError(.noSuchObject, object: id, reason: "the store has no such object") }
    return try adopt(row)
  }

  /// The object an `x-coredata://STORE-UUID/Entity/pN` URI names in this context's store.
  public func object(uri: String) throws -> ManagedObject {
    let prefix = "x-coredata://\(store.metadata.uuid)/"
    guard uri.hasPrefix(prefix), let id = ObjectID(uri.dropFirst(prefix.count)) else {
      throw ContextError(.noSuchObject, reason: "'\(uri)' is not an object URI of store \(store.metadata.uuid)")
    }
    return try object(with: id)
  }

  /// The URI of an object (a new object's is temporary until saved, as in Core Data).
  public func uri(of object: ManagedObject) -> String { object.id.uri(storeUUID: store.metadata.uuid) }

  // MARK: - Changing

  /// A new object of `entity`: default values from the model, then `values`. Saved by ``save()``.
  @discardableResult
  public func insert(_ entityName: String, _ values: [String: StoreValue] = [:]) throws -> ManagedObject {
    let entity = try entity(entityName)
    guard !entity.isAbstract else {
      throw ContextError(.unknownEntity, entity: entityName, reason: "entity '\(entityName)' is abstract")
    }
    let object = ManagedObject(
      id: ObjectID(entity: entityName, primaryKey: nextTemporaryKey), entity: try entityReference(entityName),
      context: self)
    nextTemporaryKey -= 1
    object.isInserted = true
    for attribute in model.attributes(of: entity) where !attribute.isTransient {
      object.changedAttributes[attribute.name] = attribute.defaultValue
      object.defaulted.insert(attribute.name)
    }
    register(object)
    pending[object.id] = object
    for (name, value) in values.sorted(by: { $0.key < $1.key }) { try object.set(name, value) }
    return object
  }

  /// Deletes the object and applies its relationships' delete rules now: nullify takes it out of
  /// the inverse side, cascade deletes the destinations (and theirs), deny is checked on save, no
  /// action leaves the destinations as they are.
  public func delete(_ object: ManagedObject) throws {
    try own(object)
    guard !object.isDeleted else { return }
    object.isDeleted = true
    pending[object.id] = object
    for relationship in model.relationships(of: object.entity) where !relationship.isTransient {
      switch relationship.deleteRule {
      case .nullify: try nullify(object, relationship)
      case .cascade:
        let targets =
          relationship.isToMany
          ? try members(object, relationship) : toOneTarget(object, relationship).map { [$0] } ?? []
        for target in targets { try delete(try self.object(with: target)) }
      case .deny, .noAction: continue
      }
    }
  }

  /// Discards every pending change: inserted objects are dropped, changed and deleted ones return
  /// to their committed values.
  public func rollback() {
    for object in pending.values {
      if object.isInserted {
        evict(object)
      } else {
        discardChanges(object)
      }
    }
    pending = [:]
  }

  /// Reads the object's row again. `mergeChanges: false` drops its pending changes; `true` keeps
  /// them on top of the new values (and the new version: a later save does not conflict with what
  /// was read here).
  public func refresh(_ object: ManagedObject, mergeChanges: Bool) throws {
    try own(object)
    guard !object.isInserted else { return }
    let row: StoredObject?
    do {
      row = try store.object(object.id)
    } catch {
      throw ContextError(.store, object: object.id, reason: "\(error)", underlying: error)
    }
    guard let row else {
      evict(object)
      return
    }
    object.commit(row)
    if !mergeChanges { discardChanges(object) }
    noteChange(object)
  }

  /// Forgets every object: pending changes are discarded and objects held elsewhere are cut off
  /// from this context (their reads fail).
  public func reset() {
    rollback()
    for objects in registered.values {
      for object in objects.values { object.takeUnretainedValue().context = nil }
    }
    registered = [:]
    registeredTotal = 0
    registeredPeak = 0
  }

  /// Takes in another context's save: updated objects this context holds are read again (their
  /// pending changes kept on top, except where the merge policy lets the store win), deleted ones
  /// leave this context.
  public func mergeChanges(_ changes: ChangeSet) throws {
    for id in changes.updated {
      guard let object = registeredObject(id) else { continue }
      guard object.hasChanges else {
        try refresh(object, mergeChanges: false)
        continue
      }
      let read = object.snapshot
      try refresh(object, mergeChanges: true)
      switch mergePolicy {
      case .rollback: discardChanges(object)
      case .mergeByPropertyStoreTrump:
        guard let read, let now = object.snapshot else { break }
        for name in object.changedAttributes.keys where read.attributes[name] != now.attributes[name] {
          object.changedAttributes[name] = nil
        }
        for name in object.changedToOne.keys where read.toOne[name] != now.toOne[name] {
          object.changedToOne[name] = nil
        }
      default: break
      }
      noteChange(object)
    }
    for id in changes.deleted {
      if let object = registeredObject(id) { evict(object) }
    }
  }

  // MARK: - Relationships (used by ManagedObject)

  func relationship(_ name: String, of object: ManagedObject, toMany: Bool) throws -> Relationship {
    guard let relationship = model.relationships(of: object.entity).first(where: { $0.name == name }) else {
      throw ContextError(
        .unknownProperty, object: object.id, reason: "entity '\(object.entity.name)' has no relationship '\(name)'")
    }
    guard relationship.isToMany == toMany else {
      throw ContextError(
        .wrongType, object: object.id,
        reason: "'\(name)' is a \(relationship.isToMany ? "to-many" : "to-one") relationship")
    }
    return relationship
  }

  func toOneTarget(_ object: ManagedObject, _ relationship: Relationship) -> ObjectID? {
    guard let target = storedTarget(object, relationship.name) else { return nil }
    return registeredObject(target)?.isDeleted == true ? nil : target
  }

  /// The to-one target as the object holds it, deleted or not.
  func storedTarget(_ object: ManagedObject, _ name: String) -> ObjectID? {
    object.changedToOne[name] ?? object.committedTarget(name)
  }

  /// Members as this context sees them: the committed list (read once), with this context's
  /// pending changes on either side applied.
  func members(_ object: ManagedObject, _ relationship: Relationship) throws -> [ObjectID] {
    let inverse = model.inverse(of: relationship)
    var list: [ObjectID]
    if let changed = object.changedToMany[relationship.name] {
      list = changed
    } else if object.isInserted {
      list = []
    } else if let committed = object.committedToMany[relationship.name] {
      list = committed
    } else {
      do {
        list = try store.object(object.id)?.toMany[relationship.name] ?? []
      } catch {
        throw ContextError(.store, object: object.id, reason: "\(error)", underlying: error)
      }
      object.committedToMany[relationship.name] = list
    }
    if let inverse, !inverse.isToMany, object.changedToMany[relationship.name] == nil {
      // Members join and leave through their to-one side.
      list.removeAll { member in
        guard let other = registeredObject(member), let target = other.changedToOne[inverse.name] else { return false }
        return target != object.id
      }
      let joining = pending.values.compactMap { other -> ObjectID? in
        guard case .some(.some(let target)) = other.changedToOne[inverse.name], target == object.id else { return nil }
        return other.id
      }
      list += joining.filter { !list.contains($0) }.sorted(by: Self.keyOrder)
    }
    list.removeAll { registeredObject($0)?.isDeleted == true }
    // An unordered relationship lists members as the store does: by key, new objects last.
    return relationship.isOrdered ? list : list.sorted(by: Self.keyOrder)
  }

  /// Saved objects by ID, then new ones in the order they were inserted.
  static func keyOrder(_ lhs: ObjectID, _ rhs: ObjectID) -> Bool {
    switch (lhs.primaryKey < 0, rhs.primaryKey < 0) {
    case (false, false): lhs < rhs
    case (true, true): lhs.primaryKey > rhs.primaryKey
    case (let left, _): !left
    }
  }

  func setToOne(_ object: ManagedObject, _ relationship: Relationship, _ target: ManagedObject?) throws {
    try own(object)
    if let target {
      try own(target)
      try checkDestination(target, of: relationship, in: object)
    }
    let old = toOneTarget(object, relationship)
    guard old != target?.id else { return }
    record(object, relationship.name, target?.id)
    guard let inverse = model.inverse(of: relationship) else { return }
    if inverse.isToMany {
      if let old, let previous = registeredObject(old), let list = previous.changedToMany[inverse.name] {
        previous.changedToMany[inverse.name] = list.filter { $0 != object.id }
      }
      if let target, let list = target.changedToMany[inverse.name], !list.contains(object.id) {
        target.changedToMany[inverse.name] = list + [object.id]
      }
      return
    }
    if let old, let previous = try? self.object(with: old), toOneTarget(previous, inverse) == object.id {
      record(previous, inverse.name, nil)
    }
    if let target {
      if let partner = toOneTarget(target, inverse), partner != object.id {
        record(try self.object(with: partner), relationship.name, nil)
      }
      record(target, inverse.name, object.id)
    }
  }

  func setMembers(_ object: ManagedObject, _ relationship: Relationship, _ newMembers: [ObjectID]) throws {
    try own(object)
    var unique: [ObjectID] = []
    for id in newMembers where !unique.contains(id) {
      try checkDestination(try self.object(with: id), of: relationship, in: object)
      unique.append(id)
    }
    let current = try members(object, relationship)
    let inverse = model.inverse(of: relationship)
    if let inverse, !inverse.isToMany {
      for id in current where !unique.contains(id) { record(try self.object(with: id), inverse.name, nil) }
      for id in unique where !current.contains(id) {
        let member = try self.object(with: id)
        if let previous = toOneTarget(member, inverse), let owner = registeredObject(previous),
          let list = owner.changedToMany[relationship.name]
        {
          owner.changedToMany[relationship.name] = list.filter { $0 != id }
        }
        record(member, inverse.name, object.id)
      }
      if relationship.isOrdered { object.changedToMany[relationship.name] = unique }
      noteChange(object)
      return
    }
    object.changedToMany[relationship.name] = unique
    noteChange(object)
    guard let inverse else { return }
    for id in Set(current).symmetricDifference(unique) where id != object.id {
      let member = try self.object(with: id)
      var theirs = try members(member, inverse)
      if unique.contains(id) {
        if !theirs.contains(object.id) { theirs.append(object.id) }
      } else {
        theirs.removeAll { $0 == object.id }
      }
      member.changedToMany[inverse.name] = theirs
      noteChange(member)
    }
  }

  // MARK: - Bookkeeping (used by ManagedObject and the save)

  func noteChange(_ object: ManagedObject) {
    if object.hasChanges {
      pending[object.id] = object
    } else {
      pending[object.id] = nil
    }
  }

  /// Called as an object goes away: drops its registration if nothing else took the ID.
  func forget(_ id: ObjectID, _ object: ManagedObject) {
    guard registered[id.entity]?[id.primaryKey]?.toOpaque() == Unmanaged.passUnretained(object).toOpaque() else {
      return
    }
    remove(id)
  }

  private func remove(_ id: ObjectID) {
    registered[id.entity]?[id.primaryKey] = nil
    registeredTotal -= 1
    guard registeredTotal < registeredPeak / 4 else { return }
    registered = registered.compactMapValues {
      $0.isEmpty ? nil : Dictionary(uniqueKeysWithValues: $0.map { ($0, $1) })
    }
    registeredPeak = registeredTotal
  }

  /// Runs `body` on `entity`'s registrations, taken out of the table of every entity (no copy,
  /// one look-up of the entity) and put back with the counts kept. `body` must not let an object
  /// of the context go (its `deinit` would look for its registration).
  func withRegistrations(of entity: String, _ body: (inout [Int64: Unmanaged<ManagedObject>]) throws -> Void)
    rethrows
  {
    var table = registered.removeValue(forKey: entity) ?? [:]
    let before = table.count
    defer {
      registeredTotal += table.count - before
      objectsMade += table.count - before
      registeredPeak = max(registeredPeak, registeredTotal)
      registered[entity] = table
    }
    try body(&table)
  }

  func registeredObject(_ id: ObjectID) -> ManagedObject? {
    registered[id.entity]?[id.primaryKey]?.takeUnretainedValue()
  }

  func register(_ object: ManagedObject) {
    let id = object.id
    if registered[id.entity, default: [:]].updateValue(Unmanaged.passUnretained(object), forKey: id.primaryKey) == nil {
      registeredTotal += 1
      registeredPeak = max(registeredPeak, registeredTotal)
    }
    objectsMade += 1
  }

  func unregister(_ object: ManagedObject) {
    if registeredObject(object.id) === object { remove(object.id) }
  }

  /// Moves a saved object to its permanent ID.
  func reregister(_ object: ManagedObject, as id: ObjectID) {
    unregister(object)
    object.id = id
    register(object)
  }

  /// Takes an object out of this context for good (deleted, gone from the store, or folded into
  /// another): no changes, marked deleted, no longer registered.
  func evict(_ object: ManagedObject) {
    discardChanges(object)
    object.isDeleted = true
    pending[object.id] = nil
    unregister(object)
  }

  func discardChanges(_ object: ManagedObject) {
    object.changedAttributes = [:]
    object.changedToOne = [:]
    object.changedToMany = [:]
    if !object.isInserted { object.isDeleted = false }
  }

  func entity(_ name: String) throws -> Entity { try entityReference(name).entity }

  private var entityReferences: [String: EntityReference] = [:]

  func entityReference(_ name: String) throws -> EntityReference {
    if let known = entityReferences[name] { return known }
    guard let entity = model.entity(named: name) else {
      throw ContextError(.unknownEntity, entity: name, reason: "the model has no entity '\(name)'")
    }
    let reference = EntityReference(entity, model: model, snapshots: coordinator.snapshots)
    entityReferences[name] = reference
    return reference
  }

  func ordered(_ objects: [ManagedObject]) -> [ManagedObject] {
    objects.sorted { Self.keyOrder($0.id, $1.id) }
  }

  /// An object read from the store, registered with its snapshot.
  func adopt(_ row: StoredObject) throws -> ManagedObject {
    let object = ManagedObject(id: row.id, entity: try entityReference(row.id.entity), context: self)
    object.commit(row)
    register(object)
    return object
  }

  /// An object read from the store as a row (attributes and to-ones), registered with its snapshot.
  func adopt(_ row: StoredRow) throws -> ManagedObject {
    let object = ManagedObject(id: row.id, entity: try entityReference(row.id.entity), context: self)
    object.commit(row)
    register(object)
    return object
  }

  private func own(_ object: ManagedObject) throws {
    guard object.context === self else {
      throw ContextError(.wrongContext, object: object.id, reason: "the object belongs to another context")
    }
  }

  private func checkDestination(_ target: ManagedObject, of relationship: Relationship, in object: ManagedObject) throws
  {
    guard model.entity(target.entity, isKindOf: relationship.destinationEntity) else {
      throw ContextError(
        .wrongType, object: object.id,
        reason: "'\(relationship.name)' holds \(relationship.destinationEntity) objects, not \(target.entity.name)")
    }
  }

  private func record(_ object: ManagedObject, _ name: String, _ target: ObjectID?) {
    if !object.isInserted, object.committedTarget(name) == target {
      object.changedToOne[name] = nil
    } else {
      object.changedToOne[name] = .some(target)
    }
    noteChange(object)
  }

  private func nullify(_ object: ManagedObject, _ relationship: Relationship) throws {
    guard let inverse = model.inverse(of: relationship) else { return }
    if !relationship.isToMany {
      guard let target = toOneTarget(object, relationship), !inverse.isToMany,
        let other = try? self.object(with: target), storedTarget(other, inverse.name) == object.id
      else { return }
      record(other, inverse.name, nil)
      return
    }
    for id in try members(object, relationship) {
      let member = try self.object(with: id)
      if !inverse.isToMany {
        if storedTarget(member, inverse.name) == object.id { record(member, inverse.name, nil) }
      } else if let list = member.changedToMany[inverse.name] {
        member.changedToMany[inverse.name] = list.filter { $0 != object.id }
      }
    }
  }

  /// `value` as `attribute` stores it, or an error naming both.
  static func convert(_ value: StoreValue, to attribute: Attribute, entity: String) throws -> StoreValue {
    let converted: StoreValue? =
      switch (value, attribute.type) {
      case (.null, _): .null
      case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64): value
      case (.double(let n), .integer16), (.double(let n), .integer32), (.double(let n), .integer64):
        n.rounded() == n && abs(n) < 9.2e18 ? .integer(Int64(n)) : nil
      case (.boolean(let flag), .integer16), (.boolean(let flag), .integer32), (.boolean(let flag), .integer64):
        .integer(flag ? 1 : 0)
      case (.boolean, .boolean): value
      case (.integer(let n), .boolean): .boolean(n != 0)
      case (_, .double), (_, .float), (_, .decimal): value.number.map { .double($0) }
      case (_, .date) where value.number?.isNaN == true:
        throw ContextError(.wrongType, entity: entity, reason: StoreValue.nanDateRefusal("\(entity).\(attribute.name)"))
      case (.date, .date): value
      case (_, .date): value.number.map { .date($0) }
      case (.string, .string), (.string, .uri): value
      case (.uuid, .uuid): value
      case (.data(let bytes), .uuid): bytes.count == 16 ? .uuid(bytes) : nil
      case (.data, .binary), (.data, .transformable): value
      case (.string(let text), .binary), (.string(let text), .transformable): .data(Array(text.utf8))
      default: nil
      }
    guard let converted else {
      throw ContextError(
        .wrongType, entity: entity,
        reason: "\(entity).\(attribute.name) is \(attribute.type.xmlName); \(value) cannot be stored in it")
    }
    return converted
  }
}
