import MigrunKit

/// What a step file's policy for one entity mapping does, as a review shows it: the hooks it
/// implements, the attributes its functions compute, whether it filters, and its file.
package struct PolicySummary: Sendable, Equatable {
  package let file: String
  package let hooks: [String]
  package let computed: [String]
  package let filters: Bool

  /// The summary of `policy` when it is a Lua policy (a Swift policy has nothing to read).
  package init?(_ policy: any EntityMigrationPolicy) {
    guard let lua = policy as? LuaEntityPolicy else { return nil }
    file = lua.file
    hooks = lua.hooks.keys.sorted()
    computed = lua.computed.map(\.attribute.name).sorted()
    filters = lua.filter != nil
  }
}
