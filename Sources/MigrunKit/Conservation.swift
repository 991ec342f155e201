import MigrunModel
import MigrunStore

/// What a step read and wrote, entity mapping by entity mapping, and the check that nothing was
/// lost: a mapping that makes one object per source object (no policy of its own, no merge) must
/// write as many objects as it read — the source objects as Core Data fetches them
/// (``StoreSchema/rowPredicate(_:includingSubentities:alias:)``) — and keep every relationship it
/// copies, edge for edge (to-one targets, to-many members). Whichever way the step ran (DDL, rows
/// copied, a row loop, object by object, mixed), the same counts are taken on the two files; a
/// difference fails the step naming the mapping and both numbers, before the original is touched.
/// Mappings with a policy may make more or fewer objects on purpose (a filter, a hook that skips,
/// merged duplicates): their counts are reported, not held equal.
package struct MappingCount: Sendable, Hashable {
  package let mapping: String
  package let read: Int
  package let written: Int
  /// Why the two may differ, or nil when they must be equal (and are).
  package let note: String?
  /// Relationship → (edges read, edges written), for the relationships the mapping copies.
  package let edges: [String: [Int]]
}

enum Conservation {
  /// The source side: per entity mapping, the objects and relationship edges it reads.
  struct Before {
    var objects: [String: Int] = [:]
    var edges: [String: [String: Int]] = [:]
    /// One-to-one links whose other side does not name them back, by "Entity.relationship": damage
    /// the original already has, carried (a step may not add to it).
    var disagreeing: [String: Int] = [:]
    /// Links naming no object (a to-one key, a join row), by "Entity.relationship": damage carried.
    var dangling: [String: Int] = [:]
    /// Per entity mapping and relationship: every link held, to an object or not (what a step that
    /// edits tables in place must still hold, key for key).
    var rawEdges: [String: [String: Int]] = [:]
    /// Where the source's own cached model, its model here, disagrees with its metadata.
    var cacheDisagreement: [EntityDifference] = []
  }

  /// The damage the step's source had and what the step wrote of it: links naming no object (to-one
  /// keys, join rows), under the destination's names through the mapping. `carriedFiles`: references
  /// to external-data files the original never had, as the step wrote them.
  static func damage(
    _ mapping: MappingModel, before: Before, destination: SQLiteStore,
    carriedFiles: [(object: ObjectID, attribute: String, file: String)], inPlace: Bool = false
  ) throws -> [CarriedDamage] {
    var found: [CarriedDamage] = []
    for (place, read) in before.dangling.sorted(by: { $0.key < $1.key }) {
      let (entity, relationship) = split(place)
      let target = destinationPlaces(of: place, in: mapping).first
      // In place (DDL), the kept columns hold what they held (checked key for key): the same.
      var written = 0
      if let target {
        written =
          inPlace
          ? read
          : try destination.edgeCount(of: target.entity, target.relationship, toExistingObjects: false)
            - destination.edgeCount(of: target.entity, target.relationship)
      }
      found.append(
        CarriedDamage(kind: .linkToNoObject, entity: entity, property: relationship, read: read, written: written))
    }
    found += before.cacheDisagreement.map {
      CarriedDamage(kind: .cacheDisagreesWithMetadata, entity: $0.entity, property: $0.description, read: 1, written: 0)
    }
    var files: [String: Int] = [:]
    for reference in carriedFiles { files["\(reference.object.entity).\(reference.attribute)", default: 0] += 1 }
    for (place, count) in files.sorted(by: { $0.key < $1.key }) {
      found.append(
        CarriedDamage(
          kind: .externalFileMissing, entity: String(place.prefix { $0 != "." }),
          property: String(place.drop { $0 != "." }.dropFirst()), read: count, written: count))
    }
    return found
  }

  /// "Entity.relationship" as its two names.
  static func split(_ place: String) -> (entity: String, relationship: String) {
    (String(place.prefix { $0 != "." }), String(place.drop { $0 != "." }.dropFirst()))
  }

