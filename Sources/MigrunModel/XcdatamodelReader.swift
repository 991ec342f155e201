import FileDoors
import Foundation
import PropertyList

/// Reads one model version in Xcode's format: an `.xcdatamodel` folder or the `contents` XML inside it.
///
/// Every element Core Data's model compiler reads is read. Inside an entity or a composite, an
/// element migrun does not know is an error naming it — skipping it could lose what it describes;
/// beside them (the diagram's `<elements>`, tool information) it is left aside. A model that cannot
/// be valid is refused with a ``ModelError`` naming the file, the entity and the property.
///
/// ```swift
/// let model = try XcdatamodelReader.read(contentsOf: URL(fileURLWithPath: "Moody 2.xcdatamodel"))
/// ```
package enum XcdatamodelReader {
  /// Reads `url`: an `.xcdatamodel` folder or a `contents` file. The version name defaults to the
  /// folder's name without its extension.
  package static func read(contentsOf url: URL, versionName: String? = nil) throws(ModelError) -> ObjectModel {
    let file = isDirectory(url) ? url.appendingPathComponent("contents") : url
    if isDirectory(url) { try refuseXcode3Model(url) }
    let name = versionName ?? defaultVersionName(for: file)
    let data: Data
    do {
      // The `contents` inside a folder is found there; a `contents` file given alone is named.
      data = try InputFile.data(file, origin: isDirectory(url) ? .found : .named)
    } catch let error as InputFileError {
      throw ModelError(.unreadable, file: file.path, reason: error.reason, underlying: error)
    } catch {
      throw ModelError(.unreadable, file: file.path, reason: "cannot read the model file (\(reasonText(error)))")
    }
    return try parse(data, file: file.path, versionName: name)
  }

  /// An `.xcdatamodel` folder of Xcode 3 (Core Data on iOS 3 and Mac OS X 10.5–10.6, stores of
  /// framework 320 and near) keeps its model in `elements`, a binary keyed archive of Xcode's own
  /// design classes, not the `contents` XML Xcode 4 writes; migrun does not read that archive (no
  /// public description of its classes), and says so by name rather than as a folder with no model.
  static func refuseXcode3Model(_ folder: URL) throws(ModelError) {
    let elements = folder.appendingPathComponent("elements")
    guard FileManager.default.fileExists(atPath: elements.path),
      !FileManager.default.fileExists(atPath: folder.appendingPathComponent("contents").path)
    else { return }
    throw ModelError(
      .notAModel, file: elements.path,
      reason: "an Xcode 3 model (its `elements` archive, before Xcode 4's `contents` XML), which migrun does not "
        + "read: open the model in Xcode 4 or later and save it (Xcode writes `contents`), or give its compiled "
        + ".mom/.momd, or the store itself (its Z_MODELCACHE holds the model)")
  }

  /// Parses model XML; `file` only names the source in errors.
  package static func parse(_ data: Data, file: String, versionName: String? = nil) throws(ModelError)
    -> ObjectModel
  {
    let builder = ModelXMLBuilder()
    var scanner = XMLScanner(Array(data))
    do {
      try scanner.scan(builder)
    } catch let error as ModelError {
      throw error.inFile(file)
    } catch let error as XMLScanError {
      throw ModelError(
        .malformedXML, file: file,
        reason: "not well-formed XML at line \(error.line), column \(error.column) (\(error.message))")
    } catch {
      throw ModelError(.malformedXML, file: file, reason: "\(error)", underlying: error)
    }
    guard builder.sawModel else {
      throw ModelError(.notAModel, file: file, reason: "no <model> element: this is not a Core Data model")
    }
    do {
      try builder.resolveComposites()
      return try ObjectModel(
        entities: builder.entities, versionName: versionName, versionIdentifiers: builder.versionIdentifiers,
        configurations: builder.configurations, fetchRequests: builder.fetchRequests)
    } catch {
      throw error.inFile(file)
    }
  }

  // MARK: - Non public

  static func isDirectory(_ url: URL) -> Bool {
    var directory: ObjCBool = false
    return FileManager.default.fileExists(atPath: url.path, isDirectory: &directory) && directory.boolValue
  }

  static func defaultVersionName(for contentsFile: URL) -> String? {
    let folder = contentsFile.lastPathComponent == "contents" ? contentsFile.deletingLastPathComponent() : contentsFile
    guard folder.pathExtension == "xcdatamodel" else { return nil }
    return folder.deletingPathExtension().lastPathComponent
  }

  static func reasonText(_ error: any Error) -> String {
    let nsError = error as NSError
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError {
      return underlying.localizedDescription
    }
    return nsError.localizedDescription
  }
}

