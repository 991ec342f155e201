import Crypto
import Foundation

/// A 32-byte entity or property version hash, byte for byte the one Core Data computes.
///
/// Core Data decides whether a store fits a model only by comparing entity version hashes; a store
/// keeps them in its metadata (`NSStoreModelVersionHashes`). The bytes hashed are (strings are UTF-8
/// with no length or terminator, integers little-endian):
///
/// - property prefix `P = SHA256(name ‖ u16(isOptional | isTransient<<1 | isReadOnly<<2) ‖ modifier?)`
/// - attribute `SHA256(P ‖ u32(type code) ‖ 0x01 if external storage ‖ 0x01 if preserved after deletion)`
/// - relationship `SHA256(P ‖ destination name ‖ inverse name? ‖ i32(maxCount) ‖ i32(minCount) ‖ 01 00 if ordered)`,
///   the inverse left out for a relationship that is its own inverse
/// - derived attribute `SHA256(expression in NSExpression's format ‖ filter predicate?)`, no prefix
/// - composite attribute `SHA256(its elements' hashes, elements in name order)` — no prefix, no type:
///   the composite's own name and flags are not hashed. Read off the hashes SwiftData stored in two
///   apps' stores (`../shared/fixtures/facts/composite-attributes.json`: 4 entities, 12 composites,
///   each element an attribute hashed as above); a nested composite's elements join its parent's
///   (flattened, then sorted by name as one list) and transient elements are left out, as the
///   decompiled `NSCompositeAttributeDescription` does (no store we know nests them)
/// - entity `SHA256(name ‖ u8(isAbstract) ‖ parent hash? ‖ non-transient property hashes by name ‖
///   modifier? ‖ own uniqueness constraints joined with ".", sorted)`
///
/// ```swift
/// let hash = model.entityVersionHashes["Mood"]
/// hash?.base64   // "…=" as in the store's metadata
/// ```
public struct VersionHash: Sendable, Hashable, CustomStringConvertible {
  /// The 32 bytes.
  public let data: Data

  /// A hash from its 32 bytes; `nil` for any other length.
  public init?(data: Data) {
    guard data.count == SHA256.byteCount else { return nil }
    self.data = data
  }

  /// A hash from its base64 form, as `migrun hash` prints it; `nil` when that is not 32 bytes.
  public init?(base64: String) {
    guard let data = Data(base64Encoded: base64) else { return nil }
    self.init(data: data)
  }

  init(digest: SHA256.Digest) {
    data = Data(digest)
  }

  /// The base64 form, as Core Data's metadata shows it in a plist.
  public var base64: String { data.base64EncodedString() }

  public var description: String { base64 }
}

/// Computes version hashes for one model (SPEC §1.2).
struct VersionHasher {
  package let model: ObjectModel

  /// Every entity's hash, parents before children (a child's hash includes its parent's).
  func entityHashes() -> [String: VersionHash] {
    var hashes: [String: VersionHash] = [:]
    for entity in model.entities {
      _ = entityHash(entity, memo: &hashes)
    }
    return hashes
  }

  func entityHash(_ entity: Entity, memo: inout [String: VersionHash]) -> VersionHash {
    if let known = memo[entity.name] { return known }
    var bytes = HashInput()
    bytes.append(entity.name)
    bytes.append(UInt8(entity.isAbstract ? 1 : 0))
    if let parent = entity.parentName.flatMap(model.entity(named:)) {
      bytes.append(entityHash(parent, memo: &memo).data)
    }
    var properties: [(name: String, hash: VersionHash)] = []
    for attribute in model.declaredAttributes(of: entity) where !attribute.isTransient {
      properties.append((attribute.name, attributeHash(attribute)))
    }
    for relationship in model.relationships(of: entity) where !relationship.isTransient {
      properties.append((relationship.name, relationshipHash(relationship, of: entity)))
    }
    properties.sort { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }
    for property in properties {
      bytes.append(property.hash.data)
    }
    if let modifier = entity.versionHashModifier {
      bytes.append(modifier)
    }
    let constraints = entity.uniquenessConstraints.map { $0.joined(separator: ".") }
    for constraint in constraints.sorted(by: { $0.utf16.lexicographicallyPrecedes($1.utf16) }) {
      bytes.append(constraint)
    }
    let hash = bytes.sha256()
    memo[entity.name] = hash
    return hash
  }