  /// Where a source place ("Entity.relationship") continues in the destination, entity mapping by
  /// entity mapping.
  static func destinationPlaces(of place: String, in mapping: MappingModel) -> [(entity: String, relationship: String)]
  {
    let (entity, relationship) = split(place)
    return mapping.entityMappings.filter { $0.sourceEntity == entity }.flatMap { entityMapping in
      guard let target = entityMapping.destinationEntity else { return [(entity: String, relationship: String)]() }
      return entityMapping.relationships.filter { $0.value == relationship }.map { (target, $0.key) }
    }
  }

  /// `policies`: entity mappings with a policy of their own — their links are not held equal, so
  /// they are not counted (their objects are, for the report).
  /// Each count is read once: an edge is often the same query from both of its ends.
  static func before(_ mapping: MappingModel, source: SQLiteStore, policies: Set<String> = []) throws -> Before {
    try source.rememberingCounts { try counting(mapping, source: source, policies: policies) }
  }

  private static func counting(_ mapping: MappingModel, source: SQLiteStore, policies: Set<String>) throws -> Before {
    var taken = Before()
    taken.disagreeing = try source.oneToOneDisagreements()
    taken.cacheDisagreement = source.cacheDisagreement
    // Links to objects the mapping removes go with them, on purpose: they are not counted.
    let carried = Set(mapping.entityMappings.filter { $0.destinationEntity != nil }.compactMap(\.sourceEntity))
    let removed = source.schema.entities.filter { layout in
      !carried.contains(layout.name) && source.model.entity(named: layout.name).map { !$0.isAbstract } ?? false
    }
    for entityMapping in mapping.entityMappings {
      guard let entity = entityMapping.sourceEntity, source.schema.layout(of: entity) != nil,
        source.model.entity(named: entity).map({ !$0.isAbstract }) ?? false
      else { continue }
      taken.objects[entityMapping.name] = try source.count(of: entity, includingSubentities: false)
      guard !policies.contains(entityMapping.name), entityMapping.kind != .custom else { continue }
      for old in entityMapping.relationships.values {
        let held = try source.edgeCount(of: entity, old, excludingTargets: removed, toExistingObjects: false)
        // A to-many kept in its inverse's column counts rows that exist: what it holds is linked.
        var linked = held
        switch source.schema.layout(of: entity)?.properties[old] {
        case .toOne?, .manyToMany?:
          if held > 0 { linked = try source.edgeCount(of: entity, old, excludingTargets: removed) }
        default: break
        }
        taken.edges[entityMapping.name, default: [:]][old] = linked
        taken.rawEdges[entityMapping.name, default: [:]][old] = held
        if held > linked { taken.dangling["\(entity).\(old)"] = held - linked }
      }
    }
    return taken
  }

  /// The counts after the step, checked. `policies`: entity mappings with a policy of their own.
  /// Mappings that write one destination entity together are held equal together: the sum of what
  /// they read against what the entity holds, objects and links alike.
  /// `inPlace`: the step edited the store's own tables in place (DDL) — rows are counted again (a
  /// rewritten table must still hold them), but the relationship columns and join tables it kept
  /// hold the values they held (no statement of the edit writes one: columns and tables are only
  /// renamed, added or dropped with the relationships the mapping drops), so their links, dangling
  /// keys and one-to-one pairs are what the source had, and are not counted a second time.
  ///
  /// `untouched`: tables (uppercased) whose rows and key columns an in-place step did not write, by
  /// construction (``DDLStep/rewrittenTables``): they hold what they held, and are not counted again.
  /// Each count is read once here too: the step has written the destination, nothing changes it
  /// while it is checked, and a link is counted from its to-one (no link to nothing) and from its
  /// to-many (links written) by the same query. Returns the counts per mapping, and the objects each
  /// destination entity was found to hold (counted, or — a table an in-place step did not touch —
  /// the source's), which the step's report takes instead of counting again.
  static func check(
    _ mapping: MappingModel, before: Before, destination: SQLiteStore, policies: Set<String>, merged: Int,
    inPlace: Bool = false, untouched: Set<String> = []
  ) throws -> (mappings: [MappingCount], objects: [String: Int]) {
    try destination.rememberingCounts {
      try checking(
        mapping, before: before, destination: destination, policies: policies, merged: merged, inPlace: inPlace,
        untouched: untouched)
    }
  }

