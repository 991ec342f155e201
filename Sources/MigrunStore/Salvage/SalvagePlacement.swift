import MigrunModel

/// Where a row's values go when the schema that named its table's columns is lost: never by a
/// guess. A table of the model has a few possible column orders — Core Data's (the root entity's
/// columns sorted by SQL type, `-[NSSQLiteAdapter newCreateTableStatementForEntity:]` with
/// `sortColumnsByType`; within a type the order the entity hierarchy adds them: Z_PK, Z_ENT, Z_OPT,
/// then each entity's attributes, then its relationships, the root first, then its subentities
/// depth-first) and migrun's own (by name). An order is refuted by any row a value of which its
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
    let orders = [Self.coreDataOrder(of: table, layouts: layouts, schema: schema), table.columns.map(\.name)]
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
    case (.integer16, .integer(let number)): return Int64(Int16.min)...Int64(Int16.max) ~= number
    case (.integer32, .integer(let number)): return Int64(Int32.min)...Int64(Int32.max) ~= number
    case (.integer64, .integer): return true
    case (.date, .integer), (.date, .real), (.double, .integer), (.double, .real), (.float, .integer),
      (.float, .real), (.decimal, .integer), (.decimal, .real):
      return true
    case (.string, .text), (.uri, .text), (.objectID, .text): return true
    case (.uuid, .blob(let bytes)): return bytes.count == 16
    case (.binary, .blob), (.transformable, .blob), (.composite, _), (.undefined, _): return true
    default: return false
    }
  }

  /// Core Data's column order for `table`: Z_PK, Z_ENT, Z_OPT, then the hierarchy's columns as its
  /// entities add them (each entity's attributes by name, then its relationships' columns by name:
  /// key, entity, order), stably sorted by SQL type.
  static func coreDataOrder(
    of table: StoreSchema.Table, layouts: [StoreSchema.EntityLayout], schema: StoreSchema
  ) -> [String] {
    guard !layouts.isEmpty else { return table.columns.map(\.name) }
    let types = Dictionary(table.columns.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
    var added: [String] = ["Z_PK", "Z_ENT", "Z_OPT"].filter { types[$0] != nil }
    for layout in layouts {
      for column in columnsAdded(by: layout, schema: schema) where !added.contains(column) { added.append(column) }
    }
    added += table.columns.map(\.name).filter { !added.contains($0) }
    // Dates and floating-point numbers sort alike (Moody's ZMOOD: DATE, LATITUDE, LONGITUDE,
    // MARKEDFORDELETIONDATE); decimals after them (SampleModel2's ZBOOK).
    let rank = ["INTEGER": 0, "TIMESTAMP": 1, "FLOAT": 1, "DECIMAL": 2, "VARCHAR": 3, "BLOB": 4]
    let fixed = added.prefix { ["Z_PK", "Z_ENT", "Z_OPT"].contains($0) }
    let rest = added.dropFirst(fixed.count).enumerated().sorted {
      (rank[types[$0.element] ?? ""] ?? 6, $0.offset) < (rank[types[$1.element] ?? ""] ?? 6, $1.offset)
    }
    return Array(fixed) + rest.map(\.element)
  }

  /// The columns an entity adds, in the order it adds them: its attributes by name (transformable
  /// ones after the others: SampleModel2's ZBOOK has UNIQUEID before COVER), then its to-ones' keys
  /// (those of to-manys without an inverse after the others), their entity columns, their order
  /// columns (Bookmarks' ZBOOKMARKENTITY: FAVORITEFOLDER, PARENT, Z_FOK_FAVORITEFOLDER, Z_FOK_PARENT).
  private static func columnsAdded(by layout: StoreSchema.EntityLayout, schema: StoreSchema) -> [String] {
    let attributes = schema.model.entity(named: layout.name).map { schema.model.attributes(of: $0) } ?? []
    let transformable = Set(attributes.filter { $0.type == .transformable }.map(\.name))
    var columns: [(attribute: Bool, late: Bool, name: String, column: String)] = []
    var toOnes: [(hidden: Bool, name: String, key: String, entity: String?, order: String?)] = []
    for (name, storage) in layout.properties {
      switch storage {
      case .attribute(let column): columns.append((true, transformable.contains(name), name, column.name))
      case .toOne(let key, let entity, let order):
        toOnes.append((StoreSchema.isHiddenToOne(name), name, key.name, entity?.name, order?.name))
      default: continue
      }
    }
    let sortedAttributes = columns.sorted { ($0.late ? 1 : 0, $0.name) < ($1.late ? 1 : 0, $1.name) }.map(\.column)
    let sortedToOnes = toOnes.sorted { ($0.hidden ? 1 : 0, $0.name) < ($1.hidden ? 1 : 0, $1.name) }
    return sortedAttributes + sortedToOnes.map(\.key) + sortedToOnes.compactMap(\.entity)
      + sortedToOnes.compactMap(\.order)
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
