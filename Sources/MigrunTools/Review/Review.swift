import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// What `review` found (``ReviewJob``): the page's content, and — encoded — its `--json` twin
/// (docs/json.md). Keys with no value are left out.
package struct Review: Encodable {
  /// The store or folder as given.
  package var store: String
  /// A folder was given: the store reviewed is made up, of the model's oldest version.
  package var madeUp: Bool
  package var model: String
  package var source: String
  package var destination: String
  /// The path rule's name (`plan --json`'s `rule`) and why it was taken.
  package var rule: String
  package var why: String
  /// Step files the plan passed over, each with why.
  package var passedOver: [PassedOver]
  package var objectsBefore: [String: Int]
  package var checkBefore: [Finding] = []
  package var steps: [Step] = []
  /// The run on the copy finished (every step conserved its objects and links).
  package var migrated = false
  /// Why the run on the copy stopped, when it did.
  package var refused: String?
  package var checkAfter: [Finding]?
  package var verify: [VerifyStore] = []
  /// Lint's findings that belong to no step of the path.
  package var lint: [Finding] = []
  /// Every file of the coverage tracefile given.
  package var coverage: [Coverage] = []
  /// Each step's picture (inline SVG), nil without Graphviz; the page's, not the JSON's.
  package var diagrams: [String?] = []

  private enum CodingKeys: String, CodingKey {
    case store, madeUp, model, source, destination, rule, why, passedOver, objectsBefore, checkBefore, steps
    case migrated, refused, checkAfter, verify, lint, coverage
  }

  package struct PassedOver: Encodable {
    package let file: String
    package let reason: String
  }

  package struct Step: Encodable {
    package let name: String
    package let from: String
    package let to: String
    /// `inferred` or `scripted`.
    package let kind: String
    package let script: String?
    package let method: String
    package let notDDLBecause: String?
    package let changes: [ModelChanges.Change]
    package let hashes: [ModelChanges.Hashes]
    package let mappings: [Mapping]
    /// What the plan says the step leaves behind (counted in the store for the first step).
    package let drops: [Drop]
    package let policies: [Policy]
    package let stage: Stage?
    /// What `migrun port` left to write in the step's files: each placeholder's message
    /// (`Policy.swift:21: not translated (why): the Swift`), which fails the step until written.
    package var placeholders: [String] = []
    package var lint: [Finding] = []
    package var coverage: [Coverage] = []
    /// What the step did on the copy (nil: the run stopped before it).
    package var run: Run?
  }

  package struct Mapping: Encodable {
    package let name: String
    package let kind: String
    package let source: String?
    package let destination: String?
    /// The objects it takes: counted for the first step, estimated for later ones.
    package let objects: Int?
    package let estimated: Bool
  }

  package struct Drop: Encodable {
    package let entity: String
    package let property: String?
    package let values: Int?
    package let certain: Bool
    /// As `plan` and `migrate` word it.
    package let text: String

    init(_ drop: DroppedProperty) {
      entity = drop.entity
      property = drop.property
      values = drop.values
      certain = drop.isCertain
      text = drop.description
    }
  }

  package struct Policy: Encodable {
    package let mapping: String
    package let file: String
    package let hooks: [String]
    package let computed: [String]
    package let filters: Bool
  }

  package struct Stage: Encodable {
    package let file: String
    package let hooks: [String]
  }

  package struct Run: Encodable {
    package let objectsAfter: [String: Int]
    /// Conservation: each entity mapping's objects read and written.
    package let mappings: [Conserved]
    package let dropped: [Drop]
    package let merged: Int
    package let seconds: Double?
  }

  package struct Conserved: Encodable {
    package let mapping: String
    package let read: Int
    package let written: Int
    package let note: String?

    init(_ count: MappingCount) {
      mapping = count.mapping
      read = count.read
      written = count.written
      note = count.note
    }
  }

  package struct Finding: Encodable {
    package let rule: String
    package let message: String
    package var versions: [String] = []
    package var entity: String?
    package var note = false

    init(rule: String, message: String, note: Bool) {
      self.rule = rule
      self.message = message
      self.note = note
    }

    init(_ finding: ModelLint.Finding) {
      rule = finding.rule
      message = finding.message
      versions = finding.versions
      entity = finding.entity
    }
  }

  package struct VerifyStore: Encodable {
    package let version: String
    package let passed: Bool
    package let objects: Int
    package let detail: String

    init(_ outcome: VerificationOutcome) {
      version = outcome.version
      passed = outcome.passed
      objects = outcome.objects
      detail = outcome.detail
    }
  }

  package struct Coverage: Encodable {
    package let file: String
    package let linesRun: Int
    package let lines: Int

    init(file: String, lines: (run: Int, lines: Int)) {
      self.file = file
      linesRun = lines.run
      self.lines = lines.lines
    }

    var percent: Int { lines == 0 ? 100 : linesRun * 100 / lines }
  }
}

