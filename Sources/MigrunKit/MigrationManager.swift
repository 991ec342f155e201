import Foundation
import MigrunModel
import MigrunStore

/// Runs one mapping model from a source store into a destination store, in Core Data's three
/// stages, and answers policies' questions: Core Data's `NSMigrationManager`.
///
/// 1. For each entity mapping, every source object (streamed) gets destination objects, associated
///    with it (``EntityMigrationPolicy/createDestinationInstances(for:_:_:)``).
/// 2. For each destination object, relationships are rebuilt through the associations.
/// 3. Model rules are validated (required values, relationship counts), then custom validation runs.
///
/// Validation is off while copying; each stage's writes are one transaction per entity mapping.
public final class MigrationManager {
  public let mapping: MappingModel
  package let source: any ObjectStore
  package let destination: any ObjectStore
  /// The entity mapping being run.
  public private(set) var currentMapping: EntityMapping?
  public var progress: ((MigrationProgress) -> Void)?

  let associations: AssociationTable
  let policies: [String: any EntityMigrationPolicy]
  /// Rules for destination objects that collide on a uniqueness constraint (first that has one for
  /// the entity or an ancestor wins). Without one, a collision fails the step.
  package var mergeRules: [any MigrationMergeRule] = []
  /// Collisions resolved by a merge rule so far.
  public private(set) var mergedCount = 0
  /// The source object stage 1 is working on (named when a collision fails the step).
  private var currentSource: ObjectID?
  private var writer: (any StoreWriter)?
  /// Destination entities whose objects keep their source primary keys (their hierarchy is fed by
  /// one source hierarchy), decided once before stage 1.
  private var keepsKeys: Set<String> = []
  /// In a mixed step, the entity mappings whose rows were copied before the object path runs
  /// (``BulkCopy``): every source object of their exact source entity has one destination object
  /// with its key, found by key instead of through the association table.
  var copiedMappings: [EntityMapping] = []
  /// Source hierarchy root → its largest key, for ``sources(of:mapping:)`` of copied objects.
  private var copiedKeyLimits: [String: Int64] = [:]
  /// The destination objects this manager inserted or found last: known to exist (the writer
  /// deletes none), so a link to one is not looked up again — a policy links what it has just
  /// made or found (find-or-create). A few, not every object: memory stays flat.
  private var recentDestinations = RecentIDs()
  /// Entity → relationship → the relationship's destination entity, for link checks.
  private var linkTargets: [String: [String: String]] = [:]
  /// Each destination entity's attribute names, for checking a policy's inserts.
  private var attributeNamesByEntity: [String: Set<String>] = [:]
  private let defaultPolicy = DefaultMigrationPolicy()

  /// `associationsFile`: where the association table lives (nil: in memory).
  package init(
    mapping: MappingModel, source: any ObjectStore, destination: any ObjectStore, associationsFile: URL? = nil,
    policies: [String: any EntityMigrationPolicy] = [:]
  ) throws {
    self.mapping = mapping
    self.source = source
    self.destination = destination
    self.policies = policies
    associations = try AssociationTable(at: associationsFile)
  }

  /// Runs the three stages — once per mapping model when the step runs several (`MappingPass`),
  /// each pass with its own associations. The destination holds the result when it returns.
  public func migrate() throws {
    defer { try? associations.close() }
    let runnable = { (entityMapping: EntityMapping) in
      entityMapping.kind != .remove && entityMapping.kind != .add && entityMapping.sourceEntity != nil
    }
    try prepareKeys(mapping.entityMappings.filter(runnable))
    let copied = Set(copiedMappings.map(\.name))
    for (index, pass) in mapping.entityMappingsByPass.enumerated() {
      if index > 0 { try associations.removeAll() }
      let active = pass.filter { runnable($0) && !copied.contains($0.name) }
      for entityMapping in active { try createInstances(entityMapping) }
      for entityMapping in active { try createRelationships(entityMapping) }
      // Look-up indexes made for scripts' finds go before the rules are checked: the store keeps
      // exactly the model's indexes.
      try (destination as? SQLiteStore)?.dropLookUpIndexes()
      try validate()
      for entityMapping in active {
        try run(entityMapping, stage: .validation) { policy in
          try policy.performCustomValidation(entityMapping, self)
          try policy.end(entityMapping, self)
        }
      }
    }
  }

