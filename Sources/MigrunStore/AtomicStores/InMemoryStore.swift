import Foundation
import MigrunModel

/// A store held in memory with the SQLite store's behaviour, for tests and transient work.
///
/// It keeps the same relational image as the SQLite layout — rows with to-one keys (and the order
/// of ordered inverses), and join pairs for many-to-many — so both answer every read alike.
package final class InMemoryStore: ObjectStore {
  package let model: ObjectModel
  /// Nothing else holds an in-memory store: a write never waits.
  package var busyTimeout: Double = 0
  package internal(set) var metadata: StoreMetadata

  struct Row {
    var version: Int64
    var attributes: [String: StoreValue]
    var toOne: [String: ObjectID]
    /// For a to-one whose inverse is an ordered to-many: the position in that list.
    var order: [String: Int]
  }

  struct State {
    var rows: [ObjectID: Row] = [:]
    /// "Entity.relationship" of the owning side → (owner, member, position).
    var joins: [String: [(owner: ObjectID, member: ObjectID, position: Int)]] = [:]
    /// Root entity → the largest primary key used.
    var maxKeys: [String: Int64] = [:]
  }

  var state = State()

  package init(model: ObjectModel, metadata: StoreMetadata? = nil) {
    self.model = model
    self.metadata = metadata ?? StoreMetadata(model: model)
  }

  package func count(of entity: String, includingSubentities: Bool) throws -> Int {
    let kinds = try kinds(of: entity, includingSubentities: includingSubentities)
    return state.rows.keys.filter { kinds.contains($0.entity) }.count
  }

  /// Every object: a store in memory tests no filter (the caller judges each one).
  package func forEachObject(
    of entity: String, includingSubentities: Bool, withToMany: Bool, filter: RowFilter?,
    _ body: (StoredObject) throws -> Void
  ) throws {
    let kinds = try kinds(of: entity, includingSubentities: includingSubentities)
    for id in state.rows.keys.filter({ kinds.contains($0.entity) }).sorted(by: { $0.primaryKey < $1.primaryKey }) {
      if let object = object(id, withToMany: withToMany) { try body(object) }
    }
  }

  package func object(_ id: ObjectID) throws -> StoredObject? {
    object(id, withToMany: true)
  }

  package func object(_ id: ObjectID, withToMany: Bool) -> StoredObject? {
    guard let row = state.rows[id], let entity = model.entity(named: id.entity) else { return nil }
    var object = StoredObject(id: id, version: row.version, attributes: row.attributes, toOne: row.toOne)
    for attribute in model.attributes(of: entity)
    where !attribute.isTransient && object.attributes[attribute.name] == nil {
      object.attributes[attribute.name] = .null
    }
    for relationship in model.relationships(of: entity)
    where withToMany && relationship.isToMany && !relationship.isTransient {
      object.toMany[relationship.name] = members(of: id, relationship)
    }
    return object
  }

  package func relationships(of id: ObjectID, withToMany: Bool) -> StoredObject? {
    object(id, withToMany: withToMany)
  }

  package func maxPrimaryKey(inHierarchyOf entity: String) throws -> Int64 {
    guard let found = model.entity(named: entity) else {
      throw StoreError(.unknownEntity, entity: entity, reason: "the model has no such entity")
    }
    let kinds = try kinds(of: model.root(of: found).name, includingSubentities: true)
    return state.rows.keys.filter { kinds.contains($0.entity) }.map(\.primaryKey).max() ?? 0
  }

  package func ruleViolations(limit: Int) throws -> [String] {
    try ModelRules(model: model).violations(in: self, limit: limit)
  }

  package func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T {
    let saved = (state, metadata)
    do {
      return try body(InMemoryWriter(store: self))
    } catch {
      (state, metadata) = saved
      throw error
    }
  }

  // MARK: - Non public

  func kinds(of entity: String, includingSubentities: Bool) throws -> Set<String> {
    guard let found = model.entity(named: entity) else {
      throw StoreError(.unknownEntity, entity: entity, reason: "the model has no such entity")
    }
    guard includingSubentities else { return [entity] }
    return Set(model.entities.filter { model.entity($0, isKindOf: found.name) }.map(\.name))
  }

  /// The side of a many-to-many whose name keys its join pairs (the SQLite layout's owner side).
  func joinKey(_ entity: Entity, _ relationship: Relationship) -> (key: String, ownerSide: Bool) {
    let inverse = model.inverse(of: relationship)
    guard let inverse, let destination = model.entity(named: relationship.destinationEntity) else {
      return ("\(entity.name).\(relationship.name)", true)
    }
    let mine = "\(entity.name).\(relationship.name)"
    let theirs = "\(destination.name).\(inverse.name)"
    return mine <= theirs ? (mine, true) : (theirs, false)
  }

  func members(of id: ObjectID, _ relationship: Relationship) -> [ObjectID] {
    guard let entity = model.entity(named: id.entity),
      let declaring = model.declaringEntity(ofRelationship: relationship.name, in: entity)
    else { return [] }
    if let inverse = model.inverse(of: relationship), !inverse.isToMany {
      let candidates = state.rows.filter { $0.value.toOne[inverse.name] == id }
      return candidates.sorted {
        ($0.value.order[inverse.name] ?? 0, $0.key.primaryKey) < ($1.value.order[inverse.name] ?? 0, $1.key.primaryKey)
      }
      .map(\.key)
    }
    let (key, ownerSide) = joinKey(declaring, relationship)
    let pairs = state.joins[key] ?? []
    if let inverse = model.inverse(of: relationship), inverse.name == relationship.name,
      relationship.destinationEntity == declaring.name
    {
      // Self-inverse: a pair relates both of its objects to each other.
      let others = pairs.compactMap { $0.owner == id ? $0.member : $0.member == id ? $0.owner : nil }
      return Array(Set(others)).sorted { $0.primaryKey < $1.primaryKey }
    }
    let mine = pairs.filter { (ownerSide ? $0.owner : $0.member) == id }
    let ordered =
      relationship.isOrdered
      ? mine.sorted { $0.position < $1.position }
      : mine.sorted {
        (ownerSide ? $0.member : $0.owner).primaryKey < (ownerSide ? $1.member : $1.owner).primaryKey
      }
    return ordered.map { ownerSide ? $0.member : $0.owner }
  }
}

