/// An attribute of an entity: Core Data's `NSAttributeDescription` (and `NSDerivedAttributeDescription`
/// when `derivation` is set).
///
/// ```swift
/// var title = Attribute(name: "title", type: .string)
/// title.isOptional = true
/// ```
public struct Attribute: Property {
  public var name: String
  public var type: AttributeType
  public var isOptional: Bool
  public var isTransient: Bool
  public var isReadOnly: Bool
  public var versionHashModifier: String?
  public var renamingIdentifier: String?
  public var userInfo: [String: String]
  /// The default value as Xcode writes it (`defaultValueString`), unparsed.
  public var defaultValueString: String?
  public var allowsExternalBinaryDataStorage: Bool
  /// Xcode's "Preserve After Deletion" (persistent history keeps the value in tombstones).
  public var preservesValueInHistoryOnDeletion: Bool
  /// Set for a derived attribute: the value is computed by the store, never written.
  package var derivation: Derivation?
  /// Xcode's "Indexed" checkbox (an index on the attribute's column).
  public var isIndexed: Bool
  public var valueTransformerName: String?
  public var customClassName: String?
  /// Validation rules as written in the model (`minValueString`, `maxValueString`, `regularExpressionString`…).
  /// Not part of identity.
  public var validation: [String: String]
  /// A composite attribute's elements (Core Data's `NSCompositeAttributeDescription.elements`, type
  /// ``AttributeType/composite``), in the model's order; empty for every other attribute. An element
  /// may itself be a composite.
  public var elements: [Attribute]

  package init(
    name: String, type: AttributeType, isOptional: Bool = false, isTransient: Bool = false,
    isReadOnly: Bool = false, versionHashModifier: String? = nil, renamingIdentifier: String? = nil,
    userInfo: [String: String] = [:], defaultValueString: String? = nil,
    allowsExternalBinaryDataStorage: Bool = false, preservesValueInHistoryOnDeletion: Bool = false,
    derivation: Derivation? = nil, isIndexed: Bool = false, valueTransformerName: String? = nil,
    customClassName: String? = nil, validation: [String: String] = [:], elements: [Attribute] = []
  ) {
    self.name = name
    self.type = type
    self.isOptional = isOptional
    self.isTransient = isTransient
    self.isReadOnly = isReadOnly
    self.versionHashModifier = versionHashModifier
    self.renamingIdentifier = renamingIdentifier
    self.userInfo = userInfo
    self.defaultValueString = defaultValueString
    self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
    self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
    self.derivation = derivation
    self.isIndexed = isIndexed
    self.valueTransformerName = valueTransformerName
    self.customClassName = customClassName
    self.validation = validation
    self.elements = elements
  }
}

extension Attribute {
  /// What a store keeps of this attribute, one entry per column: the attribute itself, or for a
  /// composite its elements (nested ones flattened too), each named by its key path —
  /// `author.person`, Core Data's namespaced key path for a composite's element — with the element's
  /// type and flags. A composite's flags reach its elements: a transient composite has transient
  /// elements. An element's renaming identifier is its path of renaming identifiers.
  public var leaves: [Attribute] {
    guard type == .composite else { return [self] }
    return elements.flatMap { element in
      element.leaves.map { leaf in
        var leaf = leaf
        let path = name + "." + leaf.name
        let renamed = canonicalName + "." + leaf.canonicalName
        leaf.name = path
        leaf.renamingIdentifier = renamed == path ? nil : renamed
        leaf.isTransient = leaf.isTransient || isTransient
        return leaf
      }
    }
  }

  /// The name a store's column is made from: the last part of a composite element's key path
  /// (`author.person` → `ZPERSON`), the name itself for any other attribute.
  public var columnStem: String {
    name.lastIndex(of: ".").map { String(name[name.index(after: $0)...]) } ?? name
  }

  /// Whether Core Data may keep this attribute's values outside the store (binary data or a
  /// transformable's data with `allowsExternalBinaryDataStorage`): its column then holds tagged
  /// bytes (see `ExternalData`).
  public var storesExternally: Bool {
    allowsExternalBinaryDataStorage && (type == .binary || type == .transformable)
  }
}

/// How a derived attribute computes its value: Core Data's `derivationExpression` (an `NSExpression`)
/// and optional filtering predicate.
package struct Derivation: Sendable, Hashable {
  /// The expression as written in the model, e.g. `pages.@count`.
  package var expression: String
  /// The filtering predicate's format string, when the model has one.
  package var filterPredicate: String?

  package init(expression: String, filterPredicate: String? = nil) {
    self.expression = expression
    self.filterPredicate = filterPredicate
  }
}
