import MigrunModel

/// Where a row's values go when the schema that named its table's columns is lost: never by a
/// guess. A table of the model has two possible column orders, both from the one home of Core
/// Data's layout (``StoreSchema``): Core Data's statement (``StoreSchema/Table/columns``) and the
/// order migrun wrote before it knew that statement's order (``StoreSchema/Table/columnsAsAdded``,
/// the order the hierarchy adds its columns). An order is refuted by any row a value of which its
/// column's rules do not admit (a Boolean holds 0 or 1, an Integer 16 fits 16 bits, a date is a
/// number, text is no number, a UUID is 16 bytes, a non-optional attribute has a value, `Z_ENT` is
/// one of the table's entities); a row is placed only when every order left puts its values in the
/// same columns. Any other row is set aside whole.
///
/// ```swift
/// let placement = SalvagePlacement(table: table, schema: schema)
/// let orders = placement.orders(admitting: rows)
/// let named = placement.place(values, orders: orders)   // nil: set the row aside
/// ```
package struct SalvagePlacement: Sendable {
  /// What a column admits.
  package struct Rule: Sendable, Hashable {
    /// Core Data's SQL type of the column (INTEGER, TIMESTAMP, …).
    var sqlType: String
    var attribute: AttributeType?
    var isOptional = true
    /// The `Z_ENT` values the column may hold (`Z_ENT`, a to-one's entity column).
    var entityNumbers: Set<Int64>?
  }

  package let table: String
  /// The candidate orders, each a column name per value position (no duplicates).
  package let candidates: [[String]]
  package let rules: [String: Rule]

  package init(table: StoreSchema.Table, schema: StoreSchema) {
    self.table = table.name
    var rules: [String: Rule] = [:]
    for column in table.columns { rules[column.name] = Rule(sqlType: column.type) }
    let layouts = schema.entities.filter { $0.table == table.name }
    if !layouts.isEmpty {
      rules["Z_ENT"]?.entityNumbers = Set(layouts.map { Int64($0.number) })
      rules["Z_ENT"]?.isOptional = false
    }
    for layout in layouts {
      guard let entity = schema.model.entity(named: layout.name) else { continue }
      for attribute in schema.model.attributes(of: entity) {
        guard case .attribute(let column)? = layout.properties[attribute.name] else { continue }
        rules[column.name]?.attribute = attribute.type
      }
    }
    // A non-optional attribute is only known to hold a value when every entity of the table has it.
    for layout in layouts.prefix(1) {
      guard let entity = schema.model.entity(named: layout.name) else { continue }
      for attribute in schema.model.attributes(of: entity) where !attribute.isOptional && attribute.derivation == nil {
        guard case .attribute(let column)? = layout.properties[attribute.name], layout.superNumber == 0 else {
          continue
        }
        rules[column.name]?.isOptional = false
      }
    }
    for column in Self.entityColumns(of: layouts, schema: schema) {
      rules[column.name]?.entityNumbers = column.numbers
    }
    self.rules = rules
    let orders = [table.columns.map(\.name), table.columnsAsAdded].filter { !$0.isEmpty }
    candidates = orders.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
  }

  /// The candidate orders no row refutes.
  package func orders(admitting rows: some Sequence<[SQLiteFileImage.Value]>) -> [[String]] {
    var left = candidates
    for values in rows where !left.isEmpty {
      left.removeAll { !admits(values, in: $0) }
    }
    return left
  }

  /// How the rows were placed under `orders` (those no row refuted), in words for the report:
  /// by Core Data's order (for the store's framework, when its metadata says), by migrun's earlier
  /// order, where both agree, or — none left — set aside.
  package func describe(_ orders: [[String]], framework: Int64?) -> String {
    let coreData = "Core Data's column order" + (framework.map { " for framework \($0)" } ?? "")
    guard let first = candidates.first else { return "set aside: the table has no column order" }
    switch orders.count {
    case 0: return "set aside: every column order is refuted by a row (the order is not proven)"
    case 1 where orders[0] == first: return "placed by \(coreData), the one order no row refutes"
    case 1: return "placed by the column order migrun wrote before it wrote Core Data's, the one order no row refutes"
    default:
      return "placed where \(coreData) and migrun's earlier order agree; rows they place otherwise set aside "
        + "(the order is not proven)"
    }
  }

  /// The row's values by column name when every order left places them alike; nil when none is
  /// left, or two place a value differently (the row is then set aside).
  package func place(_ values: [SQLiteFileImage.Value], orders: [[String]]) -> [String: SQLiteFileImage.Value]? {
    var placed: [String: SQLiteFileImage.Value]?
    for order in orders {
      var named: [String: SQLiteFileImage.Value] = [:]
      for (index, column) in order.enumerated() where index < values.count && values[index] != .null {
        named[column] = values[index]
      }
      if let placed, placed != named { return nil }
      placed = named
    }
    return placed
  }

  /// Whether every value of a row is one its column admits under `order`.
  func admits(_ values: [SQLiteFileImage.Value], in order: [String]) -> Bool {
    guard values.count <= order.count else { return false }
    for (index, column) in order.enumerated() {
      let value = index < values.count ? values[index] : .null
      guard let rule = rules[column], Self.admits(value, rule, isRowid: column == "Z_PK") else { return false }
    }
    return true
  }
}

extension SalvagePlacement {
  /// Whether `rule`'s column may hold `value` as Core Data writes it.
  static func admits(_ value: SQLiteFileImage.Value, _ rule: Rule, isRowid: Bool = false) -> Bool {
    if isRowid { return value == .null }
    if case .null = value { return rule.isOptional }
    if let numbers = rule.entityNumbers {
      guard case .integer(let number) = value else { return false }
      return numbers.contains(number)
    }
    guard let type = rule.attribute else { return SalvageRead.fits(value, rule.sqlType) }
    switch (type, value) {
    case (.boolean, .integer(let number)): return number == 0 || number == 1
    case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)):
      return type.integerRange?.contains(number) == true
    case (.date, .integer), (.date, .real), (.double, .integer), (.double, .real), (.float, .integer),
      (.float, .real), (.decimal, .integer), (.decimal, .real):
      return true
    case (.string, .text), (.uri, .text), (.objectID, .text): return true
    case (.uuid, .blob(let bytes)): return bytes.count == 16
    case (.binary, .blob), (.transformable, .blob), (.composite, _), (.undefined, _): return true
    default: return false
    }
  }

  /// The entity columns of to-ones (`Z<ent>_<NAME>`): the numbers of the destination's kinds.
  private static func entityColumns(
    of layouts: [StoreSchema.EntityLayout], schema: StoreSchema
  ) -> [(name: String, numbers: Set<Int64>)] {
    var found: [(String, Set<Int64>)] = []
    for layout in layouts {
      guard let entity = schema.model.entity(named: layout.name) else { continue }
      for relationship in schema.model.relationships(of: entity) {
        guard case .toOne(_, let column?, _)? = layout.properties[relationship.name],
          let destination = schema.layout(of: relationship.destinationEntity)
        else { continue }
        found.append((column.name, Set(destination.kindNumbers.map(Int64.init))))
      }
    }
    return found
  }
}
