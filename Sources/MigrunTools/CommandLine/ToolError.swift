import MigrunModel

/// A failure a job finds itself — a bad combination of options, a file it cannot write — in words
/// that name what to do. (Failures of the layers below keep their own types: ``ModelError``,
/// ``StoreError``, ``MigrationError``.)
package struct ToolError: Error, Sendable, CustomStringConvertible, CarriesCause {
  package let message: String
  /// The error underneath (a file system's, a parser's), when another failure caused this one.
  package let cause: ErrorCause?

  package init(message: String, underlying: (any Error)? = nil) {
    self.message = message
    cause = underlying.map(ErrorCause.init)
  }

  package var description: String { message }
}