  /// Stage 1 for one entity mapping: every source object handed to its policy.
  private func createInstances(_ entityMapping: EntityMapping) throws {
    try run(entityMapping, stage: .instances) { policy in
      try policy.begin(entityMapping, self)
      let total = try source.count(of: entityMapping.sourceEntity ?? "", includingSubentities: false)
      var done = 0
      // Stage 1 needs attributes and to-ones only: to-many members are not looked up per object (a
      // policy that reads one gets it on demand).
      try source.forEachObject(of: entityMapping.sourceEntity ?? "", includingSubentities: false, withToMany: false) {
        object in
        currentSource = object.id
        defer { currentSource = nil }
        do {
          try policy.createDestinationInstances(for: object, entityMapping, self)
        } catch {
          throw Self.located(error, mapping: entityMapping, object: object.id)
        }
        done += 1
        if done % 1000 == 0 || done == total { report(.instances, entityMapping, done, total) }
      }
      if total == 0 { report(.instances, entityMapping, 0, 0) }
      try policy.endInstanceCreation(entityMapping, self)
    }
  }

  /// Stage 2 for one entity mapping: every destination object it made, page by page.
  private func createRelationships(_ entityMapping: EntityMapping) throws {
    try run(entityMapping, stage: .relationships) { policy in
      var after: Int64 = 0
      var done = 0
      while true {
        let page = try associations.destinationsPage(mapping: entityMapping.name, after: after, limit: 500)
        for (row, id) in page {
          do {
            try policy.createRelationships(for: id, entityMapping, self)
          } catch {
            throw Self.located(error, mapping: entityMapping, object: id)
          }
          after = row
          done += 1
        }
        if page.count < 500 { break }
      }
      report(.relationships, entityMapping, done, done)
      try policy.endRelationshipCreation(entityMapping, self)
    }
  }

  // MARK: - For policies

  /// Inserts a destination object of `entity` with `attributes` (others NULL) and returns it.
  @discardableResult
  public func insert(_ entity: String, attributes: [String: StoreValue] = [:]) throws -> ObjectID {
    // A policy names attributes itself: check them (the default path takes them from the mapping).
    guard let found = mapping.destination.entity(named: entity) else {
      throw MigrationError(.badMapping, entity: entity, reason: "the destination model has no such entity")
    }
    let attributeNames = attributeNames(of: found)
    if let unknown = attributes.keys.filter({ !attributeNames.contains($0) }).sorted().first {
      throw MigrationError(
        .badMapping, entity: entity, property: unknown, reason: "the destination entity has no such attribute")
    }
    return try insert(entity, attributes: attributes, primaryKey: nil, version: 1)
  }

  /// `entity`'s destination attribute names (its own and inherited), made once per entity: a
  /// policy inserts per source object.
  private func attributeNames(of entity: Entity) -> Set<String> {
    if let known = attributeNamesByEntity[entity.name] { return known }
    let names = Set(mapping.destination.attributes(of: entity).map(\.name))
    attributeNamesByEntity[entity.name] = names
    return names
  }

  func insert(_ entity: String, attributes: [String: StoreValue], primaryKey: Int64?, version: Int64) throws -> ObjectID
  {
    let writer = try activeWriter()
    let id = ObjectID(entity: entity, primaryKey: try primaryKey ?? writer.newPrimaryKey(for: entity))
    do {
      try writer.insert(StoredObject(id: id, version: version, attributes: attributes))
    } catch let error as StoreError where error.code == .constraint {
      // The store's unique index caught it (no look-up per object): find whom it collided with.
      guard let existing = try collision(entity, attributes, writer) else { throw error }
      let survivor = try merge(entity, attributes, into: existing, writer)
      recentDestinations.add(survivor)
      return survivor
    }
    recentDestinations.add(id)
    return id
  }

  /// The destination object that already holds `attributes`' values on a uniqueness constraint.
  private func collision(_ entity: String, _ attributes: [String: StoreValue], _ writer: any StoreWriter) throws
    -> (id: ObjectID, constraint: [String])?
  {
    guard let found = mapping.destination.entity(named: entity) else { return nil }
    let attributeNames = attributeNames(of: found)
    for level in [found] + mapping.destination.ancestors(of: found) {
      for names in level.uniquenessConstraints where names.allSatisfy(attributeNames.contains) {
        let values = names.map { attributes[$0] ?? .null }
        guard !values.contains(.null) else { continue }
        let matching = Dictionary(uniqueKeysWithValues: zip(names, values))
        if let existing = try writer.firstObject(of: level.name, matching: matching) { return (existing, names) }
      }
    }
    return nil
  }

