import Foundation

/// The error underneath another: kept when a layer words a failure in its own terms (a store error
/// that a SQLite error caused, a migration error that a store error caused), so that what the
/// failure was — a full disk, a store in use — is still known from the cause itself, not from
/// the words of a message. Two causes are the same when they say the same.
package struct ErrorCause: Sendable, Hashable, CustomStringConvertible {
  package let error: any Error

  package init(_ error: any Error) { self.error = error }

  package var description: String { "\(error)" }

  package static func == (lhs: ErrorCause, rhs: ErrorCause) -> Bool { lhs.description == rhs.description }

  package func hash(into hasher: inout Hasher) { hasher.combine(description) }

  /// `error` and every error underneath it, outermost first: migrun's errors' causes, then
  /// Foundation's underlying errors (`NSUnderlyingErrorKey`).
  package static func chain(_ error: any Error) -> [any Error] {
    var chain: [any Error] = []
    var next: (any Error)? = error
    while let current = next, chain.count < 16 {
      chain.append(current)
      if let carrying = current as? any CarriesCause {
        next = carrying.cause?.error
      } else {
        next = (current as NSError).userInfo[NSUnderlyingErrorKey] as? any Error
      }
    }
    return chain
  }
}

/// An error that keeps the one underneath it.
package protocol CarriesCause: Error {
  var cause: ErrorCause? { get }
}
