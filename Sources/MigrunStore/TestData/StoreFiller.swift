import MigrunModel
import PropertyList

/// Objects made up for a model version — `migrun verify` fills a store of every old version with
/// them: N objects per entity, valid under the version's rules where that can be met (required
/// values, value rules, uniqueness, relationship counts), every relationship shape used, the same
/// objects for the same seed.
///
/// ```swift
/// let objects = StoreFiller.objects(for: model, perEntity: 20, seed: 1)
/// try StoreFiller.fill(store, with: objects)
/// ```
package enum StoreFiller {
  package static func objects(for model: ObjectModel, perEntity count: Int, seed: UInt64) -> [StoredObject] {
    var filling = Filling(model: model, seed: seed)
    filling.makeObjects(perEntity: count)
    var done: Set<String> = []
    for entity in model.entities.sorted(by: { $0.name < $1.name }) {
      for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where !relationship.isTransient {
        let key = entity.name + "." + relationship.name
        guard !done.contains(key) else { continue }
        done.insert(key)
        let inverse = model.inverse(of: relationship)
        if let inverse { done.insert(relationship.destinationEntity + "." + inverse.name) }
        filling.link(entity, relationship, inverse: inverse)
      }
    }
    return filling.result()
  }

  /// The objects as they are made: keys, values, then links, relationship by relationship.
  private struct Filling {
    let model: ObjectModel
    var random: SplitMix
    var objects: [ObjectID: StoredObject] = [:]
    var order: [ObjectID] = []

    init(model: ObjectModel, seed: UInt64) {
      self.model = model
      random = SplitMix(seed: seed)
    }

    /// `count` objects of every concrete entity, with values (keys numbered per root entity).
    mutating func makeObjects(perEntity count: Int) {
      var keys: [String: Int64] = [:]
      let rules = ModelRules(model: model)
      for entity in model.entities.sorted(by: { $0.name < $1.name }) where !entity.isAbstract {
        let valueRules = rules.entities.first { $0.entity.name == entity.name }?.valueRules ?? []
        let unique = Set(([entity] + model.ancestors(of: entity)).flatMap(\.uniquenessConstraints).flatMap { $0 })
        for index in 0..<count {
          let root = model.root(of: entity).name
          keys[root, default: 0] += 1
          let key = keys[root] ?? 1
          let id = ObjectID(entity: entity.name, primaryKey: key)
          var object = StoredObject(id: id, version: 1)
          for attribute in model.attributes(of: entity) where !attribute.isTransient && attribute.derivation == nil {
            let ruled = valueRules.filter { $0.attribute == attribute.name }
            object.attributes[attribute.name] = value(
              for: attribute, index: Int(key), unique: unique.contains(attribute.name), rules: ruled,
              optionalNull: index % 5 == 4, &random)
          }
          for relationship in model.relationships(of: entity) where relationship.isToMany {
            object.toMany[relationship.name] = []
          }
          objects[id] = object
          order.append(id)
        }
      }
    }

    func kind(_ destination: String) -> [ObjectID] {
      order.filter { id in model.entity(named: id.entity).map { model.entity($0, isKindOf: destination) } ?? false }
    }

    func room(_ id: ObjectID, _ relationship: Relationship) -> Bool {
      relationship.maxCount <= 0 || (objects[id]?.toMany[relationship.name]?.count ?? 0) < Int(relationship.maxCount)
    }

    /// Optional links are made three times in four; required ones always.
    mutating func wanted(_ relationship: Relationship) -> Bool {
      !relationship.isOptional || random.next() % 4 != 0
    }

    /// Links of `relationship` of `entity`'s objects (and their inverse), of every shape.
    mutating func link(_ entity: Entity, _ relationship: Relationship, inverse: Relationship?) {
      let owners = kind(entity.name)
      let targets = kind(relationship.destinationEntity)
      guard !owners.isEmpty, !targets.isEmpty else { return }
      if relationship.isToMany {
        linkToMany(entity, relationship, inverse: inverse, owners: owners, targets: targets)
      } else {
        linkToOne(entity, relationship, inverse: inverse, owners: owners, targets: targets)
      }
    }

    private mutating func linkToOne(
      _ entity: Entity, _ relationship: Relationship, inverse: Relationship?, owners: [ObjectID], targets: [ObjectID]
    ) {
      switch (relationship.isToMany, inverse) {
      case (false, nil):
        for owner in owners where wanted(relationship) {
          objects[owner]?.toOne[relationship.name] = targets[Int(random.next() % UInt64(targets.count))]
        }
      case (false, let inverse?) where !inverse.isToMany:
        // One-to-one: a pairing, each end at most once.
        var free = targets.filter { !owners.contains($0) || relationship.destinationEntity != entity.name }
        for owner in owners where wanted(relationship) || !inverse.isOptional {
          guard let target = free.popLast(), target != owner else { continue }
          objects[owner]?.toOne[relationship.name] = target
          objects[target]?.toOne[inverse.name] = owner
        }
      case (false, let inverse?):
        for owner in owners where wanted(relationship) {
          let open = targets.filter { room($0, inverse) }
          guard !open.isEmpty else { break }
          let target = open[Int(random.next() % UInt64(open.count))]
          objects[owner]?.toOne[relationship.name] = target
          objects[target]?.toMany[inverse.name, default: []].append(owner)
        }
      default: break
      }
    }

    private mutating func linkToMany(
      _ entity: Entity, _ relationship: Relationship, inverse: Relationship?, owners: [ObjectID], targets: [ObjectID]
    ) {
      switch (relationship.isToMany, inverse) {
      case (true, nil):
        // Each destination belongs to one owner at most (a hidden to-one in Core Data's layout).
        for (index, target) in targets.enumerated() where wanted(relationship) {
          let owner = owners[index % owners.count]
          if room(owner, relationship) { objects[owner]?.toMany[relationship.name, default: []].append(target) }
        }
      case (true, let inverse?) where !inverse.isToMany:
        for (index, target) in targets.enumerated() where wanted(inverse) {
          let owner = owners[index % owners.count]
          guard room(owner, relationship) else { continue }
          objects[target]?.toOne[inverse.name] = owner
          objects[owner]?.toMany[relationship.name, default: []].append(target)
        }
      case (true, let inverse?):
        let reflexive = inverse.name == relationship.name && relationship.destinationEntity == entity.name
        let lowest = max(Int(relationship.minCount), relationship.isOptional ? 0 : 1)
        for owner in owners {
          let highest = relationship.maxCount > 0 ? Int(relationship.maxCount) : 3
          let wantedCount = min(targets.count, max(lowest, Int(random.next() % UInt64(max(highest, 1) + 1))))
          var members = objects[owner]?.toMany[relationship.name] ?? []
          for target in targets.shuffled(using: &random) where members.count < wantedCount {
            guard !members.contains(target), !(reflexive && target == owner), room(target, inverse) else { continue }
            members.append(target)
            objects[target]?.toMany[inverse.name, default: []].append(owner)
          }
          objects[owner]?.toMany[relationship.name] = members
        }
      default: break
      }
    }

    /// Unordered to-many members by key; the objects in the order they were made.
    mutating func result() -> [StoredObject] {
      for id in order {
        guard var object = objects[id], let entity = model.entity(named: id.entity) else { continue }
        for relationship in model.relationships(of: entity) where relationship.isToMany && !relationship.isOrdered {
          object.toMany[relationship.name] = (object.toMany[relationship.name] ?? []).sorted {
            $0.entity == $1.entity ? $0.primaryKey < $1.primaryKey : $0.entity < $1.entity
          }
        }
        objects[id] = object
      }
      return order.compactMap { objects[$0] }
    }
  }

  /// Inserts `objects` into `store` in one transaction, keys reserved.
  package static func fill(_ store: SQLiteStore, with objects: [StoredObject]) throws {
    try store.write { writer in
      var highest: [String: Int64] = [:]
      for object in objects {
        try writer.insert(object)
        highest[object.id.entity] = max(highest[object.id.entity] ?? 0, object.id.primaryKey)
      }
      for object in objects {
        for (name, members) in object.toMany.sorted(by: { $0.key < $1.key }) where !members.isEmpty {
          try writer.setToMany(object.id, name, members)
        }
      }
      for (entity, key) in highest.sorted(by: { $0.key < $1.key }) {
        try writer.reservePrimaryKeys(for: entity, through: key)
      }
    }
  }

  /// A value for `attribute`: plain, unique where a constraint asks (derived from the object's key),
  /// and checked against the attribute's rules — brought inside a range or a length where one is
  /// given, else the default value when it passes.
  static func value(
    for attribute: Attribute, index: Int, unique: Bool, rules: [ValueRule], optionalNull: Bool,
    _ random: inout SplitMix
  ) -> StoreValue {
    if attribute.isOptional && optionalNull && !unique { return .null }
    var value = plain(attribute.type, index: index, unique: unique, &random)
    for rule in rules where rule.problem(value) != nil {
      switch (rule.kind, value) {
      case (.minimumValue(let low), .integer): value = .integer(Self.integer(low.rounded(.up)))
      case (.maximumValue(let high), .integer): value = .integer(Self.integer(high.rounded(.down)))
      case (.minimumValue(let low), .double): value = .double(low)
      case (.maximumValue(let high), .double): value = .double(high)
      case (.minimumValue(let low), .date): value = .date(low)
      case (.maximumValue(let high), .date): value = .date(high)
      // A length no made-up value can reach (a model's rule is outside input) leaves the value
      // breaking the rule: the default or NULL stands in below, as for any rule it cannot keep.
      case (.minimumLength(let length), .string(let text)) where length <= Self.longestMadeUp:
        value = .string(text + String(repeating: "x", count: max(0, length - text.utf16.count)))
      case (.maximumLength(let length), .string(let text)): value = .string(String(text.prefix(max(length, 0))))
      case (.minimumLength(let length), .data(let bytes)) where length <= Self.longestMadeUp:
        value = .data(bytes + Array(repeating: 0, count: max(0, length - bytes.count)))
      case (.maximumLength(let length), .data(let bytes)): value = .data(Array(bytes.prefix(max(length, 0))))
      default: break
      }
    }
    if rules.contains(where: { $0.problem(value) != nil }) {
      let fallback = attribute.defaultValue
      if fallback != .null, !rules.contains(where: { $0.problem(fallback) != nil }) { return fallback }
      if attribute.isOptional { return .null }
    }
    return value
  }

  /// The longest string or data a made-up value is padded to, to keep a minimum length.
  static let longestMadeUp = 1 << 16

  /// `number` (a whole number) as the nearest integer a store holds: a model's bound beyond Int64's
  /// range (a rule is outside input) is no value to trap on.
  static func integer(_ number: Double) -> Int64 {
    if number.isNaN { return 0 }
    if number >= 9.223_372_036_854_775_808e18 { return .max }
    if number < -9.223_372_036_854_775_808e18 { return .min }
    return Int64(number)
  }

  static func plain(_ type: AttributeType, index: Int, unique: Bool, _ random: inout SplitMix) -> StoreValue {
    let small = unique ? Int64(index) : Int64(random.next() % 100)
    switch type {
    case .integer16, .integer32, .integer64: return .integer(small)
    case .double, .float, .decimal: return .double(Double(small) + (unique ? 0 : 0.5))
    case .boolean: return .boolean(unique ? index % 2 == 0 : random.next() % 2 == 0)
    case .date: return .date(700_000_000 + Double(small) * 86_400)
    case .string: return .string(unique ? "value \(index)" : "text \(small)")
    case .uri: return .string("https://example.org/\(unique ? Int64(index) : small)")
    case .binary: return .data((0..<Int(random.next() % 8)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    case .transformable:
      // What Core Data's default transformers store: a keyed archive (here of an empty dictionary).
      // A custom transformer's format is the app's own; scripts that read it see this archive.
      return .data(emptyArchive)
    case .uuid:
      var bytes: [UInt8] = []
      for position in 0..<16 {
        bytes.append(
          unique ? UInt8(truncatingIfNeeded: index >> ((position % 8) * 8)) : UInt8(truncatingIfNeeded: random.next()))
      }
      return .uuid(bytes)
    default: return .null
    }
  }

  /// An NSKeyedArchiver archive of an empty NSDictionary, as a binary property list.
  static let emptyArchive: [UInt8] = {
    var archiver = KeyedArchiver()
    let root = archiver.dictionary(keys: [], values: [])
    return archiver.archive(root: root).binaryEncoded()
  }()

  /// SplitMix64: small, deterministic, the same on every platform.
  package struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    package mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }
}
