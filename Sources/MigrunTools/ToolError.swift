/// A failure a job finds itself — a bad combination of options, a file it cannot write — in words
/// that name what to do. (Failures of the layers below keep their own types: ``ModelError``,
/// ``StoreError``, ``MigrationError``.)
package struct ToolError: Error, Sendable, CustomStringConvertible {
  package let message: String

  package init(message: String) { self.message = message }

  package var description: String { message }
}