/// Builds entities from the SAX events of one `contents` file.
private final class ModelXMLBuilder: XMLScanner.Delegate {
  var sawModel = false
  var closedModel = false
  var versionIdentifiers: [String] = []
  var entities: [Entity] = []
  var configurations: [String: [String]] = [:]
  var fetchRequests: [FetchRequestTemplate] = []

  private var entity: Entity?
  private var attribute: Attribute?
  private var relationship: Relationship?
  private var fetchedProperty: FetchedProperty?
  private var constraint: [String]?
  private var compoundIndex: [String]?
  private var fetchIndex: FetchIndex?
  private var configuration: String?
  /// Model-level `<composite name=…>` definitions (Xcode 15+): name → elements.
  private var composites: [String: [Attribute]] = [:]
  /// The `<composite>` being read.
  private var composite: (name: String, elements: [Attribute])?
  /// A composite attribute's `composite="…"`, by the path of the attribute (`Entity.attribute`, or
  /// `composite:Name.attribute` for an element).
  private var compositeReferences: [String: String] = [:]

  func startElement(_ element: String, attributes: [String: String]) throws {
    try start(element, attributes)
  }

  func endElement(_ element: String) throws {
    end(element)
  }

  func characters(_ text: String) throws {}

  private func start(_ element: String, _ values: [String: String]) throws(ModelError) {
    switch element {
    case "model":
      sawModel = true
      if let identifier = values["userDefinedModelVersionIdentifier"] { versionIdentifiers = [identifier] }
    case "entity":
      entity = try readEntity(values)
    case "attribute":
      attribute = try readAttribute(values)
      if let reference = values["composite"], let name = values["name"] {
        compositeReferences[ownerPath(of: name)] = reference
      }
    case "composite" where entity == nil:
      composite = (try name(of: element, values), [])
    case "relationship":
      relationship = try readRelationship(values)
    case "fetchedProperty":
      fetchedProperty = FetchedProperty(name: try name(of: element, values))
    case "fetchRequest":
      startFetchRequest(values)
    case "uniquenessConstraint": constraint = []
    case "constraint": if let value = values["value"] { constraint?.append(value) }
    case "compoundIndex": compoundIndex = []
    case "index": if let value = values["value"] { compoundIndex?.append(value) }
    case "fetchIndex": fetchIndex = FetchIndex(name: values["name"] ?? "", elements: [])
    case "fetchIndexElement":
      fetchIndex?.elements.append(readFetchIndexElement(values))
    case "configuration": configuration = values["name"]
    case "memberEntity":
      if let configuration, let name = values["name"] { configurations[configuration, default: []].append(name) }
    case "entry":
      if let key = values["key"] { addUserInfo(key, values["value"] ?? "") }
    case "uniquenessConstraints", "compoundIndexes", "userInfo", "elements", "element":
      break  // containers, and the diagram's layout
    default:
      // Inside an entity or a composite, an element describes what the store keeps: one migrun does
      // not know is refused by name. Beside them (tool and layout information) it is left aside.
      guard entity != nil || composite != nil else { break }
      throw ModelError(
        .invalidValue, entity: entity?.name,
        reason: "<\(element)> in \(entity != nil ? "an entity" : "a composite") is not an element migrun knows")
    }
  }

  private func readEntity(_ values: [String: String]) throws(ModelError) -> Entity {
    guard let name = values["name"], !name.isEmpty else {
      throw ModelError(.notAModel, reason: "an <entity> has no name")
    }
    return Entity(
      name: name, parentName: values["parentEntity"], isAbstract: flag(values["isAbstract"]),
      versionHashModifier: values["versionHashModifier"], renamingIdentifier: values["elementID"],
      className: values["representedClassName"])
  }

