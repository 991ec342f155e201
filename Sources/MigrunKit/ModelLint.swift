import MigrunModel

/// The model changes that lose data in practice, found before release: each pair of consecutive
/// versions is compared (and the current version looked at alone for CloudKit's rules).
///
/// ```swift
/// let findings = ModelLint.findings(bundle.models, cloudKit: false)
/// ```
///
/// Rules (each has a model that trips it and one that does not in `ModelLintTests`):
/// - `probable-rename`: in one entity, a property removed and one of the same kind and type added
///   (an attribute: with a related name, ``namesAreRelated(_:_:)``, or the same optionality and
///   default; a relationship: the same destination and cardinality), the new one with no renaming
///   identifier —
///   Core Data drops the old values and starts the new property empty, where a rename was most
///   likely meant. A step a script covers is left to it.
/// - `unchanged-hashes`: a version whose entity hashes equal its predecessor's although its model
///   changed (defaults, transformers, validation, indexes…) — devices do not migrate to it.
/// - `required-without-default`: an attribute new in an entity that existed, required, with no default
///   — the step cannot be inferred, and existing objects have no value.
/// - `cardinality-change`: a to-one turned to-many or back — the values change shape.
/// - `uniqueness-added`: a uniqueness constraint (SwiftData's `.unique`, `#Unique`) an entity did not
///   have — existing duplicates stop the step; a custom stage (`<From>-<To>.stage.lua`) that removes
///   them answers it.
/// - `composite-changed`: a composite attribute (SwiftData's `Codable` struct or enum) kept across
///   the step whose elements changed — values of removed elements are lost, added ones start empty.
/// - with `cloudKit`, what Core Data's CloudKit mirroring does not allow (Apple's "Creating a Core Data
///   Model for CloudKit"): `cloudkit-required` (an attribute neither optional nor defaulted),
///   `cloudkit-unique` (uniqueness constraints), `cloudkit-inverse` (a relationship without inverse),
///   `cloudkit-optional` (a relationship that is not optional), `cloudkit-deny` (the Deny delete rule),
///   `cloudkit-ordered` (ordered relationships), `cloudkit-removed` (an entity or property removed once
///   a version is deployed: the CloudKit schema only grows) and `cloudkit-renamed` (one renamed, by
///   its renaming identifier: to CloudKit a removal and an addition).
package enum ModelLint {
  package struct Finding: Sendable, Hashable, CustomStringConvertible {
    package let rule: String
    /// The version, or the two versions of a step.
    package let versions: [String]
    package let entity: String
    package let properties: [String]
    package let message: String

    package var description: String {
      let place = properties.isEmpty ? entity : "\(entity).\(properties.joined(separator: ", "))"
      return "\(versions.joined(separator: " → ")): \(place): \(message) [\(rule)]"
    }
  }

  /// `scripted`: the steps ("source\u{0}destination" version names) a mapping file or mapping model
  /// covers — their values are the script's to make, so the rules about inferred values
  /// (`probable-rename`, `required-without-default`) leave them alone.
  /// `staged`: the steps a custom stage covers (its handlers can remove duplicates before a new
  /// constraint: `uniqueness-added` is theirs).
  package static func findings(
    _ versions: [ObjectModel], cloudKit: Bool = false, scripted: Set<String> = [], staged: Set<String> = []
  ) -> [Finding] {
    var found: [Finding] = []
    for (old, new) in zip(versions, versions.dropFirst()) {
      let key = "\(name(old))\u{0}\(name(new))"
      let inferred = !scripted.contains(key)
      found += step(from: old, to: new, cloudKit: cloudKit).filter { finding in
        (inferred || !["probable-rename", "required-without-default", "uniqueness-added"].contains(finding.rule))
          && !(staged.contains(key) && finding.rule == "uniqueness-added")
      }
    }
    if cloudKit, let current = versions.last { found += cloudKitRules(current) }
    return found
  }

  static func name(_ model: ObjectModel) -> String { model.versionName ?? "the model" }

  /// Whether two property names look like one renamed: one contains the other, they share a word
  /// of three letters or more (camel case, leaving out `has`, `should`, `was`), or a first four
  /// letters — `color` → `hexColor`, `createdAt` → `creationDate`, `tags` → `tagList`. A heuristic
  /// of ours: an attribute removed and one of its type added under an unrelated name, with another
  /// optionality or default (DuckDuckGo's required `isFavorite` and optional, defaulted
  /// `isPendingDeletion`), is a change of model, not a forgotten renaming identifier.
  static func namesAreRelated(_ a: String, _ b: String) -> Bool {
    let (x, y) = (a.lowercased(), b.lowercased())
    if x.contains(y) || y.contains(x) { return true }
    if x.count >= 4, y.count >= 4, x.prefix(4) == y.prefix(4) { return true }
    func words(_ name: String) -> Set<String> {
      var result: [String] = []
      var current = ""
      for character in name {
        if character.isUppercase, !current.isEmpty {
          result.append(current)
          current = ""
        }
        current.append(character)
      }
      result.append(current)
      return Set(result.map { $0.lowercased() }.filter { $0.count >= 3 && !["has", "should", "was"].contains($0) })
    }
    return !words(a).isDisjoint(with: words(b))
  }

  static func step(from old: ObjectModel, to new: ObjectModel, cloudKit: Bool) -> [Finding] {
    let versions = [name(old), name(new)]
    var found: [Finding] = []
    func add(_ rule: String, _ entity: String, _ properties: [String], _ message: String) {
      found.append(Finding(rule: rule, versions: versions, entity: entity, properties: properties, message: message))
    }
    if old.entityVersionHashes == new.entityVersionHashes, let changed = firstChange(from: old, to: new) {
      add(
        "unchanged-hashes", changed.entity, changed.properties,
        "\(name(new)) has \(name(old))'s entity hashes though \(changed.what) changed: devices do not migrate to it (add a version hash modifier if stores must change)"
      )
    }
    var continuedEntities = Set<String>()
    for entity in new.entities.sorted(by: { $0.name < $1.name }) {
      guard let origin = (try? MappingModel.match(entity, in: old)) ?? nil else { continue }
      continuedEntities.insert(origin.name)
      // A finding about an inherited property is made once, at the entity that declares it.
      let declaredBefore = Set(origin.attributes.map(\.name) + origin.relationships.map(\.name))
      let declaredNow = Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
      let attributes = paired(
        old.attributes(of: origin), new.attributes(of: entity), declaredBefore: declaredBefore, declaredNow: declaredNow
      )
      let relationships = paired(
        old.relationships(of: origin), new.relationships(of: entity), declaredBefore: declaredBefore,
        declaredNow: declaredNow)
      propertyChanges(entity, attributes: attributes, relationships: relationships, add: add)
      uniquenessAdded(origin: origin, entity: entity, versions: versions, add: add)
      compositeChanges(
        old, new, origin: origin, entity: entity, declaredBefore: declaredBefore, declaredNow: declaredNow, add: add)
      probableRenames(entity, attributes: attributes, relationships: relationships, add: add)
      if cloudKit {
        cloudKitChanges(origin: origin, entity: entity, attributes: attributes, relationships: relationships, add: add)
      }
    }
    if cloudKit {
      for entity in old.entities.sorted(by: { $0.name < $1.name }) where !continuedEntities.contains(entity.name) {
        add("cloudkit-removed", entity.name, [], "removed: CloudKit's schema cannot remove a record type once deployed")
      }
    }
    return found
  }

  typealias Add = (_ rule: String, _ entity: String, _ properties: [String], _ message: String) -> Void
  typealias PairedAttributes = (kept: [(Attribute, Attribute)], added: [Attribute], removed: [Attribute])
  typealias PairedRelationships = (kept: [(Relationship, Relationship)], added: [Relationship], removed: [Relationship])

  /// required-without-default: an attribute added that existing objects have no value for;
  /// cardinality-change: a relationship kept that turned to-one or to-many.
  static func propertyChanges(
    _ entity: Entity, attributes: PairedAttributes, relationships: PairedRelationships, add: Add
  ) {
    for attribute in attributes.added
    where !attribute.isOptional && attribute.defaultValue == .null && attribute.derivation == nil {
      add(
        "required-without-default", entity.name, [attribute.name],
        "is new and required without a default: existing \(entity.name) objects have no value for it (give it a default)"
      )
    }
    for (previous, relationship) in relationships.kept where previous.isToMany != relationship.isToMany {
      add(
        "cardinality-change", entity.name, [relationship.name],
        previous.isToMany
          ? "was to-many, now to-one: objects related to more than one keep only one"
          : "was to-one, now to-many: check what the relationship's objects mean now")
    }
  }

  /// uniqueness-added: a uniqueness constraint the entity did not have, which existing duplicates break.
  static func uniquenessAdded(origin: Entity, entity: Entity, versions: [String], add: Add) {
    let before = Set(origin.uniquenessConstraints.map { $0.sorted() })
    for constraint in entity.uniquenessConstraints where !before.contains(constraint.sorted()) {
      add(
        "uniqueness-added", entity.name, constraint,
        "gets a uniqueness constraint: existing duplicates stop the migration (remove them in a custom stage's willMigrate, \(versions.joined(separator: "-")).stage.lua, or fold them with a mapping file's merge rules)"
      )
    }
  }

  /// cloudkit-renamed, cloudkit-removed: what CloudKit's deployed schema cannot follow — a field or
  /// a record type renamed, a field removed.
  static func cloudKitChanges(
    origin: Entity, entity: Entity, attributes: PairedAttributes, relationships: PairedRelationships, add: Add
  ) {
    let kept = attributes.kept.map { ($0.0.name, $0.1.name) } + relationships.kept.map { ($0.0.name, $0.1.name) }
    for (previous, name) in kept where previous != name {
      add(
        "cloudkit-renamed", entity.name, [name],
        "renamed from '\(previous)': CloudKit's schema cannot rename a field once deployed")
    }
    for removed in attributes.removed.map(\.name) + relationships.removed.map(\.name) {
      add("cloudkit-removed", entity.name, [removed], "removed: CloudKit's schema cannot remove a field once deployed")
    }
    if origin.name != entity.name {
      add(
        "cloudkit-renamed", entity.name, [],
        "renamed from '\(origin.name)': CloudKit's schema cannot rename a record type")
    }
  }

  /// composite-changed: a composite attribute (SwiftData's Codable struct or enum) whose elements changed.
  static func compositeChanges(
    _ old: ObjectModel, _ new: ObjectModel, origin: Entity, entity: Entity, declaredBefore: Set<String>,
    declaredNow: Set<String>, add: Add
  ) {
    let declared = paired(
      old.declaredAttributes(of: origin), new.declaredAttributes(of: entity), declaredBefore: declaredBefore,
      declaredNow: declaredNow)
    for (previous, attribute) in declared.kept
    where previous.type == .composite && attribute.type == .composite
      && previous.elements.map({ "\($0.name):\($0.type.rawValue)" })
        != attribute.elements.map({
          "\($0.name):\($0.type.rawValue)"
        })
    {
      let was = Set(previous.elements.map(\.name))
      let now = Set(attribute.elements.map(\.name))
      let removed = was.subtracting(now).sorted()
      let added = now.subtracting(was).sorted()
      var parts: [String] = []
      if !removed.isEmpty { parts.append("\(removed.joined(separator: ", ")) removed (their values are lost)") }
      if !added.isEmpty { parts.append("\(added.joined(separator: ", ")) added (empty in existing objects)") }
      if parts.isEmpty { parts.append("an element's type changed") }
      add(
        "composite-changed", entity.name, [attribute.name],
        "its stored value (a Codable struct or enum) changed shape: \(parts.joined(separator: "; "))")
    }
  }

  /// probable-rename: a property removed where one of its kind was added without a renaming identifier.
  static func probableRenames(
    _ entity: Entity, attributes: (kept: [(Attribute, Attribute)], added: [Attribute], removed: [Attribute]),
    relationships: (kept: [(Relationship, Relationship)], added: [Relationship], removed: [Relationship]), add: Add
  ) {
    // A property removed where one of its kind was added without a renaming identifier.
    var renames: [(removed: String, added: String, what: String)] = []
    for removed in attributes.removed {
      if let added = attributes.added.first(where: {
        $0.type == removed.type && $0.renamingIdentifier == nil
          && (namesAreRelated($0.name, removed.name)
            || ($0.isOptional == removed.isOptional && $0.defaultValue == removed.defaultValue))
      }) {
        renames.append(
          (removed.name, added.name, "(\(added.type.xmlName)) added with no renaming identifier: its values"))
      }
    }
    for removed in relationships.removed {
      if let added = relationships.added.first(where: {
        $0.destinationEntity == removed.destinationEntity && $0.isToMany == removed.isToMany
          && $0.renamingIdentifier == nil
      }) {
        renames.append(
          (removed.name, added.name, "(to \(added.destinationEntity)) added with no renaming identifier: its links"))
      }
    }
    for rename in renames {
      add(
        "probable-rename", entity.name, [rename.removed, rename.added],
        "'\(rename.removed)' removed and '\(rename.added)' \(rename.what) are lost if a rename was meant (set the Renaming ID of '\(rename.added)' to '\(rename.removed)')"
      )
    }
  }

  /// One kind of property (stored ones) paired across a step, as Core Data pairs them (name or
  /// renaming identifier): kept pairs and additions where the new entity declares them, removals
  /// where the old one declared them.
  static func paired<P: Property>(_ old: [P], _ new: [P], declaredBefore: Set<String>, declaredNow: Set<String>)
    -> (kept: [(P, P)], added: [P], removed: [P])
  {
    let before = old.filter { !$0.isTransient }
    var kept: [(P, P)] = []
    var added: [P] = []
    var continued = Set<String>()
    for property in new where !property.isTransient {
      if let previous = MappingModel.continued(property, in: before) {
        continued.insert(previous.name)
        if declaredNow.contains(property.name) { kept.append((previous, property)) }
      } else if declaredNow.contains(property.name) {
        added.append(property)
      }
    }
    return (kept, added, before.filter { !continued.contains($0.name) && declaredBefore.contains($0.name) })
  }

  /// The first difference between two versions that their hashes do not show.
  static func firstChange(from old: ObjectModel, to new: ObjectModel) -> (
    entity: String, properties: [String], what: String
  )? {
    for entity in new.entities.sorted(by: { $0.name < $1.name }) {
      guard let previous = old.entity(named: entity.name) else { continue }
      for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
        guard let before = previous.attributes.first(where: { $0.name == attribute.name }), before != attribute else {
          continue
        }
        // What a store or its objects would show; user info and renaming identifiers are not changes
        // of the data.
        let what: String
        if before.valueTransformerName != attribute.valueTransformerName {
          what = "its value transformer"
        } else if before.customClassName != attribute.customClassName {
          what = "its value class"
        } else if before.defaultValueString != attribute.defaultValueString {
          what = "its default value"
        } else if before.validation != attribute.validation {
          what = "its validation rules"
        } else if before.isIndexed != attribute.isIndexed {
          what = "its index"
        } else if before.allowsExternalBinaryDataStorage != attribute.allowsExternalBinaryDataStorage {
          what = "its external storage"
        } else if before.derivation != attribute.derivation {
          what = "its derivation"
        } else {
          continue
        }
        return (entity.name, [attribute.name], what)
      }
      for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) {
        guard let before = previous.relationships.first(where: { $0.name == relationship.name }),
          before.deleteRule != relationship.deleteRule
        else { continue }
        return (entity.name, [relationship.name], "its delete rule")
      }
      if previous.fetchIndexes != entity.fetchIndexes || previous.compoundIndexes != entity.compoundIndexes {
        return (entity.name, [], "its indexes")
      }
    }
    return nil
  }

  static func cloudKitRules(_ model: ObjectModel) -> [Finding] {
    let versions = [name(model)]
    var found: [Finding] = []
    func add(_ rule: String, _ entity: String, _ properties: [String], _ message: String) {
      found.append(Finding(rule: rule, versions: versions, entity: entity, properties: properties, message: message))
    }
    for entity in model.entities.sorted(by: { $0.name < $1.name }) {
      if !entity.uniquenessConstraints.isEmpty {
        add(
          "cloudkit-unique", entity.name, entity.uniquenessConstraints.first ?? [],
          "has uniqueness constraints, which CloudKit mirroring does not support")
      }
      for attribute in entity.attributes.sorted(by: { $0.name < $1.name })
      where !attribute.isTransient && !attribute.isOptional && attribute.defaultValue == .null
        && attribute.derivation == nil
      {
        add(
          "cloudkit-required", entity.name, [attribute.name],
          "is required without a default: CloudKit needs every attribute optional or with a default")
      }
      for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where !relationship.isTransient {
        if relationship.inverseName == nil {
          add(
            "cloudkit-inverse", entity.name, [relationship.name],
            "has no inverse: CloudKit needs every relationship to have one")
        }
        if !relationship.isOptional {
          add(
            "cloudkit-optional", entity.name, [relationship.name],
            "is not optional: CloudKit needs every relationship optional")
        }
        if relationship.deleteRule == .deny {
          add(
            "cloudkit-deny", entity.name, [relationship.name],
            "has the Deny delete rule, which CloudKit mirroring does not support")
        }
        if relationship.isOrdered {
          add(
            "cloudkit-ordered", entity.name, [relationship.name],
            "is ordered, which CloudKit mirroring does not support")
        }
      }
    }
    return found
  }
}