final class InMemoryWriter: StoreWriter {
  let store: InMemoryStore

  init(store: InMemoryStore) { self.store = store }

  /// A store in memory keeps no persistent history.
  func recordHistory(_ save: SavedChanges) throws {}

  func newPrimaryKey(for entity: String) throws -> Int64 {
    let root = try rootName(entity)
    let next = try StoreError.key(after: store.state.maxKeys[root] ?? 0, entity: root)
    store.state.maxKeys[root] = next
    return next
  }

  func insert(_ object: StoredObject) throws {
    let root = try rootName(object.id.entity)
    let sameHierarchy = store.state.rows.keys.contains { id in
      id.primaryKey == object.id.primaryKey && (try? rootName(id.entity)) == root
    }
    guard !sameHierarchy else {
      throw StoreError(
        .constraint, entity: object.id.entity, primaryKey: object.id.primaryKey,
        reason: "an object with this primary key exists")
    }
    try checkUniqueness(object)
    store.state.rows[object.id] = InMemoryStore.Row(
      version: object.version, attributes: try storedAttributes(object), toOne: [:], order: [:])
    store.state.maxKeys[root] = max(store.state.maxKeys[root] ?? 0, object.id.primaryKey)
    for (name, target) in object.toOne { try setToOne(object.id, name, target) }
  }

  func update(_ object: StoredObject, bumpingVersion: Bool) throws {
    guard var row = store.state.rows[object.id] else {
      throw StoreError(
        .unknownEntity, entity: object.id.entity, primaryKey: object.id.primaryKey, reason: "no such object")
    }
    try checkUniqueness(object)
    row.version = bumpingVersion ? StoredObject.version(after: object.version) : object.version
    row.attributes = try storedAttributes(object)
    let previous = row.toOne
    store.state.rows[object.id] = row
    for name in Set(previous.keys).union(object.toOne.keys) where previous[name] != object.toOne[name] {
      try setToOne(object.id, name, object.toOne[name])
    }
  }

  func reservePrimaryKeys(for entity: String, through key: Int64) throws {
    let root = try rootName(entity)
    store.state.maxKeys[root] = max(store.state.maxKeys[root] ?? 0, key)
  }

  func setToOne(_ id: ObjectID, _ relationship: String, _ target: ObjectID?) throws {
    guard store.state.rows[id] != nil else {
      throw StoreError(.unknownEntity, entity: id.entity, primaryKey: id.primaryKey, reason: "no such object")
    }
    let previous = store.state.rows[id]?.toOne[relationship]
    store.state.rows[id]?.toOne[relationship] = target
    // A one-to-one pair: both sides agree, as Core Data keeps them (what either named before is unset).
    guard let entity = store.model.entity(named: id.entity),
      let declared = store.model.relationships(of: entity).first(where: { $0.name == relationship }),
      !declared.isToMany, let inverse = store.model.inverse(of: declared), !inverse.isToMany
    else { return }
    if let previous, previous != target, store.state.rows[previous]?.toOne[inverse.name] == id {
      store.state.rows[previous]?.toOne[inverse.name] = nil
    }
    guard let target, store.state.rows[target] != nil else { return }
    if let prior = store.state.rows[target]?.toOne[inverse.name], prior != id,
      store.state.rows[prior]?.toOne[relationship] == target
    {
      store.state.rows[prior]?.toOne[relationship] = nil
    }
    store.state.rows[target]?.toOne[inverse.name] = id
  }

