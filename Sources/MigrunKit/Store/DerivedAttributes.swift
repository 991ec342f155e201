import GRDB

/// Core Data keeps derived attributes current in SQLite with triggers named `Z_DA_…`, which a store
/// carries like its tables: migrun writes them, with the same SQL as Apple's stores, on `create`
/// and at the end of every migration step (after the rows, so a copied value is not counted twice),
/// and fills every derived value then.
///
/// The shape reproduced is the one real stores show (SampleModel2 in `../shared`): a to-many's
/// count, `pages.@count` (`count:(pages)` as `NSExpression` prints it), where the to-many's inverse
/// is a to-one on a table that holds only the destination's kinds — five triggers: on the
/// destination's insert, update of the key (increment and decrement), delete, and on the source's
/// insert. Any other derivation (`@sum`, key paths, functions, a filter predicate, a many-to-many)
/// is refused by name before anything is written: migrun does not know the triggers Core Data
/// would keep it with, and a store whose derived values silently go stale is worse than an error.
public enum DerivedAttributes {
  public struct Trigger: Sendable, Hashable {
    public let name: String
    public let sql: String
  }

  /// One derived count: `attribute` (column `column` of `table`, entity `entity`) counts the rows of
  /// `destinationTable` whose `keyColumn` holds the object's key.
  struct Count {
    let entity: String
    let attribute: String
    let table: String
    let column: String
    let destinationTable: String
    let keyColumn: String
  }

  /// The derived counts of `schema`'s model, or the first derivation migrun cannot keep current.
  static func counts(of schema: StoreSchema) throws(StoreError) -> [Count] {
    let model = schema.model
    var counts: [Count] = []
    for entity in model.entities {
      for attribute in entity.attributes {
        guard let derivation = attribute.derivation, !attribute.isTransient else { continue }
        func refuse(_ why: String) -> StoreError {
          StoreError(
            .unsupportedDerivation, entity: entity.name,
            reason:
              "attribute '\(attribute.name)' is derived as '\(derivation.expression)', which migrun cannot keep current: \(why) (migrun writes Core Data's Z_DA_ triggers for a to-many's count, 'relationship.@count')"
          )
        }
        guard derivation.filterPredicate == nil else { throw refuse("it has a filter predicate") }
        guard let name = countedRelationship(derivation.expression) else { throw refuse("not a to-many's count") }
        guard let layout = schema.layout(of: entity.name),
          case .attribute(let column)? = layout.properties[attribute.name],
          let relationship = model.relationships(of: entity).first(where: { $0.name == name }), relationship.isToMany
        else { throw refuse("'\(name)' is not a to-many relationship of \(entity.name)") }
        guard case .toManyThroughInverse(let destination, let inverse)? = layout.properties[name],
          !StoreSchema.isHiddenToOne(inverse), let target = schema.layout(of: destination),
          case .toOne(let key, _, _)? = target.properties[inverse],
          schema.rowCondition(target) == nil
        else { throw refuse("'\(name)' is not a to-many whose inverse is a to-one of an entity alone in its table") }
        counts.append(
          Count(
            entity: entity.name, attribute: attribute.name, table: layout.table, column: column.name,
            destinationTable: target.table, keyColumn: key.name))
      }
    }
    return counts
  }

  /// `pages` of `pages.@count` or `count:(pages)`.
  static func countedRelationship(_ expression: String) -> String? {
    let text = expression.trimmingCharacters(in: .whitespaces)
    func identifier(_ name: Substring) -> String? {
      guard let first = name.first, first.isLetter || first == "_",
        name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
      else { return nil }
      return String(name)
    }
    if text.hasSuffix(".@count") { return identifier(text.dropLast(".@count".count)) }
    if text.hasPrefix("count:("), text.hasSuffix(")") { return identifier(text.dropFirst("count:(".count).dropLast()) }
    return nil
  }

  /// Core Data's triggers for `schema`'s derived attributes.
  public static func triggers(of schema: StoreSchema) throws(StoreError) -> [Trigger] {
    try counts(of: schema).flatMap { count -> [Trigger] in
      let (table, column, other, key) = (count.table, count.column, count.destinationTable, count.keyColumn)
      let prefix = "Z_DA_\(other)_\(count.entity)_\(count.attribute)_PARAMETER"
      func report(_ function: String, _ row: String) -> String {
        "SELECT \(function)('\(table)', Z_ENT, Z_PK, '\(count.attribute)', \(column)) FROM \(table) WHERE Z_PK = \(row);"
      }
      // The destination's four: which event, which row's key, and how the count moves.
      func parameter(_ suffix: String, _ event: String, _ row: String, _ change: String) -> Trigger {
        let name = "\(prefix)_\(suffix)"
        return Trigger(
          name: name,
          sql:
            "CREATE TRIGGER \(name) AFTER \(event) ON \(other) FOR EACH ROW WHEN (\(row).\(key) NOT NULL) BEGIN UPDATE \(table) SET \(column) = \(change) WHERE Z_PK = \(row).\(key); \(report("NSCoreDataDATriggerUpdatedAffectedObjectValue", "\(row).\(key)")) END"
        )
      }
      return [
        parameter("INSERT", "INSERT", "NEW", "IFNULL(\(column), 0) + 1"),
        parameter("UPDATE_INCREMENT", "UPDATE OF \(key)", "NEW", "\(column) + 1"),
        parameter("UPDATE_DECREMENT", "UPDATE OF \(key)", "OLD", "\(column) - 1"),
        parameter("DELETE", "DELETE", "OLD", "\(column) - 1"),
        Trigger(
          name: "Z_DA_\(table)_\(count.entity)_\(count.attribute)_SOURCE_INSERT",
          sql:
            "CREATE TRIGGER Z_DA_\(table)_\(count.entity)_\(count.attribute)_SOURCE_INSERT AFTER INSERT ON \(table) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = (SELECT IFNULL(COUNT(\(key)), 0) FROM \(other) WHERE \(key) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(report("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "NEW.Z_PK")) END"
        ),
      ]
    }
  }

  /// Statements giving every derived value its current value (after rows were copied or a
  /// migration added the attribute).
  static func fills(of schema: StoreSchema) throws(StoreError) -> [String] {
    try counts(of: schema).map { count in
      let own = schema.layout(of: count.entity).map { schema.rowPredicate($0, alias: "o") } ?? "1"
      return """
        UPDATE \(count.table) AS o SET \(count.column) = (SELECT COUNT(d.\(count.keyColumn)) FROM \(count.destinationTable) d WHERE d.\(count.keyColumn) = o.Z_PK) WHERE \(own)
        """
    }
  }

  /// Creates the triggers and fills the values in `db` (inside the caller's transaction).
  static func install(_ db: Database, _ schema: StoreSchema) throws {
    for fill in try fills(of: schema) { try db.execute(sql: fill) }
    for trigger in try triggers(of: schema) { try db.execute(sql: trigger.sql) }
  }
}