  private static func checking(
    _ mapping: MappingModel, before: Before, destination: SQLiteStore, policies: Set<String>, merged: Int,
    inPlace: Bool, untouched: Set<String>
  ) throws -> (mappings: [MappingCount], objects: [String: Int]) {
    var writers: [String: [EntityMapping]] = [:]
    for entityMapping in mapping.entityMappings where before.objects[entityMapping.name] != nil {
      if let target = entityMapping.destinationEntity { writers[target, default: []].append(entityMapping) }
    }
    // Per destination entity: objects written, links written per relationship, and the reason the
    // counts may differ (nil: held equal, and they are).
    var written: [String: (objects: Int, links: [String: Int], note: String?)] = [:]
    for (target, group) in writers.sorted(by: { $0.key < $1.key }) {
      let kept =
        inPlace && destination.schema.layout(of: target).map { untouched.contains($0.table.uppercased()) } == true
      let read = group.compactMap { before.objects[$0.name] }.reduce(0, +)
      let objects = kept ? read : try destination.count(of: target, includingSubentities: false)
      var note: String? =
        group.contains { policies.contains($0.name) || $0.kind == .custom }
        ? "a policy decides what is written"
        : merged > 0 ? "\(merged) merged by merge rules" : nil
      var links: [String: Int] = [:]
      if note == nil {
        guard objects == read else {
          throw MigrationError(
            .validation, entity: target,
            reason:
              "entity mapping \(group.map(\.name).joined(separator: " + ")) read \(read) object\(read == 1 ? "" : "s") and wrote \(objects): the step would lose objects; the store is unchanged"
          )
        }
        links = try linksWritten(
          by: group, into: target, before: before, destination: destination, kept: kept, inPlace: inPlace)
        if group.count > 1 {
          note = "\(target) is written by \(group.map(\.name).joined(separator: " + ")), held equal together"
        }
      }
      written[target] = (objects, links, note)
    }
    if !inPlace { try checkNoLinksToNothing(mapping, before: before, destination: destination, policies: policies) }
    if !inPlace { try checkOneToOnes(before: before, destination: destination) }
    return (counts(mapping, before: before, written: written), written.mapValues(\.objects))
  }

  /// The links each relationship of `target` holds after the step, held equal to what `group` read
  /// (a step that loses relationships is refused).
  private static func linksWritten(
    by group: [EntityMapping], into target: String, before: Before, destination: SQLiteStore, kept: Bool,
    inPlace: Bool
  ) throws -> [String: Int] {
    var links: [String: Int] = [:]
    var readLinks: [String: (count: Int, held: Int, sources: [String])] = [:]
    for entityMapping in group {
      for (name, old) in entityMapping.relationships {
        readLinks[name, default: (0, 0, [])].count += before.edges[entityMapping.name]?[old] ?? 0
        readLinks[name, default: (0, 0, [])].held += before.rawEdges[entityMapping.name]?[old] ?? 0
        readLinks[name, default: (0, 0, [])].sources.append(old)
      }
    }
    for (name, read) in readLinks.sorted(by: { $0.key < $1.key }) {
      if kept {
        links[name] = read.count
      } else if inPlace {
        // Every key and join row still held, whatever it names: the links to objects with them.
        let held = try destination.edgeCount(of: target, name, toExistingObjects: false)
        links[name] = read.count - (read.held - held)
      } else {
        links[name] = try destination.edgeCount(of: target, name)
      }
      guard links[name] == read.count else {
        throw MigrationError(
          .validation, entity: target, property: name,
          reason:
            "entity mapping \(group.map(\.name).joined(separator: " + ")) read \(read.count) '\(read.sources.joined(separator: "', '"))' links and wrote \(links[name] ?? 0): the step would lose relationships; the store is unchanged"
        )
      }
    }
    return links
  }

