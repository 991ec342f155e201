import MigrunModel

/// Where persistent history (`ACHANGE`) keeps which property: the bits of an update's `ZCOLUMNS` and
/// the tombstone slots of a delete — facts of the store's layout, read by history recording (a
/// context's saves) and by history rewriting (a migration's steps) alike. The rules are in
/// `HistoryRewrite`'s notes.
package enum HistoryLayout {
  package struct Key: Hashable, Sendable {
    package enum Kind: Hashable, Sendable { case key, entity, order, attribute, toMany, manyToMany }
    package let kind: Kind
    package let name: String

    package init(kind: Kind, name: String) {
      self.kind = kind
      self.name = name
    }
  }

  /// The properties `ZCOLUMNS` has a bit for, in bit order (see the type's notes).
  package static func updateBits(of entity: String, in schema: StoreSchema) -> [Key] {
    let model = schema.model
    guard let layout = schema.layout(of: entity), let described = model.entity(named: entity) else { return [] }
    // Inherited first, each level by name; hidden to-ones (to-manys without inverse landing here)
    // after all of them, by name.
    let levels = (model.ancestors(of: described).reversed() + [described])
    var toOnes: [String] = []
    var attributes: [String] = []
    var toManys: [String] = []
    for level in levels {
      toOnes += level.relationships.filter { !$0.isTransient && !$0.isToMany }.map(\.name).sorted()
      attributes += level.attributes.filter { !$0.isTransient }.sorted { $0.name < $1.name }.flatMap(\.leaves)
        .filter { !$0.isTransient }.map(\.name)
      toManys += level.relationships.filter { !$0.isTransient && $0.isToMany }.map(\.name).sorted()
    }
    toOnes += layout.properties.keys.filter(StoreSchema.isHiddenToOne).sorted()
    var keys: [Key] = []
    var entityColumns: [Key] = []
    var orderColumns: [Key] = []
    for name in toOnes {
      guard case .toOne(_, let entityColumn, let order)? = layout.properties[name] else { continue }
      keys.append(Key(kind: .key, name: name))
      if entityColumn != nil { entityColumns.append(Key(kind: .entity, name: name)) }
      if order != nil { orderColumns.append(Key(kind: .order, name: name)) }
    }
    let manyToManys = toManys.filter {
      if case .manyToMany? = layout.properties[$0] { return true }
      return false
    }
    return keys + entityColumns + orderColumns + attributes.map { Key(kind: .attribute, name: $0) }
      + toManys.map { Key(kind: .toMany, name: $0) } + manyToManys.map { Key(kind: .manyToMany, name: $0) }
  }

  /// The attributes whose values a delete's tombstone keeps, in slot order (see the type's notes).
  package static func tombstoneSlots(of entity: String, in model: ObjectModel) -> [String] {
    guard let described = model.entity(named: entity) else { return [] }
    return model.attributes(of: described).filter { $0.preservesValueInHistoryOnDeletion && !$0.isTransient }
      .map(\.name).sorted()
  }
}
