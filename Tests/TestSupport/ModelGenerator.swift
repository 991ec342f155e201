import Foundation
import MigrunKit
import MigrunModel
import MigrunStore

/// Random Core Data models and objects for property-based tests: inheritance up to three levels and
/// every relationship shape Core Data lays out differently — to-one with and without an inverse,
/// one-to-one, to-many with a to-one inverse, to-many without an inverse (ordered or not),
/// many-to-many across entities (ordered on either side), self-referential many-to-many between two
/// relationships of one entity, a relationship that is its own inverse, and two many-to-manys from
/// one entity whose inverses share a name (so that join-table column names collide).
public struct GeneratedModel: CustomStringConvertible {
  public struct EntitySpec {
    public var name: String
    public var parent: String?
    public var attributes: [(name: String, type: String)]
    public var relationships: [RelationshipSpec]
  }

  public struct RelationshipSpec {
    public var name: String
    public var destination: String
    public var inverse: String?
    public var toMany: Bool
    public var ordered: Bool
  }

  public var entities: [EntitySpec]
  public let seed: UInt64

  public var description: String { "generated model (seed \(seed))" }

  static let attributeTypes = [
    "Integer 16", "Integer 32", "Integer 64", "Double", "Float", "String", "Boolean", "Date", "Binary", "UUID",
    "Decimal", "URI",
  ]

  public init(seed: UInt64) {
    self.seed = seed
    var random = SeededRandom(seed: seed)
    var names = ["Zebra", "Apple", "Mango", "Kiwi", "Banana", "Cherry", "Fig", "Lime", "Olive"]
    names.shuffle(using: &random)
    let count = Int.random(in: 4...7, using: &random)
    var entities: [EntitySpec] = []
    var depth: [String: Int] = [:]
    var used: Set<String> = []
    func fresh(_ random: inout SeededRandom) -> String {
      let syllables = ["ka", "lo", "mi", "zu", "be", "ra", "to", "xi", "ne", "do"]
      while true {
        let name = (0..<Int.random(in: 2...3, using: &random)).map { _ in syllables.randomElement(using: &random) ?? "a"
        }
        .joined()
        if used.insert(name).inserted { return name }
      }
    }
    for index in 0..<count {
      let candidates = entities.filter { (depth[$0.name] ?? 0) < 2 }
      let parent = index > 0 && Bool.random(using: &random) ? candidates.randomElement(using: &random)?.name : nil
      let name = names[index]
      depth[name] = parent.map { (depth[$0] ?? 0) + 1 } ?? 0
      let attributes = (0..<Int.random(in: 1...3, using: &random)).map { _ in
        (name: fresh(&random), type: Self.attributeTypes.randomElement(using: &random) ?? "String")
      }
      entities.append(EntitySpec(name: name, parent: parent, attributes: attributes, relationships: []))
    }
    self.entities = entities
    func isKind(_ entity: String, of ancestor: String) -> Bool {
      var next: String? = entity
      while let current = next {
        if current == ancestor { return true }
        next = self.entities.first { $0.name == current }?.parent
      }
      return false
    }
    func pick(_ random: inout SeededRandom) -> String { self.entities.randomElement(using: &random)?.name ?? "" }
    func add(_ entity: String, _ relationship: RelationshipSpec) {
      if let index = self.entities.firstIndex(where: { $0.name == entity }) {
        self.entities[index].relationships.append(relationship)
      }
    }
    for _ in 0..<Int.random(in: 4...8, using: &random) {
      let a = pick(&random)
      let b = pick(&random)
      let (x, y) = (fresh(&random), fresh(&random))
      let ordered = Int.random(in: 0..<3, using: &random) == 0
      switch Int.random(in: 0..<8, using: &random) {
      case 0:  // to-one without inverse
        add(a, RelationshipSpec(name: x, destination: b, inverse: nil, toMany: false, ordered: false))
      case 1:  // to-many without inverse
        add(a, RelationshipSpec(name: x, destination: b, inverse: nil, toMany: true, ordered: ordered))
      case 2:  // to-one ↔ to-many
        add(a, RelationshipSpec(name: x, destination: b, inverse: y, toMany: false, ordered: false))
        add(b, RelationshipSpec(name: y, destination: a, inverse: x, toMany: true, ordered: ordered))
      case 3:  // one-to-one
        guard a != b else { continue }
        add(a, RelationshipSpec(name: x, destination: b, inverse: y, toMany: false, ordered: false))
        add(b, RelationshipSpec(name: y, destination: a, inverse: x, toMany: false, ordered: false))
      case 4:  // many-to-many, each side ordered or not
        add(a, RelationshipSpec(name: x, destination: b, inverse: y, toMany: true, ordered: ordered))
        add(
          b, RelationshipSpec(name: y, destination: a, inverse: x, toMany: true, ordered: Bool.random(using: &random)))
      case 5:  // self-referential many-to-many (blockedBy ↔ blocking)
        add(a, RelationshipSpec(name: x, destination: a, inverse: y, toMany: true, ordered: false))
        add(a, RelationshipSpec(name: y, destination: a, inverse: x, toMany: true, ordered: false))
      case 6:  // its own inverse (friends)
        add(a, RelationshipSpec(name: x, destination: a, inverse: x, toMany: true, ordered: false))
      default:  // two many-to-manys whose inverses share a name: colliding join columns
        let c = pick(&random)
        guard b != c, !isKind(b, of: c), !isKind(c, of: b) else { continue }
        let shared = fresh(&random)
        let z = fresh(&random)
        add(a, RelationshipSpec(name: x, destination: b, inverse: shared, toMany: true, ordered: false))
        add(b, RelationshipSpec(name: shared, destination: a, inverse: x, toMany: true, ordered: false))
        add(a, RelationshipSpec(name: z, destination: c, inverse: shared, toMany: true, ordered: false))
        add(c, RelationshipSpec(name: shared, destination: a, inverse: z, toMany: true, ordered: false))
      }
    }
  }