  /// Folds a new destination object into `existing` by the entity's merge rule; without a rule the
  /// step fails naming both source objects.
  private func merge(
    _ entity: String, _ attributes: [String: StoreValue], into existing: (id: ObjectID, constraint: [String]),
    _ writer: any StoreWriter
  ) throws -> ObjectID {
    let chain = mapping.destination.entity(named: entity).map { [$0] + mapping.destination.ancestors(of: $0) } ?? []
    let found = chain.lazy.compactMap { level in
      self.mergeRules.first { $0.handles(level.name) }.map { ($0, level.name) }
    }
    .first
    /// Both source objects, for messages.
    func pair() throws -> String {
      let earlier = try sources(of: existing.id).first ?? existing.id
      return "\(earlier) and \(currentSource?.description ?? "a new object")"
    }
    guard let (rule, level) = found else {
      let values = existing.constraint.map { "\($0) = \(attributes[$0] ?? .null)" }.joined(separator: ", ")
      throw MigrationError(
        .validation, entity: entity,
        reason:
          "\(try pair()) both become the \(entity) with \(values) "
          + "(uniqueness constraint (\(existing.constraint.joined(separator: ", ")))); give a merge rule for \(entity) "
          + "(the mapping file's `merge` table, or MigrationScripts.mergeRules)")
    }
    guard var survivor = try writer.object(existing.id) else { return existing.id }
    let incoming = StoredObject(id: ObjectID(entity: entity, primaryKey: 0), attributes: attributes)
    let merged: [String: StoreValue]
    do {
      merged = try rule.merge(entity: level, existing: survivor, incoming: incoming)
    } catch let error as MigrationError {
      throw error
    } catch {
      throw MigrationError(
        .policy, entity: entity, reason: "the merge rule for \(level) failed on \(try pair()): \(error)")
    }
    for (name, value) in merged { survivor.attributes[name] = value }
    try writer.update(survivor, bumpingVersion: false)
    mergedCount += 1
    return existing.id
  }

  /// Records that `destination` was made from `source`. Both must exist: the source object being
  /// migrated (or another the source store has), a destination object the step has written.
  public func associate(source: ObjectID, destination: ObjectID) throws {
    if source != currentSource, try self.source.object(source, withToMany: false) == nil {
      throw MigrationError(.badMapping, entity: source.entity, reason: "\(source) does not exist in the source store")
    }
    if let writer, !recentDestinations.contains(destination), try !writer.contains(destination) {
      throw MigrationError(
        .badMapping, entity: destination.entity, reason: "\(destination) does not exist in the destination store")
    }
    try associations.add(mapping: currentMapping?.name ?? "", source: source, destination: destination)
  }

  /// Destination objects made from `source` by the mapping named `mappingName` (any mapping when nil):
  /// Core Data's `destinationInstances(forEntityMappingName:sourceInstances:)`.
  public func destinations(of source: ObjectID, mapping mappingName: String? = nil) throws -> [ObjectID] {
    let associated = try associations.destinations(of: source, mapping: mappingName)
    guard !copiedMappings.isEmpty else { return associated }
    let copied = copiedMappings.compactMap { copy -> ObjectID? in
      guard copy.sourceEntity == source.entity, mappingName == nil || mappingName == copy.name,
        let entity = copy.destinationEntity
      else { return nil }
      return ObjectID(entity: entity, primaryKey: source.primaryKey)
    }
    return copied + associated
  }

  /// Source objects `destination` was made from: Core Data's `sourceInstances(forEntityMappingName:destinationInstances:)`.
  public func sources(of destination: ObjectID, mapping mappingName: String? = nil) throws -> [ObjectID] {
    let associated = try associations.sources(of: destination, mapping: mappingName)
    guard !copiedMappings.isEmpty else { return associated }
    var copied: [ObjectID] = []
    for copy in copiedMappings {
      guard copy.destinationEntity == destination.entity, mappingName == nil || mappingName == copy.name,
        let entity = copy.sourceEntity, let sourceEntity = mapping.source.entity(named: entity)
      else { continue }
      // Objects a script inserted into a copied entity have keys above every copied one.
      let root = mapping.source.root(of: sourceEntity).name
      let limit: Int64
      if let known = copiedKeyLimits[root] {
        limit = known
      } else {
        limit = try source.maxPrimaryKey(inHierarchyOf: root)
        copiedKeyLimits[root] = limit
      }
      if destination.primaryKey <= limit { copied.append(ObjectID(entity: entity, primaryKey: destination.primaryKey)) }
    }
    // Several source entities copied into one destination entity: the key is only one of theirs.
    if copied.count > 1 { copied = try copied.filter { try source.object($0) != nil } }
    return copied + associated
  }

