import MigrunModel
import MigrunStore

/// The snapshots of persistent values shared by every context of one coordinator: Core Data's row
/// cache. Objects hold their snapshot; the registry only finds it (it holds none), so a snapshot
/// goes when the last object using it goes (or refreshes), and a context that fetched a million
/// objects and let them go holds none. Entries are by entity and key: a newer version read
/// replaces the entry (the older snapshot lives on with its users, no longer shared).
final class SnapshotRegistry {
  private var entries: [String: [Int64: Unmanaged<Snapshot>]] = [:]
  private(set) var count = 0
  private var peak = 0

  /// The shared snapshot of `row`'s version, made when no object holds one.
  func snapshot(of row: StoredRow, shape: EntityReference) -> Snapshot {
    if let known = entries[row.id.entity]?[row.id.primaryKey]?.takeUnretainedValue(), known.version == row.version {
      return known
    }
    let made = Snapshot(row, shape: shape, registry: self)
    entries[row.id.entity, default: [:]][row.id.primaryKey] = Unmanaged.passUnretained(made)
    count += 1
    peak = max(peak, count)
    return made
  }

  /// Called as a snapshot goes: its entry leaves (unless a newer version took it).
  func forget(_ snapshot: Snapshot) {
    count -= 1
    let key = snapshot.id.primaryKey
    if entries[snapshot.id.entity]?[key]?.toOpaque() == Unmanaged.passUnretained(snapshot).toOpaque() {
      entries[snapshot.id.entity]?[key] = nil
    }
    guard count < peak / 4 else { return }
    // Dictionaries keep their capacity when emptied: copied into storage of their size.
    entries = entries.compactMapValues { $0.isEmpty ? nil : Dictionary(uniqueKeysWithValues: $0.map { ($0, $1) }) }
    peak = count
  }
}

extension Dictionary {
  /// A dictionary keeps its capacity when emptied: below a quarter of its `peak` count it is copied
  /// into storage of its size, so memory returns to the baseline. `peak` is the count tracked by
  /// the caller since the last shrink.
  mutating func shrinkWhenSparse(peak: inout Int) {
    guard count < peak / 4 else { return }
    self = Dictionary(uniqueKeysWithValues: map { ($0.key, $0.value) })
    peak = count
  }
}
