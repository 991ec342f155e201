import MigrunModel

/// How Core Data lays out a model in SQLite, step by step.
///
/// Where these rules come from: the layout of real stores (the fixtures in `../shared`), and the
/// published decompilations of Core Data's `NSSQLModel`, `NSSQLEntity`, `NSSQLToOne`,
/// `NSSQLManyToMany` and `NSSQLStoreMappingGenerator`, which show the order Core Data works in:
///
/// 1. Entities are numbered (depth-first, roots and siblings by name).
/// 2. Each root's table gets its columns: every entity of the hierarchy in that order, its
///    attributes (a composite's elements in its place), then its to-one relationships (key, and `Z<ent>_<NAME>` when the destination has
///    subentities).
/// 3. Then every entity **in name order** (subentities included, each seeing its inherited
///    relationships) pairs its relationships with their inverses, in a first-come order:
///    - a to-one whose inverse is an ordered to-many gets `Z_FOK_<NAME>`;
///    - a to-many without an inverse gets a hidden to-one on the destination's table,
///      `Z<source ent><NAME>` (indexed), `Z<source ent>_<source ent><NAME>` when the source entity
///      has subentities, `Z_FOK_<source ent><NAME>` when it is ordered;
///    - a many-to-many met first as `a` (inverse `b`) makes the join table `Z_<a's ent><A>`; then
///      `b`'s column `Z_<b's ent><A>` (and `Z_FOK_<b's ent><A>` when `a` is ordered) is named, then
///      `a`'s column `Z_<a's ent><B>` (and `Z_FOK_<a's ent><B>` when `b` is ordered). The table is
///      `(a's column, b's column)`, keyed by both, indexed on `(b's column, a's column)`.
///      A relationship that is its own inverse uses `REFLEXIVE` (and `FOK_REFLEXIVE`) for the other side.
/// 4. Every column name of a table — join-table columns named by relationships of the table's
///    hierarchy included — goes through one name generator per root: the first use of a base name is
///    the name itself, later ones get `1`, `2`, … (the counter is kept per base name).
///
/// **Within one entity**, step 3 meets the relationships in the order Core Data's
/// `_generateInverseRelationshipsAndMore` does (``pairingOrder(of:)``): the entity's SQL properties —
/// `_ent`, `_pk`, `_opt`, its attributes, its to-ones' foreign keys, its relationships — put into Core
/// Data's private copy of Mac OS X 10.5's hash table, then from it into its copy of 10.4's, and
/// enumerated from that (``CoreDataDictionaryOrder``). Core Data carries these old tables so that a
/// model names its join tables the same on every system; neither orders like Foundation's
/// dictionaries, which is why no rule built on ``CFHashOrder`` fitted the real stores. Read off the
/// public decompilation of Core Data; checked against every join table of the 80 held-back real
/// stores in `../shared/fixtures/facts/join-pairing.json` (all fit, including the versions where
/// only an added attribute moved the name: `everyJoinTableFactFits`, `JoinTableRenameTests`) and
/// every layout in `../shared`. Where a detail is a guess it is said at ``pairingOrder(of:)`` and
/// ``CoreDataDictionaryOrder``. For an existing store migrun reads the names it has.
extension StoreSchema {
  struct Builder {
    let model: ObjectModel
    /// An existing store's tables (uppercased names → uppercased columns), when reading one.
    let existing: [String: Set<String>]?
    /// How the legacy indexes (``Attribute/isIndexed``, ``Entity/compoundIndexes``) are written: as
    /// the framework that writes the store does (``StoreSchema/LegacyIndexForm``).
    let legacyIndexes: StoreSchema.LegacyIndexForm
    var layouts: [StoreSchema.EntityLayout] = []
    var tables: [StoreSchema.Table] = []
    var indexes: [StoreSchema.Index] = []
    var rtreeIndexes: [StoreSchema.RTreeIndex] = []
    var unsupported: [String] = []

