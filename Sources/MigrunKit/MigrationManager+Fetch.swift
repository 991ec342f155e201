import MigrunContext
import MigrunModel
import MigrunStore

extension MigrationManager {
  /// Core Data's fetch in the manager's destination context (or, with `inSource`, its source
  /// context): the IDs of `entity`'s objects (and its subentities') that `predicate` takes — in the
  /// destination, as the migration has written them so far (what earlier entity mappings made) —
  /// ordered by `keys`, then by key, at most `limit`.
  ///
  /// The predicate is tested by the store, in SQL, exactly as a context's fetch would judge it; one
  /// the store cannot say whole (`MATCHES`, `@sum`, two key paths compared, …) is refused by name
  /// rather than judged otherwise.
  ///
  /// ```swift
  /// let users = try manager.fetch("User", matching: FormatPredicate("userId == %@", arguments: [.integer(7)]))
  /// ```
  public func fetch(
    _ entity: String, matching predicate: FormatPredicate?, sortedBy keys: [SortKey] = [], limit: Int? = nil,
    inSource: Bool = false
  ) throws -> [ObjectID] {
    let model = inSource ? mapping.source : mapping.destination
    let side = inSource ? "source" : "destination"
    guard let found = model.entity(named: entity) else {
      throw MigrationError(.policy, entity: entity, reason: "fetch: the \(side) model has no entity '\(entity)'")
    }
    var filter: RowFilter?
    if let predicate {
      let said = predicate.rowFilterTesting(found, in: model)
      guard said.whole else {
        throw MigrationError(
          .policy, entity: entity,
          reason:
            "fetch: the predicate \(predicate) cannot be tested by the store whole (MATCHES, @sum/@avg/@min/@max, "
            + "two key paths compared, a transient attribute); a stage's ctx:fetch judges any predicate")
      }
      filter = said.filter
    }
    let order = keys.map { ($0.name, $0.ascending) }
    let ids: [ObjectID]?
    if inSource {
      ids = try (source as? SQLiteStore)?.objectIDs(
        of: entity, includingSubentities: true, filter: filter, sortedBy: order, limit: limit)
    } else {
      ids = try activeWriter().objectIDs(of: entity, filter: filter, sortedBy: order, limit: limit)
    }
    guard let ids else {
      throw MigrationError(
        .policy, entity: entity,
        reason: "fetch: the \(side) store cannot sort by \(keys.map(\.name).joined(separator: ", ")) "
          + "(sort keys are attributes of \(entity))")
    }
    return ids
  }

  /// How many objects of `entity` (and its subentities) the destination holds as the migration has
  /// written them so far (or, with `inSource`, the source): what a hook's fetches may earn for
  /// (the Lua policies' budget grows with the objects a hook is handed).
  package func count(_ entity: String, inSource: Bool) throws -> Int {
    if inSource { return try source.count(of: entity, includingSubentities: true) }
    return try activeWriter().objectIDs(of: entity, filter: nil, sortedBy: [], limit: nil)?.count ?? 0
  }
}