  /// A `<fetchRequest>`: a fetched property's (inside one), or a fetch request template of the model.
  private func startFetchRequest(_ values: [String: String]) {
    if fetchedProperty != nil {
      fetchedProperty?.fetchEntity = values["entity"]
      fetchedProperty?.predicate = values["predicateString"]
    } else if let name = values["name"], let entityName = values["entity"] {
      fetchRequests.append(FetchRequestTemplate(name: name, entity: entityName, predicate: values["predicateString"]))
    }
  }

  /// A `<fetchIndexElement>`. An element indexes a property, or an expression:
  /// `expression="lowercase:(title)" expressionType="String"` (NSExpression's format; the attribute
  /// names as tools that write model files spell them — no model we have shows one). An element with
  /// neither, or an expression migrun cannot read, is kept as one it cannot write: refused by name
  /// when a store is written, never an index silently narrower than declared.
  private func readFetchIndexElement(_ values: [String: String]) -> FetchIndex.Element {
    var expression: IndexExpression?
    if values["property"] == nil {
      let text = values["expression"] ?? ""
      do {
        expression = try IndexExpression.parse(text)
      } catch {
        expression = .other(
          text.isEmpty
            ? "no property and no expression"
            : "'\(ErrorMessage.quoted(text))', which migrun cannot read (\(error.reason))")
      }
    }
    return FetchIndex.Element(
      property: values["property"] ?? "", type: values["type"] ?? "Binary",
      isAscending: values["order"] != "descending", expression: expression,
      expressionType: values["expressionType"].flatMap(AttributeType.init(xmlName:)))
  }

  private func end(_ element: String) {
    switch element {
    case "model": closedModel = true
    case "entity":
      if let entity { entities.append(entity) }
      entity = nil
    case "attribute":
      if let attribute {
        if entity != nil { entity?.attributes.append(attribute) } else { composite?.elements.append(attribute) }
      }
      attribute = nil
    case "composite":
      if let composite, entity == nil { composites[composite.name] = composite.elements }
      composite = nil
    case "relationship":
      if let relationship { entity?.relationships.append(relationship) }
      relationship = nil
    case "fetchedProperty":
      if let fetchedProperty { entity?.fetchedProperties.append(fetchedProperty) }
      fetchedProperty = nil
    case "uniquenessConstraint":
      if let constraint, !constraint.isEmpty { entity?.uniquenessConstraints.append(constraint) }
      constraint = nil
    case "compoundIndex":
      if let compoundIndex, !compoundIndex.isEmpty { entity?.compoundIndexes.append(compoundIndex) }
      compoundIndex = nil
    case "fetchIndex":
      if let fetchIndex { entity?.fetchIndexes.append(fetchIndex) }
      fetchIndex = nil
    case "configuration": configuration = nil
    default: break
    }
  }

  private func ownerPath(of attribute: String) -> String {
    if let entity { return entity.name + "." + attribute }
    return "composite:" + (composite?.name ?? "") + "." + attribute
  }

  /// Gives every composite attribute the elements of the `<composite>` it names — how Xcode 15+
  /// writes them: `<attribute name="author" attributeType="Composite" composite="Author"/>` in the
  /// entity, `<composite name="Author">` with its `<attribute>`s beside the entities. (The element
  /// names are Xcode's as public model parsers read them; the `composite` key is our reading of
  /// Xcode's files, not documented.) A composite naming no definition, or itself, is an error.
  func resolveComposites() throws(ModelError) {
    func resolved(_ attribute: Attribute, path: String, entity: String, visiting: [String]) throws(ModelError)
      -> Attribute
    {
      guard attribute.type == .composite else { return attribute }
      guard let reference = compositeReferences[path], let elements = composites[reference] else {
        throw ModelError(
          .invalidValue, entity: entity, property: attribute.name,
          reason: "the composite attribute names no <composite> definition in the model"
            + (compositeReferences[path].map { " ('\($0)' is not defined)" } ?? ""))
      }
      guard !visiting.contains(reference), !elements.isEmpty else {
        throw ModelError(
          .invalidValue, entity: entity, property: attribute.name,
          reason: "composite '\(reference)' " + (elements.isEmpty ? "has no elements" : "contains itself"))
      }
      var attribute = attribute
      attribute.elements = []
      for element in elements {
        attribute.elements.append(
          try resolved(
            element, path: "composite:" + reference + "." + element.name, entity: entity,
            visiting: visiting + [reference]))
      }
      return attribute
    }
    for index in entities.indices {
      let name = entities[index].name
      for position in entities[index].attributes.indices {
        let attribute = entities[index].attributes[position]
        entities[index].attributes[position] = try resolved(
          attribute, path: name + "." + attribute.name, entity: name, visiting: [])
      }
    }
  }

