import GRDB
import MigrunModel
import PropertyList

/// Filters said in SQL, and the fetches that use them: objects' keys in order, then the objects by
/// key in pages (how Core Data fetches in batches: IDs first, rows as they are needed).
extension SQLiteStore {
  /// Whether the filter can be said in SQL on `entity`'s table (then it is tested exactly; when the
  /// store cannot say one, it reads every row).
  package func says(_ filter: RowFilter?, of entity: String) -> Bool {
    guard let filter else { return true }
    guard let layout = schema.layout(of: entity) else { return false }
    return filteredQuery(layout, includingSubentities: true, filter: filter, select: "1") != nil
  }

  /// The SQL of a query for the keys of `entity`'s objects `filter` takes: `SELECT t0.Z_PK, t0.Z_ENT
  /// FROM <table> t0 WHERE …`, with its values; nil when the filter names what the store does not
  /// hold (then the store cannot say it).
  func filteredQuery(
    _ layout: StoreSchema.EntityLayout, includingSubentities: Bool, filter: RowFilter?, select: String
  ) -> (sql: String, values: [DatabaseValue])? {
    var values: [DatabaseValue] = []
    guard let condition = filter.map({ sql($0.root, layout, alias: "t0", depth: 0, &values) }) ?? "1" else {
      return nil
    }
    let kinds = schema.rowPredicate(layout, includingSubentities: includingSubentities, alias: "t0")
    return ("SELECT \(select) FROM \(layout.table) t0 WHERE \(kinds) AND (\(condition))", values)
  }

  /// The node as an SQL condition on the row `alias` of `layout`'s table, true or false (never
  /// NULL where a NOT would turn it), its values appended; nil when a name is not stored.
  func sql(
    _ node: RowFilter.Node, _ layout: StoreSchema.EntityLayout, alias: String, depth: Int,
    _ values: inout [DatabaseValue]
  ) -> String? {
    func all(_ nodes: [RowFilter.Node], _ joiner: String, empty: String) -> String? {
      var parts: [String] = []
      for node in nodes {
        guard let part = sql(node, layout, alias: alias, depth: depth, &values) else { return nil }
        parts.append("(\(part))")
      }
      return parts.isEmpty ? empty : parts.joined(separator: joiner)
    }
    switch node {
    case .constant(let value): return value ? "1" : "0"
    case .and(let nodes): return all(nodes, " AND ", empty: "1")
    case .or(let nodes): return inList(nodes, layout, alias: alias, &values) ?? all(nodes, " OR ", empty: "0")
    case .not(let inner):
      // SQL's NULL is the predicate's false: a NOT must not turn it into NULL again.
      return sql(inner, layout, alias: alias, depth: depth, &values).map { "NOT coalesce((\($0)), 0)" }
    case .compare(let name, let test, let value):
      return comparison(name, test, value, layout, alias: alias, &values)
    case .string(let name, let op, let pattern, let options):
      guard case .attribute(let stored)? = layout.properties[name] else { return nil }
      values += [pattern.databaseValue, op.rawValue.databaseValue, options.rawValue.databaseValue]
      return "\(PredicateStringFunction.name)(\(alias).\(stored.name), ?, ?, ?)"
    case .toOne(let name, let inner):
      guard case .toOne(let key, _, _)? = layout.properties[name], let destination = destination(of: name, layout),
        let target = "t\(depth + 1)" as String?,
        let condition = sql(inner, destination, alias: target, depth: depth + 1, &values)
      else { return nil }
      let found =
        "\(alias).\(key.name) IN (SELECT \(target).Z_PK FROM \(destination.table) \(target) WHERE \(schema.rowPredicate(destination, alias: target)) AND (\(condition)))"
      return inner.holdsForNothing ? "\(alias).\(key.name) IS NULL OR \(found)" : found
    case .members(let name, let quantifier, let inner):
      return membersTest(name, quantifier, inner, layout, alias: alias, depth: depth, &values)
    case .memberCount(let name, let test, let value):
      guard let from = members(of: name, layout, depth: depth) else { return nil }
      values.append(StoreValueCoding.databaseValue(value))
      return
        "(SELECT count(*) FROM \(from.tables) WHERE \(from.owner) = \(alias).Z_PK AND \(from.kinds)) \(test.rawValue) ?"
    }
  }

  /// An OR of one attribute's equalities — a predicate's `IN` list — as one bound JSON list,
  /// `column IN (SELECT value FROM json_each(?))`, which compares as `column = ?` does (a bound
  /// value has no affinity, nor has json_each's): SQLite refuses an OR chain past 1,000 deep and
  /// bound parameters past 32,766. Nil for any other OR and a list `bindsAsOneList` refuses: the
  /// chain then.
  private func inList(
    _ nodes: [RowFilter.Node], _ layout: StoreSchema.EntityLayout, alias: String, _ values: inout [DatabaseValue]
  ) -> String? {
    guard let (name, listed) = RowFilter.Node.list(nodes), Self.bindsAsOneList(listed),
      case .attribute(let stored)? = layout.properties[name]
    else { return nil }
    var list = "["
    for (index, value) in listed.enumerated() {
      if index > 0 { list += "," }
      switch StoreValueCoding.databaseValue(value).storage {
      case .int64(let number): list += String(number)
      case .double(let number): list += "\(number)"
      case .string(let text): JSONText.appendQuoted(text, to: &list)
      default: return nil
      }
    }
    values.append((list + "]").databaseValue)
    return "\(alias).\(stored.name) IN (SELECT value FROM json_each(?))"
  }

