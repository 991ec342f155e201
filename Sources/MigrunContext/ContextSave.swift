import MigrunModel
import MigrunStore

extension ObjectContext {
  /// Saves every pending change in one store transaction and returns what changed.
  ///
  /// Inside the transaction each changed or deleted object's row is read again: a version (`Z_OPT`)
  /// other than the one the context read is a conflict, as is a new or changed object whose values
  /// equal another object's on a uniqueness constraint. The ``mergePolicy`` resolves conflicts;
  /// under ``MergePolicy/error`` (or a rule that declines) the save throws
  /// ``ContextError/Code/conflicts`` listing them all and writes nothing. A delete blocked by a
  /// `deny` rule throws ``ContextError/Code/deny`` and writes nothing.
  @discardableResult
  public func save() throws -> ChangeSet {
    let objects = ordered(Array(pending.values))
    guard objects.contains(where: \.hasChanges) else { return ChangeSet() }
    try checkDenyRules(objects.filter { $0.isDeleted && !$0.isInserted })
    try validate(objects.filter { $0.hasChanges && !$0.isDeleted })
    var save = SaveTransaction(context: self, objects: objects)
    do {
      try store.write { writer in try save.run(writer) }
    } catch let error as ContextError {
      throw error
    } catch let error as StoreError {
      throw ContextError(.store, entity: error.entity, reason: error.description, underlying: error)
    }
    return finish(save)
  }

  /// Core Data's validation on save: every new or changed object keeps the model's rules —
  /// required attributes, value rules (``ValueRule``), required to-ones and to-many counts (those
  /// the context holds) — or the save throws ``ContextError/Code/validation`` naming every failing
  /// object, property, rule and value, and writes nothing.
  private func validate(_ changed: [ManagedObject]) throws {
    var problems: [String] = []
    for object in changed {
      guard let entityRules = rules.byEntity[object.entity.name] else { continue }
      let state = object.state
      problems += entityRules.problems(of: state) { relationship in
        guard relationship.isToMany else { return state.toOne[relationship.name] == nil ? 0 : 1 }
        // Only what the context holds: a to-many never read is as the store has it.
        return (state.toMany[relationship.name] ?? (object.isInserted ? [] : nil))?.count
      }
    }
    guard !problems.isEmpty else { return }
    throw ContextError(
      .validation,
      reason:
        "save failed: \(problems.count) broken rule\(problems.count == 1 ? "" : "s"); nothing was written:\n  "
        + problems.joined(separator: "\n  "))
  }

  /// The deleted objects' `deny` relationships must be empty (their destinations deleted too).
  private func checkDenyRules(_ deleted: [ManagedObject]) throws {
    for object in deleted {
      for relationship in model.relationships(of: object.entity) where relationship.deleteRule == .deny {
        let targets =
          relationship.isToMany
          ? try members(object, relationship) : toOneTarget(object, relationship).map { [$0] } ?? []
        guard !targets.isEmpty else { continue }
        let shown = targets.prefix(5).map(\.description).joined(separator: ", ") + (targets.count > 5 ? ", …" : "")
        throw ContextError(
          .deny, object: object.id,
          reason:
            "cannot delete: relationship '\(relationship.name)' has delete rule deny and still holds \(shown); nothing was saved"
        )
      }
    }
  }

  /// After the transaction committed: new snapshots, permanent IDs, no pending changes.
  private func finish(_ save: SaveTransaction) -> ChangeSet {
    for object in save.objects {
      let oldID = object.id
      guard let state = save.finalStates[oldID] else {
        // Deleted, folded into another object, or gone from the store and let go by the policy.
        object.mergedInto = save.changes.merged[oldID]
        evict(object)
        continue
      }
      if let id = save.permanent[oldID] { reregister(object, as: id) }
      object.isInserted = false
      discardChanges(object)
      object.commit(state)
    }
    // Objects this context holds that a save wrote through a merge get the saved values too.
    for (id, state) in save.otherStates {
      guard let object = registeredObject(id), !object.hasChanges else { continue }
      object.commit(state)
    }
    pending = [:]
    return save.changes
  }
}

/// One save's work inside the store transaction.
struct SaveTransaction {
  let context: ObjectContext
  let objects: [ManagedObject]
  /// Temporary → permanent IDs of inserted objects.
  var permanent: [ObjectID: ObjectID] = [:]
  /// The state each object of the save has in the store afterwards (by its ID before the save);
  /// absent for objects gone.
  var finalStates: [ObjectID: StoredObject] = [:]
  /// States written for objects outside the save (survivors of uniqueness merges).
  var otherStates: [ObjectID: StoredObject] = [:]
  var changes = ChangeSet()

  private enum Plan {
    case insert(StoredObject)
    case update(StoredObject, toMany: Set<String>)
    case delete
    case keep(StoredObject)
    case gone
  }

  private var plans: [ObjectID: Plan] = [:]
  /// The rows read for objects updated or deleted (what persistent history compares and keeps).
  private var rowsRead: [ObjectID: StoredObject] = [:]
  private var conflicts: [MergeConflict] = []
  private var model: ObjectModel { context.model }

