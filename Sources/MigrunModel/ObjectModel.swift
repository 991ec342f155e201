import Foundation

/// A managed object model: a validated set of entities, Core Data's `NSManagedObjectModel`.
///
/// A model is checked when it is made — every parent, destination and inverse exists, inheritance
/// has no cycle, no entity declares a property twice — so code that holds an `ObjectModel` can rely
/// on its references. Its version hashes (``entityVersionHashes``) are computed once, at that point.
///
/// ```swift
/// let bundle = try ModelBundle(contentsOf: URL(fileURLWithPath: "Moody.xcdatamodeld"))
/// let model = try bundle.model(named: "Moody 2")
/// model.entityVersionHashes["Mood"]?.base64   // as Core Data stores it
/// ```
public struct ObjectModel: Sendable, Hashable {
  /// The version's name within its `.xcdatamodeld` (e.g. `Moody 2`), when it has one.
  public let versionName: String?
  /// Xcode's "Model Version Identifier": hints for people, never used for compatibility.
  public let versionIdentifiers: [String]
  /// Every entity, sorted by name in UTF-16 code-unit order (Core Data's order).
  public let entities: [Entity]
  /// Configuration name → names of the entities in it.
  public let configurations: [String: [String]]
  /// Fetch request templates, kept as written.
  package let fetchRequests: [FetchRequestTemplate]
  /// Entity name → its version hash. For a configuration's model (``restricted(toConfiguration:)``),
  /// the whole model's: Core Data records the coordinator's model in every store's metadata.
  public private(set) var entityVersionHashes: [String: VersionHash]
  /// For a configuration's model, the whole model it was cut from and the configuration's name.
  package private(set) var wholeModel: WholeModel?

  private let positions: [String: Int]
  /// Each entity's attributes and relationships with the inherited ones, by position: resolved once,
  /// as they are asked for per object during a migration. Attributes as the store keeps them
  /// (composites as their elements, ``Attribute/leaves``) and as the model declares them.
  private var resolvedAttributes: [[Attribute]] = []
  private var resolvedDeclaredAttributes: [[Attribute]] = []
  private var resolvedRelationships: [[Relationship]] = []

  /// Makes a model from entities, refusing one that Core Data could not load.
  package init(
    entities: [Entity], versionName: String? = nil, versionIdentifiers: [String] = [],
    configurations: [String: [String]] = [:], fetchRequests: [FetchRequestTemplate] = []
  ) throws(ModelError) {
    let sorted = entities.sorted { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }
    var positions: [String: Int] = [:]
    for (position, entity) in sorted.enumerated() {
      guard positions.updateValue(position, forKey: entity.name) == nil else {
        throw ModelError(.duplicateEntity, entity: entity.name, reason: "the model declares this entity twice")
      }
    }
    self.versionName = versionName
    self.versionIdentifiers = versionIdentifiers
    self.entities = sorted
    self.configurations = configurations
    self.fetchRequests = fetchRequests
    self.positions = positions
    self.entityVersionHashes = [:]
    try validate()
    resolvedDeclaredAttributes = sorted.map { resolved($0, \.attributes) }
    resolvedAttributes = resolvedDeclaredAttributes.map { $0.flatMap(\.leaves) }
    resolvedRelationships = sorted.map { resolved($0, \.relationships) }
    entityVersionHashes = VersionHasher(model: self).entityHashes()
  }

  /// The same model under another version name.
  public func named(_ versionName: String) throws(ModelError) -> ObjectModel {
    if let wholeModel {
      return try wholeModel.model.named(versionName).restricted(toConfiguration: wholeModel.configuration)
    }
    return try ObjectModel(
      entities: entities, versionName: versionName, versionIdentifiers: versionIdentifiers,
      configurations: configurations, fetchRequests: fetchRequests)
  }

  /// The model of a store written for configuration `name`, as Core Data's `NSSQLModel` lays one
  /// out (public decompilation of `_generateModel:`): it numbers every entity of the whole model
  /// (`Z_ENT`, and the names built from the numbers — join tables, hidden to-ones), then keeps the
  /// configuration's entities; the store's metadata records the whole model's hashes (the
  /// coordinator's model, `NSPersistentStore`'s metadata) and its model cache the whole model. So
  /// this model has the configuration's entities (the store's tables), the whole model's numbering,
  /// hashes and cache (`wholeModel`). Today's `NSSQLModel` logs that it ignores a configuration
  /// name — its stores have every table and are read as whole-model stores; this model reads the
  /// stores earlier releases wrote with one configuration's tables. A model without that
  /// configuration is returned whole (a version from before the model was split). An entity of the
  /// configuration whose parent or relationship leads outside it is an error naming it: such a store
  /// could not hold its objects.
  public func restricted(toConfiguration name: String) throws(ModelError) -> ObjectModel {
    if let wholeModel {
      return wholeModel.configuration == name ? self : try wholeModel.model.restricted(toConfiguration: name)
    }
    guard let members = configurations[name] else { return self }
    let kept = Set(members)
    for entity in entities where kept.contains(entity.name) {
      if let parent = entity.parentName, !kept.contains(parent) {
        throw ModelError(
          .unknownConfiguration, entity: entity.name,
          reason: "configuration '\(name)' holds \(entity.name) but not its parent \(parent)")
      }
      for relationship in entity.relationships where !kept.contains(relationship.destinationEntity) {
        throw ModelError(
          .unknownConfiguration, entity: entity.name,
          reason:
            "configuration '\(name)': relationship '\(relationship.name)' leads to \(relationship.destinationEntity), which the configuration does not hold"
        )
      }
    }
    var restricted = try ObjectModel(
      entities: entities.filter { kept.contains($0.name) }, versionName: versionName,
      versionIdentifiers: versionIdentifiers,
      configurations: configurations.mapValues { $0.filter(kept.contains) }.filter { !$0.value.isEmpty },
      fetchRequests: fetchRequests.filter { kept.contains($0.entity) })
    restricted.entityVersionHashes = entityVersionHashes
    restricted.wholeModel = WholeModel(model: self, configuration: name)
    return restricted
  }