    private var numbers: [String: Int] = [:]
    private var tableOfRoot: [String: String] = [:]
    private var columnsOfRoot: [String: [Column]] = [:]
    /// Root → column name → its rank in the table's statement (``StoreSchema/SQLType/rank``).
    private var ranksOfRoot: [String: [String: Int]] = [:]
    private var generators: [String: NameGenerator] = [:]
    /// Declaring entity → property → storage.
    private var declared: [String: [String: PropertyStorage]] = [:]
    /// Destination entity → hidden to-ones of to-manys without an inverse.
    private var hidden: [String: [String: PropertyStorage]] = [:]
    private var joinTables: [StoreSchema.Table] = []
    /// Table → the uniqueness constraints its statement declares (frameworks before 847).
    private var uniqueConstraints: [String: [[String]]] = [:]

    /// An existing store's own entity numbers (`Z_PRIMARYKEY`), taken where they fit.
    let storeNumbers: [String: Int]

    init(
      model: ObjectModel, existing: [String: Set<String>]?, legacyIndexes: StoreSchema.LegacyIndexForm,
      storeNumbers: [String: Int] = [:]
    ) {
      self.model = model
      self.existing = existing
      self.legacyIndexes = legacyIndexes
      self.storeNumbers = storeNumbers
    }

    mutating func build() {
      let order = Self.numberingOrder(of: model)
      // A configuration's store numbers its entities among the whole model's (NSSQLModel numbers
      // every entity, then keeps the configuration's).
      for (index, entity) in Self.numberingOrder(of: model.wholeModel?.model ?? model).enumerated() {
        numbers[entity.name] = index + 1
      }
      takeStoreNumbers()

      let roots = order.filter { $0.parentName == nil }
      for root in roots { addColumns(of: root) }
      pairRelationships()
      for root in roots {
        guard let table = tableOfRoot[root.name] else { continue }
        addLayoutsAndIndexes(of: root, table: table)
        tables.append(
          Table(
            name: table, columns: statementOrder(of: root), primaryKey: [],
            uniqueConstraints: uniqueConstraints[table] ?? [],
            columnsAsAdded: (columnsOfRoot[root.name] ?? []).map(\.name)))
      }
      tables += joinTables
      layouts.sort { $0.number < $1.number }
    }

    /// Every entity in Core Data's numbering order: each root in name order, its subentities under
    /// it, names compared as Core Data compares them there (``StoreSchema/numberingPrecedes(_:_:)``).
    static func numberingOrder(of model: ObjectModel) -> [Entity] {
      var order: [Entity] = []
      func sorted(_ entities: [Entity]) -> [Entity] {
        entities.sorted { StoreSchema.numberingPrecedes($0.name, $1.name) }
      }
      func visit(_ entity: Entity) {
        order.append(entity)
        for child in sorted(model.subentities(of: entity)) { visit(child) }
      }
      for root in sorted(model.entities.filter { $0.parentName == nil }) { visit(root) }
      return order
    }

    /// The root's columns as Core Data's `CREATE TABLE` lists them: the order the hierarchy added
    /// them in, stably sorted by ``StoreSchema/SQLType/rank`` (`Z_PK`, `Z_ENT`, `Z_OPT` first).
    private func statementOrder(of root: Entity) -> [Column] {
      let columns = columnsOfRoot[root.name] ?? []
      let ranks = ranksOfRoot[root.name] ?? [:]
      let fixed = ["Z_PK": 0, "Z_ENT": 1, "Z_OPT": 2]
      return columns.enumerated().sorted { first, second in
        let a = fixed[first.element.name] ?? ranks[first.element.name] ?? SQLType.integer.rank
        let b = fixed[second.element.name] ?? ranks[second.element.name] ?? SQLType.integer.rank
        return (a, first.offset) < (b, second.offset)
      }.map(\.element)
    }

    /// The store's own numbers for the entities it names, unless two entities would then share one.
    private mutating func takeStoreNumbers() {
      guard !storeNumbers.isEmpty else { return }
      var taken = numbers
      for name in numbers.keys {
        if let number = storeNumbers[name] { taken[name] = number }
      }
      guard Set(taken.values).count == taken.count, taken != numbers else { return }
      numbers = taken
    }