  private func readAttribute(_ values: [String: String]) throws(ModelError) -> Attribute {
    let name = try name(of: "attribute", values)
    let typeName = values["attributeType"] ?? "Undefined"
    guard let type = AttributeType(xmlName: typeName) else {
      let known = AttributeType.allCases.map(\.xmlName).joined(separator: ", ")
      throw ModelError(
        .unknownAttributeType, entity: entity?.name, property: name,
        reason: "unknown attribute type '\(typeName)' (known: \(known))")
    }
    var derivation: Derivation?
    if flag(values["derived"]), let expression = values["derivationExpression"] {
      derivation = Derivation(expression: expression, filterPredicate: values["derivationFilterPredicate"])
    }
    let validationKeys = [
      "minValueString", "maxValueString", "regularExpressionString", "minDateTimeInterval", "maxDateTimeInterval",
    ]
    return Attribute(
      name: name, type: type, isOptional: flag(values["optional"]), isTransient: flag(values["transient"]),
      isReadOnly: derivation != nil, versionHashModifier: values["versionHashModifier"],
      renamingIdentifier: values["elementID"], defaultValueString: values["defaultValueString"],
      allowsExternalBinaryDataStorage: flag(values["allowsExternalBinaryDataStorage"]),
      preservesValueInHistoryOnDeletion: flag(values["preserveAfterDeletion"]), derivation: derivation,
      isIndexed: flag(values["indexed"]), valueTransformerName: values["valueTransformerName"],
      customClassName: values["customClassName"],
      validation: values.filter { validationKeys.contains($0.key) })
  }

  private func readRelationship(_ values: [String: String]) throws(ModelError) -> Relationship {
    let name = try name(of: "relationship", values)
    guard let destination = values["destinationEntity"], !destination.isEmpty else {
      throw ModelError(
        .missingDestinationEntity, entity: entity?.name, property: name,
        reason: "the relationship has no destination entity")
    }
    let toMany = flag(values["toMany"])
    let maxCount = try count(values["maxCount"], "maxCount", property: name) ?? (toMany ? 0 : 1)
    let minCount = try count(values["minCount"], "minCount", property: name) ?? 0
    var deleteRule = DeleteRule.nullify
    if let ruleName = values["deletionRule"] {
      guard let rule = DeleteRule(rawValue: ruleName) else {
        throw ModelError(
          .invalidValue, entity: entity?.name, property: name, reason: "unknown deletion rule '\(ruleName)'")
      }
      deleteRule = rule
    }
    return Relationship(
      name: name, destinationEntity: destination, inverseName: values["inverseName"],
      inverseEntity: values["inverseEntity"], minCount: minCount, maxCount: maxCount,
      isOrdered: flag(values["ordered"]), deleteRule: deleteRule, isOptional: flag(values["optional"]),
      isTransient: flag(values["transient"]), versionHashModifier: values["versionHashModifier"],
      renamingIdentifier: values["elementID"])
  }

  private func count(_ text: String?, _ key: String, property: String) throws(ModelError) -> Int32? {
    guard let text else { return nil }
    guard let value = Int32(text) else {
      throw ModelError(
        .invalidValue, entity: entity?.name, property: property, reason: "\(key) '\(text)' is not a number")
    }
    return value
  }

  private func name(of element: String, _ values: [String: String]) throws(ModelError) -> String {
    guard let name = values["name"], !name.isEmpty else {
      throw ModelError(.notAModel, entity: entity?.name, reason: "an <\(element)> has no name")
    }
    return name
  }

  private func addUserInfo(_ key: String, _ value: String) {
    if attribute != nil {
      attribute?.userInfo[key] = value
    } else if relationship != nil {
      relationship?.userInfo[key] = value
    } else if fetchedProperty != nil {
      fetchedProperty?.userInfo[key] = value
    } else {
      entity?.userInfo[key] = value
    }
  }

  /// Xcode writes booleans as `YES`; a missing one means NO.
  private func flag(_ value: String?) -> Bool { value == "YES" }
}
