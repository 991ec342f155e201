/// An entity of a managed object model: Core Data's `NSEntityDescription`.
///
/// An entity holds only the properties it declares; ``ObjectModel`` resolves inheritance
/// (`ObjectModel/properties(of:)`). Identity — what the version hash covers — is the name, the
/// abstract flag, the parent, the non-transient properties, ``versionHashModifier`` and
/// ``uniquenessConstraints``; everything else (class name, userInfo, indexes) is not.
public struct Entity: Sendable, Hashable {
  public var name: String
  /// The superentity's name.
  public var parentName: String?
  public var isAbstract: Bool
  public var attributes: [Attribute]
  public var relationships: [Relationship]
  /// Kept with the entity, never hashed or stored.
  package var fetchedProperties: [FetchedProperty]
  public var versionHashModifier: String?
  /// The name this entity had in an earlier version (Xcode: "Renaming ID", XML `elementID`).
  public var renamingIdentifier: String?
  /// Each constraint is a list of property names whose values together are unique.
  public var uniquenessConstraints: [[String]]
  public var className: String?
  public var userInfo: [String: String]
  /// Compound indexes (`<compoundIndexes>`), each a list of property names.
  public var compoundIndexes: [[String]]
  /// Fetch indexes (`<fetchIndex>`), the modern form of indexes.
  package var fetchIndexes: [FetchIndex]

  package init(
    name: String, parentName: String? = nil, isAbstract: Bool = false, attributes: [Attribute] = [],
    relationships: [Relationship] = [], fetchedProperties: [FetchedProperty] = [],
    versionHashModifier: String? = nil, renamingIdentifier: String? = nil,
    uniquenessConstraints: [[String]] = [], className: String? = nil, userInfo: [String: String] = [:],
    compoundIndexes: [[String]] = [], fetchIndexes: [FetchIndex] = []
  ) {
    self.name = name
    self.parentName = parentName
    self.isAbstract = isAbstract
    self.attributes = attributes
    self.relationships = relationships
    self.fetchedProperties = fetchedProperties
    self.versionHashModifier = versionHashModifier
    self.renamingIdentifier = renamingIdentifier
    self.uniquenessConstraints = uniquenessConstraints
    self.className = className
    self.userInfo = userInfo
    self.compoundIndexes = compoundIndexes
    self.fetchIndexes = fetchIndexes
  }

  /// The name a migration matches this entity by in an earlier version.
  public var canonicalName: String { renamingIdentifier ?? name }

  /// The attribute or relationship this entity itself declares with that name; a composite's
  /// element by its key path (`author.person`).
  package func declaredProperty(named name: String) -> (any Property)? {
    if let attribute = attributes.first(where: { $0.name == name }) { return attribute }
    if let relationship = relationships.first(where: { $0.name == name }) { return relationship }
    guard name.contains(".") else { return nil }
    return attributes.lazy.filter { $0.type == .composite }.flatMap(\.leaves).first { $0.name == name }
  }
}

/// A fetch index: Core Data's `NSFetchIndexDescription`.
package struct FetchIndex: Sendable, Hashable {
  package struct Element: Sendable, Hashable {
    /// The property indexed; for an expression element, the expression description's name (empty
    /// when the model file gives none).
    package var property: String
    /// `Binary` or `R-Tree`, as Xcode writes it.
    package var type: String
    package var isAscending: Bool
    /// An expression element's expression (`NSExpressionDescription.expression`), written as Core
    /// Data's `NSSQLIndexIntermediate` writes it (see `StoreSchema.Builder`).
    package var expression: IndexExpression?
    /// An expression element's result type (`expressionType` in the model file).
    package var expressionType: AttributeType?

    package init(
      property: String, type: String = "Binary", isAscending: Bool = true, expression: IndexExpression? = nil,
      expressionType: AttributeType? = nil
    ) {
      self.property = property
      self.type = type
      self.isAscending = isAscending
      self.expression = expression
      self.expressionType = expressionType
    }
  }

  package var name: String
  package var elements: [Element]
  /// `NSFetchIndexDescription.partialIndexPredicate`, in `NSPredicate`'s format: the rows indexed.
  package var partialPredicate: String?

  package init(name: String, elements: [Element], partialPredicate: String? = nil) {
    self.name = name
    self.elements = elements
    self.partialPredicate = partialPredicate
  }
}
