import Foundation
import MigrunModel
import MigrunStore

/// A step done as a bulk copy between the two SQLite files: the source store attached to the
/// destination's connection, each entity mapping one `INSERT … SELECT` (run in key ranges, for
/// progress) — or, where a script computes attributes, one row loop calling its ``RowTransform`` —
/// join tables copied, indexes built after the rows, all in one transaction, no object loaded.
/// This is how an inferred step runs "as SQL" (SPEC §3.4), and how a scripted step whose policies
/// only compute attributes runs at the speed of a hand-written loop.
///
/// It applies when every destination row is a source row with columns kept, renamed, dropped,
/// given a default or computed from the row: keys are kept (one source hierarchy feeds each
/// destination hierarchy) and every relationship is stored the same way on both sides (a to-one
/// column stays a to-one column, a join table a join table). Otherwise — to-one ↔ to-many,
/// unordered ↔ ordered, policies with hooks — the step runs object by object, and
/// ``decide(mapping:sourceSchema:policies:manager:mixed:)`` says why.
///
/// With `mixed`, ``decide(mapping:sourceSchema:policies:manager:mixed:)`` may also give a *mixed* step:
/// it copies the entity mappings that can be copied and leaves the others — whole destination
/// hierarchies — to the object path (``objectMappings``, empty for a whole copy), which runs after it. That holds only when the rows copied
/// and the objects made by the object path can refer to each other by key: every object mapping
/// makes one destination object per source object with the source's key (no `createDestinationInstances`
/// hook, no filter, no uniqueness constraint the source lacked), each destination hierarchy is fed
/// by one source hierarchy, and no many-to-many relationship joins a copied entity to an object one.
/// The object path finds the copied objects by key (``MigrationManager/copiedMappings``).
struct BulkCopy {
  struct Copy {
    let mapping: EntityMapping
    let sourceTable: String
    /// The source entity's row predicate (``StoreSchema/rowPredicate(_:includingSubentities:alias:)``).
    let sourceRows: String
    /// `INSERT … SELECT … WHERE <source rows> AND Z_PK > ? AND Z_PK <= ?`, constants bound first.
    let insert: String
    let constants: [StoreValue]
    /// Set where a transform computes attributes: the copy is a row loop instead.
    let rows: RowLoop?
  }

  /// A copy through a ``RowTransform``: `select` (run on a connection of the source's own) gives
  /// the plain values (Z_PK first) then the transform's inputs; `insert` takes the plain values then
  /// the transform's outputs.
  struct RowLoop {
    let select: String
    let insert: String
    let plainCount: Int
    let inputTypes: [AttributeType]
    let transform: any RowTransform
  }

  /// Rows copied per statement, so progress moves on a large entity.
  static let chunk: Int64 = 50_000

  let copies: [Copy]
  /// `INSERT … SELECT` per join table.
  let joins: [String]
  /// Destination root entity → the source table whose keys it keeps.
  let keyTables: [String: String]
  /// In a mixed step, the entity mappings left to the object path (empty otherwise).
  let objectMappings: Set<String>

  /// One copy/transform entity mapping with its entities and their layouts.
  struct Resolved {
    let mapping: EntityMapping
    let from: Entity
    let to: Entity
    let fromLayout: StoreSchema.EntityLayout
    let toLayout: StoreSchema.EntityLayout
  }

  /// Whether every uniqueness constraint of `to` (and its ancestors) is one `from` already had, on
  /// the attributes its values are copied from: then copied rows cannot collide.
  static func keepsConstraints(
    _ entityMapping: EntityMapping, from: Entity, in source: ObjectModel, to: Entity, in destination: ObjectModel
  ) -> Bool {
    func origin(_ name: String) -> String? { entityMapping.attributes[name]?.carriedAttribute }
    let existing = Set(([from] + source.ancestors(of: from)).flatMap(\.uniquenessConstraints).map { Set($0) })
    for constraint in ([to] + destination.ancestors(of: to)).flatMap(\.uniquenessConstraints) {
      let mapped = constraint.compactMap(origin)
      guard mapped.count == constraint.count, existing.contains(Set(mapped)) else { return false }
    }
    return true
  }

  /// Whether a step runs as a bulk copy — the copy, ready to run — or object by object, and why.
  /// `plan` and `migrate` both ask this (``StepMethod/planned(for:mapping:store:options:)``).
  enum Decision {
    case rows(BulkCopy)
    case objects(reason: String)

    var copy: BulkCopy? { if case .rows(let copy) = self { copy } else { nil } }
  }

  /// Why a step cannot be a bulk copy, named where it is found.
  struct Refusal: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  /// The step as a bulk copy, or the reason it must run object by object. An entity mapping with a
  /// policy takes part only when the policy offers a ``RowTransform`` computing exactly its
  /// `.computed` attributes from the source row. Without `manager` it only decides (for
  /// `migrun plan`), taking a policy's word that it computes attributes only.
  static func decide(
    mapping: MappingModel, sourceSchema: StoreSchema? = nil, policies: [String: any EntityMigrationPolicy] = [:],
    manager: MigrationManager? = nil, mixed: Bool = false
  ) throws -> Decision {
    do {
      return .rows(
        try BulkCopy(mapping: mapping, sourceSchema: sourceSchema, policies: policies, manager: manager, mixed: mixed))
    } catch let refusal as Refusal {
      return .objects(reason: refusal.reason)
    }
  }

  private init(
    mapping: MappingModel, sourceSchema: StoreSchema?, policies: [String: any EntityMigrationPolicy],
    manager: MigrationManager?, mixed: Bool
  ) throws {
    // The source store's own names (a join table named from the other side, say) when it is known.
    let sourceSchema = sourceSchema ?? StoreSchema(model: mapping.source)
    var planner = Planner(
      mapping: mapping, source: mapping.source, destination: mapping.destination, sourceSchema: sourceSchema,
      destinationSchema: StoreSchema(model: mapping.destination), policies: policies, manager: manager, mixed: mixed,
      entityNumbers: mapping.entityNumbers(from: sourceSchema))
    try planner.resolve()
    try planner.findRowTransforms()
    try planner.settleObjectMappings()
    let keyTables = try planner.keyTables()
    for entry in planner.copied { try planner.addCopy(of: entry) }
    try planner.refuseJoinsWrittenTwice()
    copies = planner.copies
    joins = planner.joins.keys.sorted().compactMap { planner.joins[$0] }
    objectMappings = Set(planner.objects.keys)
    self.keyTables = keyTables.filter { root, _ in !planner.objectRoots.contains(root) }
  }

  /// A source attribute a transform receives: its name, column and type.
  typealias Input = (name: String, column: String, type: AttributeType)

  /// The stored attributes of a source entity a transform receives, in model order.
  static func inputs(of entity: Entity, in model: ObjectModel, layout: StoreSchema.EntityLayout) -> [Input] {
    model.attributes(of: entity).compactMap { attribute in
      guard case .attribute(let column)? = layout.properties[attribute.name] else { return nil }
      return (attribute.name, column.name, attribute.type)
    }
  }

  /// The order column of the many-to-many `name` of `relationship`'s destination, if it is ordered.
  static func joinOrder(of name: String, destinationOf relationship: Relationship, in schema: StoreSchema) -> String? {
    guard case .manyToMany(_, _, _, let order?)? = schema.layout(of: relationship.destinationEntity)?.properties[name]
    else { return nil }
    return order
  }
}
