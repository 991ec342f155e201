import MigrunModel
import MigrunStore

/// How a context resolves conflicts found on save: Core Data's `NSMergePolicy` kinds, or a rule
/// of the user's (a Lua merge rule file, through ``MergeRule``).
///
/// ```swift
/// let context = coordinator.newContext(mergePolicy: .mergeByPropertyObjectTrump)
/// ```
public enum MergePolicy {
  /// The save fails with ``ContextError/conflicts``; nothing is written (Core Data's default).
  case error
  /// Property by property: where both the context and the store changed a property, the store wins.
  case mergeByPropertyStoreTrump
  /// Property by property: where both changed a property, the context wins.
  case mergeByPropertyObjectTrump
  /// The context's whole state of the object replaces the stored one.
  case overwrite
  /// The context's changes to a conflicting object are discarded; the store's state is kept.
  case rollback
  /// A user's rule decides per conflict (see ``MergeRule``).
  case rule(any MergeRule)

  /// The standard policy a name such as `"objectTrump"` or `"mergeByPropertyObjectTrump"` gives.
  public init?(name: String) {
    switch name {
    case "error": self = .error
    case "storeTrump", "mergeByPropertyStoreTrump": self = .mergeByPropertyStoreTrump
    case "objectTrump", "mergeByPropertyObjectTrump": self = .mergeByPropertyObjectTrump
    case "overwrite": self = .overwrite
    case "rollback": self = .rollback
    default: return nil
    }
  }

  public var name: String {
    switch self {
    case .error: "error"
    case .mergeByPropertyStoreTrump: "mergeByPropertyStoreTrump"
    case .mergeByPropertyObjectTrump: "mergeByPropertyObjectTrump"
    case .overwrite: "overwrite"
    case .rollback: "rollback"
    case .rule: "rule"
    }
  }
}

/// A user's merge rule: given a conflict, the state that is saved.
///
/// Return the object's state to save (its ``StoredObject/attributes``, ``StoredObject/toOne`` and
/// ``StoredObject/toMany``; the version is the store's), `nil` for "no object" (it is deleted, or
/// stays deleted), or throw to fail the save. ``MergeConflict/resolved(by:)`` gives a standard
/// policy's answer to start from. A rule without an answer for the entity returns
/// ``MergeDecision/unhandled`` and the save fails as under ``MergePolicy/error``.
public protocol MergeRule: AnyObject {
  func resolve(_ conflict: MergeConflict) throws -> MergeDecision
}

/// A ``MergeRule``'s answer for one conflict: the object's state to save (`nil`: no object), or
/// `unhandled` to fail the save as ``MergePolicy/error`` does.
public enum MergeDecision {
  case save(StoredObject?)
  case unhandled
}

/// One conflict found on save (Core Data's `NSMergeConflict` / `NSConstraintConflict`).
public struct MergeConflict: Sendable, CustomStringConvertible {
  package enum Kind: String, Sendable {
    /// The context changed the object; someone else changed its row since the context read it.
    case update
    /// The context deleted the object; someone else changed its row since.
    case delete
    /// The context changed the object; its row is gone from the store.
    case storeDeleted
    /// The object's values equal another object's on a uniqueness constraint.
    case uniqueness
  }

  package let kind: Kind
  public let id: ObjectID
  /// The context's state of the object; `nil` when the context deleted it.
  public let object: StoredObject?
  /// The values the context read (attributes and to-one targets); `nil` for a new object.
  public let snapshot: StoredObject?
  /// The store's row now; for a uniqueness conflict, the object already holding the values.
  public let store: StoredObject?
  /// The properties the context changed.
  public let changed: Set<String>
  /// The version the context read (`Z_OPT`), 0 for a new object.
  public let oldVersion: Int64
  /// The store's version now, 0 when its row is gone.
  public let newVersion: Int64
  /// For a uniqueness conflict: the constrained properties.
  public let constraint: [String]

