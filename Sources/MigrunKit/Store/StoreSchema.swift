/// Core Data's SQLite layout for a model: entity numbers, tables, columns, join tables and indexes,
/// named exactly as Core Data names them (SPEC §2.1).
///
/// - Entities are numbered depth-first through the inheritance forest, roots and siblings by name.
/// - One table per root entity, `Z` + the uppercased name, holding its whole hierarchy
///   (`Z_PK`, `Z_ENT`, `Z_OPT`, then a column per stored property of every entity in it).
/// - A to-one relationship is a column with the destination's `Z_PK`, plus `Z<ent>_<NAME>` with its
///   `Z_ENT` when the destination has subentities and `Z_FOK_<NAME>` when the inverse is ordered.
/// - A many-to-many relationship is a join table `Z_<ent><NAME>`.
public struct StoreSchema: Sendable {
  /// Where one entity lives.
  public struct EntityLayout: Sendable, Hashable {
    public let name: String
    public let number: Int
    /// The parent's number, or 0.
    public let superNumber: Int
    /// The table of the entity's root.
    public let table: String
    /// The entity's number and those of all its subentities (the `Z_ENT` values of its objects).
    public let kindNumbers: [Int]
    /// Stored property name → where it is stored (declared and inherited properties).
    public let properties: [String: PropertyStorage]
  }

  /// How a property is stored.
  public enum PropertyStorage: Sendable, Hashable {
    /// An attribute's column.
    case attribute(Column)
    /// A to-one relationship's columns.
    case toOne(key: Column, entity: Column?, order: Column?)
    /// A to-many whose inverse is to-one: the inverse's column in the destination's table.
    case toManyThroughInverse(destination: String, inverse: String)
    /// A many-to-many: a join table; `ownColumn` holds this object's key, `otherColumn` the destination's.
    case manyToMany(table: String, ownColumn: String, otherColumn: String)
  }

  public struct Column: Sendable, Hashable {
    public let name: String
    /// INTEGER, FLOAT, TIMESTAMP, DECIMAL, VARCHAR or BLOB, as Core Data declares them.
    public let type: String
  }

  public struct Index: Sendable, Hashable {
    public let name: String
    public let table: String
    /// Column expressions as written (`ZA`, or `ZA COLLATE BINARY ASC`).
    public let columns: [String]
    public let isUnique: Bool

    public var createStatement: String {
      "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(name) ON \(table) (\(columns.joined(separator: ", ")))"
    }
  }

  public struct Table: Sendable, Hashable {
    public let name: String
    public let columns: [Column]
    /// Declared primary key columns (join tables); entity tables use `Z_PK INTEGER PRIMARY KEY`.
    public let primaryKey: [String]

    public var createStatement: String {
      var parts = columns.map { column in
        column.name == "Z_PK" && primaryKey.isEmpty ? "Z_PK INTEGER PRIMARY KEY" : "\(column.name) \(column.type)"
      }
      if !primaryKey.isEmpty { parts.append("PRIMARY KEY (\(primaryKey.joined(separator: ", ")))") }
      return "CREATE TABLE \(name) ( \(parts.joined(separator: ", ")) )"
    }
  }

  public let model: ObjectModel
  /// Entities in number order.
  public let entities: [EntityLayout]
  public let tables: [Table]
  public let indexes: [Index]

  private let byName: [String: Int]

  public init(model: ObjectModel) {
    self.model = model
    var builder = Builder(model: model)
    builder.build()
    entities = builder.layouts
    tables = builder.tables
    indexes = builder.indexes
    byName = Dictionary(uniqueKeysWithValues: builder.layouts.enumerated().map { ($1.name, $0) })
  }

  public func layout(of entity: String) -> EntityLayout? {
    byName[entity].map { entities[$0] }
  }

  public func layout(number: Int) -> EntityLayout? {
    number >= 1 && number <= entities.count ? entities[number - 1] : nil
  }

  /// The SQL that creates the tables and indexes (not Core Data's own Z_PRIMARYKEY/Z_METADATA tables).
  public var createStatements: [String] {
    tables.map(\.createStatement) + indexes.map(\.createStatement)
  }

  /// The SQLite column type Core Data declares for an attribute type.
  public static func columnType(_ type: AttributeType) -> String {
    switch type {
    case .integer16, .integer32, .integer64, .boolean, .objectID: "INTEGER"
    case .double, .float: "FLOAT"
    case .date: "TIMESTAMP"
    case .decimal: "DECIMAL"
    case .string, .uri: "VARCHAR"
    case .binary, .transformable, .uuid, .undefined, .composite: "BLOB"
    }
  }
}

