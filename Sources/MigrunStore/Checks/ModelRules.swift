import GRDB
import MigrunModel

/// The rules of a model every stored object must keep (Core Data's validation of model rules):
/// required attributes hold a value, values keep their minimum, maximum, length and pattern
/// (``ValueRule``), required relationships hold an object, and to-many counts stay within their
/// minimum and maximum.
package struct ModelRules {
  package struct EntityRules {
    let entity: Entity
    let requiredAttributes: [Attribute]
    /// Relationships with a rule: required, or with a minimum or maximum count.
    let relationships: [Relationship]
    /// Minimum and maximum values and lengths, regular expressions (``ValueRule``).
    let valueRules: [ValueRule]

    /// What `object` breaks, one line each: its required attributes, value rules and relationship
    /// counts. `count` gives how many objects a relationship holds, nil when that is not known (a
    /// to-many a context never read is as the store has it).
    package func problems(of object: StoredObject, count: (Relationship) -> Int?) -> [String] {
      var problems: [String] = []
      for attribute in requiredAttributes where (object.attributes[attribute.name] ?? .null) == .null {
        problems.append("\(object.id): '\(attribute.name)' is required but NULL")
      }
      for rule in valueRules {
        if let problem = rule.problem(object.attributes[rule.attribute] ?? .null) {
          problems.append("\(object.id): \(problem)")
        }
      }
      for relationship in relationships {
        if let held = count(relationship), let problem = ModelRules.problem(relationship, count: held) {
          problems.append("\(object.id): \(problem)")
        }
      }
      return problems
    }
  }

  let entities: [EntityRules]
  /// Entity name → its rules.
  package let byEntity: [String: EntityRules]

  package init(model: ObjectModel) {
    entities = model.entities.filter { !$0.isAbstract }.map { entity in
      EntityRules(
        entity: entity,
        requiredAttributes: model.attributes(of: entity).filter {
          !$0.isOptional && !$0.isTransient && $0.derivation == nil
        },
        relationships: model.relationships(of: entity).filter {
          !$0.isTransient && ((!$0.isOptional && !$0.isToMany) || $0.minCount > 0 || ($0.isToMany && $0.maxCount > 0))
        },
        valueRules: model.attributes(of: entity).flatMap(ValueRule.rules(of:)))
    }
    byEntity = Dictionary(uniqueKeysWithValues: entities.map { ($0.entity.name, $0) })
  }

  /// What is wrong with a relationship holding `count` objects, or nil.
  ///
  /// A non-optional to-one must hold an object. A to-many is held to its minimum count only: Core
  /// Data saves a non-optional to-many with no minimum (`toMany="YES"`, no `optional`, no `minCount`)
  /// empty — real stores it wrote and validated hold such objects in every version — because the
  /// value is an empty set, not nil, and the counts are "only enforced if the relationship value … is
  /// not nil" (NSRelationshipDescription). So a non-optional to-many below its minimum fails even
  /// when empty; an optional one may be empty, and is held to its minimum once it holds something.
  static func problem(_ relationship: Relationship, count: Int) -> String? {
    guard relationship.isToMany else {
      return !relationship.isOptional && count == 0 ? "'\(relationship.name)' is required but empty" : nil
    }
    if count < Int(relationship.minCount) && (count > 0 || !relationship.isOptional) {
      return "'\(relationship.name)' has \(count), at least \(relationship.minCount) required"
    }
    if relationship.maxCount > 0 && count > Int(relationship.maxCount) {
      return "'\(relationship.name)' has \(count), at most \(relationship.maxCount) allowed"
    }
    return nil
  }

  /// The rules checked object by object (any store).
  func violations(in store: any ObjectStore, limit: Int) throws -> [String] {
    var problems: [String] = []
    for rules in entities where problems.count < limit {
      try store.forEachObject(of: rules.entity.name, includingSubentities: false, withToMany: true) { object in
        guard problems.count < limit else { return }
        problems += rules.problems(of: object) { relationship in
          relationship.isToMany
            ? object.toMany[relationship.name]?.count ?? 0 : (object.toOne[relationship.name] == nil ? 0 : 1)
        }
      }
    }
    return Array(problems.prefix(limit))
  }
}

extension SQLiteStore {
  /// Objects that break the model's rules (at most `limit`), found by SQL: a query per rule, no
  /// object loaded. The to-many counts use the relationship columns' indexes.
  public func ruleViolations(limit: Int) throws -> [String] {
    var problems: [String] = []
    try read { db in
      for rules in ModelRules(model: model).entities {
        guard problems.count < limit, let layout = schema.layout(of: rules.entity.name) else { continue }
        let own = schema.rowPredicate(layout, includingSubentities: false, alias: "o")
        let rows = RuleRows(db: db, layout: layout, own: own, limit: limit)
        try rows.requiredAttributes(rules, into: &problems)
        try valueRuleViolations(rules, rows, into: &problems)
        try rows.relationshipCounts(rules, counting: { countExpression(of: $0, in: layout) }, into: &problems)
      }
    }
    return Array(problems.prefix(limit))
  }