    // MARK: - Step 2: each root's columns

    private mutating func addColumns(of root: Entity) {
      let table = "Z" + root.name.uppercased()
      tableOfRoot[root.name] = table
      generators[root.name] = NameGenerator(reserved: ["Z_PK", "Z_ENT", "Z_OPT"])
      columnsOfRoot[root.name] = [
        Column(name: "Z_PK", type: "INTEGER"), Column(name: "Z_ENT", type: "INTEGER"),
        Column(name: "Z_OPT", type: "INTEGER"),
      ]
      for entity in hierarchy(of: root) {
        var storage: [String: PropertyStorage] = [:]
        // A composite's elements take its place, in the composite's order, each named after the
        // element alone (`author.person` → ZPERSON; ZID1 when the name is taken): the columns of
        // SwiftData's stores (`../shared/fixtures/facts/composite-attributes.json`), whose
        // order within each type follows exactly this sequence.
        for attribute in entity.attributes.sorted(by: { $0.name < $1.name }).flatMap(\.leaves)
        where !attribute.isTransient {
          let column = addColumn("Z" + attribute.columnStem.uppercased(), SQLType(attribute), root)
          storage[attribute.name] = .attribute(column)
          if attribute.isIndexed, legacyIndexes == .tableAndColumns {
            indexes.append(
              Index(name: "\(table)_\(column.name)_INDEX", table: table, columns: [column.name], isUnique: false))
          }
        }
        for relationship in entity.relationships.sorted(by: { $0.name < $1.name })
        where !relationship.isTransient && !relationship.isToMany {
          let upper = relationship.name.uppercased()
          let key = addColumn("Z" + upper, .integer, root)
          indexes.append(Index(name: "\(table)_\(key.name)_INDEX", table: table, columns: [key.name], isUnique: false))
          var entityColumn: Column?
          if let destination = model.entity(named: relationship.destinationEntity),
            !model.subentities(of: destination).isEmpty
          {
            entityColumn = addColumn("Z\(number(destination.name))_\(upper)", .integer, root)
          }
          storage[relationship.name] = .toOne(key: key, entity: entityColumn, order: nil)
        }
        declared[entity.name] = storage
      }
    }

    // MARK: - Step 3: relationships with their inverses, entities in name order

    private mutating func pairRelationships() {
      var done: Set<String> = []
      for entity in model.entities.sorted(by: { $0.name < $1.name }) {
        for relationship in pairingOrder(of: entity) where !relationship.isTransient {
          guard let owner = model.declaringEntity(ofRelationship: relationship.name, in: entity),
            done.insert(owner.name + "." + relationship.name).inserted
          else { continue }
          let inverse = model.inverse(of: relationship)
          switch (relationship.isToMany, inverse) {
          case (false, let inverse?):
            if inverse.isToMany, inverse.isOrdered { addOrderColumn(relationship, of: owner) }
          case (false, nil):
            break
          case (true, nil):
            addHiddenToOne(for: relationship, of: owner)
          case (true, let inverse?) where !inverse.isToMany:
            declared[owner.name]?[relationship.name] = .toManyThroughInverse(
              destination: relationship.destinationEntity, inverse: inverse.name)
          case (true, let inverse?):
            guard
              let inverseOwner = model.entity(named: relationship.destinationEntity).flatMap({
                model.declaringEntity(ofRelationship: inverse.name, in: $0)
              })
            else { continue }
            if inverse.name == relationship.name && inverseOwner.name == owner.name {
              addReflexiveJoin(relationship, of: owner)
            } else {
              done.insert(inverseOwner.name + "." + inverse.name)
              addJoin(relationship, of: owner, inverse: inverse, of: inverseOwner)
            }
          }
        }
      }
    }