  func attributeHash(_ attribute: Attribute) -> VersionHash {
    if attribute.type == .composite {
      var bytes = HashInput()
      let leaves = Self.flattenedElements(of: attribute).filter { !$0.isTransient }
      for element in leaves.sorted(by: { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }) {
        bytes.append(attributeHash(element).data)
      }
      return bytes.sha256()
    }
    if let derivation = attribute.derivation {
      var bytes = HashInput()
      bytes.append(DerivationFormat.expression(derivation.expression))
      if let predicate = derivation.filterPredicate {
        bytes.append(predicate)
      }
      return bytes.sha256()
    }
    var bytes = HashInput()
    bytes.append(Self.propertyPrefix(attribute).data)
    bytes.append(attribute.type.rawValue)
    if attribute.allowsExternalBinaryDataStorage { bytes.append(UInt8(1)) }
    if attribute.preservesValueInHistoryOnDeletion { bytes.append(UInt8(1)) }
    return bytes.sha256()
  }

  /// A composite's elements with every nested composite replaced by its own elements, all the way
  /// down: `-[NSCompositeAttributeDescription _flattenElements:]`, which its `_versionHash:inStyle:`
  /// sorts by name and hashes leaf by leaf, leaving out transient ones (public decompilation of
  /// CoreData, iOS 18).
  static func flattenedElements(of composite: Attribute) -> [Attribute] {
    composite.elements.flatMap { element in
      element.type == .composite ? flattenedElements(of: element) : [element]
    }
  }

  /// `relationship` as the entity `owner` has it (declared there or inherited).
  func relationshipHash(_ relationship: Relationship, of owner: Entity) -> VersionHash {
    var bytes = HashInput()
    bytes.append(Self.propertyPrefix(relationship).data)
    bytes.append(relationship.destinationEntity)
    if let inverseName = relationship.inverseName, !isOwnInverse(relationship, of: owner) {
      bytes.append(inverseName)
    }
    bytes.append(relationship.maxCount)
    bytes.append(relationship.minCount)
    if relationship.isOrdered {
      bytes.append(UInt8(1))
      bytes.append(UInt8(0))
    }
    return bytes.sha256()
  }

  /// Whether the topmost declaration of the relationship is its own inverse: its inverse, looked up
  /// on its destination, is that very declaration.
  func isOwnInverse(_ relationship: Relationship, of owner: Entity) -> Bool {
    let lineage = model.ancestors(of: owner).reversed() + [owner]
    guard let top = lineage.first(where: { $0.relationships.contains { $0.name == relationship.name } }),
      let topmost = top.relationships.first(where: { $0.name == relationship.name }),
      topmost.inverseName == topmost.name,
      let destination = model.entity(named: topmost.destinationEntity)
    else { return false }
    return model.declaringEntity(ofRelationship: topmost.name, in: destination)?.name == top.name
  }

  static func propertyPrefix(_ property: some Property) -> VersionHash {
    var bytes = HashInput()
    bytes.append(property.name)
    var flags: UInt16 = 0
    if property.isOptional { flags |= 1 }
    if property.isTransient { flags |= 2 }
    if property.isReadOnly { flags |= 4 }
    bytes.append(flags)
    if let modifier = property.versionHashModifier {
      bytes.append(modifier)
    }
    return bytes.sha256()
  }

  /// Entity names in UTF-16 code-unit order, Core Data's order for the model digests.
  static func orderedNames(_ hashes: [String: VersionHash]) -> [String] {
    hashes.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
  }

  static func digest(of hashes: [String: VersionHash]) -> String {
    var sha = SHA512()
    for name in orderedNames(hashes) {
      sha.update(data: Data(name.utf8))
      if let hash = hashes[name] { sha.update(data: hash.data) }
    }
    return Data(sha.finalize()).base64EncodedString()
  }

  static func checksum(of hashes: [String: VersionHash]) -> String {
    var sha = SHA256()
    for name in orderedNames(hashes) {
      if let hash = hashes[name] { sha.update(data: hash.data) }
    }
    return Data(sha.finalize()).base64EncodedString()
  }
}

/// The bytes fed to one SHA-256, built in Core Data's layout.
struct HashInput {
  private(set) var bytes: [UInt8] = []

  mutating func append(_ string: String) { bytes.append(contentsOf: string.utf8) }
  mutating func append(_ data: Data) { bytes.append(contentsOf: data) }
  mutating func append(_ value: UInt8) { bytes.append(value) }
  mutating func append(_ value: UInt16) { appendLittleEndian(value) }
  mutating func append(_ value: UInt32) { appendLittleEndian(value) }
  mutating func append(_ value: Int32) { appendLittleEndian(UInt32(bitPattern: value)) }

  func sha256() -> VersionHash { VersionHash(digest: SHA256.hash(data: bytes)) }

  private mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }
}
