/// A model that cannot be read or could not be loaded by Core Data.
///
/// The message names the file, the entity and the property where they are known:
///
/// ```
/// Moody.xcdatamodel/contents: entity 'Mood', relationship 'country': destination entity 'Place' does not exist
/// ```
///
/// Match on ``code`` to handle a kind of failure:
///
/// ```swift
/// do { _ = try ModelBundle(contentsOf: url) }
/// catch let error as ModelError where error.code == .inheritanceCycle { … }
/// ```
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible, CarriesCause {
  /// What went wrong.
  public enum Code: String, Sendable, Hashable, CaseIterable {
    /// The file or folder could not be read.
    case unreadable
    /// The XML is not well formed (truncated, not XML).
    case malformedXML
    /// The XML is well formed but is not a Core Data model (wrong root element, missing names).
    case notAModel
    /// An `.xcdatamodeld` folder with no `.xcdatamodel` versions in it.
    case noVersions
    /// A version name that the bundle does not have.
    case unknownVersion
    case unknownAttributeType
    case duplicateEntity
    case duplicateProperty
    /// An entity or property name of other characters than letters, digits and `_` (what Xcode's
    /// model editor accepts): Core Data's store writes it unquoted into its SQL.
    case invalidName
    case missingParentEntity
    case inheritanceCycle
    case missingDestinationEntity
    case missingInverseRelationship
    case unknownConstraintProperty
    case invalidValue
    /// A configuration the model does not have, or one that cannot stand alone.
    case unknownConfiguration
  }

  public let code: Code
  /// The model file (a `contents` file, an `.xcdatamodel` or `.xcdatamodeld` folder).
  public let file: String?
  public let entity: String?
  public let property: String?
  /// What is wrong, in words.
  public let reason: String
  /// The error underneath, when another failure caused this one.
  package let cause: ErrorCause?

  /// The error underneath, when another failure (a file system's, SQLite's) caused this one.
  public var underlyingError: (any Error)? { cause?.error }

  public init(
    _ code: Code, file: String? = nil, entity: String? = nil, property: String? = nil, reason: String,
    underlying: (any Error)? = nil
  ) {
    self.code = code
    self.file = file
    self.entity = entity
    self.property = property
    self.reason = reason
    cause = underlying.map(ErrorCause.init)
  }

  /// One line: `file: entity 'E', property 'p': reason`.
  public var description: String {
    ErrorMessage.line(file, entity: entity, detail: property.map { "property '\($0)'" }, reason)
  }

  /// The same error, attributed to `file` when it did not name one yet.
  package func inFile(_ path: String) -> ModelError {
    file == nil
      ? ModelError(code, file: path, entity: entity, property: property, reason: reason, underlying: cause?.error)
      : self
  }
}