  public func sourceObject(_ id: ObjectID) throws -> StoredObject? { try source.object(id) }

  /// The source object, without its to-many members unless `withToMany` (attributes and to-ones).
  public func sourceObject(_ id: ObjectID, withToMany: Bool) throws -> StoredObject? {
    try source.object(id, withToMany: withToMany)
  }

  /// A destination object (inside a stage, as written so far).
  public func destinationObject(_ id: ObjectID) throws -> StoredObject? {
    // Inside a stage the writer's transaction is the store: an object it does not find does not
    // exist (reading the store beside it would be a nested access of the same connection).
    if let writer { return try writer.object(id) }
    return try destination.object(id)
  }

  /// The first destination object of `entity` whose attributes equal `values`, for find-or-create.
  public func find(_ entity: String, _ values: [String: StoreValue]) throws -> ObjectID? {
    let found = try activeWriter().firstObject(of: entity, matching: values)
    if let found { recentDestinations.add(found) }
    return found
  }

  /// Writes a destination object's attributes and to-one relationships.
  public func update(_ object: StoredObject) throws {
    try activeWriter().update(object, bumpingVersion: false)
  }

  public func setToOne(_ id: ObjectID, _ relationship: String, _ target: ObjectID?) throws {
    let writer = try activeWriter()
    if let target { try checkLink(to: target, of: id, relationship, writer) }
    try writer.setToOne(id, relationship, target)
  }

  public func setToMany(_ id: ObjectID, _ relationship: String, _ members: [ObjectID]) throws {
    let writer = try activeWriter()
    for member in members { try checkLink(to: member, of: id, relationship, writer) }
    try writer.setToMany(id, relationship, members)
  }

  /// A link a policy writes names a destination object of the relationship's entity (or a
  /// subentity) that exists: a made-up key, or an object of another entity, is an error naming the
  /// link — never a key naming nothing, or the wrong object, in the migrated store.
  private func checkLink(to target: ObjectID, of id: ObjectID, _ name: String, _ writer: any StoreWriter) throws {
    guard let destination = linkTarget(of: id.entity, name) else { return }  // the writer names what it does not know
    let model = mapping.destination
    guard target.entity == destination || model.entity(named: target.entity, isKindOf: destination) else {
      throw MigrationError(
        .badMapping, entity: id.entity, property: name,
        reason: "\(id.entity).\(name) links \(destination) objects; \(target) is not one")
    }
    guard try recentDestinations.contains(target) || writer.contains(target) else {
      throw MigrationError(
        .badMapping, entity: id.entity, property: name,
        reason: "\(id.entity).\(name): \(target) does not exist in the destination store")
    }
  }

  /// The destination entity of relationship `name` of `entity` (inherited ones too), looked up once.
  private func linkTarget(of entity: String, _ name: String) -> String? {
    if let known = linkTargets[entity]?[name] { return known }
    let model = mapping.destination
    guard let described = model.entity(named: entity),
      let relationship = model.relationships(of: described).first(where: { $0.name == name })
    else { return nil }
    linkTargets[entity, default: [:]][name] = relationship.destinationEntity
    return relationship.destinationEntity
  }

  /// The default of stage 1: one destination object, attributes from the mapping's sources, associated.
  @discardableResult
  public func createDefaultDestination(
    for object: StoredObject, _ entityMapping: EntityMapping, overriding overrides: [String: StoreValue] = [:]
  ) throws -> ObjectID? {
    guard let entity = entityMapping.destinationEntity else { return nil }
    var values: [String: StoreValue] = [:]
    for (name, attributeSource) in entityMapping.attributes {
      do {
        values[name] = try attributeSource.value(from: object.attributes)
      } catch {
        throw MigrationError(
          .validation, entity: entity, property: name,
          reason: "\(object.id): '\(attributeSource.sourceAttribute ?? name)' \(error.reason) (\(attributeSource))")
      }
    }
    values.merge(overrides) { _, override in override }
    let key = keepsKeys.contains(entity) ? object.id.primaryKey : nil
    let created = try insert(entity, attributes: values, primaryKey: key, version: key == nil ? 1 : object.version)
    // Both exist by construction: recorded without the checks a policy's association gets.
    try associations.add(mapping: currentMapping?.name ?? "", source: object.id, destination: created)
    return created
  }