  /// Whether an `IN` list's values go to SQL as one bound JSON list: more than 8 of them (a short
  /// list is as quick as a chain), each one JSON carries exactly — an integer, a finite number, text
  /// without NUL. A list this refuses is an OR chain, which SQLite refuses past 1,000 deep: whoever
  /// translates a longer one must leave it to the judge.
  package static func bindsAsOneList(_ values: [StoreValue]) -> Bool {
    values.count > 8
      && values.allSatisfy { value in
        switch StoreValueCoding.databaseValue(value).storage {
        case .int64: true
        case .double(let number): number.isFinite
        case .string(let text): !text.contains("\0")
        default: false
        }
      }
  }

  /// An attribute compared with a value, or a to-one's key tested for NULL.
  private func comparison(
    _ name: String, _ test: RowFilter.Test, _ value: StoreValue, _ layout: StoreSchema.EntityLayout, alias: String,
    _ values: inout [DatabaseValue]
  ) -> String? {
    let column: String
    switch layout.properties[name] {
    case .attribute(let stored)?: column = "\(alias).\(stored.name)"
    case .toOne(let key, _, _)? where test == .isNull || test == .isNotNull: column = "\(alias).\(key.name)"
    default: return nil
    }
    if test == .isNull || test == .isNotNull { return "\(column) \(test.rawValue)" }
    values.append(StoreValueCoding.databaseValue(value))
    return "\(column) \(test.rawValue) ?"
  }

  /// A to-many's members tested under a quantifier: the owners of the members that pass, selected
  /// once (not per owner), so that the members' own indexes serve the condition.
  private func membersTest(
    _ name: String, _ quantifier: RowFilter.Quantifier, _ inner: RowFilter.Node, _ layout: StoreSchema.EntityLayout,
    alias: String, depth: Int, _ values: inout [DatabaseValue]
  ) -> String? {
    var innerValues: [DatabaseValue] = []
    guard let from = members(of: name, layout, depth: depth),
      let condition = sql(inner, from.layout, alias: from.alias, depth: depth + 1, &innerValues)
    else { return nil }
    values += innerValues
    let owners = "SELECT \(from.owner) FROM \(from.tables) WHERE \(from.owner) IS NOT NULL AND \(from.kinds) AND "
    switch quantifier {
    case .any: return "\(alias).Z_PK IN (\(owners)(\(condition)))"
    case .all: return "\(alias).Z_PK NOT IN (\(owners)NOT coalesce((\(condition)), 0))"
    case .none: return "\(alias).Z_PK NOT IN (\(owners)(\(condition)))"
    }
  }

  /// The layout of the destination of `layout`'s relationship `name`.
  private func destination(of name: String, _ layout: StoreSchema.EntityLayout) -> StoreSchema.EntityLayout? {
    guard let entity = model.entity(named: layout.name),
      let relationship = model.relationships(of: entity).first(where: { $0.name == name })
    else { return nil }
    return schema.layout(of: relationship.destinationEntity)
  }

  /// Where a to-many's members are: the tables to read (`tables`, the members' row named `alias`),
  /// the column holding their owner's key, and the condition on the members' kinds.
  private func members(of name: String, _ layout: StoreSchema.EntityLayout, depth: Int) -> (
    layout: StoreSchema.EntityLayout, alias: String, tables: String, owner: String, kinds: String
  )? {
    guard let destination = destination(of: name, layout) else { return nil }
    let member = "t\(depth + 1)"
    let kinds = schema.rowPredicate(destination, alias: member)
    switch layout.properties[name] {
    case .toManyThroughInverse(_, let inverse)?:
      guard case .toOne(let key, _, _)? = destination.properties[inverse] else { return nil }
      return (destination, member, "\(destination.table) \(member)", "\(member).\(key.name)", kinds)
    case .manyToMany(let table, let own, let other, _)?:
      let join = "j\(depth + 1)"
      return (
        destination, member,
        "\(table) \(join) JOIN \(destination.table) \(member) ON \(member).Z_PK = \(join).\(other)", "\(join).\(own)",
        kinds
      )
    default: return nil
    }
  }

  /// The IDs of `entity`'s objects (with its subentities') that `filter` takes, ordered by `keys`
  /// (attribute, ascending) and then by key, at most `limit` after skipping `offset`; nil when the
  /// store cannot say the filter or the order in SQL.
  package func objectIDs(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, sortedBy keys: [(String, Bool)],
    limit: Int?, offset: Int = 0
  ) throws -> [ObjectID]? {
    try objectIDs(
      of: entity, includingSubentities: includingSubentities, filter: filter, sortedBy: keys, limit: limit,
      offset: offset, reading: { try read($0) })
  }

