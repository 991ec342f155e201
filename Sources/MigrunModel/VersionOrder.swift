/// An explicit version order, oldest first, and where it came from.
package struct VersionOrder: Sendable, Hashable {
  package let names: [String]
  /// `--chain`, or the chain file's path.
  package let origin: String

  package init(names: [String], origin: String) {
    self.names = names
    self.origin = origin
  }
}
