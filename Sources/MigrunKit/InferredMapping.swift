import MigrunModel
import MigrunStore

extension MappingModel {
  /// The mapping Core Data's lightweight migration would infer, or the reason there is none.
  ///
  /// Inferred (SPEC §3.4): added and removed attributes, relationships and entities; optional made
  /// required when the attribute has a default; renames through renaming identifiers (matched by
  /// name or by the identifier both versions carry, so skipped versions work); to-one ↔ to-many and
  /// ordering changes; new parents or children and properties moved along the hierarchy; an entity
  /// taken out of a hierarchy. Numeric type changes are converted (`AttributeConversion`). Refused: other type changes,
  /// new required values without a default,
  /// merging two hierarchies.
  public static func inferred(from source: ObjectModel, to destination: ObjectModel) throws(MigrationError)
    -> MappingModel
  {
    var mappings: [EntityMapping] = []
    var matchedSources: Set<String> = []
    var destinationRootOfSourceRoot: [String: String] = [:]
    var sourceRootOfDestinationRoot: [String: String] = [:]

    for entity in destination.entities {
      guard let origin = try match(entity, in: source) else {
        mappings.append(
          EntityMapping(
            name: EntityMapping.name(source: nil, destination: entity.name), kind: .add, sourceEntity: nil,
            destinationEntity: entity.name))
        continue
      }
      matchedSources.insert(origin.name)
      // Two source hierarchies may not end up in one destination hierarchy (one table).
      let sourceRoot = source.root(of: origin).name
      let destinationRoot = destination.root(of: entity).name
      if let other = sourceRootOfDestinationRoot[destinationRoot], other != sourceRoot {
        throw MigrationError(
          .notInferable, entity: entity.name,
          reason:
            "merges the hierarchies of '\(other)' and '\(sourceRoot)' into one ('\(destinationRoot)'); write a mapping script"
        )
      }
      sourceRootOfDestinationRoot[destinationRoot] = sourceRoot
      destinationRootOfSourceRoot[sourceRoot] = destinationRoot
      guard !origin.isAbstract || !entity.isAbstract else { continue }
      mappings.append(try entityMapping(from: origin, to: entity, source: source, destination: destination))
    }
    for entity in source.entities where !matchedSources.contains(entity.name) && !entity.isAbstract {
      mappings.append(
        EntityMapping(
          name: EntityMapping.name(source: entity.name, destination: nil), kind: .remove, sourceEntity: entity.name,
          destinationEntity: nil))
    }
    return MappingModel(source: source, destination: destination, entityMappings: mappings)
  }

  /// The source property a destination property continues: the one named by its renaming identifier
  /// (or its own name), or the one with the same renaming identifier.
  package static func continued<P: Property>(_ property: some Property, in candidates: [P]) -> P? {
    candidates.first { candidate in
      !candidate.isTransient
        && (candidate.name == (property.renamingIdentifier ?? property.name)
          || candidate.canonicalName == property.canonicalName)
    }
  }

  /// The source entity a destination entity continues: same name, the name its renaming identifier
  /// gives, or the same renaming identifier.
  public static func match(_ entity: Entity, in source: ObjectModel) throws(MigrationError) -> Entity? {
    let candidates = source.entities.filter { candidate in
      candidate.name == (entity.renamingIdentifier ?? entity.name) || candidate.canonicalName == entity.canonicalName
    }
    guard candidates.count <= 1 else {
      throw MigrationError(
        .notInferable, entity: entity.name,
        reason:
          "continues several source entities (\(candidates.map(\.name).joined(separator: ", "))); write a mapping script"
      )
    }
    return candidates.first
  }