  /// The default of stage 2: each mapped relationship gets the destinations of the source's targets.
  public func createDefaultRelationships(
    for id: ObjectID, _ entityMapping: EntityMapping, skipping skipped: Set<String> = []
  ) throws {
    // What this object needs written: not what a hook set, not a to-many its inverse's column holds.
    let whole = relationshipPlan(of: entityMapping, for: id.entity)
    let plan = skipped.isEmpty ? whole : whole.filter { !skipped.contains($0.relationship.name) }
    guard !plan.isEmpty else { return }
    // Only the source relationships read: to-many members are looked up when one is.
    let readsToMany = plan.contains(where: \.readsToMany)
    // Usually one source; several when a merge rule folded objects together: to-one targets come
    // from the first source that has one, to-many members are the union of all.
    let objects = try sources(of: id, mapping: entityMapping.name).compactMap {
      try source.relationships(of: $0, withToMany: readsToMany)
    }
    guard !objects.isEmpty else { return }
    for step in plan {
      var mapped: [ObjectID] = []
      for sourceObject in objects {
        let targets = sourceObject.toMany[step.source] ?? sourceObject.toOne[step.source].map { [$0] } ?? []
        for target in targets {
          for candidate in try destinations(of: target)
          where mapping.destination.entity(named: candidate.entity, isKindOf: step.relationship.destinationEntity) {
            if !mapped.contains(candidate) { mapped.append(candidate) }
          }
        }
        if !step.relationship.isToMany && !mapped.isEmpty { break }
      }
      // Targets found through the associations, of the relationship's kind: written as they are
      // (what a policy links is checked, ``setToOne(_:_:_:)``).
      let writer = try activeWriter()
      if step.relationship.isToMany {
        try writer.setToMany(id, step.relationship.name, mapped)
      } else {
        try writer.setToOne(id, step.relationship.name, mapped.first)
      }
    }
  }

  // MARK: - Non public

  /// One relationship stage 2's default fills, and from which source relationship.
  private struct RelationshipStep {
    let relationship: Relationship
    let source: String
    /// Whether the source relationship is to-many (or unknown): its members must be read.
    let readsToMany: Bool
  }

  private struct RelationshipPlanKey: Hashable {
    let mapping: String
    let entity: String
  }

  /// Per entity mapping and destination entity: worked out once, used for every object.
  private var relationshipPlans: [RelationshipPlanKey: [RelationshipStep]] = [:]

  /// What stage 2's default writes for objects of `entityName` made by `entityMapping`: every mapped
  /// relationship but the to-manys the inverse's column holds (written from the other side, see
  /// ``isSetFromInverse(_:)``).
  private func relationshipPlan(of entityMapping: EntityMapping, for entityName: String) -> [RelationshipStep] {
    let key = RelationshipPlanKey(mapping: entityMapping.name, entity: entityName)
    if let plan = relationshipPlans[key] { return plan }
    var plan: [RelationshipStep] = []
    if let entity = mapping.destination.entity(named: entityName) {
      let relationships = mapping.destination.relationships(of: entity)
      let sourceRelationships = entityMapping.sourceEntity.flatMap(mapping.source.entity(named:)).map {
        mapping.source.relationships(of: $0)
      }
      for (name, from) in entityMapping.relationships.sorted(by: { $0.key < $1.key }) {
        guard let relationship = relationships.first(where: { $0.name == name }),
          !(relationship.isToMany && isSetFromInverse(relationship))
        else { continue }
        plan.append(
          RelationshipStep(
            relationship: relationship, source: from,
            readsToMany: sourceRelationships?.first { $0.name == from }?.isToMany ?? true))
      }
    }
    relationshipPlans[key] = plan
    return plan
  }

  /// An unordered to-many whose inverse is to-one lives in the inverse's column: it is written when
  /// the mapping of the inverse's entity sets the to-one side, so it is not written twice.
  private func isSetFromInverse(_ relationship: Relationship) -> Bool {
    guard !relationship.isOrdered, let inverse = mapping.destination.inverse(of: relationship), !inverse.isToMany else {
      return false
    }
    return mapping.entityMappings.contains { other in
      guard let name = other.destinationEntity, let entity = mapping.destination.entity(named: name) else {
        return false
      }
      return mapping.destination.entity(entity, isKindOf: relationship.destinationEntity)
        && other.relationships[inverse.name] != nil
    }
  }