  /// The entity with that name.
  public func entity(named name: String) -> Entity? {
    positions[name].map { entities[$0] }
  }

  /// The entity's ancestors, nearest first.
  public func ancestors(of entity: Entity) -> [Entity] {
    var chain: [Entity] = []
    var next = entity.parentName.flatMap(self.entity(named:))
    while let current = next {
      chain.append(current)
      next = current.parentName.flatMap(self.entity(named:))
    }
    return chain
  }

  /// The root of the entity's inheritance hierarchy (the entity itself when it has no parent).
  public func root(of entity: Entity) -> Entity {
    ancestors(of: entity).last ?? entity
  }

  /// The entities whose parent is `entity`, sorted by name.
  public func subentities(of entity: Entity) -> [Entity] {
    entities.filter { $0.parentName == entity.name }
  }

  /// Whether `entity` is `ancestor` or inherits from it.
  public func entity(_ entity: Entity, isKindOf ancestor: String) -> Bool {
    entity.name == ancestor || ancestors(of: entity).contains { $0.name == ancestor }
  }

  /// Whether the entity named `name` is `ancestor` or inherits from it (false for a name the model
  /// lacks). Equal names answer without looking the entity up.
  public func entity(named name: String, isKindOf ancestor: String) -> Bool {
    name == ancestor || entity(named: name).map { entity($0, isKindOf: ancestor) } == true
  }

  /// Every attribute of the entity as a store keeps it, inherited ones first; a redeclared property
  /// replaces the inherited one. A composite attribute is there as its elements (``Attribute/leaves``:
  /// `author.person`, `author.place`…), so that whatever reads, writes, maps or counts values carries
  /// every element; ``declaredAttributes(of:)`` has the composites themselves.
  public func attributes(of entity: Entity) -> [Attribute] {
    guard let position = positions[entity.name], position < resolvedAttributes.count else {
      return resolved(entity, \.attributes).flatMap(\.leaves)
    }
    return resolvedAttributes[position]
  }

  /// Every attribute of the entity as the model declares it (a composite as one attribute with its
  /// elements), inherited ones first: what version hashes, archives and model files are made of.
  public func declaredAttributes(of entity: Entity) -> [Attribute] {
    guard let position = positions[entity.name], position < resolvedDeclaredAttributes.count else {
      return resolved(entity, \.attributes)
    }
    return resolvedDeclaredAttributes[position]
  }

  /// Every relationship of the entity, inherited ones first; a redeclared one replaces the inherited one.
  public func relationships(of entity: Entity) -> [Relationship] {
    guard let position = positions[entity.name], position < resolvedRelationships.count else {
      return resolved(entity, \.relationships)
    }
    return resolvedRelationships[position]
  }

  /// The attribute or relationship named `name` that `entity` has, declared or inherited.
  package func property(named name: String, of entity: Entity) -> (any Property)? {
    if let own = entity.declaredProperty(named: name) { return own }
    for ancestor in ancestors(of: entity) {
      if let inherited = ancestor.declaredProperty(named: name) { return inherited }
    }
    return nil
  }

  /// The entity that declares the relationship `name` that `entity` has (itself or the nearest ancestor).
  public func declaringEntity(ofRelationship name: String, in entity: Entity) -> Entity? {
    ([entity] + ancestors(of: entity)).first { own in own.relationships.contains { $0.name == name } }
  }

  /// The inverse of `relationship` (declared on its destination or one of the destination's ancestors).
  public func inverse(of relationship: Relationship) -> Relationship? {
    guard let inverseName = relationship.inverseName,
      let destination = entity(named: relationship.destinationEntity)
    else { return nil }
    return relationships(of: destination).first { $0.name == inverseName }
  }

  /// Core Data's `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over each entity's name and
  /// version hash, entities in name order.
  public var versionHashesDigest: String { VersionHasher.digest(of: entityVersionHashes) }

  /// Core Data's `NSStoreModelVersionChecksumKey`: base64 of SHA-256 over the entity version hashes
  /// in name order.
  public var versionChecksum: String { VersionHasher.checksum(of: entityVersionHashes) }