  /// The inferred mapping of one entity (its properties matched by name or renaming identifier).
  /// `requiredRelationshipsMayBeFilled`: a script may fill a new required relationship (through its
  /// inverse, say), so it is left to validation instead of refused.
  public static func entityMapping(
    from origin: Entity, to entity: Entity, source: ObjectModel, destination: ObjectModel,
    requiredRelationshipsMayBeFilled: Bool = false
  ) throws(MigrationError) -> EntityMapping {
    let sourceAttributes = source.attributes(of: origin).filter { !$0.isTransient }
    let sourceRelationships = source.relationships(of: origin).filter { !$0.isTransient }
    var attributes: [String: AttributeSource] = [:]
    var relationships: [String: String] = [:]
    var isCopy =
      origin.name == entity.name
      && sourceAttributes.count == destination.attributes(of: entity).filter({ !$0.isTransient }).count
      && sourceRelationships.count == destination.relationships(of: entity).filter({ !$0.isTransient }).count

    for attribute in destination.attributes(of: entity) where !attribute.isTransient {
      let old = continued(attribute, in: sourceAttributes)
      let source = try attributeSource(for: attribute, continuing: old, in: entity.name)
      if source != .property(attribute.name) { isCopy = false }
      attributes[attribute.name] = source
    }

    for relationship in destination.relationships(of: entity) where !relationship.isTransient {
      guard let old = continued(relationship, in: sourceRelationships) else {
        isCopy = false
        // A new non-optional to-one cannot be filled by inference. A new to-many starts empty, as
        // Core Data infers it: that is valid unless it is non-optional with a minimum count (see
        // ModelRules.problem). An optional one with a minimum (`optional="YES" minCount="1"`, as
        // Xcode often writes) may stay empty: the minimum applies only when it holds something.
        let mustHoldSomething =
          !relationship.isOptional && (!relationship.isToMany || relationship.minCount > 0)
        if !requiredRelationshipsMayBeFilled && mustHoldSomething {
          throw MigrationError(
            .notInferable, entity: entity.name, property: relationship.name,
            reason:
              "the new relationship '\(relationship.name)' is required and nothing can fill it; write a mapping script")
        }
        continue
      }
      if old.name != relationship.name || old.isToMany != relationship.isToMany
        || old.isOrdered != relationship.isOrdered
      {
        isCopy = false
      }
      relationships[relationship.name] = old.name
    }
    return EntityMapping(
      name: EntityMapping.name(source: origin.name, destination: entity.name), kind: isCopy ? .copy : .transform,
      sourceEntity: origin.name, destinationEntity: entity.name, attributes: attributes, relationships: relationships)
  }

  /// How a destination attribute gets its value when it continues `old` (nil: it is new), as Core
  /// Data infers it: copied; converted between numeric types; its default where a value may be NULL
  /// and no longer may; a new one its default. Refused (`notInferable`): a new required attribute
  /// without a default, a type change that is not numeric, a value becoming required without a
  /// default. The one rule for inferred steps and for a mapping file's attributes alike.
  ///
  /// `leavingNullToRules`: a mapping file's attribute it does not mention, which a hook may still
  /// set — a value that cannot be inferred is NULL (or the source's, made required) and the
  /// destination's rules judge it after the step, instead of a refusal before it.
  package static func attributeSource(
    for attribute: Attribute, continuing old: Attribute?, in entity: String, leavingNullToRules: Bool = false
  ) throws(MigrationError) -> AttributeSource {
    guard let old else {
      if attribute.derivation != nil || attribute.isOptional || attribute.defaultValue != .null || leavingNullToRules {
        return .constant(attribute.defaultValue)
      }
      throw MigrationError(
        .notInferable, entity: entity, property: attribute.name,
        reason: "is new and required without a default value; give it a default or write a mapping script")
    }
    let conversion = old.type == attribute.type ? nil : AttributeConversion(from: old.type, to: attribute.type)
    if old.type != attribute.type && conversion == nil {
      throw MigrationError(
        .notInferable, entity: entity, property: attribute.name,
        reason: "changes type from \(old.type.xmlName) to \(attribute.type.xmlName); write a mapping script")
    }
    let becomesRequired = old.isOptional && !attribute.isOptional && attribute.derivation == nil
    if becomesRequired && attribute.defaultValue == .null && !leavingNullToRules {
      throw MigrationError(
        .notInferable, entity: entity, property: attribute.name,
        reason:
          "becomes required without a default value for rows that hold NULL; give it a default or write a mapping script"
      )
    }
    if let conversion {
      return .converted(old.name, conversion, orDefault: becomesRequired ? attribute.defaultValue : .null)
    }
    return becomesRequired && attribute.defaultValue != .null
      ? .propertyOrDefault(old.name, attribute.defaultValue) : .property(old.name)
  }
}
