/// An explicit version order, oldest first, and where it came from.
package struct VersionOrder: Sendable, Hashable {
  public let names: [String]
  /// `--chain`, or the chain file's path.
  public let origin: String

  public init(names: [String], origin: String) {
    self.names = names
    self.origin = origin
  }
}