  /// The model as an `.xcdatamodel`'s `contents`. `added` adds an optional attribute to an entity;
  /// `renamed` gives an attribute a new name whose renaming identifier is the old one.
  public func xml(
    added: (entity: String, name: String)? = nil, renamed: (entity: String, from: String, to: String)? = nil
  )
    -> String
  {
    var lines = [
      #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#,
      #"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">"#,
    ]
    for entity in entities {
      lines.append(
        #"  <entity name="\#(entity.name)""# + (entity.parent.map { #" parentEntity="\#($0)""# } ?? "") + ">")
      for attribute in entity.attributes {
        var name = attribute.name
        var identifier = ""
        if let renamed, renamed.entity == entity.name, renamed.from == attribute.name {
          name = renamed.to
          identifier = #" elementID="\#(renamed.from)""#
        }
        lines.append(
          #"    <attribute name="\#(name)" optional="YES" attributeType="\#(attribute.type)"\#(identifier)/>"#)
      }
      if let added, added.entity == entity.name {
        lines.append(#"    <attribute name="\#(added.name)" optional="YES" attributeType="String"/>"#)
      }
      for relationship in entity.relationships {
        var text = #"    <relationship name="\#(relationship.name)" optional="YES""#
        text += relationship.toMany ? #" toMany="YES""# : #" maxCount="1""#
        if relationship.ordered { text += #" ordered="YES""# }
        text += #" deletionRule="Nullify" destinationEntity="\#(relationship.destination)""#
        if let inverse = relationship.inverse {
          text += #" inverseName="\#(inverse)" inverseEntity="\#(relationship.destination)""#
        }
        lines.append(text + "/>")
      }
      lines.append("  </entity>")
    }
    lines.append("</model>")
    return lines.joined(separator: "\n")
  }

  /// Objects for `model` (this generated model, parsed), consistent across inverses: 1–4 objects per
  /// entity, random attribute values (NULL included), relationships filled at random.
  public func objects(for model: ObjectModel, seed: UInt64) -> [StoredObject] {
    var random = SeededRandom(seed: seed)
    var keys: [String: Int64] = [:]
    var objects: [ObjectID: StoredObject] = [:]
    var order: [ObjectID] = []
    for entity in model.entities {
      for _ in 0..<Int.random(in: 1...4, using: &random) {
        let root = model.root(of: entity).name
        keys[root, default: 0] += 1
        let id = ObjectID(entity: entity.name, primaryKey: keys[root] ?? 1)
        var object = StoredObject(id: id, version: 1)
        for attribute in model.attributes(of: entity) where !attribute.isTransient {
          object.attributes[attribute.name] = Self.value(attribute.type, &random)
        }
        for relationship in model.relationships(of: entity) where relationship.isToMany {
          object.toMany[relationship.name] = []
        }
        objects[id] = object
        order.append(id)
      }
    }
    func kind(_ destination: String) -> [ObjectID] {
      order.filter { id in
        model.entity(named: id.entity).map { model.entity($0, isKindOf: destination) } ?? false
      }
    }
    var done: Set<String> = []
    for entity in model.entities {
      for relationship in entity.relationships {
        let key = entity.name + "." + relationship.name
        guard !done.contains(key) else { continue }
        done.insert(key)
        let owners = kind(entity.name)
        let targets = kind(relationship.destinationEntity)
        let inverse = model.inverse(of: relationship)
        if let inverse { done.insert(relationship.destinationEntity + "." + inverse.name) }
        switch (relationship.isToMany, inverse) {
        case (false, nil):
          for owner in owners { objects[owner]?.toOne[relationship.name] = targets.randomElement(using: &random) }
        case (false, let inverse?) where !inverse.isToMany:
          // One-to-one: an injective pairing.
          var free = targets.shuffled(using: &random)
          for owner in owners.shuffled(using: &random) where Bool.random(using: &random) {
            guard let target = free.popLast(), target != owner else { continue }
            objects[owner]?.toOne[relationship.name] = target
            objects[target]?.toOne[inverse.name] = owner
          }
        case (false, let inverse?):
          for owner in owners {
            guard Bool.random(using: &random), let target = targets.randomElement(using: &random) else { continue }
            objects[owner]?.toOne[relationship.name] = target
            objects[target]?.toMany[inverse.name, default: []].append(owner)
          }
        case (true, nil):
          // Each destination belongs to one owner at most (a hidden to-one in Core Data's layout).
          for target in targets where Bool.random(using: &random) {
            if let owner = owners.randomElement(using: &random) {
              objects[owner]?.toMany[relationship.name, default: []].append(target)
            }
          }
        case (true, let inverse?) where !inverse.isToMany:
          for target in targets {
            guard Bool.random(using: &random), let owner = owners.randomElement(using: &random) else { continue }
            objects[target]?.toOne[inverse.name] = owner
            objects[owner]?.toMany[relationship.name, default: []].append(target)
          }
        case (true, let inverse?):
          let reflexive = inverse.name == relationship.name && relationship.destinationEntity == entity.name
          for owner in owners {
            for target in targets where Int.random(in: 0..<3, using: &random) == 0 {
              guard objects[owner]?.toMany[relationship.name]?.contains(target) != true else { continue }
              objects[owner]?.toMany[relationship.name, default: []].append(target)
              if reflexive && owner == target { continue }
              objects[target]?.toMany[inverse.name, default: []].append(owner)
            }
          }
        }
      }
    }
    // Ordered lists in a random order; unordered ones as a store gives them back (by key).
    for id in order {
      guard var object = objects[id], let entity = model.entity(named: id.entity) else { continue }
      for relationship in model.relationships(of: entity) where relationship.isToMany {
        let members = object.toMany[relationship.name] ?? []
        object.toMany[relationship.name] =
          relationship.isOrdered ? members.shuffled(using: &random) : members.sorted { $0.primaryKey < $1.primaryKey }
      }
      objects[id] = object
    }
    return order.compactMap { objects[$0] }
  }

  static func value(_ type: AttributeType, _ random: inout SeededRandom) -> StoreValue {
    guard Int.random(in: 0..<5, using: &random) > 0 else { return .null }
    switch type {
    case .integer16: return .integer(Int64.random(in: -32768...32767, using: &random))
    case .integer32: return .integer(Int64.random(in: -2_147_483_648...2_147_483_647, using: &random))
    case .integer64: return .integer(Int64.random(in: .min ... .max, using: &random))
    case .double, .decimal: return .double(Double.random(in: -1e9...1e9, using: &random))
    case .float: return .double(Double(Float.random(in: -1e6...1e6, using: &random)))
    case .boolean: return .boolean(Bool.random(using: &random))
    case .date: return .date(Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &random)) + 0.5)
    case .string, .uri: return .string("text \(Int.random(in: 0...999, using: &random)) ü")
    case .binary, .transformable:
      return .data((0..<Int.random(in: 0...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
    case .uuid: return .uuid((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
    default: return .null
    }
  }
}

/// A small deterministic generator (SplitMix64), so a failing seed can be run again: the store
/// filler's own.
package typealias SeededRandom = StoreFiller.SplitMix
