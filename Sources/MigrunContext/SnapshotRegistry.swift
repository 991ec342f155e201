import MigrunModel
import MigrunStore

/// The snapshots of persistent values shared by every context of one coordinator: Core Data's row
/// cache. Each managed object holds one reference to the snapshot of the version it read; the
/// snapshot goes when the last object using it goes (or refreshes), so a context that fetched a
/// million objects and let them go holds none.
final class SnapshotRegistry {
  struct Key: Hashable {
    let id: ObjectID
    let version: Int64
  }

  private struct Entry {
    let snapshot: StoredObject
    var users: Int
  }

  private var entries: [Key: Entry] = [:]
  private var peak = 0

  var count: Int { entries.count }

  /// Registers a user of `snapshot` and returns the shared copy (the first registered for that
  /// version: the values of one version of one row are the same for everyone).
  func retain(_ snapshot: StoredObject) -> StoredObject {
    let key = Key(id: snapshot.id, version: snapshot.version)
    if var entry = entries[key] {
      entry.users += 1
      entries[key] = entry
      return entry.snapshot
    }
    entries[key] = Entry(snapshot: snapshot, users: 1)
    peak = max(peak, entries.count)
    return snapshot
  }

  package func release(_ snapshot: StoredObject) {
    let key = Key(id: snapshot.id, version: snapshot.version)
    guard var entry = entries[key] else { return }
    entry.users -= 1
    if entry.users > 0 {
      entries[key] = entry
      return
    }
    entries[key] = nil
    entries.shrinkWhenSparse(peak: &peak)
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