  func activeWriter() throws -> any StoreWriter {
    guard let writer else {
      throw MigrationError(.badMapping, reason: "destination objects can only be written inside a migration stage")
    }
    return writer
  }

  private func run(
    _ entityMapping: EntityMapping, stage: MigrationProgress.Stage, _ body: (any EntityMigrationPolicy) throws -> Void
  )
    throws
  {
    currentMapping = entityMapping
    defer {
      currentMapping = nil
      writer = nil
    }
    let policy = policies[entityMapping.name] ?? defaultPolicy
    try destination.write { writer in
      self.writer = writer
      try body(policy)
    }
  }

  private func report(_ stage: MigrationProgress.Stage, _ entityMapping: EntityMapping, _ done: Int, _ total: Int) {
    progress?(MigrationProgress(stage: stage, mapping: entityMapping.name, done: done, total: total))
  }

  /// Keys are kept where one source hierarchy feeds a destination hierarchy; other keys start above them.
  private func prepareKeys(_ active: [EntityMapping]) throws {
    var feeders: [String: Set<String>] = [:]
    for entityMapping in active {
      guard let from = entityMapping.sourceEntity.flatMap(mapping.source.entity(named:)),
        let to = entityMapping.destinationEntity.flatMap(mapping.destination.entity(named:))
      else { continue }
      feeders[mapping.destination.root(of: to).name, default: []].insert(mapping.source.root(of: from).name)
    }
    let keepingRoots = Set(feeders.filter { $0.value.count == 1 }.keys)
    keepsKeys = Set(
      mapping.destination.entities.filter { keepingRoots.contains(mapping.destination.root(of: $0).name) }.map(\.name))
    try destination.write { writer in
      for (root, sources) in feeders {
        for sourceRoot in sources {
          try writer.reservePrimaryKeys(for: root, through: try source.maxPrimaryKey(inHierarchyOf: sourceRoot))
        }
      }
    }
  }

  /// Stage 3: the model's rules on every destination object (also after a bulk copy).
  func validate() throws {
    try Self.checkRules(of: destination)
    report(
      .validation, EntityMapping(name: "model rules", kind: .copy, sourceEntity: nil, destinationEntity: nil), 1, 1)
  }

  /// Fails with up to 20 objects that break `store`'s model rules, one per line.
  static func checkRules(of store: any ObjectStore) throws {
    let limit = 20
    let problems = try store.ruleViolations(limit: limit)
    guard problems.isEmpty else {
      throw MigrationError(
        .validation,
        reason:
          "\(problems.count == limit ? "\(limit)+" : String(problems.count)) objects break the destination model's rules:\n  "
          + problems.joined(separator: "\n  "))
    }
  }

  /// The error, naming the entity mapping and the object it happened on.
  static func located(_ error: any Error, mapping: EntityMapping, object: ObjectID) -> any Error {
    if let migration = error as? MigrationError {
      guard [.policy, .scriptLimit].contains(migration.code), !migration.reason.contains("object \(object)") else {
        return migration
      }
      return MigrationError(
        migration.code, step: migration.step, entity: migration.entity, property: migration.property,
        reason: "\(migration.reason) (object \(object))", underlying: migration.underlyingError)
    }
    return MigrationError(
      .ofPolicy(error), entity: object.entity, reason: "mapping \(mapping.name), object \(object): \(error)",
      underlying: error)
  }
}

/// Where a migration is: stage, entity mapping, objects done of total.
public struct MigrationProgress: Sendable, Hashable {
  package enum Stage: String, Sendable, Hashable {
    case instances, relationships, validation
  }

  public var step: String?
  package var stage: Stage
  public var mapping: String
  public var done: Int
  public var total: Int
}

/// The last few object IDs seen, newest replacing oldest: a membership test without a set that grows.
struct RecentIDs {
  private var ids: [ObjectID] = []
  private var next = 0
  static let capacity = 32

  mutating func add(_ id: ObjectID) {
    if ids.count < Self.capacity {
      ids.append(id)
    } else {
      ids[next] = id
      next = (next + 1) % Self.capacity
    }
  }

  func contains(_ id: ObjectID) -> Bool { ids.contains(id) }
}