  /// Value rules are checked in Swift (lengths in UTF-16 units, ICU regular expressions) on the
  /// columns that have them, read in one pass.
  private func valueRuleViolations(
    _ rules: ModelRules.EntityRules, _ rows: RuleRows, into problems: inout [String]
  ) throws {
    let layout = rows.layout
    // Each rule with the position of its column in the row read (Z_PK first).
    var columns: [String] = []
    let checked = rules.valueRules.compactMap { rule -> (ValueRule, Int)? in
      guard case .attribute(let column)? = layout.properties[rule.attribute] else { return nil }
      if !columns.contains(column.name) { columns.append(column.name) }
      return (rule, (columns.firstIndex(of: column.name) ?? 0) + 1)
    }
    guard !checked.isEmpty && problems.count < rows.limit else { return }
    let cursor = try Row.fetchCursor(
      rows.db,
      sql:
        "SELECT o.Z_PK, \(columns.map { "o.\($0)" }.joined(separator: ", ")) FROM \(layout.table) o WHERE \(rows.own) ORDER BY o.Z_PK"
    )
    // A value kept outside the store is checked as the value, not as its reference.
    let external = Set(model.attributes(of: rules.entity).filter(\.storesExternally).map(\.name))
    while problems.count < rows.limit, let row = try cursor.next() {
      let key = try row.required(at: 0, as: Int64.self)
      for (rule, position) in checked {
        var value = StoreValueCoding.value(row[position] as DatabaseValue, type: rule.type)
        if external.contains(rule.attribute) { value = try externalData.resolve(value) }
        if let problem = rule.problem(value) {
          problems.append("\(ObjectID(entity: layout.name, primaryKey: key)): \(problem)")
        }
      }
    }
  }

  /// SQL counting the objects `relationship` of the row `o` holds.
  private func countExpression(of relationship: Relationship, in layout: StoreSchema.EntityLayout) -> String? {
    switch layout.properties[relationship.name] {
    case .toOne(let key, _, _)?:
      return "o.\(key.name) IS NOT NULL"
    case .toManyThroughInverse(let destination, let inverse)?:
      guard let target = schema.layout(of: destination),
        case .toOne(let key, _, _)? = target.properties[inverse]
      else { return nil }
      return
        "(SELECT count(*) FROM \(target.table) t WHERE t.\(key.name) = o.Z_PK AND \(schema.rowPredicate(target, alias: "t")))"
    case .manyToMany(let table, let ownColumn, _, _)?:
      return "(SELECT count(*) FROM \(table) j WHERE j.\(ownColumn) = o.Z_PK)"
    default:
      return nil
    }
  }
}

/// The rows of one entity's table that a rule query reads (`o`, the entity's own rows), and how many
/// problems a check lists at most.
private struct RuleRows {
  let db: Database
  let layout: StoreSchema.EntityLayout
  let own: String
  let limit: Int

  /// Objects whose required attribute is NULL.
  func requiredAttributes(_ rules: ModelRules.EntityRules, into problems: inout [String]) throws {
    for attribute in rules.requiredAttributes {
      guard case .attribute(let column)? = layout.properties[attribute.name] else { continue }
      let sql = "SELECT o.Z_PK FROM \(layout.table) o WHERE \(own) AND o.\(column.name) IS NULL ORDER BY o.Z_PK"
      for key in try Int64.fetchAll(db, sql: sql + " LIMIT \(limit - problems.count)") {
        problems.append("\(ObjectID(entity: layout.name, primaryKey: key)): '\(attribute.name)' is required but NULL")
      }
    }
  }

  /// Objects holding fewer or more objects in a relationship than its counts allow (`counting`: the
  /// SQL counting them for a row `o`, nil where the store cannot count them).
  func relationshipCounts(
    _ rules: ModelRules.EntityRules, counting: (Relationship) -> String?, into problems: inout [String]
  ) throws {
    for relationship in rules.relationships {
      guard let count = counting(relationship) else { continue }
      var broken: [String] = []
      if !relationship.isOptional && !relationship.isToMany { broken.append("n = 0") }
      if !relationship.isOptional && relationship.isToMany && relationship.minCount > 0 {
        broken.append("n < \(relationship.minCount)")
      }
      if relationship.minCount > 1 { broken.append("(n > 0 AND n < \(relationship.minCount))") }
      if relationship.isToMany && relationship.maxCount > 0 { broken.append("n > \(relationship.maxCount)") }
      guard !broken.isEmpty else { continue }
      let rows = try Row.fetchAll(
        db,
        sql: """
          SELECT pk, n FROM (SELECT o.Z_PK AS pk, \(count) AS n FROM \(layout.table) o WHERE \(own))
          WHERE \(broken.joined(separator: " OR ")) ORDER BY pk LIMIT \(limit - problems.count)
          """)
      for row in rows {
        let key = try row.required(at: 0, as: Int64.self)
        let found = try row.required(at: 1, as: Int.self)
        if let problem = ModelRules.problem(relationship, count: found) {
          problems.append("\(ObjectID(entity: layout.name, primaryKey: key)): \(problem)")
        }
      }
    }
  }
}
