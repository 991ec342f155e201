import Foundation

/// An explicit version order, oldest first, and where it came from.
package struct VersionOrder: Sendable, Hashable {
  package let names: [String]
  /// `--chain`, or the chain file's path.
  package let origin: String
  /// The step files a chain file's line names for the step into its version (`V3: users.xcmappingmodel,
  /// books.xcmappingmodel`), by "from\u{0}to": run in that order, one after another.
  package var scripts: [String: [URL]] = [:]

  package init(names: [String], origin: String) {
    self.names = names
    self.origin = origin
  }
}