  /// The IDs of ``objects`` (before the save).
  private let saved: Set<ObjectID>

  init(context: ObjectContext, objects: [ManagedObject]) {
    self.context = context
    self.objects = objects.filter(\.hasChanges)
    saved = Set(self.objects.map(\.id))
  }

  package mutating func run(_ writer: any StoreWriter) throws {
    for object in objects where object.isInserted && !object.isDeleted {
      let key = try writer.newPrimaryKey(for: object.entity.name)
      permanent[object.id] = ObjectID(entity: object.id.entity, primaryKey: key)
    }
    for object in objects { try plan(object, writer) }
    try checkUniqueness(writer)
    guard conflicts.isEmpty else {
      throw ContextError(
        .conflicts,
        reason:
          "save failed: \(conflicts.count) conflict\(conflicts.count == 1 ? "" : "s") under merge policy \(context.mergePolicy.name); nothing was written",
        conflicts: conflicts)
    }
    try write(writer)
  }

  // MARK: - Locking

  private mutating func plan(_ object: ManagedObject, _ writer: any StoreWriter) throws {
    if object.isInserted {
      plans[object.id] = object.isDeleted ? .gone : .insert(object.state)
      return
    }
    let row = try writer.object(object.id)
    rowsRead[object.id] = row
    if object.isDeleted {
      guard let row else {
        plans[object.id] = .gone
        return
      }
      // The version read is all a delete without a conflict needs (no copy of the values made).
      guard row.version != object.version else {
        plans[object.id] = .delete
        return
      }
      let snapshot = object.snapshot
      let conflict = MergeConflict(
        kind: .delete, id: object.id, object: nil, snapshot: snapshot, store: row, changed: object.changedProperties)
      plans[object.id] = try decide(conflict).map { settle($0, row) } ?? .delete
      return
    }
    let snapshot = object.snapshot
    var state = object.state
    state.toMany = state.toMany.filter { object.changedToMany[$0.key] != nil }
    guard let row else {
      let conflict = MergeConflict(
        kind: .storeDeleted, id: object.id, object: state, snapshot: snapshot, store: nil,
        changed: object.changedProperties)
      plans[object.id] = try decide(conflict).map { .insert($0) } ?? .gone
      return
    }
    guard row.version != snapshot?.version else {
      state.version = row.version
      plans[object.id] = .update(state, toMany: Set(object.changedToMany.keys))
      return
    }
    let conflict = MergeConflict(
      kind: .update, id: object.id, object: state, snapshot: snapshot, store: row, changed: object.changedProperties)
    plans[object.id] = try decide(conflict).map { settle($0, row) } ?? .delete
  }

  /// Writes the decided state over the store's row, or keeps the row when they are the same.
  private func settle(_ decided: StoredObject, _ row: StoredObject) -> Plan {
    var decided = decided
    decided.id = row.id
    decided.version = row.version
    let toMany = Self.changedToMany(decided, from: row)
    return decided.attributes == row.attributes && decided.toOne == row.toOne && toMany.isEmpty
      ? .keep(row) : .update(decided, toMany: toMany)
  }

  /// The to-many relationships whose members differ (only those are written: rewriting the others
  /// would undo members joining them in this save).
  private static func changedToMany(_ state: StoredObject, from row: StoredObject) -> Set<String> {
    Set(state.toMany.keys.filter { row.toMany[$0] != state.toMany[$0] })
  }

  /// The state the merge policy saves for `conflict`, `nil` for "no object"; a conflict the policy
  /// leaves unresolved is collected (the save then fails).
  private mutating func decide(_ conflict: MergeConflict) throws -> StoredObject? {
    switch context.mergePolicy {
    case .error:
      conflicts.append(conflict)
      return conflict.object
    case .rule(let rule):
      let decision: MergeDecision
      do {
        decision = try rule.resolve(conflict)
      } catch let error as ContextError {
        throw error
      } catch {
        throw ContextError(
          .mergeRule, object: conflict.id, reason: "the merge rule failed: \(error)", underlying: error)
      }
      switch decision {
      case .save(let state): return state
      case .unhandled:
        conflicts.append(conflict)
        return conflict.object
      }
    case let policy:
      return conflict.resolved(by: policy)
    }
  }

  // MARK: - Uniqueness

  /// New and changed objects must not repeat another object's values on a uniqueness constraint
  /// (each constrained attribute non-NULL and equal, as SQLite's unique indexes judge).
  private mutating func checkUniqueness(_ writer: any StoreWriter) throws {
    var claimed: [String: ObjectID] = [:]
    let deleted = Set(plans.compactMap { id, plan in if case .delete = plan { id } else { nil } })
    for object in objects {
      guard let state = writtenState(object.id) else { continue }
      for level in [object.entity] + model.ancestors(of: object.entity) {
        for constraint in level.uniquenessConstraints {
          let values = constraint.map { state.attributes[$0] }
          guard values.allSatisfy({ $0 != nil && $0 != .null }) else { continue }
          let key = ([level.name] + values.map { "\($0 ?? .null)" }).joined(separator: "\u{1}")
          var other = claimed[key]
          if other == nil {
            let matching = Dictionary(uniqueKeysWithValues: zip(constraint, values.map { $0 ?? .null }))
            if let found = try writer.firstObject(of: level.name, matching: matching), found != object.id,
              !deleted.contains(found), plans[found] == nil
            {
              other = found
            }
          }
          guard let other else {
            claimed[key] = object.id
            continue
          }
          try fold(object, state, into: other, constraint: constraint, writer)
          break
        }
      }
    }
  }