  func setToMany(_ id: ObjectID, _ relationshipName: String, _ members: [ObjectID]) throws {
    guard let entity = store.model.entity(named: id.entity),
      let relationship = store.model.relationships(of: entity).first(where: {
        $0.name == relationshipName && $0.isToMany
      }),
      let declaring = store.model.declaringEntity(ofRelationship: relationshipName, in: entity)
    else {
      throw StoreError(
        .unknownProperty, entity: id.entity, reason: "'\(relationshipName)' is not a to-many relationship")
    }
    if let inverse = store.model.inverse(of: relationship), !inverse.isToMany {
      for (key, row) in store.state.rows where row.toOne[inverse.name] == id {
        store.state.rows[key]?.toOne[inverse.name] = nil
        store.state.rows[key]?.order[inverse.name] = nil
      }
      for (position, member) in members.enumerated() where store.state.rows[member] != nil {
        store.state.rows[member]?.toOne[inverse.name] = id
        if relationship.isOrdered { store.state.rows[member]?.order[inverse.name] = position + 1 }
      }
      return
    }
    let (key, ownerSide) = store.joinKey(declaring, relationship)
    var pairs = store.state.joins[key] ?? []
    pairs.removeAll { (ownerSide ? $0.owner : $0.member) == id }
    for (position, member) in members.enumerated() {
      let pair =
        ownerSide
        ? (owner: id, member: member, position: position + 1) : (owner: member, member: id, position: position + 1)
      if !pairs.contains(where: { $0.owner == pair.owner && $0.member == pair.member }) { pairs.append(pair) }
    }
    store.state.joins[key] = pairs
  }

  func delete(_ id: ObjectID) throws {
    store.state.rows[id] = nil
    for key in store.state.joins.keys {
      store.state.joins[key]?.removeAll { $0.owner == id || $0.member == id }
    }
    for (key, row) in store.state.rows {
      for (name, target) in row.toOne where target == id {
        if let entity = store.model.entity(named: key.entity),
          let relationship = store.model.relationships(of: entity).first(where: { $0.name == name }),
          store.model.inverse(of: relationship)?.isToMany == true
        {
          store.state.rows[key]?.toOne[name] = nil
        }
      }
    }
  }

  func setMetadata(_ metadata: StoreMetadata) throws {
    store.metadata = metadata
  }

  func object(_ id: ObjectID) throws -> StoredObject? {
    try store.object(id)
  }

  func contains(_ id: ObjectID) throws -> Bool {
    store.state.rows[id] != nil
  }

  /// Not said: an in-memory store has no SQL (a migration's destination is a SQLite store).
  func objectIDs(of entity: String, filter: RowFilter?, sortedBy keys: [(String, Bool)], limit: Int?) throws
    -> [ObjectID]?
  { nil }

  func firstObject(of entity: String, matching values: [String: StoreValue]) throws -> ObjectID? {
    let kinds = try store.kinds(of: entity, includingSubentities: true)
    return store.state.rows.filter { kinds.contains($0.key.entity) }.sorted { $0.key.primaryKey < $1.key.primaryKey }
      .first { row in values.allSatisfy { (row.value.attributes[$0.key] ?? .null) == $0.value } }?.key
  }

  // MARK: - Non public

  private func rootName(_ entity: String) throws -> String {
    guard let found = store.model.entity(named: entity) else {
      throw StoreError(.unknownEntity, entity: entity, reason: "the model has no such entity")
    }
    return store.model.root(of: found).name
  }

  private func storedAttributes(_ object: StoredObject) throws -> [String: StoreValue] {
    guard let entity = store.model.entity(named: object.id.entity) else {
      throw StoreError(.unknownEntity, entity: object.id.entity, reason: "the model has no such entity")
    }
    var values: [String: StoreValue] = [:]
    for attribute in store.model.attributes(of: entity) where !attribute.isTransient {
      switch object.attributes[attribute.name] ?? .null {
      // SQLite stores NaN as NULL: so does this store.
      case .double(let number) where number.isNaN: values[attribute.name] = .null
      case .date(let number) where number.isNaN: values[attribute.name] = .null
      case let value: values[attribute.name] = value
      }
    }
    return values
  }

  /// As SQLite's unique indexes do: equal non-NULL values in every constrained column collide.
  private func checkUniqueness(_ object: StoredObject) throws {
    guard let entity = store.model.entity(named: object.id.entity) else { return }
    for level in [entity] + store.model.ancestors(of: entity) {
      for constraint in level.uniquenessConstraints {
        let key = constraint.map { object.attributes[$0] ?? object.toOne[$0].map { .integer($0.primaryKey) } ?? .null }
        guard !key.contains(.null) else { continue }
        let clash = store.state.rows.contains { other in
          other.key != object.id
            && store.model.entity(named: other.key.entity, isKindOf: level.name)
            && constraint.map {
              other.value.attributes[$0] ?? other.value.toOne[$0].map { .integer($0.primaryKey) } ?? .null
            } == key
        }
        if clash {
          throw StoreError(
            .constraint, entity: object.id.entity, primaryKey: object.id.primaryKey,
            reason: "uniqueness constraint (\(constraint.joined(separator: ", "))) violated")
        }
      }
    }
  }
}
