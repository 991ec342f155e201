import MigrunModel
import MigrunStore

extension ExternalData {
  /// The first destination attribute of `mapping` whose values are kept in another form than its
  /// source's (external storage on one side only), or — when the mapping computes values — one that
  /// a computation reads or writes in that form. Such values are read and written object by object
  /// (through ``resolve(_:)``), never copied as column bytes: the one rule every path asks.
  static func rewrittenAttribute(
    _ mapping: EntityMapping, from: Entity, in source: ObjectModel, to: Entity, in destination: ObjectModel
  ) -> String? {
    let sourceAttributes = Dictionary(
      source.attributes(of: from).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    let computes = mapping.attributes.values.contains(.computed)
    if computes, let read = sourceAttributes.values.filter(\.storesExternally).map(\.name).min() { return read }
    for attribute in destination.attributes(of: to) {
      switch mapping.attributes[attribute.name] {
      case .computed? where attribute.storesExternally: return attribute.name
      case let value?:
        guard let name = value.sourceAttribute, let old = sourceAttributes[name] else { continue }
        if old.storesExternally != attribute.storesExternally { return attribute.name }
      case nil: continue
      }
    }
    return nil
  }
}