extension StoreSchema {
  /// Assigns numbers, tables and column names.
  fileprivate struct Builder {
    let model: ObjectModel
    var layouts: [StoreSchema.EntityLayout] = []
    var tables: [StoreSchema.Table] = []
    var indexes: [StoreSchema.Index] = []
    var numbers: [String: Int] = [:]
    var joinTables: [String: StoreSchema.Table] = [:]
    var joinOrder: [String] = []

    mutating func build() {
      var order: [Entity] = []
      func visit(_ entity: Entity) {
        order.append(entity)
        for child in model.subentities(of: entity) { visit(child) }
      }
      for root in model.entities where root.parentName == nil { visit(root) }
      for (index, entity) in order.enumerated() { numbers[entity.name] = index + 1 }
      for root in order where root.parentName == nil {
        buildTable(for: root)
      }
      layouts.sort { $0.number < $1.number }
      for name in joinOrder {
        if let table = joinTables[name] { tables.append(table) }
      }
    }

    func number(_ entity: String) -> Int { numbers[entity] ?? 0 }

    /// The root's table: columns for every stored property declared in the hierarchy.
    mutating func buildTable(for root: Entity) {
      let table = "Z" + root.name.uppercased()
      var columns = [
        Column(name: "Z_PK", type: "INTEGER"), Column(name: "Z_ENT", type: "INTEGER"),
        Column(name: "Z_OPT", type: "INTEGER"),
      ]
      var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
      var declared: [String: [String: PropertyStorage]] = [:]
      var hierarchy: [Entity] = []
      func collect(_ entity: Entity) {
        hierarchy.append(entity)
        for child in model.subentities(of: entity) { collect(child) }
      }
      collect(root)

      func unique(_ base: String) -> String {
        var name = base
        var suffix = 1
        while used.contains(name) {
          name = base + String(suffix)
          suffix += 1
        }
        used.insert(name)
        return name
      }

      for entity in hierarchy {
        var storage: [String: PropertyStorage] = [:]
        for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
          let column = Column(
            name: unique("Z" + attribute.name.uppercased()), type: StoreSchema.columnType(attribute.type))
          columns.append(column)
          storage[attribute.name] = .attribute(column)
          if attribute.isIndexed {
            indexes.append(
              Index(name: "\(table)_\(column.name)_INDEX", table: table, columns: [column.name], isUnique: false))
          }
        }
        for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where !relationship.isTransient {
          storage[relationship.name] = relationshipStorage(
            relationship, of: entity, table: table, columns: &columns, unique: unique)
        }
        declared[entity.name] = storage
      }

      // Z_ENT is indexed when the table holds a hierarchy; other indexes follow the model.
      if hierarchy.count > 1 {
        indexes.append(Index(name: "\(table)_Z_ENT_INDEX", table: table, columns: ["Z_ENT"], isUnique: false))
      }
      for entity in hierarchy {
        let resolved = resolvedStorage(entity, declared: declared)
        func column(_ property: String) -> String? {
          switch resolved[property] {
          case .attribute(let column)?: column.name
          case .toOne(let key, _, _)?: key.name
          default: nil
          }
        }
        for compound in entity.compoundIndexes {
          let names = compound.compactMap(column)
          guard names.count == compound.count else { continue }
          indexes.append(
            Index(name: ([table] + names).joined(separator: "_"), table: table, columns: names, isUnique: false))
        }
        for fetchIndex in entity.fetchIndexes {
          let parts = fetchIndex.elements.compactMap { element in
            column(element.property).map { "\($0) COLLATE BINARY \(element.isAscending ? "ASC" : "DESC")" }
          }
          guard parts.count == fetchIndex.elements.count, !parts.isEmpty else { continue }
          indexes.append(
            Index(name: "Z_\(entity.name)_\(fetchIndex.name)", table: table, columns: parts, isUnique: false))
        }
        for constraint in entity.uniquenessConstraints {
          let names = constraint.compactMap(column)
          guard names.count == constraint.count else { continue }
          indexes.append(
            Index(
              name: "Z_\(entity.name)_UNIQUE_" + constraint.joined(separator: "_"), table: table,
              columns: names.map { "\($0) COLLATE BINARY ASC" }, isUnique: true))
        }
        let number = number(entity.name)
        layouts.append(
          EntityLayout(
            name: entity.name, number: number, superNumber: entity.parentName.map(self.number) ?? 0, table: table,
            kindNumbers: kindNumbers(of: entity), properties: resolved))
      }
      tables.append(Table(name: table, columns: columns, primaryKey: []))
    }

