import MigrunModel
import MigrunStore

/// A context operation that failed. A failed save writes nothing: the store and the context's
/// pending changes are as they were before the save.
///
/// ```
/// save failed: 1 conflict under merge policy error
///   Employee/p3: changed in the store since it was read (version 2 → 3)
///     department: read Department/p1, store Department/p2, here Department/p1
/// ```
public struct ContextError: Error, Sendable, CustomStringConvertible, CarriesCause {
  /// The kind of failure, to match on.
  public enum Code: String, Sendable, Hashable, CaseIterable {
    /// Optimistic locking or uniqueness conflicts the merge policy did not resolve.
    case conflicts
    /// A delete rule `deny` blocks the delete.
    case deny
    case unknownEntity
    case unknownProperty
    case wrongType
    /// The object is not (or no longer) in the store.
    case noSuchObject
    /// The object belongs to another context, or its context is gone.
    case wrongContext
    case mergeRule
    /// The store failed under the context (its error is ``underlyingError``).
    case store
    /// Another connection or process holds the store's write lock, still after the context's
    /// ``ObjectContext/busyTimeout``: nothing was written; save again later.
    case inUse
    /// The disk is full: nothing was written.
    case noSpace
    /// New or changed objects break the model's rules (required values, value rules, counts).
    case validation
  }

  public let code: Code
  public let entity: String?
  public let object: ObjectID?
  public let reason: String
  /// For ``Code/conflicts``: every conflict found, in object order.
  public let conflicts: [MergeConflict]
  /// The error underneath (the store's), when another failure caused this one.
  package let cause: ErrorCause?

  /// The error underneath (the store's), when another failure caused this one.
  public var underlyingError: (any Error)? { cause?.error }

  public init(
    _ code: Code, entity: String? = nil, object: ObjectID? = nil, reason: String, conflicts: [MergeConflict] = [],
    underlying: (any Error)? = nil
  ) {
    // A store failure that is a store in use or a full disk says so in its own code: a program
    // matches it without looking underneath.
    self.code =
      switch code {
      case .store where underlying.map(StoreFailure.isInUse) == true: .inUse
      case .store where underlying.map(StoreFailure.isDiskFull) == true: .noSpace
      default: code
      }
    self.entity = entity ?? object?.entity
    self.object = object
    self.reason = reason
    self.conflicts = conflicts
    cause = underlying.map(ErrorCause.init)
  }

  public var description: String {
    let head = ErrorMessage.line(
      nil, entity: object == nil ? entity : nil, detail: object.map { "object \($0)" }, reason)
    guard !conflicts.isEmpty else { return head }
    return head + "\n  " + conflicts.map(\.description).joined(separator: "\n  ")
  }
}
