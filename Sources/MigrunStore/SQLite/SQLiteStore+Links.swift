import GRDB
import MigrunModel

extension SQLiteStore {
  /// Per relationship ("Entity.relationship", the entity's own objects): to-one keys and join rows
  /// that name no object of the destination entity — damage a store can carry for years. Counted
  /// as ``edgeCount(of:_:excludingTargets:toExistingObjects:)`` counts links: held minus linked.
  package func danglingLinks(of entities: Set<String>? = nil) throws -> [String: Int] {
    var result: [String: Int] = [:]
    for entity in model.entities where !entity.isAbstract && entities?.contains(entity.name) != false {
      guard let layout = schema.layout(of: entity.name) else { continue }
      for relationship in model.relationships(of: entity) {
        switch layout.properties[relationship.name] {
        case .toOne?, .manyToMany?: break
        default: continue
        }
        let held = try edgeCount(of: entity.name, relationship.name, toExistingObjects: false)
        guard held > 0 else { continue }
        let dangling = held - (try edgeCount(of: entity.name, relationship.name))
        if dangling > 0 { result["\(entity.name).\(relationship.name)"] = dangling }
      }
    }
    return result
  }

  /// Per one-to-one relationship ("Entity.relationship", at the entity that declares it): how many
  /// objects name a target whose inverse does not name them back (or that is no object at all).
  package func oneToOneDisagreements() throws -> [String: Int] {
    var result: [String: Int] = [:]
    for entity in model.entities {
      guard let layout = schema.layout(of: entity.name) else { continue }
      for relationship in entity.relationships where !relationship.isToMany {
        guard let inverse = model.inverse(of: relationship), !inverse.isToMany,
          case .toOne(let key, _, _)? = layout.properties[relationship.name],
          let target = schema.layout(of: relationship.destinationEntity),
          case .toOne(let back, _, _)? = target.properties[inverse.name]
        else { continue }
        let sql = """
          SELECT count(*) FROM \(layout.table) a WHERE \(schema.rowPredicate(layout, alias: "a")) \
          AND a.\(key.name) IS NOT NULL AND NOT EXISTS \
          (SELECT 1 FROM \(target.table) b WHERE b.Z_PK = a.\(key.name) AND b.\(back.name) = a.Z_PK)
          """
        let count = try read { db in try Int.fetchOne(db, sql: sql) ?? 0 }
        if count > 0 { result["\(entity.name).\(relationship.name)"] = count }
      }
    }
    return result
  }

  /// How many (object, target) links `relationship` of `entity`'s own objects holds: to-one keys
  /// set, to-many members (through the inverse's column or a join table).
  /// `excludingTargets`: links to objects of these entities (which a step removes) are not counted.
  /// `toExistingObjects` false: every key set and join row, whatever it names (a key naming no
  /// object included) — a cheaper count, for what an in-place edit must keep.
  package func edgeCount(
    of entity: String, _ relationship: String, excludingTargets removed: [StoreSchema.EntityLayout] = [],
    toExistingObjects: Bool = true
  ) throws -> Int {
    guard let layout = schema.layout(of: entity),
      let declared = model.relationships(of: model.entity(named: entity) ?? Entity(name: entity)).first(where: {
        $0.name == relationship
      }),
      let targetEntity = schema.layout(of: declared.destinationEntity)
    else { return 0 }
    let own = "SELECT Z_PK FROM \(layout.table) WHERE \(schema.rowPredicate(layout, includingSubentities: false))"
    // The keys of removed objects in the target's table.
    let gone = removed.filter { $0.table.uppercased() == targetEntity.table.uppercased() }
    let goneKeys: String? =
      gone.isEmpty
      ? nil
      : gone.contains(where: { schema.rowCondition($0, includingSubentities: false) == nil })
        ? "SELECT Z_PK FROM \(targetEntity.table)"
        : "SELECT Z_PK FROM \(targetEntity.table) WHERE "
          + gone.compactMap { schema.rowCondition($0, includingSubentities: false) }.joined(separator: " OR ")
    func kept(_ column: String) -> String { goneKeys.map { " AND \(column) NOT IN (\($0))" } ?? "" }
    let sql: String
    // Links to objects that exist (or every key held): a key naming no object is damage, counted
    // apart (Before.dangling).
    let targets = "SELECT Z_PK FROM \(targetEntity.table) WHERE \(schema.rowPredicate(targetEntity))"
    func named(_ column: String) -> String {
      toExistingObjects ? " AND \(column) IN (\(targets))" : " AND \(column) IS NOT NULL"
    }
    switch layout.properties[relationship] {
    case .toOne(let key, _, _)?:
      sql =
        "SELECT count(*) FROM \(layout.table) WHERE \(schema.rowPredicate(layout, includingSubentities: false))"
        + named(key.name) + kept(key.name)
    case .toManyThroughInverse(let destination, let inverse)?:
      guard let target = schema.layout(of: destination), case .toOne(let key, _, _)? = target.properties[inverse] else {
        return 0
      }
      sql =
        "SELECT count(*) FROM \(target.table) WHERE \(schema.rowPredicate(target)) AND \(key.name) IN (\(own))"
        + kept("Z_PK")
    case .manyToMany(let table, let ownColumn, let otherColumn, _)?:
      sql = "SELECT count(*) FROM \(table) WHERE \(ownColumn) IN (\(own))" + named(otherColumn) + kept(otherColumn)
    default:
      return 0
    }
    return try countRows(sql)
  }
}