    func kindNumbers(of entity: Entity) -> [Int] {
      [number(entity.name)] + model.subentities(of: entity).flatMap { kindNumbers(of: $0) }
    }

    /// Declared storage of the entity and its ancestors, the nearest declaration winning.
    func resolvedStorage(_ entity: Entity, declared: [String: [String: PropertyStorage]]) -> [String: PropertyStorage] {
      var result: [String: PropertyStorage] = [:]
      for level in ([entity] + model.ancestors(of: entity)).reversed() {
        result.merge(declared[level.name] ?? [:]) { _, nearer in nearer }
      }
      return result
    }

    mutating func relationshipStorage(
      _ relationship: Relationship, of entity: Entity, table: String, columns: inout [Column],
      unique: (String) -> String
    ) -> PropertyStorage {
      let inverse = model.inverse(of: relationship)
      let upper = relationship.name.uppercased()
      if !relationship.isToMany {
        let key = Column(name: unique("Z" + upper), type: "INTEGER")
        columns.append(key)
        indexes.append(Index(name: "\(table)_\(key.name)_INDEX", table: table, columns: [key.name], isUnique: false))
        var entityColumn: Column?
        if let destination = model.entity(named: relationship.destinationEntity),
          !model.subentities(of: destination).isEmpty
        {
          entityColumn = Column(name: unique("Z\(number(destination.name))_\(upper)"), type: "INTEGER")
          columns.append(entityColumn ?? key)
        }
        var orderColumn: Column?
        if let inverse, inverse.isToMany, inverse.isOrdered {
          orderColumn = Column(name: unique("Z_FOK_\(upper)"), type: "INTEGER")
          columns.append(orderColumn ?? key)
        }
        return .toOne(key: key, entity: entityColumn, order: orderColumn)
      }
      if let inverse, !inverse.isToMany {
        return .toManyThroughInverse(destination: relationship.destinationEntity, inverse: inverse.name)
      }
      return manyToMany(relationship, of: entity, inverse: inverse)
    }

    /// The join table of a many-to-many: named after the side whose entity number is lower (or
    /// whose relationship name sorts first), with a column for each side's key.
    mutating func manyToMany(_ relationship: Relationship, of entity: Entity, inverse: Relationship?) -> PropertyStorage
    {
      let ownNumber = number(entity.name)
      let destinationNumber = number(relationship.destinationEntity)
      let inverseName = inverse?.name ?? relationship.name
      let isReflexive =
        inverse == nil || (inverseName == relationship.name && relationship.destinationEntity == entity.name)
      if isReflexive {
        let name = "Z_\(ownNumber)\(relationship.name.uppercased())"
        let own = "Z_\(ownNumber)\(relationship.name.uppercased())"
        addJoinTable(name: name, first: own, second: "REFLEXIVE", ordered: relationship.isOrdered)
        return .manyToMany(table: name, ownColumn: own, otherColumn: "REFLEXIVE")
      }
      let ownsTable =
        ownNumber < destinationNumber || (ownNumber == destinationNumber && relationship.name < inverseName)
      let (owner, ownerRelationship, other, otherRelationship) =
        ownsTable
        ? (ownNumber, relationship.name, destinationNumber, inverseName)
        : (destinationNumber, inverseName, ownNumber, relationship.name)
      let name = "Z_\(owner)\(ownerRelationship.uppercased())"
      let ownerColumn = "Z_\(owner)\(otherRelationship.uppercased())"
      let otherColumn = "Z_\(other)\(ownerRelationship.uppercased())"
      addJoinTable(
        name: name, first: ownerColumn, second: otherColumn,
        ordered: relationship.isOrdered || (inverse?.isOrdered ?? false))
      return ownsTable
        ? .manyToMany(table: name, ownColumn: ownerColumn, otherColumn: otherColumn)
        : .manyToMany(table: name, ownColumn: otherColumn, otherColumn: ownerColumn)
    }

    mutating func addJoinTable(name: String, first: String, second: String, ordered: Bool) {
      guard joinTables[name] == nil else { return }
      var columns = [Column(name: first, type: "INTEGER"), Column(name: second, type: "INTEGER")]
      if ordered {
        columns.append(Column(name: "Z_FOK_\(first.dropFirst(2))", type: "INTEGER"))
        columns.append(Column(name: "Z_FOK_\(second.dropFirst(second == "REFLEXIVE" ? 0 : 2))", type: "INTEGER"))
      }
      joinTables[name] = Table(name: name, columns: columns, primaryKey: [first, second])
      joinOrder.append(name)
      indexes.append(Index(name: "\(name)_\(second)_INDEX", table: name, columns: [second, first], isUnique: false))
    }
  }
}