  /// The state an object of the save will have in the store, if it is written.
  private func writtenState(_ id: ObjectID) -> StoredObject? {
    switch plans[id] {
    case .insert(let state)?, .update(let state, _)?: state
    default: nil
    }
  }

  /// Resolves a uniqueness conflict: `object` goes, `other` takes the values the policy decides.
  private mutating func fold(
    _ object: ManagedObject, _ state: StoredObject, into other: ObjectID, constraint: [String],
    _ writer: any StoreWriter
  ) throws {
    guard let existing = try writtenState(other) ?? writer.object(other) else { return }
    let conflict = MergeConflict(
      kind: .uniqueness, id: object.id, object: state, snapshot: object.snapshot, store: existing,
      changed: object.changedProperties, constraint: constraint)
    let before = conflicts.count
    let decided = try decide(conflict)
    guard conflicts.count == before else { return }
    var survivor = decided ?? existing
    survivor.id = other
    survivor.version = existing.version
    if let plan = plans[other], case .insert = plan {
      plans[other] = .insert(survivor)
    } else {
      plans[other] = .update(survivor, toMany: Self.changedToMany(survivor, from: existing))
    }
    plans[object.id] = object.isInserted ? .gone : .delete
    changes.merged[object.id] = other
  }

  // MARK: - Writing

  private mutating func write(_ writer: any StoreWriter) throws {
    let redirect = changes.merged.merging(permanent) { merged, _ in merged }
    func resolve(_ id: ObjectID) -> ObjectID {
      var id = id
      while let next = redirect[id], next != id { id = next }
      return id
    }
    func resolved(_ state: StoredObject) -> StoredObject {
      var state = state
      state.id = resolve(state.id)
      state.toOne = state.toOne.mapValues(resolve)
      state.toMany = state.toMany.mapValues { members in
        var seen: Set<ObjectID> = []
        return members.map(resolve).filter { seen.insert($0).inserted }
      }
      return state
    }
    let order = objects.map(\.id) + plans.keys.filter { !saved.contains($0) }.sorted()
    // Deletes first: a new object may take a deleted one's unique values.
    for id in order {
      guard case .delete? = plans[id] else { continue }
      try writer.delete(id)
      changes.deleted.append(id)
    }
    var toManyWrites: [(ObjectID, String, [ObjectID])] = []
    for id in order {
      switch plans[id] {
      case .insert(let state)?:
        var row = resolved(state)
        row.version = 1
        try writer.insert(row)
        changes.inserted.append(row.id)
        for (name, members) in row.toMany { toManyWrites.append((row.id, name, members)) }
        record(id, row)
      case .update(let state, let toMany)?:
        var row = resolved(state)
        try writer.update(row, bumpingVersion: true)
        row.version = StoredObject.version(after: row.version)
        for name in toMany.sorted() { toManyWrites.append((row.id, name, row.toMany[name] ?? [])) }
        changes.updated.append(row.id)
        record(id, row)
      case .keep(let row)?:
        record(id, row)
      default:
        continue
      }
    }
    for (id, name, members) in toManyWrites { try writer.setToMany(id, name, members) }
    try writer.recordHistory(history(toMany: toManyWrites))
  }

  /// The save as persistent history records it: inserts, each update's written properties (those
  /// whose values differ from the row read, and the to-manys written), deletes with their rows.
  private func history(toMany writes: [(ObjectID, String, [ObjectID])]) -> SavedChanges {
    var saved = SavedChanges(author: context.transactionAuthor, contextName: context.name)
    saved.inserted = changes.inserted
    saved.deleted = changes.deleted.map { ($0, rowsRead[$0]) }
    var toMany: [ObjectID: Set<String>] = [:]
    for (id, name, _) in writes { toMany[id, default: []].insert(name) }
    for id in changes.updated {
      guard let written = finalStates[id] ?? otherStates[id] else { continue }
      let read = rowsRead[id]
      var names = toMany[id] ?? []
      for (name, value) in written.attributes where read?.attributes[name] != value { names.insert(name) }
      for name in Set(written.toOne.keys).union(read.map { Array($0.toOne.keys) } ?? [])
      where written.toOne[name] != read?.toOne[name] {
        names.insert(name)
      }
      saved.updated.append((id, names))
    }
    return saved
  }

  private mutating func record(_ id: ObjectID, _ row: StoredObject) {
    if saved.contains(id) {
      finalStates[id] = row
    } else {
      otherStates[id] = row
    }
  }
}
