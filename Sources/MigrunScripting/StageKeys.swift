import MigrunModel

/// The keys a stage's `ctx:each` or batched `ctx:fetch` selected, held for the script until its walk
/// (or handler) ends: 8 bytes a key, 10 when the selection spans subentities — not an ``ObjectID``'s
/// 24, which put a walk over 3,000,000 objects (72 MB of keys) past the 64 MiB Lua memory limit they
/// count against (issue 72). Now 3,000,000 hold 24 MB, and a walk of up to 8 million fits the default.
///
/// ```swift
/// let keys = StageKeys(entity: "Item", ids: try context.objectIDs("Item", matching: nil))
/// let batch = keys.ids(0..<1000)   // [ObjectID], in the selection's order
/// ```
struct StageKeys {
  /// The selection's entity (its subentities' objects included): what its objects earn against.
  let entity: String

  init(entity: String, ids: [ObjectID]) {
    self.entity = entity
    keys.reserveCapacity(ids.count)
    var numbers: [String: UInt16] = [:]
    for id in ids {
      var number: UInt16 = 0
      if id.entity != names.first {
        if let known = numbers[id.entity] {
          number = known
        } else {
          number = UInt16(truncatingIfNeeded: names.count)
          numbers[id.entity] = number
          names.append(id.entity)
        }
      }
      // The first key of another entity than the first: every key before it was of the first.
      if number != 0, kinds.isEmpty { kinds = Array(repeating: 0, count: keys.count) }
      if !kinds.isEmpty { kinds.append(number) }
      keys.append(id.primaryKey)
    }
  }

  var count: Int { keys.count }
  /// The bytes held: what counts against the Lua memory limit while the selection lives.
  var bytes: Int { keys.count * MemoryLayout<Int64>.stride + kinds.count * MemoryLayout<UInt16>.stride }

  /// The objects at `positions` (from 0), in the selection's order.
  func ids(_ positions: Range<Int>) -> [ObjectID] {
    positions.map { position in
      ObjectID(entity: names[kinds.isEmpty ? 0 : Int(kinds[position])], primaryKey: keys[position])
    }
  }

  // MARK: - Non public

  /// The entities of the keys, the first one met first.
  private var names: [String] = []
  private var keys: [Int64] = []
  /// Each key's entity (an index into `names`); empty while every key is of `names[0]`.
  private var kinds: [UInt16] = []
}