    /// The order Core Data meets `entity`'s relationships in (``CoreDataDictionaryOrder``): the
    /// Tiger table, made with room for all of the entity's SQL properties, of its SQL properties'
    /// names in its Leopard table's order. That Leopard table is filled with the superentity's
    /// (in its order) or else `_ent`, `_pk`, `_opt`; then the entity's own attributes, in the order of
    /// a Leopard table of them filled in the order of Foundation's dictionary of its properties; then
    /// its own relationships likewise, a to-one preceded by its foreign key (`_` and its column, and
    /// `_` and its entity column when it has one). Transient properties take no part, and a
    /// composite's elements count towards the Tiger table's room but are not in it (the decompiled
    /// code adds them to one dictionary and not the other; no store we have tells).
    func pairingOrder(of entity: Entity) -> [Relationship] {
      let keys = sqlPropertyKeys(of: entity)
      let elements = model.declaredAttributes(of: entity).filter { !$0.isTransient && !$0.elements.isEmpty }
        .reduce(0) { $0 + $1.leaves.count }
      let relationships = model.relationships(of: entity)
      let byName = Dictionary(relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      return CoreDataDictionaryOrder.tiger(keys, capacity: keys.count + elements).compactMap { byName[$0] }
    }

    /// The names of `entity`'s SQL properties in its Leopard table's order (see ``pairingOrder(of:)``).
    private func sqlPropertyKeys(of entity: Entity) -> [String] {
      var keys =
        entity.parentName.flatMap { model.entity(named: $0) }.map { sqlPropertyKeys(of: $0) } ?? [
          "_ent", "_pk", "_opt",
        ]
      let properties = CFHashOrder.order(of: entity.attributes.map(\.name) + entity.relationships.map(\.name))
      let attributes = Dictionary(entity.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      let relationships = Dictionary(
        entity.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      for name in CoreDataDictionaryOrder.leopard(properties.filter { attributes[$0] != nil }) {
        guard let attribute = attributes[name], !attribute.isTransient, attribute.elements.isEmpty else { continue }
        keys.append(name)
      }
      for name in CoreDataDictionaryOrder.leopard(properties.filter { relationships[$0] != nil }) {
        guard let relationship = relationships[name], !relationship.isTransient else { continue }
        if case .toOne(let key, let entityColumn, _)? = declared[entity.name]?[name] {
          keys.append("_" + key.name)
          if let entityColumn { keys.append("_" + entityColumn.name) }
        }
        keys.append(name)
      }
      return CoreDataDictionaryOrder.leopard(keys)
    }

    private mutating func addOrderColumn(_ relationship: Relationship, of owner: Entity) {
      guard case .toOne(let key, let entityColumn, _)? = declared[owner.name]?[relationship.name] else { return }
      let root = model.root(of: owner)
      let order = addColumn("Z_FOK_" + relationship.name.uppercased(), .integer, root)
      declared[owner.name]?[relationship.name] = .toOne(key: key, entity: entityColumn, order: order)
    }

    /// A to-many without an inverse: Core Data's hidden to-one `"<ent><name>"` on the destination.
    private mutating func addHiddenToOne(for relationship: Relationship, of owner: Entity) {
      guard let destination = model.entity(named: relationship.destinationEntity) else { return }
      let root = model.root(of: destination)
      let hiddenName = "\(number(owner.name))\(relationship.name)"
      let upper = hiddenName.uppercased()
      let key = addColumn("Z" + upper, .integer, root)
      if let table = tableOfRoot[root.name] {
        indexes.append(Index(name: "\(table)_\(key.name)_INDEX", table: table, columns: [key.name], isUnique: false))
      }
      let entityColumn =
        model.subentities(of: owner).isEmpty ? nil : addColumn("Z\(number(owner.name))_\(upper)", .integer, root)
      let order = relationship.isOrdered ? addColumn("Z_FOK_" + upper, .integer, root) : nil
      hidden[destination.name, default: [:]][hiddenName] = .toOne(key: key, entity: entityColumn, order: order)
      declared[owner.name]?[relationship.name] = .toManyThroughInverse(
        destination: destination.name, inverse: hiddenName)
    }

    private mutating func addReflexiveJoin(_ relationship: Relationship, of owner: Entity) {
      let number = number(owner.name)
      let upper = relationship.name.uppercased()
      let table = joinTable(["Z_\(number)\(upper)"])
      let root = model.root(of: owner)
      let column = addColumn("Z_\(number)\(upper)", "INTEGER", root, in: table)
      let order = relationship.isOrdered ? addColumn("Z_FOK_\(number)\(upper)", "INTEGER", root, in: table) : nil
      var columns = [column, Column(name: "REFLEXIVE", type: "INTEGER")]
      if let order { columns += [order, Column(name: "FOK_REFLEXIVE", type: "INTEGER")] }
      addJoinTable(table, columns: columns)
      declared[owner.name]?[relationship.name] = .manyToMany(
        table: table, ownColumn: column.name, otherColumn: "REFLEXIVE",
        order: relationship.isOrdered ? "FOK_REFLEXIVE" : nil)
    }

    private mutating func addJoin(
      _ first: Relationship, of firstOwner: Entity, inverse second: Relationship, of secondOwner: Entity
    ) {
      let firstNumber = number(firstOwner.name)
      let secondNumber = number(secondOwner.name)
      let firstUpper = first.name.uppercased()
      let secondUpper = second.name.uppercased()
      // An existing store may have been named from the other side (see the type's notes).
      let table = joinTable(["Z_\(firstNumber)\(firstUpper)", "Z_\(secondNumber)\(secondUpper)"])
      let firstRoot = model.root(of: firstOwner)
      let secondRoot = model.root(of: secondOwner)
      let secondColumn = addColumn("Z_\(secondNumber)\(firstUpper)", "INTEGER", secondRoot, in: table)
      let secondOrder =
        first.isOrdered ? addColumn("Z_FOK_\(secondNumber)\(firstUpper)", "INTEGER", secondRoot, in: table) : nil
      let firstColumn = addColumn("Z_\(firstNumber)\(secondUpper)", "INTEGER", firstRoot, in: table)
      let firstOrder =
        second.isOrdered ? addColumn("Z_FOK_\(firstNumber)\(secondUpper)", "INTEGER", firstRoot, in: table) : nil
      addJoinTable(table, columns: [firstColumn, secondColumn] + [firstOrder, secondOrder].compactMap { $0 })
      declared[firstOwner.name]?[first.name] = .manyToMany(
        table: table, ownColumn: firstColumn.name, otherColumn: secondColumn.name, order: secondOrder?.name)
      declared[secondOwner.name]?[second.name] = .manyToMany(
        table: table, ownColumn: secondColumn.name, otherColumn: firstColumn.name, order: firstOrder?.name)
    }

    /// The join table's name: Core Data's choice, or the candidate an existing store has.
    private func joinTable(_ candidates: [String]) -> String {
      guard let existing else { return candidates[0] }
      return candidates.first { existing[$0.uppercased()] != nil } ?? candidates[0]
    }

    private mutating func addJoinTable(_ name: String, columns: [Column]) {
      let keys = [columns[0].name, columns[1].name]
      joinTables.append(Table(name: name, columns: columns, primaryKey: keys))
      indexes.append(
        Index(name: "\(name)_\(keys[1])_INDEX", table: name, columns: [keys[1], keys[0]], isUnique: false))
    }

    // MARK: - Layouts and the model's indexes

    private mutating func addLayoutsAndIndexes(of root: Entity, table: String) {
      let hierarchy = hierarchy(of: root)
      if hierarchy.count > 1 {
        indexes.append(Index(name: "\(table)_Z_ENT_INDEX", table: table, columns: ["Z_ENT"], isUnique: false))
      }
      for entity in hierarchy {
        let resolved = resolvedStorage(entity)
        func column(_ property: String) -> String? {
          switch resolved[property] {
          case .attribute(let column)?: column.name
          case .toOne(let key, _, _)?: key.name
          default: nil
          }
        }
        if legacyIndexes == .tableAndColumns {
          for compound in entity.compoundIndexes {
            let names = compound.compactMap(column)
            guard names.count == compound.count else { continue }
            indexes.append(
              Index(name: ([table] + names).joined(separator: "_"), table: table, columns: names, isUnique: false))
          }
        }
        for fetchIndex in effectiveFetchIndexes(of: entity) {
          addFetchIndex(fetchIndex, of: entity, table: table, storage: resolved)
        }
        for constraint in entity.uniquenessConstraints {
          let names = constraint.compactMap(column)
          guard names.count == constraint.count else { continue }
          // Before framework 847 a uniqueness constraint is part of the table's statement
          // (``StoreSchema/Table/uniqueConstraints``; Moody's stores at 637), from 847 an index.
          if legacyIndexes == .tableAndColumns {
            uniqueConstraints[table, default: []].append(names)
            continue
          }
          indexes.append(
            Index(
              name: "Z_\(entity.name)_UNIQUE_" + constraint.joined(separator: "_"), table: table,
              columns: names.map { "\($0) COLLATE BINARY ASC" }, isUnique: true))
        }
        layouts.append(
          EntityLayout(
            name: entity.name, number: number(entity.name),
            superNumber: entity.parentName.map(self.number) ?? 0, table: table,
            kindNumbers: kindNumbers(of: entity), properties: resolved))
      }
    }

    /// The entity's fetch indexes as the store's framework has them. From framework 847 on Core Data
    /// keeps a model's legacy indexes as fetch indexes (public decompilation of `NSEntityDescription`
    /// and `NSFetchIndexDescription`): `setIndexed:` adds a one-element index named after the
    /// property unless the entity or an ancestor already has a one-element, binary, ascending index
    /// of it (`_hasIndexForProperty:`, `_isIndexForProperty:`) — so an attribute a SwiftData `#Index`
    /// covers gets no second index; `setCompoundIndexes:` makes one named after its elements joined
    /// by `_`, skipping a one-element compound index of a property so indexed. These come first,
    /// then the declared fetch indexes; a name already taken is not made twice. Checked against the
    /// stores of `../shared/fixtures/facts/index-naming.json`. Guess: the inherited case (an
    /// ancestor's index covering a subentity's attribute) follows the decompiled code; no store shows it.
    func effectiveFetchIndexes(of entity: Entity) -> [FetchIndex] {
      guard legacyIndexes == .fetchIndexes else { return entity.fetchIndexes }
      let lineage = [entity] + model.ancestors(of: entity)
      var indexes: [FetchIndex] = []
      func covers(_ index: FetchIndex, _ property: String) -> Bool {
        guard index.elements.count == 1, let element = index.elements.first else { return false }
        return element.property == property && element.expression == nil && element.type == "Binary"
          && element.isAscending
      }
      func covered(_ property: String) -> Bool {
        lineage.contains { $0.fetchIndexes.contains { covers($0, property) } }
          || indexes.contains { covers($0, property) }
      }
      for attribute in entity.attributes.flatMap(\.leaves) where attribute.isIndexed && !covered(attribute.name) {
        indexes.append(FetchIndex(name: attribute.name, elements: [FetchIndex.Element(property: attribute.name)]))
      }
      for compound in entity.compoundIndexes where !compound.isEmpty {
        if compound.count == 1, covered(compound[0]) { continue }
        indexes.append(
          FetchIndex(
            name: compound.joined(separator: "_"), elements: compound.map { FetchIndex.Element(property: $0) }))
      }
      var names = Set(indexes.map(\.name))
      for index in entity.fetchIndexes where names.insert(index.name).inserted { indexes.append(index) }
      return indexes
    }

    /// A fetch index as Core Data's `NSSQLEntity` and `NSSQLBinaryIndex`/`NSSQLRTreeIndex` write it
    /// (public decompilation): the first element's kind decides. An R-tree index is the virtual
    /// table `Z_<Entity>_<index>` (``StoreSchema/RTreeIndex``) over attributes only. A binary index
    /// is `Z_<Entity>_<index>` on the entity's table, each element `<column> COLLATE BINARY ASC|DESC`:
    /// an attribute's or a to-one's column; a to-many with an inverse has no column and is left out,
    /// as Core Data leaves it, and so is a transient property; one to-one alone gets no index (its key
    /// column has one). An expression element is written as Core Data writes it (``FetchIndexSQL``).
    /// What Core Data would refuse or write broken — an expression it does not index, an element
    /// naming nothing, an R-tree over anything but attributes — is refused by name
    /// (``StoreSchema/unsupported``): never an index narrower than declared.
    private mutating func addFetchIndex(
      _ fetchIndex: FetchIndex, of entity: Entity, table: String, storage: [String: PropertyStorage]
    ) {
      let name = "Z_\(entity.name)_\(fetchIndex.name)"
      guard let first = fetchIndex.elements.first else { return }
      do throws(FetchIndexSQL.Refusal) {
        if first.type == "R-Tree" {
          let columns = try Self.rtreeColumns(of: fetchIndex, storage: storage)
          rtreeIndexes.append(RTreeIndex(name: name, table: table, columns: columns))
          return
        }
        let expressions = FetchIndexSQL(
          lookup: { name in
            switch storage[name] {
            case .attribute(let column)?: .column(column.name)
            case .toOne(let key, _, _)?: .column(key.name)
            case .toManyThroughInverse?, .manyToMany?: .toMany
            case nil: .missing
            }
          }, entity: entity.name)
        let parts = try binaryIndexColumns(of: fetchIndex, entity: entity, storage: storage, expressions: expressions)
        let condition = try fetchIndex.partialPredicate.map { predicate throws(FetchIndexSQL.Refusal) in
          try expressions.partialIndex(predicate)
        }
        if fetchIndex.elements.count == 1, first.expression == nil, condition == nil,
          case .toOne? = storage[first.property]
        {
          return
        }
        guard !parts.isEmpty else { return }
        indexes.append(Index(name: name, table: table, columns: parts, isUnique: false, condition: condition))
      } catch {
        unsupported.append("entity \(entity.name): fetch index '\(fetchIndex.name)' \(error.reason)")
      }
    }

    /// The columns of an R-tree fetch index: attributes only, and no partial-index predicate.
    private static func rtreeColumns(
      of fetchIndex: FetchIndex, storage: [String: PropertyStorage]
    ) throws(FetchIndexSQL.Refusal) -> [String] {
      if let predicate = fetchIndex.partialPredicate {
        throw .init(
          reason: "is an R-tree index with the partial-index predicate \(predicate), which migrun cannot write")
      }
      return try fetchIndex.elements.map { element throws(FetchIndexSQL.Refusal) in
        if let expression = element.expression {
          throw .init(
            reason: "is an R-tree index over the expression \(expression), where Core Data takes attributes only")
        }
        guard case .attribute(let column)? = storage[element.property] else {
          throw .init(reason: "is an R-tree index over '\(element.property)', which is not an attribute")
        }
        return column.name
      }
    }

    /// The elements of a binary fetch index, each `<column or expression> COLLATE BINARY ASC|DESC`;
    /// transient properties and to-manys have no column and are left out, as Core Data leaves them.
    private func binaryIndexColumns(
      of fetchIndex: FetchIndex, entity: Entity, storage: [String: PropertyStorage], expressions: FetchIndexSQL
    ) throws(FetchIndexSQL.Refusal) -> [String] {
      let transient = Set(
        model.attributes(of: entity).filter(\.isTransient).map(\.name)
          + model.relationships(of: entity).filter(\.isTransient).map(\.name))
      var parts: [String] = []
      for element in fetchIndex.elements {
        let order = element.isAscending ? "ASC" : "DESC"
        if let expression = element.expression {
          do throws(FetchIndexSQL.Refusal) {
            parts.append("\(try expressions.element(expression)) COLLATE BINARY \(order)")
          } catch {
            throw .init(reason: "has an expression element \(expression) that \(error.reason)")
          }
          continue
        }
        guard !transient.contains(element.property) else { continue }
        switch storage[element.property] {
        case .attribute(let column)?: parts.append("\(column.name) COLLATE BINARY \(order)")
        case .toOne(let key, _, _)?: parts.append("\(key.name) COLLATE BINARY \(order)")
        case .toManyThroughInverse?, .manyToMany?: continue
        case nil:
          throw .init(reason: "names '\(element.property)', which \(entity.name) has no stored property called")
        }
      }
      return parts
    }

    /// Declared storage of the entity and its ancestors (the nearest declaration winning), with
    /// the hidden to-ones that land on it or an ancestor.
    private func resolvedStorage(_ entity: Entity) -> [String: PropertyStorage] {
      var result: [String: PropertyStorage] = [:]
      for level in ([entity] + model.ancestors(of: entity)).reversed() {
        result.merge(hidden[level.name] ?? [:]) { _, nearer in nearer }
        result.merge(declared[level.name] ?? [:]) { _, nearer in nearer }
      }
      return result
    }

    // MARK: - Names

    private func number(_ entity: String) -> Int { numbers[entity] ?? 0 }

    private func hierarchy(of root: Entity) -> [Entity] {
      [root] + model.subentities(of: root).flatMap { hierarchy(of: $0) }
    }

    private func kindNumbers(of entity: Entity) -> [Int] {
      [number(entity.name)] + model.subentities(of: entity).flatMap { kindNumbers(of: $0) }
    }

    /// A column of the root's table holding `type`, named from `base` by the root's generator.
    private mutating func addColumn(_ base: String, _ type: SQLType, _ root: Entity) -> Column {
      let column = addColumn(base, type.declaration, root, in: tableOfRoot[root.name] ?? "")
      columnsOfRoot[root.name, default: []].append(column)
      ranksOfRoot[root.name, default: [:]][column.name] = type.rank
      return column
    }

    /// A column named from `base` by the root's generator, in `table`. For an existing store whose
    /// table has no column by that name, the one it has with the same base (and another suffix).
    private mutating func addColumn(_ base: String, _ type: String, _ root: Entity, in table: String) -> Column {
      var generator = generators[root.name] ?? NameGenerator(reserved: [])
      var name = generator.unique(base)
      if let columns = existing?[table.uppercased()] {
        name = generator.claim(name, base: base, among: columns, in: table)
      }
      generators[root.name] = generator
      return Column(name: name, type: type)
    }
  }

  /// Core Data's `NSSQLStoreMappingGenerator.uniqueNameWithBase:`: the first use of a base name is
  /// the name itself; later uses get the base's counter + 1 (`ZNAME1`, `ZNAME2`, …), skipping
  /// candidates that are themselves bases already used.
  struct NameGenerator {
    private var counters: [String: Int] = [:]
    private var used: Set<String>
    /// Existing columns already taken, per table (reading a store).
    private var claimed: [String: Set<String>] = [:]

    init(reserved: Set<String>) { used = reserved }

    mutating func unique(_ base: String) -> String {
      var name = base
      if let counter = counters[base] {
        var next = counter
        repeat {
          next += 1
          name = base + String(next)
        } while counters[name] != nil || used.contains(name)
        counters[base] = next
      } else {
        counters[base] = 0
      }
      used.insert(name)
      return name
    }

    /// `name` when the existing table has it; else the existing column with the same base and the
    /// lowest suffix not yet taken; else `name` (reported as missing later).
    mutating func claim(_ name: String, base: String, among columns: Set<String>, in table: String) -> String {
      let key = table.uppercased()
      var taken = claimed[key] ?? []
      defer { claimed[key] = taken }
      if columns.contains(name.uppercased()), !taken.contains(name.uppercased()) {
        taken.insert(name.uppercased())
        return name
      }
      let upperBase = base.uppercased()
      let candidates = columns.filter { column in
        !taken.contains(column) && column.hasPrefix(upperBase)
          && column.dropFirst(upperBase.count).allSatisfy(\.isNumber)
      }
      guard let best = candidates.min(by: { ($0.count, $0) < ($1.count, $1) }) else { return name }
      taken.insert(best)
      return best
    }
  }
}