  /// ``objectIDs(of:includingSubentities:filter:sortedBy:limit:offset:)`` read by `reading` (the
  /// store's own read, or a writer's transaction: what it wrote so far is what it finds).
  func objectIDs(
    of entity: String, includingSubentities: Bool, filter: RowFilter?, sortedBy keys: [(String, Bool)],
    limit: Int?, offset: Int, reading: ((Database) throws -> [ObjectID]) throws -> [ObjectID]
  ) throws -> [ObjectID]? {
    let layout = try layout(entity)
    var order: [String] = []
    for (name, ascending) in keys {
      guard case .attribute(let column)? = layout.properties[name] else { return nil }
      order.append("t0.\(column.name) \(ascending ? "ASC" : "DESC")")
    }
    guard
      let (query, values) = filteredQuery(
        layout, includingSubentities: includingSubentities, filter: filter, select: "t0.Z_PK, t0.Z_ENT")
    else { return nil }
    let sql =
      query + " ORDER BY \((order + ["t0.Z_PK"]).joined(separator: ", "))"
      + (limit.map { " LIMIT \($0) OFFSET \(offset)" } ?? (offset > 0 ? " LIMIT -1 OFFSET \(offset)" : ""))
    let sole = schema.soleEntity(ofTable: layout.table)?.name
    return try reading { db in
      if let sole {
        // The table's only entity: the keys alone, read as integers.
        return try Int64.fetchAll(db, sql: sql, arguments: StatementArguments(values)).map {
          ObjectID(entity: sole, primaryKey: $0)
        }
      }
      var ids: [ObjectID] = []
      let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(values))
      while let row = try cursor.next() {
        let key = try row.required(at: 0, named: "\(layout.table).Z_PK", as: Int64.self)
        let number = try row.value(at: 1, named: "\(layout.table).Z_ENT", as: Int.self)
        let name = number.flatMap { schema.layout(number: $0)?.name } ?? entity
        ids.append(ObjectID(entity: name, primaryKey: key))
      }
      return ids
    }
  }

  /// The objects with these keys (attributes and to-ones), in the order given, read in pages by
  /// key; a key naming no row is left out.
  package func objects(_ ids: [ObjectID]) throws -> [StoredObject] {
    try byKeys(ids, id: \.id) { try $0.object(from: $1, table: $2, withToMany: false) }
  }

  package func rows(_ ids: [ObjectID]) throws -> [StoredRow] {
    try byKeys(ids, id: \.id) { try $0.storedRow(from: $1, table: $2) }
  }

  /// What `make` makes of the rows with these keys, in the order given, read in pages by key; a key
  /// naming no row is left out.
  private func byKeys<T>(
    _ ids: [ObjectID], id: (T) -> ObjectID, make: (SQLiteObjectReader, Row, String) throws -> T
  ) throws -> [T] {
    var byTable: [String: [ObjectID]] = [:]
    for id in ids { byTable[try layout(id.entity).table, default: []].append(id) }
    var read: [ObjectID: T] = [:]
    read.reserveCapacity(ids.count)
    for (table, keys) in byTable {
      for start in stride(from: 0, to: keys.count, by: Self.pageSize) {
        let page = keys[start..<min(start + Self.pageSize, keys.count)]
        let sql = "SELECT * FROM \(table) WHERE Z_PK IN (\(page.map { String($0.primaryKey) }.joined(separator: ",")))"
        try self.read { db in
          let reader = SQLiteObjectReader(store: self, db: db)
          for row in try Row.fetchAll(db, sql: sql) {
            let made = try make(reader, row, table)
            read[id(made)] = made
          }
        }
      }
    }
    return ids.compactMap { read[$0] }
  }
}

/// The SQL function through which the store tests strings as predicates do
/// (``PredicateStrings``): `MIGRUN_STRING_TEST(text, pattern, operator, options)` → 1 or 0. Core
/// Data registers its own on its connections for the same purpose (`NSCoreDataStringSearch`,
/// `NSCoreDataLike`, public decompilation); this one is migrun's, so that the store's answer is the
/// object-by-object one by construction.
enum PredicateStringFunction {
  static let name = "MIGRUN_STRING_TEST"

  static let function = DatabaseFunction(name, argumentCount: 4, pure: true) { arguments in
    guard let pattern = String.fromDatabaseValue(arguments[1]), let raw = String.fromDatabaseValue(arguments[2]),
      let op = FormatPredicate.Operator(rawValue: raw), let bits = Int.fromDatabaseValue(arguments[3])
    else { return 0 }
    // A NULL (or a value that is not text): what the predicate says of NULL — only `!=` holds.
    guard let text = String.fromDatabaseValue(arguments[0]), !arguments[0].isNull,
      case .string = arguments[0].storage
    else { return op == .notEqual ? 1 : 0 }
    return try PredicateStrings.test(text, op, pattern, FormatPredicate.Options(rawValue: bits)) == true ? 1 : 0
  }
}
