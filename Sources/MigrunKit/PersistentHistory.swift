import Foundation
import MigrunStore

/// What a step did to persistent history (``HistoryRewrite``), for its report.
package struct HistoryRewritten: Sendable, Hashable {
  /// Updates whose `ZCOLUMNS` was rewritten to the destination's properties.
  package var updates = 0
  /// Of those, updates that named a property the step removes (that bit is gone with it).
  package var updatesLosingProperties = 0
  /// Updates whose mask was too short to read (kept as they were, as Core Data reads them: unknown).
  package var unreadable = 0
  /// Deletes whose tombstone values moved to the destination's slots.
  package var tombstones = 0
  /// Tombstone values of attributes the destination no longer preserves (cleared).
  package var tombstoneValuesCleared = 0
  /// Changes of objects of entities the step removes, deleted on purpose (`--partial-history`).
  package var removedChanges = 0

  package init() {}

  package var isEmpty: Bool { self == HistoryRewritten() }
}

/// Persistent history kept true across a step. Besides each change's entity number (renumbered with
/// the step, ``ForeignObjects``), `ACHANGE` records two things by position in the changed entity's
/// properties, and a step that changes those properties moves the positions:
///
/// - `ZCOLUMNS` of an update: which properties the save wrote, one bit each, the first bit the most
///   significant of the first byte, `(bits + 7) / 8` bytes. Read off the public decompilation of
///   Core Data (`_NSPersistentHistoryChange`'s `_propertyDataForEntity:withSetOfPropertyNames:` and
///   `_updatedPropertiesForEntity:andData:`): the bits run over the entity's to-one keys, then the
///   to-ones' entity columns, then their order columns, then its attributes, then its to-manys, then
///   its many-to-manys again; a mask with fewer bytes than bits is unreadable (Core Data answers
///   nil). Core Data's own migrator rewrites the mask of every update of an entity whose properties
///   changed, by property (`NSPersistentHistoryMigrateUpdates`), and leaves the others.
/// - `ZTOMBSTONE0…n` of a delete: the values of the entity's attributes marked
///   `preserveAfterDeletion`, one column each. Core Data's migrator adds columns when a version
///   preserves more, moves values whose slot shifted, and clears the columns no entity uses any more.
///
/// Guesses, said here because no store we have shows them: within each group the properties come in
/// the store's column order (inherited first, then by name — as the decompiled code collects them;
/// the to-manys' order is the order of a dictionary, taken by name here); a relationship's keys and
/// a to-many's are matched through the step's mapping by name; a preserved attribute's slot is its
/// place among the entity's preserved attributes in name order (inherited included); new tombstone
/// columns are `BLOB`.
struct HistoryRewrite: Sendable {
  /// One entity whose positions move: destination bit → source bit (nil: no source).
  struct Remap: Sendable {
    let entity: String
    /// The entity's number in the destination (history is renumbered first).
    let number: Int
    let sourceBits: Int
    let bits: [Int?]
    let sourceTombstones: Int
    let tombstones: [Int?]
    let bitsMove: Bool
    let tombstonesMove: Bool
  }

  let remaps: [Remap]
  /// The most tombstone columns any destination entity uses.
  let tombstoneColumns: Int

