import MigrunModel
import MigrunStore

extension ObjectContext {
  /// The IDs of the objects of `entity` that pass `predicate`, in `sortedBy` order (then by key),
  /// at most `limit`: Core Data's `.managedObjectIDResultType`. No object is kept: where SQL says
  /// the predicate and the order the store selects the keys alone; else each row is judged as it
  /// is read and let go (or, with pending changes, the objects are fetched as ``fetch(_:matching:sortedBy:limit:includesPropertyValues:)``
  /// fetches them).
  public func objectIDs(
    _ entityName: String, matching predicate: FormatPredicate?, sortedBy keys: [SortKey] = [], limit: Int? = nil
  ) throws -> [ObjectID] {
    let entity = try checked(entityName, predicate)
    let clean = pending.isEmpty
    let tested =
      predicate?.rowFilterTesting(entity, in: model, followingRelationships: clean) ?? (filter: nil, whole: true)
    if tested.whole, clean, let ids = try storeIDs(entityName, filter: tested.filter, sortedBy: keys, limit: limit) {
      return ids
    }
    guard clean, keys.isEmpty else {
      return try fetch(entityName, matching: predicate, sortedBy: keys, limit: limit).map(\.id)
    }
    var ids: [ObjectID] = []
    try storeCall(entityName) {
      try store.forEachObject(
        of: entityName, includingSubentities: true, withToMany: false, filter: tested.filter
      ) { row in
        if let limit, ids.count >= limit { return }
        // Judged and let go: the object lives for this row only (its snapshot goes with it).
        let object = try registeredObject(row.id) ?? adopt(row)
        if try judge(predicate, object, entityName) { ids.append(object.id) }
      }
    }
    return ids
  }

  /// Walks the objects of `entity` that pass `predicate`, in order, `batchSize` at a time: Core
  /// Data's `fetchBatchSize`. The keys are selected first (``objectIDs(_:matching:sortedBy:limit:)``);
  /// each batch's objects are read when its turn comes and handed to `body`, and are let go after
  /// it unless `body` keeps them or changes them (a changed object is held until saved). Memory
  /// stays at one batch's objects however many there are: `body` may ``save()`` and ``reset()``
  /// after its batch to let go of what it changed. An object deleted or gone from the store before
  /// its batch comes is left out.
  public func forEach(
    _ entityName: String, matching predicate: FormatPredicate?, sortedBy keys: [SortKey] = [], batchSize: Int = 1000,
    _ body: ([ManagedObject]) throws -> Void
  ) throws {
    let ids = try objectIDs(entityName, matching: predicate, sortedBy: keys)
    let size = max(1, batchSize)
    for start in stride(from: 0, to: ids.count, by: size) {
      let batch = try objects(Array(ids[start..<min(start + size, ids.count)])).filter { !$0.isDeleted }
      if !batch.isEmpty { try body(batch) }
    }
  }

  /// Only `properties` of the objects of `entity` that pass `predicate`, in order: Core Data's
  /// `propertiesToFetch` with the dictionary result type. Each result holds the object's ID and the
  /// properties asked for — attributes in its `attributes`, to-ones in `toOne` (absent when not
  /// set), to-manys in `toMany` — read a thousand objects at a time and let go, so no object stays.
  public func fetchValues(
    _ entityName: String, matching predicate: FormatPredicate?, properties: [String], sortedBy keys: [SortKey] = [],
    limit: Int? = nil
  ) throws -> [StoredObject] {
    let entity = try entity(entityName)
    let attributes = Set(model.attributes(of: entity).map(\.name))
    let relationships = Dictionary(
      model.relationships(of: entity).map { ($0.name, $0.isToMany) }, uniquingKeysWith: { first, _ in first })
    for name in properties where !attributes.contains(name) && relationships[name] == nil {
      throw ContextError(
        .unknownProperty, entity: entityName, reason: "entity '\(entityName)' has no property '\(name)'")
    }
    var found: [StoredObject] = []
    let ids = try objectIDs(entityName, matching: predicate, sortedBy: keys, limit: limit)
    for start in stride(from: 0, to: ids.count, by: 1000) {
      for object in try objects(Array(ids[start..<min(start + 1000, ids.count)])) where !object.isDeleted {
        var values = StoredObject(id: object.id, version: object.version)
        for name in properties {
          switch relationships[name] {
          case true?: values.toMany[name] = try object.members(name).map(\.id)
          case false?: values.toOne[name] = try object.object(name)?.id
          case nil: values.attributes[name] = try object.value(name)
          }
        }
        found.append(values)
      }
    }
    return found
  }

  /// The object with this URI-less ID text (`"Trip/p3"`), as ``object(with:)`` finds it.
  public func object(described text: String) throws -> ManagedObject {
    guard let id = ObjectID(text[...]) else {
      throw ContextError(.noSuchObject, reason: "'\(text)' is not an object ID (Entity/pN)")
    }
    return try object(with: id)
  }
}

/// The keys of one fetch that returned faults: firing one reads it and the faults after it.
final class FaultGroup {
  let ids: [ObjectID]
  init(_ ids: [ObjectID]) { self.ids = ids }
}

extension ObjectContext {
  /// How many faults one firing reads at once (the one touched and those after it in its fetch).
  static let faultBatch = 256

  /// Reads the rows of the faults of `group` from `index` on (up to ``faultBatch``) that are still
  /// faults of this context, and takes them as the objects' snapshots.
  func fire(_ group: FaultGroup, from index: Int) throws {
    var wanted: [ObjectID] = []
    var position = index
    while position < group.ids.count, wanted.count < Self.faultBatch {
      let id = group.ids[position]
      if let object = registeredObject(id), object.faultGroup === group { wanted.append(id) }
      position += 1
    }
    guard !wanted.isEmpty else { return }
    for row in try storeCall(wanted[0].entity, { try store.rows(wanted) }) {
      registeredObject(row.id)?.commit(row)
    }
  }

  /// Faults for `ids` (Core Data's `includesPropertyValues = false`): registered objects as they
  /// are, the others made without reading a row.
  func faults(_ ids: [ObjectID]) throws -> [ManagedObject] {
    let group = FaultGroup(ids)
    var found: [ManagedObject] = []
    found.reserveCapacity(ids.count)
    var start = 0
    // A run of keys of one entity at a time: its registrations taken out, filled, put back.
    while start < ids.count {
      let entity = ids[start].entity
      var end = start + 1
      while end < ids.count, ids[end].entity == entity { end += 1 }
      let reference = try entityReference(entity)
      withRegistrations(of: entity) { table in
        table.reserveCapacity(table.count + (end - start))
        for index in start..<end {
          let key = ids[index].primaryKey
          if let known = table[key] {
            found.append(known.takeUnretainedValue())
            continue
          }
          let object = ManagedObject(id: ids[index], entity: reference, context: self)
          object.faultGroup = group
          object.faultIndex = Int32(truncatingIfNeeded: index)
          table[key] = Unmanaged.passUnretained(object)
          found.append(object)
        }
      }
      start = end
    }
    return found
  }
}
