/// A relationship of an entity: Core Data's `NSRelationshipDescription`.
///
/// A relationship is to-one when ``maxCount`` is 1 and to-many otherwise (0 means no upper bound).
///
/// ```swift
/// let moods = Relationship(name: "moods", destinationEntity: "Mood", inverseName: "country", maxCount: 0)
/// moods.isToMany  // true
/// ```
public struct Relationship: Property {
  public var name: String
  /// The name of the entity the relationship points to.
  public var destinationEntity: String
  /// The name of the inverse relationship on the destination entity, when there is one.
  public var inverseName: String?
  /// The entity that declares the inverse (normally the destination).
  public var inverseEntity: String?
  public var minCount: Int32
  /// The largest number of destination objects; 1 for to-one, 0 for an unbounded to-many.
  public var maxCount: Int32
  public var isOrdered: Bool
  package var deleteRule: DeleteRule
  public var isOptional: Bool
  public var isTransient: Bool
  public var isReadOnly: Bool
  public var versionHashModifier: String?
  public var renamingIdentifier: String?
  public var userInfo: [String: String]

  /// Whether the relationship holds a set (or ordered set) rather than one object.
  public var isToMany: Bool { maxCount != 1 }

  package init(
    name: String, destinationEntity: String, inverseName: String? = nil, inverseEntity: String? = nil,
    minCount: Int32 = 0, maxCount: Int32 = 1, isOrdered: Bool = false, deleteRule: DeleteRule = .nullify,
    isOptional: Bool = true, isTransient: Bool = false, isReadOnly: Bool = false,
    versionHashModifier: String? = nil, renamingIdentifier: String? = nil, userInfo: [String: String] = [:]
  ) {
    self.name = name
    self.destinationEntity = destinationEntity
    self.inverseName = inverseName
    self.inverseEntity = inverseEntity ?? (inverseName == nil ? nil : destinationEntity)
    self.minCount = minCount
    self.maxCount = maxCount
    self.isOrdered = isOrdered
    self.deleteRule = deleteRule
    self.isOptional = isOptional
    self.isTransient = isTransient
    self.isReadOnly = isReadOnly
    self.versionHashModifier = versionHashModifier
    self.renamingIdentifier = renamingIdentifier
    self.userInfo = userInfo
  }
}

/// What happens to a relationship's destination objects when the source object is deleted.
/// Not part of the version hash.
package enum DeleteRule: String, Sendable, Hashable, CaseIterable, Codable {
  case noAction = "No Action"
  case nullify = "Nullify"
  case cascade = "Cascade"
  case deny = "Deny"
}

/// A fetched property: a stored fetch request. Kept with its entity, never hashed or stored.
package struct FetchedProperty: Sendable, Hashable {
  package var name: String
  /// The entity the fetch request fetches.
  package var fetchEntity: String?
  /// The fetch request's predicate, as written in the model.
  package var predicate: String?
  package var userInfo: [String: String]

  package init(
    name: String, fetchEntity: String? = nil, predicate: String? = nil, userInfo: [String: String] = [:]
  ) {
    self.name = name
    self.fetchEntity = fetchEntity
    self.predicate = predicate
    self.userInfo = userInfo
  }
}