  // MARK: - Non public

  private func resolved<P: Property>(_ entity: Entity, _ declared: KeyPath<Entity, [P]>) -> [P] {
    var result: [P] = []
    for level in ([entity] + ancestors(of: entity)).reversed() {
      for property in level[keyPath: declared] {
        if let existing = result.firstIndex(where: { $0.name == property.name }) {
          result[existing] = property
        } else {
          result.append(property)
        }
      }
    }
    return result
  }

  private func validate() throws(ModelError) {
    for entity in entities {
      try Self.requireStorableName(entity.name, entity: entity.name, property: nil)
      for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
        try Self.requireStorableName(name, entity: entity.name, property: name)
      }
    }
    for entity in entities {
      try validateInheritance(of: entity)
    }
    for entity in entities {
      try validateProperties(of: entity)
    }
  }

  /// A name Core Data's SQL store can hold the way it writes one (`Z` + the name, unquoted, in its
  /// tables and columns): letters, digits and `_` — what Xcode's model editor accepts (letters of
  /// any script). Anything else (`a b`, `x"y`, `<script>`) would be SQL of its own: refused by name
  /// when the model is read, not met as a syntax error when a store is made.
  private static func requireStorableName(_ name: String, entity: String, property: String?) throws(ModelError) {
    let storable =
      !name.isEmpty
      && name.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || $0.properties.numericType != nil }
    guard !storable else { return }
    throw ModelError(
      .invalidName, entity: entity, property: property,
      reason: "\(property == nil ? "entity" : "property") name '\(name)' holds characters other than letters, digits "
        + "and '_': Core Data's store could not hold it (Xcode refuses such a name)")
  }

  private func validateInheritance(of entity: Entity) throws(ModelError) {
    var chain = [entity.name]
    var current = entity
    while let parentName = current.parentName {
      guard let parent = self.entity(named: parentName) else {
        throw ModelError(
          .missingParentEntity, entity: current.name, reason: "parent entity '\(parentName)' does not exist")
      }
      guard !chain.contains(parentName) else {
        let cycle = (chain + [parentName]).joined(separator: " → ")
        throw ModelError(.inheritanceCycle, entity: entity.name, reason: "inheritance cycle: \(cycle)")
      }
      chain.append(parentName)
      current = parent
    }
  }

  private func validateProperties(of entity: Entity) throws(ModelError) {
    var names: Set<String> = []
    let declared =
      entity.attributes.map(\.name) + entity.relationships.map(\.name) + entity.fetchedProperties.map(\.name)
    for name in declared where !names.insert(name).inserted {
      throw ModelError(
        .duplicateProperty, entity: entity.name, property: name, reason: "the entity declares this property twice")
    }
    for relationship in entity.relationships {
      try validate(relationship, of: entity)
    }
    for constraint in entity.uniquenessConstraints {
      for name in constraint where property(named: name, of: entity) == nil {
        throw ModelError(
          .unknownConstraintProperty, entity: entity.name, property: name,
          reason: "uniqueness constraint names a property the entity does not have")
      }
    }
  }

  private func validate(_ relationship: Relationship, of entity: Entity) throws(ModelError) {
    guard let destination = self.entity(named: relationship.destinationEntity) else {
      throw ModelError(
        .missingDestinationEntity, entity: entity.name, property: relationship.name,
        reason: "destination entity '\(relationship.destinationEntity)' does not exist")
    }
    guard let inverseName = relationship.inverseName else { return }
    if let inverseEntity = relationship.inverseEntity, self.entity(named: inverseEntity) == nil {
      throw ModelError(
        .missingDestinationEntity, entity: entity.name, property: relationship.name,
        reason: "inverse entity '\(inverseEntity)' does not exist")
    }
    guard relationships(of: destination).contains(where: { $0.name == inverseName }) else {
      throw ModelError(
        .missingInverseRelationship, entity: entity.name, property: relationship.name,
        reason: "inverse relationship '\(inverseName)' does not exist on '\(destination.name)'")
    }
  }
}

/// A fetch request template stored in a model (`<fetchRequest>`), kept as written.
package struct FetchRequestTemplate: Sendable, Hashable {
  package var name: String
  package var entity: String
  package var predicate: String?

  package init(name: String, entity: String, predicate: String? = nil) {
    self.name = name
    self.entity = entity
    self.predicate = predicate
  }
}

/// The whole model a configuration's model was cut from (``ObjectModel/restricted(toConfiguration:)``).
package final class WholeModel: Sendable, Hashable {
  package let model: ObjectModel
  package let configuration: String

  init(model: ObjectModel, configuration: String) {
    self.model = model
    self.configuration = configuration
  }

  package static func == (lhs: WholeModel, rhs: WholeModel) -> Bool {
    lhs.configuration == rhs.configuration && lhs.model == rhs.model
  }

  package func hash(into hasher: inout Hasher) {
    hasher.combine(configuration)
    hasher.combine(model)
  }
}
