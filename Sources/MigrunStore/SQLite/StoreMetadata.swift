import Foundation
import MigrunModel
import PropertyList

/// A store's metadata: `Z_METADATA`'s UUID and its property list (Core Data's store metadata).
///
/// Keys migrun does not interpret — an app's own metadata, CloudKit markers — are kept in
/// `otherKeys` and written back untouched.
public struct StoreMetadata: Sendable, Hashable {
  /// Core Data's framework version migrun writes in new stores (the newest in the fixtures).
  public static let frameworkVersionWritten: Int64 = 1344

  public var uuid: String
  public var storeType: String
  public var frameworkVersion: Int64?
  /// `NSStoreModelVersionHashes`: entity name → version hash.
  public var versionHashes: [String: VersionHash]
  public var hashesVersion: Int64
  public var versionIdentifiers: [String]
  public var autoVacuumLevel: String?
  /// `NSStoreModelVersionHashesDigest`, when the store has it.
  public var hashesDigest: String?
  /// `NSStoreModelVersionChecksumKey`, when the store has it.
  public var versionChecksum: String?
  /// Every other key, as stored.
  package var otherKeys: [String: PropertyListValue]

  static let knownKeys: Set<String> = [
    "NSStoreType", "NSPersistenceFrameworkVersion", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
    "NSStoreModelVersionIdentifiers", "_NSAutoVacuumLevel", "NSStoreModelVersionHashesDigest",
    "NSStoreModelVersionChecksumKey", "NSStoreUUID",
  ]

  /// Metadata for a new store of `model`.
  public init(model: ObjectModel, uuid: String = UUID().uuidString) {
    self.uuid = uuid
    storeType = "SQLite"
    frameworkVersion = Self.frameworkVersionWritten
    versionHashes = model.entityVersionHashes
    hashesVersion = 3
    versionIdentifiers = model.versionIdentifiers
    autoVacuumLevel = "2"
    hashesDigest = model.versionHashesDigest
    versionChecksum = model.versionChecksum
    otherKeys = [:]
  }

  /// Reads the metadata property list.
  package init(uuid: String, plist: PropertyListValue) throws(StoreError) {
    guard case .dictionary(let entries) = plist else {
      throw StoreError(.badMetadata, reason: "Z_METADATA.Z_PLIST is not a dictionary")
    }
    guard case .dictionary(let hashes)? = entries["NSStoreModelVersionHashes"] else {
      throw StoreError(.badMetadata, reason: "Z_METADATA has no NSStoreModelVersionHashes")
    }
    var versionHashes: [String: VersionHash] = [:]
    for (entity, value) in hashes {
      guard case .data(let bytes) = value, let hash = VersionHash(data: Data(bytes)) else {
        throw StoreError(.badMetadata, entity: entity, reason: "the stored version hash is not 32 bytes")
      }
      versionHashes[entity] = hash
    }
    self.uuid = entries["NSStoreUUID"]?.stringValue ?? uuid
    storeType = entries["NSStoreType"]?.stringValue ?? "SQLite"
    frameworkVersion = entries["NSPersistenceFrameworkVersion"]?.integerValue
    self.versionHashes = versionHashes
    hashesVersion = entries["NSStoreModelVersionHashesVersion"]?.integerValue ?? 3
    versionIdentifiers = entries["NSStoreModelVersionIdentifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
    switch entries["_NSAutoVacuumLevel"] {
    case .string(let level)?: autoVacuumLevel = level
    case .integer(let level)?: autoVacuumLevel = String(level)
    default: autoVacuumLevel = nil
    }
    hashesDigest = entries["NSStoreModelVersionHashesDigest"]?.stringValue
    versionChecksum = entries["NSStoreModelVersionChecksumKey"]?.stringValue
    otherKeys = entries.filter { !Self.knownKeys.contains($0.key) }
  }

  /// The property list written to `Z_METADATA.Z_PLIST`.
  package var plist: PropertyListValue {
    var entries = otherKeys
    entries["NSStoreType"] = .string(storeType)
    if let frameworkVersion { entries["NSPersistenceFrameworkVersion"] = .integer(frameworkVersion) }
    entries["NSStoreModelVersionHashes"] = .dictionary(versionHashes.mapValues { .data(Array($0.data)) })
    entries["NSStoreModelVersionHashesVersion"] = .integer(hashesVersion)
    entries["NSStoreModelVersionIdentifiers"] = .array(versionIdentifiers.map(PropertyListValue.string))
    if let autoVacuumLevel { entries["_NSAutoVacuumLevel"] = .string(autoVacuumLevel) }
    if let hashesDigest { entries["NSStoreModelVersionHashesDigest"] = .string(hashesDigest) }
    if let versionChecksum { entries["NSStoreModelVersionChecksumKey"] = .string(versionChecksum) }
    return .dictionary(entries)
  }

  /// The same metadata describing `model` instead: hashes, identifiers, digest and checksum
  /// replaced, the UUID and every other key kept (what a migration writes).
  public func describing(_ model: ObjectModel) -> StoreMetadata {
    var copy = self
    copy.versionHashes = model.entityVersionHashes
    copy.versionIdentifiers = model.versionIdentifiers
    copy.hashesDigest = model.versionHashesDigest
    copy.versionChecksum = model.versionChecksum
    copy.hashesVersion = 3
    copy.frameworkVersion = Self.frameworkVersionWritten
    return copy
  }

  /// How the store's entities differ from `model`'s, entity by entity; empty when they fit.
  package func differences(from model: ObjectModel) -> [EntityDifference] {
    var differences: [EntityDifference] = []
    for name in Set(versionHashes.keys).union(model.entityVersionHashes.keys).sorted() {
      switch (versionHashes[name], model.entityVersionHashes[name]) {
      case (let stored?, let modelled?) where stored != modelled:
        differences.append(EntityDifference(entity: name, kind: .hashDiffers(store: stored, model: modelled)))
      case (_?, nil): differences.append(EntityDifference(entity: name, kind: .onlyInStore))
      case (nil, _?): differences.append(EntityDifference(entity: name, kind: .onlyInModel))
      default: break
      }
    }
    return differences
  }

  /// Whether the store fits `model`: every entity's hash is equal (identifiers never matter).
  public func isCompatible(with model: ObjectModel) -> Bool { differences(from: model).isEmpty }
}

/// One way a store's entities differ from a model's.
package struct EntityDifference: Sendable, Hashable, CustomStringConvertible {
  package enum Kind: Sendable, Hashable {
    case onlyInStore
    case onlyInModel
    case hashDiffers(store: VersionHash, model: VersionHash)
  }

  package let entity: String
  package let kind: Kind

  package var description: String {
    switch kind {
    case .onlyInStore: "\(entity): in the store, not in the model"
    case .onlyInModel: "\(entity): in the model, not in the store"
    case .hashDiffers(let store, let model): "\(entity): store hash \(store.base64), model hash \(model.base64)"
    }
  }
}