/// A step's model diff: entities and properties added, removed, renamed (by renaming identifier)
/// and changed in type or options, read from the step's entity mappings and its two models.
package enum ModelChanges {
  package struct Change: Encodable, Equatable {
    /// `entity`, `attribute` or `relationship`.
    package let kind: String
    package let entity: String
    package let property: String?
    /// `added`, `removed`, `renamed` or `changed`.
    package let change: String
    package let detail: String?
  }

  package struct Hashes: Encodable {
    package let entity: String
    /// The entity's version hash (base64) in the step's source and destination version; nil where it is not there.
    package let from: String?
    package let to: String?
    package var changed: Bool { from != to }
  }

  static func of(_ mappings: [EntityMapping], from source: ObjectModel, to destination: ObjectModel) -> [Change] {
    var changes: [Change] = []
    for mapping in mappings {
      switch mapping.kind {
      case .add:
        if let name = mapping.destinationEntity {
          changes.append(Change(kind: "entity", entity: name, property: nil, change: "added", detail: nil))
        }
        continue
      case .remove:
        if let name = mapping.sourceEntity {
          changes.append(Change(kind: "entity", entity: name, property: nil, change: "removed", detail: nil))
        }
        continue
      default: break
      }
      guard let fromName = mapping.sourceEntity, let toName = mapping.destinationEntity,
        let fromEntity = source.entity(named: fromName), let toEntity = destination.entity(named: toName)
      else { continue }
      if fromName != toName {
        changes.append(
          Change(kind: "entity", entity: toName, property: nil, change: "renamed", detail: "from \(fromName)"))
      }
      let (was, now) = (describe(fromEntity), describe(toEntity))
      if was != now {
        changes.append(
          Change(kind: "entity", entity: toName, property: nil, change: "changed", detail: "\(was) → \(now)"))
      }
      changes += attributeChanges(mapping, from: (source, fromEntity), to: (destination, toEntity))
      changes += relationshipChanges(mapping, from: (source, fromEntity), to: (destination, toEntity))
    }
    // Entities no mapping reads or writes (abstract ones have none) that the other version lacks:
    // removed or added by the step all the same.
    let (read, written) = (Set(mappings.compactMap(\.sourceEntity)), Set(mappings.compactMap(\.destinationEntity)))
    for entity in source.entities.map(\.name).sorted()
    where !read.contains(entity) && destination.entity(named: entity) == nil {
      changes.append(Change(kind: "entity", entity: entity, property: nil, change: "removed", detail: nil))
    }
    for entity in destination.entities.map(\.name).sorted()
    where !written.contains(entity) && source.entity(named: entity) == nil {
      changes.append(Change(kind: "entity", entity: entity, property: nil, change: "added", detail: nil))
    }
    return changes
  }

  /// An entity's options a migration cares about: abstract, its parent, uniqueness constraints, hash modifier.
  static func describe(_ entity: Entity) -> String {
    var options: [String] = []
    if entity.isAbstract { options.append("abstract") }
    if let parent = entity.parentName { options.append("parent \(parent)") }
    if !entity.uniquenessConstraints.isEmpty {
      options.append(
        "unique " + entity.uniquenessConstraints.map { "(\($0.joined(separator: ", ")))" }.joined(separator: ", "))
    }
    if let modifier = entity.versionHashModifier { options.append("hash modifier \(modifier)") }
    return options.isEmpty ? "no constraints" : options.joined(separator: "; ")
  }

  private static func attributeChanges(
    _ mapping: EntityMapping, from: (model: ObjectModel, entity: Entity), to: (model: ObjectModel, entity: Entity)
  ) -> [Change] {
    var changes: [Change] = []
    let old = Dictionary(from.model.attributes(of: from.entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    var used = Set<String>()
    for attribute in to.model.attributes(of: to.entity) where !attribute.isTransient {
      let name = attribute.name
      func change(_ kind: String, _ detail: String?) {
        changes.append(Change(kind: "attribute", entity: to.entity.name, property: name, change: kind, detail: detail))
      }
      let origin = mapping.attributes[name]?.sourceAttribute
      guard let origin, let before = old[origin] else {
        change("added", "\(describe(attribute))\(mapping.attributes[name].map { " ← \($0)" } ?? "")")
        continue
      }
      used.insert(origin)
      if origin != name { change("renamed", "from \(origin)") }
      let (was, now) = (describe(before), describe(attribute))
      if was != now { change("changed", "\(was) → \(now)") }
    }
    for attribute in from.model.attributes(of: from.entity)
    where !attribute.isTransient && !used.contains(attribute.name) {
      changes.append(
        Change(
          kind: "attribute", entity: from.entity.name, property: attribute.name, change: "removed",
          detail: describe(attribute)))
    }
    return changes
  }

  private static func relationshipChanges(
    _ mapping: EntityMapping, from: (model: ObjectModel, entity: Entity), to: (model: ObjectModel, entity: Entity)
  ) -> [Change] {
    var changes: [Change] = []
    let old = Dictionary(
      from.model.relationships(of: from.entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    var used = Set<String>()
    for relationship in to.model.relationships(of: to.entity) where !relationship.isTransient {
      let name = relationship.name
      func change(_ kind: String, _ detail: String?) {
        changes.append(
          Change(kind: "relationship", entity: to.entity.name, property: name, change: kind, detail: detail))
      }
      guard let origin = mapping.relationships[name], let before = old[origin] else {
        change("added", describe(relationship))
        continue
      }
      used.insert(origin)
      if origin != name { change("renamed", "from \(origin)") }
      let (was, now) = (describe(before), describe(relationship))
      if was != now { change("changed", "\(was) → \(now)") }
    }
    for relationship in from.model.relationships(of: from.entity)
    where !relationship.isTransient && !used.contains(relationship.name) {
      changes.append(
        Change(
          kind: "relationship", entity: from.entity.name, property: relationship.name, change: "removed",
          detail: describe(relationship)))
    }
    return changes
  }

  /// An attribute's type and the options a migration cares about.
  static func describe(_ attribute: Attribute) -> String {
    var options: [String] = []
    if attribute.allowsExternalBinaryDataStorage { options.append("external storage") }
    if attribute.isIndexed { options.append("indexed") }
    if let modifier = attribute.versionHashModifier { options.append("hash modifier \(modifier)") }
    if let value = attribute.defaultValueString { options.append("default \(value)") }
    if let transformer = attribute.valueTransformerName { options.append("transformer \(transformer)") }
    let type = "\(attribute.type.xmlName)\(attribute.isOptional ? "?" : "")"
    return options.isEmpty ? type : "\(type) (\(options.joined(separator: ", ")))"
  }

  static func describe(_ relationship: Relationship) -> String {
    let many = relationship.isToMany ? "to-many\(relationship.isOrdered ? " ordered" : "")" : "to-one"
    var text = "\(many) \(relationship.destinationEntity)\(relationship.isOptional ? "?" : "")"
    if relationship.minCount > 0 || relationship.maxCount > 1 {
      text += " [\(relationship.minCount)…\(relationship.maxCount == 0 ? "∞" : "\(relationship.maxCount)")]"
    }
    if let modifier = relationship.versionHashModifier { text += " (hash modifier \(modifier))" }
    return text
  }

  /// Every entity's version hash in the two versions, by name.
  static func hashes(from source: ObjectModel, to destination: ObjectModel) -> [Hashes] {
    let names = Set(source.entityVersionHashes.keys).union(destination.entityVersionHashes.keys).sorted()
    return names.map {
      Hashes(
        entity: $0, from: source.entityVersionHashes[$0]?.base64, to: destination.entityVersionHashes[$0]?.base64)
    }
  }
}
