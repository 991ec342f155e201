import Foundation
import GRDB
import MigrunModel

/// Core Data keeps derived attributes current in SQLite with triggers named `Z_DA_…`, which a store
/// carries like its tables: migrun writes them, with the same SQL as Apple's, on `create` and at the
/// end of every migration step (after the rows, so a copied value is not counted twice), and fills
/// every derived value then.
///
/// The SQL of each kind is read off the public decompilation of Core Data's
/// `NSSQLDerivedAttributeSQLGenerator`; the to-many count is also the one real stores show
/// (SampleModel2 in `../shared`, compared trigger by trigger). Kinds written:
/// - a to-many's count, `pages.@count` (printed `count:(pages)`), where the to-many's inverse is a
///   to-one: five triggers, on the destination's insert, update of the key (increment, decrement),
///   delete, and the source's insert;
/// - a many-to-many's count: triggers on the join table's insert and delete, and the source's insert;
/// - one of the entity's own attributes, plain (`title`) or through `canonical:`, `uppercase:`,
///   `lowercase:`, and `now()`: an insert and an update trigger on the entity's table;
/// - an attribute across a to-one (`folder.name`, or `lowercase:(folder.name)`): triggers on the
///   entity's insert and key update, and on the destination's insert and update of the attribute.
///
/// `canonical:` runs `NSCoreDataCanonical`, `uppercase:`/`lowercase:` `NSCoreDataToUpper`/`…ToLower`,
/// `now()` `NSCoreDataNow()` — functions Core Data registers in its connections, and migrun in its own
/// (``SQLiteStore``). Also a to-many's `@sum`, `@min` and `@max` over an attribute of its destination.
/// Guesses, said here: a many-to-many's count uses the join column holding the entity's own keys;
/// `canonical:` folds case and diacritics. Anything else is refused by name before anything is
/// written, as Core Data refuses it (`@avg`, filter predicates, key paths of more than two steps) or
/// because no kind above fits: a store whose derived values silently go stale is worse than an error.
/// A to-many's count of a Boolean attribute (`items.@count.done`) is its sum, as Core Data writes it.
package enum DerivedAttributes {
  package struct Trigger: Sendable, Hashable {
    package let name: String
    package let sql: String
  }

  /// One derived attribute as SQL: its triggers and the statement giving every row its value.
  struct Plan {
    let triggers: [Trigger]
    let fill: String
  }

  /// Where a derived attribute lives.
  struct Target {
    let entity: String
    let attribute: String
    let table: String
    let column: String
    /// `Z_ENT = n` or a range, when the entity shares its table (Core Data's condition), else nil.
    let entityRange: (low: Int, high: Int)?

    func condition(_ prefix: String) -> String? {
      guard let range = entityRange else { return nil }
      return range.low >= range.high
        ? "\(range.low) = \(prefix)Z_ENT" : "\(range.low) <= \(prefix)Z_ENT AND \(prefix)Z_ENT <= \(range.high)"
    }

    func report(_ function: String, where clause: String) -> String {
      "SELECT \(function)('\(table)', Z_ENT, Z_PK, '\(attribute)', \(column)) FROM \(table) WHERE \(clause);"
    }
  }

  /// The derived attributes of `schema`'s model as SQL, or the first one migrun cannot keep current.
  static func plans(of schema: StoreSchema) throws(StoreError) -> [Plan] {
    let model = schema.model
    var plans: [Plan] = []
    for entity in model.entities {
      for attribute in entity.attributes {
        guard let derivation = attribute.derivation, !attribute.isTransient else { continue }
        func refuse(_ why: String) -> StoreError {
          StoreError(
            .unsupportedDerivation, entity: entity.name,
            reason:
              "attribute '\(attribute.name)' is derived as '\(derivation.expression)', which migrun cannot keep current: \(why) (migrun writes Core Data's Z_DA_ triggers for a to-many's count, an attribute of the entity or across a to-one, plain or through canonical:, uppercase:, lowercase:, and now())"
          )
        }
        guard derivation.filterPredicate == nil else { throw refuse("it has a filter predicate") }
        guard let layout = schema.layout(of: entity.name),
          case .attribute(let column)? = layout.properties[attribute.name]
        else { throw refuse("it has no column") }
        // Core Data's condition on the entity's rows: only when it has a superentity (Apple's
        // SampleModel2 store: Book, a root with a subentity, has none).
        let shared = layout.superNumber != 0
        let target = Target(
          entity: entity.name, attribute: attribute.name, table: layout.table, column: column.name,
          entityRange: shared ? (layout.number, layout.kindNumbers.max() ?? layout.number) : nil)
        let (function, argument) = DerivationFormat.parse(DerivationFormat.expression(derivation.expression))
        switch function {
        case "count:" where argument.map { !$0.contains(".") } ?? false:
          plans.append(try count(argument ?? "", of: target, in: schema, layout: layout, refuse: refuse))
        case "sum:", "min:", "max:", "count:":
          plans.append(try aggregate(function ?? "", argument, target, layout: layout, in: schema, refuse: refuse))
        case "average:":
          throw refuse("Core Data does not keep an average current in SQL either")
        case "now()":
          plans.append(own(target, value: "NSCoreDataNow()", columns: "Z_OPT"))
        case nil, "canonical:", "uppercase:", "lowercase:":
          plans.append(try keyPath(function, argument, target, of: entity, layout: layout, in: schema, refuse: refuse))
        default:
          throw refuse("'\(function ?? "")' is not a function migrun writes")
        }
      }
    }
    return plans
  }

  /// `sum:`, `min:`, `max:` or `count:` of an attribute of a to-many whose inverse is a to-one.
  private static func aggregate(
    _ function: String, _ argument: String?, _ target: Target, layout: StoreSchema.EntityLayout,
    in schema: StoreSchema, refuse: (String) -> StoreError
  ) throws(StoreError) -> Plan {
    let model = schema.model
    let path = (argument ?? "").split(separator: ".").map(String.init)
    guard path.count == 2, case .toManyThroughInverse(let destination, let inverse)? = layout.properties[path[0]],
      !StoreSchema.isHiddenToOne(inverse), let other = schema.layout(of: destination),
      case .toOne(let key, _, _)? = other.properties[inverse],
      case .attribute(let parameter)? = other.properties[path[1]]
    else { throw refuse("not an attribute of a to-many whose inverse is a to-one") }
    // A count of a to-many's attribute is Core Data's count of its true values (a Boolean's
    // sum); of any other attribute it is not one Core Data writes.
    if function == "count:" {
      let attribute = model.entity(named: destination).flatMap {
        model.attributes(of: $0).first { $0.name == path[1] }
      }
      guard attribute?.type == .boolean else {
        throw refuse("a count of a to-many's attribute that is not Boolean")
      }
    }
    let source = ToMany(
      table: other.table, key: key.name, parameter: parameter.name,
      entityRange: other.superNumber != 0 ? (other.number, other.kindNumbers.max() ?? other.number) : nil)
    return
      (function == "sum:" || function == "count:"
      ? total(target, over: source, summing: parameter.name)
      : extreme(target, over: source, minimum: function == "min:"))
  }

  /// An attribute of the entity or across a to-one, plain or through `canonical:`, `uppercase:`, `lowercase:`.
  private static func keyPath(
    _ function: String?, _ argument: String?, _ target: Target, of entity: Entity, layout: StoreSchema.EntityLayout,
    in schema: StoreSchema, refuse: (String) -> StoreError
  ) throws(StoreError) -> Plan {
    let model = schema.model
    guard let argument else { throw refuse("not a key path") }
    let sqlFunction = function.map {
      [
        "canonical:": "NSCoreDataCanonical", "uppercase:": "NSCoreDataToUpper", "lowercase:": "NSCoreDataToLower",
      ][$0] ?? ""
    }
    let path = argument.split(separator: ".").map(String.init)
    func wrap(_ value: String) -> String { sqlFunction.map { "\($0)(\(value))" } ?? value }
    if path.count == 1 {
      guard case .attribute(let source)? = layout.properties[path[0]] else {
        throw refuse("'\(path[0])' is not an attribute of \(entity.name)")
      }
      return own(target, value: wrap("NEW.\(source.name)"), columns: source.name)
    } else if path.count == 2 {
      guard case .toOne(let key, _, _)? = layout.properties[path[0]],
        let relationship = model.relationships(of: entity).first(where: { $0.name == path[0] }),
        let destination = schema.layout(of: relationship.destinationEntity),
        case .attribute(let parameter)? = destination.properties[path[1]]
      else { throw refuse("'\(argument)' is not an attribute across a to-one") }
      return toOne(target, key: key.name, destination: destination.table, parameter: parameter.name, wrap: wrap)
    }
    throw refuse("a key path of more than two steps")
  }

  /// An attribute computed from the entity's own row (`_generateTriggerForAttribute`).
  static func own(_ target: Target, value: String, columns: String) -> Plan {
    let (table, column) = (target.table, target.column)
    let name = "Z_DA_\(table)_\(target.entity)_\(target.attribute)"
    let insert =
      "CREATE TRIGGER \(name)_INSERT AFTER INSERT ON \(table) FOR EACH ROW WHEN (NEW.\(columns) NOT NULL) BEGIN UPDATE \(table) SET \(column) = \(value) WHERE Z_PK = NEW.Z_PK; \(target.report("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", where: "Z_PK = NEW.Z_PK")) END"
    let update =
      "CREATE TRIGGER \(name)_UPDATE AFTER UPDATE OF \(columns) ON \(table) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = \(value) WHERE Z_PK = NEW.Z_PK; \(target.report("NSCoreDataDATriggerUpdatedAffectedObjectValue", where: "Z_PK = NEW.Z_PK")) END"
    let range = target.condition("").map { " WHERE \($0)" } ?? ""
    return Plan(
      triggers: [Trigger(name: name + "_INSERT", sql: insert), Trigger(name: name + "_UPDATE", sql: update)],
      fill: "UPDATE \(table) SET \(column) = \(value.replacingOccurrences(of: "NEW.", with: ""))\(range)")
  }

  /// An attribute across a to-one (`_generateSQLForToOneDerivationForDerivedAttribute`).
  static func toOne(
    _ target: Target, key: String, destination: String, parameter: String, wrap: (String) -> String
  ) -> Plan {
    let (table, column) = (target.table, target.column)
    let source = "Z_DA_\(table)_\(target.entity)_\(target.attribute)_SOURCE"
    let other = "Z_DA_\(destination)_\(target.entity)_\(target.attribute)_PARAMETER"
    let selected = "(SELECT \(wrap(parameter)) FROM \(destination) WHERE Z_PK = NEW.\(key))"
    let newEntity = target.condition("NEW.")
    let rowEntity = target.condition("")
    let andNew = newEntity.map { " AND \($0)" } ?? ""
    let andRow = rowEntity.map { " AND \($0)" } ?? ""
    let triggers = [
      Trigger(
        name: source + "_INSERT",
        sql:
          "CREATE TRIGGER \(source)_INSERT AFTER INSERT ON \(table) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = \(selected) WHERE Z_PK = NEW.Z_PK\(andNew); \(target.report("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", where: "Z_PK = NEW.Z_PK\(andNew)")) END"
      ),
      Trigger(
        name: source + "_UPDATE",
        sql:
          "CREATE TRIGGER \(source)_UPDATE AFTER UPDATE OF \(key) ON \(table) FOR EACH ROW\(newEntity.map { " WHEN \($0)" } ?? "") BEGIN UPDATE \(table) SET \(column) = \(selected) WHERE Z_PK = NEW.Z_PK; \(target.report("NSCoreDataDATriggerUpdatedAffectedObjectValue", where: "Z_PK = NEW.Z_PK")) END"
      ),
      Trigger(
        name: other + "_INSERT",
        sql:
          "CREATE TRIGGER \(other)_INSERT AFTER INSERT ON \(destination) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = \(wrap("NEW.\(parameter)")) WHERE \(key) = NEW.Z_PK\(andRow); \(target.report("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", where: "\(key) = NEW.Z_PK\(andRow)")) END"
      ),
      Trigger(
        name: other + "_UPDATE",
        sql:
          "CREATE TRIGGER \(other)_UPDATE AFTER UPDATE OF \(parameter) ON \(destination) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = \(wrap("NEW.\(parameter)")) WHERE \(key) = NEW.Z_PK\(andRow); \(target.report("NSCoreDataDATriggerUpdatedAffectedObjectValue", where: "\(key) = NEW.Z_PK\(andRow)")) END"
      ),
    ]
    return Plan(
      triggers: triggers,
      fill:
        "UPDATE \(table) SET \(column) = (SELECT \(wrap(parameter)) FROM \(destination) WHERE Z_PK = \(table).\(key))")
  }

  /// The to-many a sum, minimum or maximum runs over: its destination's table, the inverse's key
  /// column there, the attribute's column, and the destination's entity condition.
  struct ToMany {
    let table: String
    let key: String
    let parameter: String
    let entityRange: (low: Int, high: Int)?

    var condition: String? {
      guard let range = entityRange else { return nil }
      return range.low >= range.high ? "\(range.low) = Z_ENT" : "\(range.low) <= Z_ENT AND Z_ENT <= \(range.high)"
    }
  }

  /// A to-many's count or `@sum`: triggers on the destination's insert, update of the key (and of
  /// the summed attribute) incrementing and decrementing, delete, and on the source's insert.
  /// `summing`: nil counts the to-many's members.
  static func total(_ target: Target, over many: ToMany, summing value: String?) -> Plan {
    let (table, column, other, key) = (target.table, target.column, many.table, many.key)
    let (plus, minus, columns, aggregate) =
      value.map { ("+ IFNULL(NEW.\($0), 0)", "- IFNULL(OLD.\($0), 0)", "\(key), \($0)", "SUM(\($0))") }
      ?? ("+ 1", "- 1", key, "COUNT(\(key))")
    let prefix = "Z_DA_\(other)_\(target.entity)_\(target.attribute)_PARAMETER"
    // A subentity's total has Core Data's condition on its rows (none for a root, as Apple's store shows).
    let andRow = target.condition("").map { " AND \($0)" } ?? ""
    let report = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
    func parameter(_ suffix: String, _ event: String, _ row: String, _ change: String) -> Trigger {
      Trigger(
        name: "\(prefix)_\(suffix)",
        sql:
          "CREATE TRIGGER \(prefix)_\(suffix) AFTER \(event) ON \(other) FOR EACH ROW WHEN (\(row).\(key) NOT NULL) BEGIN UPDATE \(table) SET \(column) = \(change) WHERE Z_PK = \(row).\(key)\(andRow); \(target.report(report, where: "Z_PK = \(row).\(key)\(andRow)")) END"
      )
    }
    let sourceName = "Z_DA_\(table)_\(target.entity)_\(target.attribute)_SOURCE_INSERT"
    let whenNew = target.condition("NEW.").map { " WHEN \($0)" } ?? ""
    return Plan(
      triggers: [
        parameter("INSERT", "INSERT", "NEW", "IFNULL(\(column), 0) \(plus)"),
        parameter("UPDATE_INCREMENT", "UPDATE OF \(columns)", "NEW", "\(column) \(plus)"),
        parameter("UPDATE_DECREMENT", "UPDATE OF \(columns)", "OLD", "\(column) \(minus)"),
        parameter("DELETE", "DELETE", "OLD", "\(column) \(minus)"),
        Trigger(
          name: sourceName,
          sql:
            "CREATE TRIGGER \(sourceName) AFTER INSERT ON \(table) FOR EACH ROW\(whenNew) BEGIN UPDATE \(table) SET \(column) = (SELECT IFNULL(\(aggregate), 0) FROM \(other) WHERE \(key) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(target.report("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", where: "Z_PK = NEW.Z_PK")) END"
        ),
      ],
      fill:
        "UPDATE \(table) SET \(column) = (SELECT IFNULL(\(aggregate), 0) FROM \(other) WHERE \(key) = \(table).Z_PK)\(target.condition("").map { " WHERE \($0)" } ?? "")"
    )
  }

  /// A to-many's `@min` or `@max`: the destination's insert, setting and unsetting update, delete,
  /// and the source's insert.
  static func extreme(_ target: Target, over many: ToMany, minimum: Bool) -> Plan {
    let (table, column, other, key, value) = (target.table, target.column, many.table, many.key, many.parameter)
    let (op, function) = minimum ? ("<", "MIN") : (">", "MAX")
    let name = "Z_DA_\(other)_\(target.entity)_\(target.attribute)"
    let sourceName = "Z_DA_\(table)_\(target.entity)_\(target.attribute)"
    let andOther = many.condition.map { " AND \($0)" } ?? ""
    let andRow = target.condition("").map { " AND \($0)" } ?? ""
    let report = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
    let recompute =
      "UPDATE \(table) SET \(column) = (SELECT \(function)(\(value)) FROM \(other) WHERE \(key) = OLD.\(key))"
    func select(_ clause: String) -> String { target.report(report, where: clause) }
    let triggers = [
      Trigger(
        name: name + "_INSERT",
        sql:
          "CREATE TRIGGER \(name)_INSERT AFTER INSERT ON \(other) FOR EACH ROW WHEN (NEW.\(key) NOT NULL AND NEW.\(value) NOT NULL\(andOther)) BEGIN UPDATE \(table) SET \(column) = NEW.\(value) WHERE Z_PK = NEW.\(key)\(andRow) AND (\(column) IS NULL OR NEW.\(value) \(op) \(column)); \(select("Z_PK = NEW.\(key)\(andRow) AND (\(column) IS NULL OR NEW.\(value) \(op)= \(column))")) END"
      ),
      Trigger(
        name: name + "_UPDATE_SET",
        sql:
          "CREATE TRIGGER \(name)_UPDATE_SET AFTER UPDATE OF \(key), \(value) ON \(other) FOR EACH ROW WHEN (NEW.\(key) NOT NULL AND NEW.\(value) NOT NULL\(andOther)) BEGIN \(recompute) WHERE Z_PK = OLD.\(key)\(andRow) AND OLD.\(value) \(op)= \(column); \(select("Z_PK = OLD.\(key)\(andRow) AND OLD.\(value) \(op)= \(column)")) UPDATE \(table) SET \(column) = NEW.\(value) WHERE Z_PK = NEW.\(key)\(andRow) AND (\(column) IS NULL OR NEW.\(value) \(op) \(column)); \(select("Z_PK = NEW.\(key)\(andRow) AND NEW.\(value) \(op)= \(column)")) END"
      ),
      Trigger(
        name: name + "_UPDATE_UNSET",
        sql:
          "CREATE TRIGGER \(name)_UPDATE_UNSET AFTER UPDATE OF \(key), \(value) ON \(other) FOR EACH ROW WHEN (OLD.\(key) NOT NULL AND OLD.\(value) NOT NULL AND (NEW.\(key) IS NULL OR NEW.\(value) IS NULL)\(andOther)) BEGIN \(recompute) WHERE Z_PK = OLD.\(key)\(andRow) AND OLD.\(value) \(op)= \(column); \(select("Z_PK = OLD.\(key)\(andRow) AND (\(column) IS NULL OR OLD.\(value) \(op)= \(column))")) END"
      ),
      Trigger(
        name: name + "_DELETE",
        sql:
          "CREATE TRIGGER \(name)_DELETE AFTER DELETE ON \(other) FOR EACH ROW WHEN (OLD.\(key) NOT NULL AND OLD.\(value) NOT NULL\(andOther)) BEGIN \(recompute) WHERE Z_PK = OLD.\(key)\(andRow) AND OLD.\(value) \(op)= \(column); \(select("Z_PK = OLD.\(key)\(andRow) AND (\(column) IS NULL OR OLD.\(value) \(op)= \(column))")) END"
      ),
      Trigger(
        name: sourceName + "_INSERT",
        sql:
          "CREATE TRIGGER \(sourceName)_INSERT AFTER INSERT ON \(table) FOR EACH ROW\(target.condition("NEW.").map { " WHEN \($0)" } ?? "") BEGIN UPDATE \(table) SET \(column) = (SELECT \(function)(\(value)) FROM \(other) WHERE \(key) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(target.report("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", where: "Z_PK = NEW.Z_PK")) END"
      ),
    ]
    // Core Data's data statement ends with the destination's condition (its decompiled format).
    return Plan(
      triggers: triggers,
      fill:
        "UPDATE \(table) SET \(column) = (SELECT \(function)(\(value)) FROM \(other) WHERE \(key) = \(table).Z_PK)\(many.condition.map { " WHERE \($0)" } ?? "")"
    )
  }

  /// A to-many's or a many-to-many's count.
  static func count(
    _ name: String, of target: Target, in schema: StoreSchema, layout: StoreSchema.EntityLayout,
    refuse: (String) -> StoreError
  ) throws(StoreError) -> Plan {
    let (table, column) = (target.table, target.column)
    switch layout.properties[name] {
    case .toManyThroughInverse(let destination, let inverse)?:
      guard !StoreSchema.isHiddenToOne(inverse), let target2 = schema.layout(of: destination),
        case .toOne(let keyColumn, _, _)? = target2.properties[inverse], schema.rowCondition(target2) == nil
      else { throw refuse("'\(name)' is not a to-many whose inverse is a to-one of an entity alone in its table") }
      return total(
        target, over: ToMany(table: target2.table, key: keyColumn.name, parameter: keyColumn.name, entityRange: nil),
        summing: nil)
    case .manyToMany(let join, let ownColumn, _, _)?:
      let parameterName = "Z_DA_\(join)_\(target.entity)_\(target.attribute)_PARAMETER"
      let sourceName = "Z_DA_\(table)_\(target.entity)_\(target.attribute)_SOURCE"
      let andRow = target.condition("").map { " AND \($0)" } ?? ""
      let whenNew = target.condition("NEW.").map { " WHEN \($0)" } ?? ""
      let whereRow = target.condition("").map { " WHERE \($0)" } ?? ""
      let report = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
      return Plan(
        triggers: [
          Trigger(
            name: parameterName + "_INSERT",
            sql:
              "CREATE TRIGGER \(parameterName)_INSERT AFTER INSERT ON \(join) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = IFNULL(\(column), 0) + 1 WHERE Z_PK = NEW.\(ownColumn)\(andRow); \(target.report(report, where: "Z_PK = NEW.\(ownColumn)\(andRow)")) END"
          ),
          Trigger(
            name: parameterName + "_DELETE",
            sql:
              "CREATE TRIGGER \(parameterName)_DELETE AFTER DELETE ON \(join) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = \(column) - 1 WHERE Z_PK = OLD.\(ownColumn)\(andRow); \(target.report(report, where: "Z_PK = OLD.\(ownColumn)\(andRow)")) END"
          ),
          Trigger(
            name: sourceName + "_INSERT",
            sql:
              "CREATE TRIGGER \(sourceName)_INSERT AFTER INSERT ON \(table) FOR EACH ROW\(whenNew) BEGIN UPDATE \(table) SET \(column) = (SELECT IFNULL(COUNT(\(ownColumn)), 0) FROM \(join) WHERE \(ownColumn) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(target.report(report, where: "Z_PK = NEW.Z_PK")) END"
          ),
        ],
        fill:
          "UPDATE \(table) SET \(column) = (SELECT IFNULL(COUNT(\(ownColumn)), 0) FROM \(join) WHERE \(ownColumn) = \(table).Z_PK)\(whereRow)"
      )
    default:
      throw refuse("'\(name)' is not a to-many relationship of \(target.entity)")
    }
  }

  /// Core Data's triggers for `schema`'s derived attributes.
  package static func triggers(of schema: StoreSchema) throws(StoreError) -> [Trigger] {
    try plans(of: schema).flatMap(\.triggers)
  }

  /// Creates the triggers and fills the values in `db` (inside the caller's transaction).
  package static func install(_ db: Database, _ schema: StoreSchema) throws {
    let plans = try plans(of: schema)
    for plan in plans { try db.execute(sql: plan.fill) }
    for plan in plans { for trigger in plan.triggers { try db.execute(sql: trigger.sql) } }
  }

  /// The functions Core Data's derivations call, for a connection that writes a store
  /// (`canonical:` folding case and diacritics is a guess, said in the type's notes).
  static func addFunctions(to db: Database) {
    db.add(
      function: DatabaseFunction("NSCoreDataNow", argumentCount: 0, pure: false) { _ in
        Date().timeIntervalSinceReferenceDate
      })
    func text(_ name: String, _ transform: @escaping @Sendable (String) -> String) {
      db.add(
        function: DatabaseFunction(name, argumentCount: 1, pure: true) { values in
          String.fromDatabaseValue(values[0]).map(transform)
        })
    }
    text("NSCoreDataToLower") { $0.lowercased() }
    text("NSCoreDataToUpper") { $0.uppercased() }
    text("NSCoreDataCanonical") { $0.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) }
  }
}