  package init(
    kind: Kind, id: ObjectID, object: StoredObject?, snapshot: StoredObject?, store: StoredObject?,
    changed: Set<String>, constraint: [String] = []
  ) {
    self.kind = kind
    self.id = id
    self.object = object
    self.snapshot = snapshot
    self.store = store
    self.changed = changed
    self.oldVersion = snapshot?.version ?? 0
    self.newVersion = store?.version ?? 0
    self.constraint = constraint
  }

  public var description: String {
    switch kind {
    case .update:
      "\(id): changed in the store since it was read (version \(oldVersion) → \(newVersion))\(differences)"
    case .delete:
      "\(id): deleted here, changed in the store since it was read (version \(oldVersion) → \(newVersion))"
    case .storeDeleted: "\(id): changed here, deleted from the store since it was read (version \(oldVersion))"
    case .uniqueness:
      "\(id.primaryKey < 0 ? "a new \(id.entity)" : id.description): \(constraint.map { "\($0) = \(object?.attributes[$0]?.description ?? "NULL")" }.joined(separator: ", ")) "
        + "already belongs to \(store.map { "\($0.id)" } ?? "another object") "
        + "(uniqueness constraint (\(constraint.joined(separator: ", "))))"
    }
  }

  /// The properties whose values differ between snapshot, store and object, one per line.
  private var differences: String {
    guard let snapshot, let store, let object else { return "" }
    /// One line per property whose value read, stored or here are not all the same.
    func lines<Value: Equatable & CustomStringConvertible>(
      _ values: (StoredObject) -> [String: Value], absent: String
    ) -> [String] {
      let (read, now, mine) = (values(snapshot), values(store), values(object))
      return Set(read.keys).union(now.keys).union(mine.keys).sorted().compactMap { name in
        guard read[name] != now[name] || read[name] != mine[name] else { return nil }
        let shown = [read[name], now[name], mine[name]].map { $0?.description ?? absent }
        return "\(name): read \(shown[0]), store \(shown[1]), here \(shown[2])"
      }
    }
    let all = lines(\.attributes, absent: "NULL") + lines(\.toOne, absent: "nil")
    return all.isEmpty ? "" : "\n    " + all.joined(separator: "\n    ")
  }

  /// What `policy` saves for this conflict (`nil`: no object). ``MergePolicy/error`` and
  /// ``MergePolicy/rule(_:)`` give the object's own state.
  public func resolved(by policy: MergePolicy) -> StoredObject? {
    switch (kind, policy) {
    case (.uniqueness, .mergeByPropertyStoreTrump), (.uniqueness, .rollback):
      return store
    case (.uniqueness, _):
      guard var merged = store, let object else { return store }
      // The other object's changed values land on the existing one; its members join the existing ones.
      for name in changed {
        if let value = object.attributes[name] {
          merged.attributes[name] = value
        } else if let members = object.toMany[name] {
          let existing = merged.toMany[name] ?? []
          merged.toMany[name] = existing + members.filter { !existing.contains($0) }
        } else {
          merged.toOne[name] = object.toOne[name]
        }
      }
      return merged
    case (.delete, .mergeByPropertyStoreTrump), (.delete, .rollback), (.storeDeleted, .mergeByPropertyStoreTrump),
      (.storeDeleted, .rollback):
      return store
    case (.delete, _), (.storeDeleted, _):
      return object
    case (.update, .rollback):
      return store
    case (.update, .overwrite), (.update, .error), (.update, .rule):
      return object
    case (.update, .mergeByPropertyStoreTrump), (.update, .mergeByPropertyObjectTrump):
      guard var merged = store, let object, let snapshot else { return object }
      let objectWins = { if case .mergeByPropertyObjectTrump = policy { true } else { false } }()
      for name in changed {
        if let value = object.attributes[name] {
          if objectWins || store?.attributes[name] == snapshot.attributes[name] { merged.attributes[name] = value }
        } else if object.toMany[name] != nil || merged.toMany[name] != nil {
          merged.toMany[name] = object.toMany[name]
        } else if objectWins || store?.toOne[name] == snapshot.toOne[name] {
          merged.toOne[name] = object.toOne[name]
        }
      }
      return merged
    }
  }
}
