/// What every property of an entity has, attribute or relationship: Core Data's
/// `NSPropertyDescription`.
///
/// Only ``name``, the three flags and ``versionHashModifier`` take part in the version hash;
/// ``renamingIdentifier`` and ``userInfo`` do not (see ``VersionHash``).
package protocol Property: Sendable, Hashable {
  /// The property's name, unique within its entity and the entity's ancestors.
  var name: String { get }
  var isOptional: Bool { get }
  var isTransient: Bool { get }
  var isReadOnly: Bool { get }
  /// Changes the version hash without changing the schema (Xcode: "Version Hash Modifier").
  var versionHashModifier: String? { get }
  /// The name this property had in an earlier version (Xcode: "Renaming ID", XML `elementID`).
  var renamingIdentifier: String? { get }
  var userInfo: [String: String] { get }
}

extension Property {
  /// The name a migration matches this property by in an earlier version: the renaming identifier
  /// where there is one, else the name.
  package var canonicalName: String { renamingIdentifier ?? name }
}