  /// Links naming no object: the original's are carried (``damage``), a step may not add any.
  private static func checkNoLinksToNothing(
    _ mapping: MappingModel, before: Before, destination: SQLiteStore, policies: Set<String>
  ) throws {
    // Links naming no object: the original's are carried (``damage``), a step may not add any — a
    // script that linked an object that does not exist, or one of the wrong entity, is refused here
    // (whatever path wrote the link), before the swap.
    // Only where a script wrote links (a policy's or a custom mapping's entities): elsewhere every
    // key is copied as it was and the link counts above hold them.
    let scripted = Set(
      mapping.entityMappings.filter { policies.contains($0.name) || $0.kind == .custom }.compactMap(\.destinationEntity)
    )
    guard !scripted.isEmpty else { return }
    var carried: [String: Int] = [:]
    for (place, count) in before.dangling {
      for target in destinationPlaces(of: place, in: mapping) {
        carried["\(target.entity).\(target.relationship)", default: 0] += count
      }
    }
    for (place, count) in try destination.danglingLinks(of: scripted).sorted(by: { $0.key < $1.key })
    where count > carried[place] ?? 0 {
      throw MigrationError(
        .validation, entity: split(place).entity, property: split(place).relationship,
        reason:
          "\(count) '\(place)' link\(count == 1 ? "" : "s") name\(count == 1 ? "s" : "") no object (the original had \(carried[place] ?? 0)): the step linked objects that do not exist; the store is unchanged"
      )
    }
  }

  /// Both sides of every one-to-one agree, no fewer than in the original.
  private static func checkOneToOnes(before: Before, destination: SQLiteStore) throws {
    // Both sides of every one-to-one agree, as Core Data's objects keep them (a policy that set one
    // side has set the other): a step may not leave more disagreeing than the original had.
    for (pair, count) in try destination.oneToOneDisagreements().sorted(by: { $0.key < $1.key })
    where count > before.disagreeing[pair] ?? 0 {
      throw MigrationError(
        .validation, entity: String(pair.prefix { $0 != "." }), property: String(pair.drop { $0 != "." }.dropFirst()),
        reason:
          "\(count) '\(pair)' link\(count == 1 ? "" : "s") whose other side does not name \(count == 1 ? "it" : "them") back (the original had \(before.disagreeing[pair] ?? 0)): a one-to-one's two sides would disagree; the store is unchanged"
      )
    }
  }

  /// Each entity mapping's reads and writes, objects and links.
  private static func counts(
    _ mapping: MappingModel, before: Before, written: [String: (objects: Int, links: [String: Int], note: String?)]
  ) -> [MappingCount] {
    return mapping.entityMappings.compactMap { entityMapping in
      guard let read = before.objects[entityMapping.name] else { return nil }
      guard let target = entityMapping.destinationEntity, let result = written[target] else {
        return MappingCount(
          mapping: entityMapping.name, read: read, written: 0, note: "removed by the mapping", edges: [:])
      }
      var edges: [String: [Int]] = [:]
      for (name, old) in entityMapping.relationships {
        guard let linksWritten = result.links[name] else { continue }
        edges[name] = [before.edges[entityMapping.name]?[old] ?? 0, linksWritten]
      }
      return MappingCount(
        mapping: entityMapping.name, read: read, written: result.objects, note: result.note, edges: edges)
    }
  }
}

/// Damage a store already had when a step read it, carried as Core Data carries it and reported:
/// never a reason to refuse the store, never counted as a loss.
package struct CarriedDamage: Sendable, Hashable, CustomStringConvertible {
  package enum Kind: String, Sendable, Hashable {
    /// A to-one key or a join row naming no object.
    case linkToNoObject = "link-to-no-object"
    /// A value kept outside the store (external binary storage) whose file was never there.
    case externalFileMissing = "external-file-missing"
    /// The store's cached model hashes an entity otherwise than its metadata records (`property`:
    /// the difference); its own model was the source, as Core Data takes it.
    case cacheDisagreesWithMetadata = "cache-disagrees-with-metadata"
  }

  package let kind: Kind
  /// The entity and property in the step's source.
  package let entity: String
  package let property: String
  /// How many the source held, and the step's result holds (the object path cannot keep a key
  /// naming no object: it has no destination object to name).
  package let read: Int
  package let written: Int

  package var description: String {
    if kind == .cacheDisagreesWithMetadata {
      return "the store's Z_MODELCACHE disagrees with its metadata (\(property)): its own model was the source"
    }
    let what =
      kind == .linkToNoObject
      ? "link\(read == 1 ? "" : "s") naming no object"
      : "value\(read == 1 ? "" : "s") whose external file was never there"
    let carried =
      written == read ? "carried" : "\(written) carried (the object path cannot keep a key naming no object)"
    return "\(entity).\(property): \(read) \(what), \(carried)"
  }
}