  init(mapping: MappingModel, source: StoreSchema, destination: StoreSchema) {
    var remaps: [Remap] = []
    for entityMapping in mapping.entityMappings {
      guard let from = entityMapping.sourceEntity, let to = entityMapping.destinationEntity,
        let layout = destination.layout(of: to)
      else { continue }
      let sourceBits = HistoryLayout.updateBits(of: from, in: source)
      let bits = HistoryLayout.updateBits(of: to, in: destination)
      let sourceIndex = Dictionary(sourceBits.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
      func sourceKey(_ key: Key) -> Key? {
        switch key.kind {
        case .attribute: entityMapping.attributes[key.name]?.sourceAttribute.map { Key(kind: key.kind, name: $0) }
        default:
          (entityMapping.relationships[key.name] ?? (StoreSchema.isHiddenToOne(key.name) ? key.name : nil)).map {
            Key(kind: key.kind, name: $0)
          }
        }
      }
      let map = bits.map { sourceKey($0).flatMap { sourceIndex[$0] } }
      let sourceSlots = HistoryLayout.tombstoneSlots(of: from, in: source.model)
      let slots = HistoryLayout.tombstoneSlots(of: to, in: destination.model)
      let slotIndex = Dictionary(sourceSlots.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
      let slotMap = slots.map { entityMapping.attributes[$0]?.sourceAttribute.flatMap { slotIndex[$0] } }
      let bitsMove = map != Array(0..<sourceBits.count).map { Optional($0) }
      let tombstonesMove = slotMap != Array(0..<sourceSlots.count).map { Optional($0) }
      guard bitsMove || tombstonesMove else { continue }
      remaps.append(
        Remap(
          entity: to, number: layout.number, sourceBits: sourceBits.count, bits: map,
          sourceTombstones: sourceSlots.count, tombstones: slotMap, bitsMove: bitsMove, tombstonesMove: tombstonesMove))
    }
    self.remaps = remaps
    tombstoneColumns =
      destination.model.entities.map { HistoryLayout.tombstoneSlots(of: $0.name, in: destination.model).count }
      .max() ?? 0
  }

  typealias Key = HistoryLayout.Key

  /// Rewrites `ACHANGE` in schema `schema` (`main`, or the store being edited). A history table
  /// without Core Data's columns (`ZENTITY`, `ZCHANGETYPE`, `ZCOLUMNS`) is refused by name when the
  /// step moves positions in it; a mask that is no blob, or too short, is kept and counted unreadable.
  func apply(_ edit: StoreEdit, schema: String = "main") throws -> HistoryRewritten {
    var outcome = HistoryRewritten()
    guard !remaps.isEmpty else { return outcome }
    let columns = try edit.historyChangeColumns(in: schema)
    if let missing = ["ZENTITY", "ZCHANGETYPE", "ZCOLUMNS"].first(where: { !columns.contains($0) }) {
      throw MigrationError(
        .wouldDrop,
        reason:
          "persistent history's ACHANGE has no \(missing) column, a layout migrun does not know, and the step moves the properties it records (\(OptionWords.dropping(["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"])) to drop the history on purpose)"
      )
    }
    let existing = columns.filter { $0.hasPrefix("ZTOMBSTONE") }.count
    try edit.addTombstoneColumns(existing..<max(existing, tombstoneColumns), in: schema)
    let slotCount = max(existing, tombstoneColumns)
    for remap in remaps {
      if remap.bitsMove {
        try edit.rewriteUpdateMasks(ofEntity: remap.number, in: schema) { mask in
          guard let bytes = mask, bytes.count * 8 >= remap.sourceBits else {
            outcome.unreadable += 1
            return nil
          }
          func isSet(_ bit: Int) -> Bool { bytes[bit >> 3] & (0x80 >> UInt8(bit & 7)) != 0 }
          var written = [UInt8](repeating: 0, count: (remap.bits.count + 7) / 8)
          var kept = 0
          for (bit, source) in remap.bits.enumerated() {
            guard let source, isSet(source) else { continue }
            written[bit >> 3] |= 0x80 >> UInt8(bit & 7)
            kept += 1
          }
          if kept < (0..<remap.sourceBits).filter(isSet).count { outcome.updatesLosingProperties += 1 }
          outcome.updates += 1
          return written
        }
      }
      guard remap.tombstonesMove else { continue }
      let moved = (0..<slotCount).map { slot in slot < remap.tombstones.count ? remap.tombstones[slot] : nil }
      let tombstones = try edit.moveTombstones(
        ofEntity: remap.number, readable: min(remap.sourceTombstones, existing), slots: moved, in: schema)
      outcome.tombstones += tombstones.rows
      outcome.tombstoneValuesCleared += tombstones.cleared
    }
    return outcome
  }
}
