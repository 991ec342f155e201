import FileDoors
import Foundation
import MigrunModel
import PropertyList

/// A mapping model made with Xcode's mapping editor, read as it is: the source form
/// (`NAME.xcmappingmodel/xcmapping.xml`) or the compiled one Xcode puts in the app (`NAME.cdm`, a
/// keyed archive of `NSMappingModel`). Both read to the same value: entity mappings with their kind,
/// entities, custom policy class, user info and property mappings with their value expressions.
///
/// What the source form leaves to the compiler is filled in the way the compiler does (checked
/// against CoreDataPlus's `V2toV3.xcmappingmodel` and the `.cdm` Xcode made of it): entity mapping
/// names, kinds of "Undefined" mappings, and the expressions the editor generates
/// (`autogenerateexpression`).
///
/// ```swift
/// let model = try AppleMappingModel.read(contentsOf: URL(fileURLWithPath: "Moody 4-Moody 5.xcmappingmodel"), bundle: moody)
/// model.entityMappings[0].attributes   // [PropertyMapping(name: "isoContinent", expression: $source.continent.numericISO3166Code), …]
/// ```
package struct AppleMappingModel: Sendable, Hashable {
  /// `NSEntityMappingType`.
  package enum Kind: String, Sendable, Hashable {
    case undefined, custom, add, remove, copy, transform

    init(code: Int64) {
      self = [1: .custom, 2: .add, 3: .remove, 4: .copy, 5: .transform][code] ?? .undefined
    }
  }

  /// `NSPropertyMapping`: a destination property and the expression that gives its value (nil: none,
  /// the property keeps its default).
  package struct PropertyMapping: Sendable, Hashable {
    package var name: String
    package var expression: MappingExpression?
    package var userInfo: [String: String]

    package init(name: String, expression: MappingExpression?, userInfo: [String: String] = [:]) {
      self.name = name
      self.expression = expression
      self.userInfo = userInfo
    }
  }

  /// `NSEntityMapping`.
  package struct EntityMapping: Sendable, Hashable {
    package var name: String
    package var kind: Kind
    package var sourceEntity: String?
    package var destinationEntity: String?
    /// The version hashes of the entities the mapping was made for (to check it fits a step).
    package var sourceEntityHash: VersionHash?
    package var destinationEntityHash: VersionHash?
    /// The `NSEntityMigrationPolicy` subclass named in the editor (`Module.ClassName`), if any.
    package var policyClassName: String?
    /// Which source objects take part: a fetch of the source entity (nil when the mapping has none).
    package var sourceExpression: MappingExpression?
    /// Attribute and relationship mappings, by destination property name.
    package var attributes: [PropertyMapping]
    package var relationships: [PropertyMapping]
    package var userInfo: [String: String]
  }

  /// The file's name (`Moody 4-Moody 5.xcmappingmodel`), for messages.
  package var fileName: String
  /// The versions the mapping was made for (of the model it was read with).
  package var sourceVersion: String
  package var destinationVersion: String
  /// In the model's order (the editor's mapping numbers).
  package var entityMappings: [EntityMapping]

  /// Reads an `.xcmappingmodel` folder (or its `xcmapping.xml`) or a `.cdm` file made for two
  /// versions of `bundle`. Which two: for the source form, the model paths it records
  /// (`…/Moody 5.xcdatamodel`); for the compiled form, the versions whose entity hashes are the ones
  /// it records — as Core Data finds a mapping model for a store.
  package static func read(contentsOf url: URL, bundle: ModelBundle) throws(MigrationError) -> AppleMappingModel {
    try read(contentsOf: url, versions: bundle.models, modelName: bundle.url.lastPathComponent)
  }

  /// Reads a mapping model made for two of `versions` (models with version names; `modelName`
  /// names them in messages).
  package static func read(contentsOf url: URL, versions: [ObjectModel], modelName: String) throws(MigrationError)
    -> AppleMappingModel
  {
    var file = url
    if url.pathExtension == "xcmappingmodel" { file = url.appendingPathComponent("xcmapping.xml") }
    let name = url.pathExtension == "xml" ? url.deletingLastPathComponent().lastPathComponent : url.lastPathComponent
    let data: Data
    do {
      data = try InputFile.data(file)
    } catch {
      let reason = InputFile.kind(at: file.path) == nil ? "no file \(file.path)" : "\(error)"
      throw MigrationError(.badMapping, reason: "\(url.path): cannot read the mapping model (\(reason))")
    }
    let bytes = Array(data)
    return bytes.starts(with: Array("bplist".utf8))
      ? try parse(cdm: bytes, fileName: name, versions: versions, modelName: modelName)
      : try parse(xcmapping: bytes, fileName: name, versions: versions, modelName: modelName)
  }

  /// Whether the model was made for these two versions: the names it was read for and every entity
  /// hash it records. Returns the first difference, in words, or nil.
  package func mismatch(source: ObjectModel, destination: ObjectModel) -> String? {
    if let name = source.versionName, let other = destination.versionName,
      name != sourceVersion || other != destinationVersion
    {
      return "it was made for \(sourceVersion) → \(destinationVersion), not \(name) → \(other)"
    }
    return hashMismatch(source: source, destination: destination)
  }

  /// The first entity whose version hash is not the one the mapping model records.
  func hashMismatch(source: ObjectModel, destination: ObjectModel) -> String? {
    for mapping in entityMappings {
      for (side, entity, hash, model) in [
        ("source", mapping.sourceEntity, mapping.sourceEntityHash, source),
        ("destination", mapping.destinationEntity, mapping.destinationEntityHash, destination),
      ] {
        guard let entity, let hash else { continue }
        guard let actual = model.entityVersionHashes[entity] else {
          return "entity mapping \(mapping.name): the \(side) model has no entity '\(entity)'"
        }
        if actual != hash {
          return
            "entity mapping \(mapping.name): the \(side) entity '\(entity)' is not the one the mapping was made for "
            + "(version hash \(hash.base64), the model's \(actual.base64))"
        }
      }
    }
    return nil
  }

  // MARK: - Compiled (.cdm)

  package static func parse(cdm bytes: [UInt8], fileName: String, versions: [ObjectModel], modelName: String)
    throws(MigrationError)
    -> AppleMappingModel
  {
    func fail(_ reason: String) -> MigrationError {
      MigrationError(.badMapping, reason: "\(fileName): \(reason)")
    }
    let archive: ArchivedValue
    do {
      archive = try KeyedArchive.unarchive(bytes)
    } catch {
      throw fail("cannot be read as a compiled mapping model (an archived NSMappingModel): \(error)")
    }
    guard case .object("NSMappingModel", let fields) = archive, case .array(let archived)? = fields["NSEntityMappings"]
    else { throw fail("not a compiled mapping model: the archive holds no NSMappingModel") }
    let mappings = try archived.map { item throws(MigrationError) in try compiledEntityMapping(item, fail: fail) }
    // The versions whose hashes are the ones recorded, on both sides.
    func version(_ side: KeyPath<EntityMapping, String?>, _ hash: KeyPath<EntityMapping, VersionHash?>) -> String? {
      versions.first { model in
        mappings.allSatisfy { mapping in
          guard let entity = mapping[keyPath: side], let recorded = mapping[keyPath: hash] else { return true }
          return model.entityVersionHashes[entity] == recorded
        }
      }?.versionName
    }
    guard let from = version(\.sourceEntity, \.sourceEntityHash),
      let to = version(\.destinationEntity, \.destinationEntityHash)
    else {
      throw fail(
        "no version of \(modelName) has the entity hashes it was made for (versions: \(names(versions)))")
    }
    return AppleMappingModel(fileName: fileName, sourceVersion: from, destinationVersion: to, entityMappings: mappings)
  }

  /// One archived `NSEntityMapping` of a `.cdm`.
  private static func compiledEntityMapping(_ item: ArchivedValue, fail: (String) -> MigrationError)
    throws(MigrationError) -> EntityMapping
  {
    guard case .object("NSEntityMapping", let fields) = item, let name = string(fields["NSMappingName"]) else {
      throw fail("an entity mapping without a name")
    }
    func properties(_ key: String) throws(MigrationError) -> [PropertyMapping] {
      guard let listed = fields[key], listed != .null else { return [] }
      guard case .array(let items) = listed else { throw fail("entity mapping \(name): \(key) is not a list") }
      var result: [PropertyMapping] = []
      for item in items {
        guard case .object(_, let property) = item, let propertyName = string(property["NSDestinationPropertyName"])
        else { throw fail("entity mapping \(name): a property mapping without a destination property") }
        let expression = property["NSValueExpression"].flatMap { $0 == .null ? nil : MappingExpression(archived: $0) }
        result.append(
          PropertyMapping(
            name: propertyName, expression: expression,
            userInfo: try userInfo(property["NSUserInfo"], of: "entity mapping \(name), property '\(propertyName)'")))
      }
      return result.sorted { $0.name < $1.name }
    }
    return EntityMapping(
      name: name, kind: Kind(code: integer(fields["NSMappingType"]) ?? 0),
      sourceEntity: string(fields["NSSourceEntityName"]),
      destinationEntity: string(fields["NSDestinationEntityName"]),
      sourceEntityHash: hash(fields["NSSourceEntityVersionHash"]),
      destinationEntityHash: hash(fields["NSDestinationEntityVersionHash"]),
      policyClassName: string(fields["NSEntityMigrationPolicyClassName"]).flatMap { $0.isEmpty ? nil : $0 },
      sourceExpression: fields["NSSourceExpression"].flatMap {
        $0 == .null ? nil : MappingExpression(archived: $0)
      },
      attributes: try properties("NSAttributeMappings"), relationships: try properties("NSRelationshipMappings"),
      userInfo: try userInfo(fields["NSUserInfo"], of: "entity mapping \(name)"))
  }

  // MARK: - Source (.xcmappingmodel)

  package static func parse(xcmapping bytes: [UInt8], fileName: String, versions: [ObjectModel], modelName: String)
    throws(MigrationError)
    -> AppleMappingModel
  {
    func fail(_ reason: String) -> MigrationError {
      MigrationError(.badMapping, reason: "\(fileName): \(reason)")
    }
    let database = DatabaseXML()
    var scanner = XMLScanner(bytes)
    do {
      try scanner.scan(database)
    } catch let error as XMLScanError {
      throw fail("not well-formed XML at line \(error.line), column \(error.column) (\(error.message))")
    } catch {
      throw fail("\(error)")
    }
    guard let root = database.objects.values.first(where: { $0.type == "XDDEVMAPPINGMODEL" }) else {
      throw fail("no mapping model in the file (an XDDEVMAPPINGMODEL object)")
    }
    let (from, source) = try recordedModel(
      "sourcemodelpath", of: root, versions: versions, modelName: modelName, fail: fail)
    let (to, destination) = try recordedModel(
      "destinationmodelpath", of: root, versions: versions, modelName: modelName, fail: fail)
    var drafts: [(number: Int64, object: DatabaseXML.Object)] = []
    for id in root.links["entitymappings"] ?? [] {
      guard let object = database.objects[id], object.type == "XDDEVENTITYMAPPING" else {
        throw fail("the mapping model refers to a missing entity mapping (\(id))")
      }
      drafts.append((Int64(object.text("mappingnumber") ?? "") ?? Int64.max, object))
    }
    drafts.sort { $0.number < $1.number }
    // Names first: generated relationship expressions name other mappings.
    var mappings: [EntityMapping] = try drafts.map { draft throws(MigrationError) in
      try namedMapping(draft.object, source: source, destination: destination, fileName: fileName)
    }
    for index in mappings.indices {
      let object = drafts[index].object
      let autogenerate = object.flag("autogenerateexpression")
      var mapping = mappings[index]
      try readProperties(of: &mapping, object, in: database, source: source, mappings: mappings, fail: fail)
      mapping.attributes.sort { $0.name < $1.name }
      mapping.relationships.sort { $0.name < $1.name }
      mapping.kind = kind(object.text("mappingtypename"), of: mapping, generated: autogenerate)
      mappings[index] = mapping
    }
    return AppleMappingModel(fileName: fileName, sourceVersion: from, destinationVersion: to, entityMappings: mappings)
  }

  /// The version at the path the editor recorded under `key` (`sourcemodelpath`,
  /// `destinationmodelpath`) and its name. The editor keeps its own form of the two models
  /// (XDPMModel: names without types, no hashes); the models themselves are the versions at the
  /// paths it records.
  private static func recordedModel(
    _ key: String, of root: DatabaseXML.Object, versions: [ObjectModel], modelName: String,
    fail: (String) -> MigrationError
  ) throws(MigrationError) -> (String, ObjectModel) {
    let side = key.hasPrefix("source") ? "source" : "destination"
    guard let path = root.text(key), !path.isEmpty else { throw fail("it records no \(side) model (\(key))") }
    let version = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
    guard let model = versions.first(where: { $0.versionName == version }) else {
      throw fail(
        "it was made for the \(side) model \(path); \(modelName) has no version '\(version)' "
          + "(versions: \(names(versions)))")
    }
    return (version, model)
  }

  /// An entity mapping of the editor's file with its names, entities and user info, before its
  /// property mappings are read.
  private static func namedMapping(
    _ object: DatabaseXML.Object, source: ObjectModel, destination: ObjectModel, fileName: String
  ) throws(MigrationError) -> EntityMapping {
    let sourceName = object.text("sourcename").flatMap { $0.isEmpty ? nil : $0 }
    let destinationName = object.text("destinationname").flatMap { $0.isEmpty ? nil : $0 }
    return EntityMapping(
      name: compiledName(source: sourceName, destination: destinationName), kind: .undefined,
      sourceEntity: sourceName, destinationEntity: destinationName,
      sourceEntityHash: sourceName.flatMap { source.entityVersionHashes[$0] },
      destinationEntityHash: destinationName.flatMap { destination.entityVersionHashes[$0] },
      policyClassName: object.text("migrationpolicyclassname").flatMap { $0.isEmpty ? nil : $0 },
      sourceExpression: sourceName.map { .fetch(entity: $0, predicate: "TRUEPREDICATE") }, attributes: [],
      relationships: [],
      userInfo: try archivedUserInfo(object, of: "\(fileName): entity mapping \(object.text("name") ?? "?")"))
  }

  /// An entity mapping's attribute and relationship mappings as the editor stores them: archived
  /// expressions, else the ones the editor generates.
  /// The property mapping `id` of the entity mapping `mappingName` links to, and its name: a link
  /// naming no object, or a property mapping without a name, is a damaged file — said, not skipped
  /// (skipping it would leave the property to whatever the step does without a mapping).
  private static func propertyMapping(
    _ id: String, of mappingName: String, in database: DatabaseXML, fail: (String) -> MigrationError
  ) throws(MigrationError) -> (DatabaseXML.Object, String) {
    guard let property = database.objects[id] else {
      throw fail("entity mapping \(mappingName) links to a property mapping \(id) the file does not have")
    }
    guard let name = property.text("name") else {
      throw fail("entity mapping \(mappingName): a property mapping (\(id)) without a name")
    }
    return (property, name)
  }

  private static func readProperties(
    of mapping: inout EntityMapping, _ object: DatabaseXML.Object, in database: DatabaseXML, source: ObjectModel,
    mappings: [EntityMapping], fail: (String) -> MigrationError
  ) throws(MigrationError) {
    let autogenerate = object.flag("autogenerateexpression")
    let sourceEntity = mapping.sourceEntity.flatMap { source.entity(named: $0) }
    for id in object.links["attributemappings"] ?? [] {
      let (property, name) = try propertyMapping(id, of: mapping.name, in: database, fail: fail)
      var expression = try archivedExpression(property, fail, mapping.name, name)
      if expression == nil, autogenerate, let sourceEntity,
        source.attributes(of: sourceEntity).contains(where: { $0.name == name })
      {
        expression = .keyPath(.variable("source"), [name])
      }
      mapping.attributes.append(PropertyMapping(name: name, expression: expression))
    }
    for id in object.links["relationshipmappings"] ?? [] {
      let (property, name) = try propertyMapping(id, of: mapping.name, in: database, fail: fail)
      var expression = try archivedExpression(property, fail, mapping.name, name)
      if expression == nil, let keyPath = property.text("sourcekeypath"), !keyPath.isEmpty {
        let instances = MappingExpression(keyPathText: keyPath)
        if let mappingName = property.text("sourcemappingname"), !mappingName.isEmpty {
          expression = .function(
            .variable("manager"), selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
            arguments: [.constant(.string(mappingName)), instances])
        } else {
          expression = .unsupported("the source key path \(keyPath) without an entity mapping to take it through")
        }
      }
      if expression == nil, property.flag("autogenerateexpression"), let sourceEntity {
        expression = generatedRelationshipExpression(name, of: sourceEntity, source: source, mappings: mappings)
      }
      mapping.relationships.append(PropertyMapping(name: name, expression: expression))
    }
  }

  /// The compiler's names: `SourceToDestination`; an added or removed entity's mapping is named
  /// after that entity (`Maker` in CoreDataPlus's `.cdm`; the removed case is a guess by symmetry).
  static func compiledName(source: String?, destination: String?) -> String {
    switch (source, destination) {
    case (let source?, let destination?): "\(source)To\(destination)"
    case (nil, let destination?): destination
    case (let source?, nil): source
    default: "Empty"
    }
  }

  /// The kind the compiler gives: as set in the editor, else ("Undefined") add or remove for a
  /// mapping without source or destination, custom when it names a policy class, copy when every
  /// value is the generated one, transform otherwise (the last two told apart by guess: the `.cdm`
  /// we have shows only copy, custom and add).
  static func kind(_ typeName: String?, of mapping: EntityMapping, generated: Bool) -> Kind {
    if let typeName, let kind = Kind(rawValue: typeName.lowercased()), kind != .undefined { return kind }
    if mapping.sourceEntity == nil { return .add }
    if mapping.destinationEntity == nil { return .remove }
    if mapping.policyClassName != nil { return .custom }
    let copied = mapping.attributes.allSatisfy { property in
      property.expression == nil || property.expression == .keyPath(.variable("source"), [property.name])
    }
    return generated && copied ? .copy : .transform
  }

  /// The expression the editor generates for a relationship: the destinations of the source's
  /// relationship of the same name — through the one entity mapping of the target's entity, or, when
  /// several mappings take objects of that entity or its subentities, through whichever mapping each
  /// source object went (`destinationInstancesForSourceRelationshipNamed:`), as the compiler wrote it
  /// in CoreDataPlus's `.cdm`. No such relationship in the source: no expression.
  static func generatedRelationshipExpression(
    _ name: String, of sourceEntity: Entity, source: ObjectModel, mappings: [EntityMapping]
  ) -> MappingExpression? {
    guard let relationship = source.relationships(of: sourceEntity).first(where: { $0.name == name }) else {
      return nil
    }
    let instances = MappingExpression.keyPath(.variable("source"), [name])
    let candidates = mappings.filter { mapping in
      guard let entity = mapping.sourceEntity.flatMap({ source.entity(named: $0) }) else { return false }
      return source.entity(entity, isKindOf: relationship.destinationEntity)
    }
    if candidates.count == 1 {
      return .function(
        .variable("manager"), selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
        arguments: [.constant(.string(candidates[0].name)), instances])
    }
    guard !candidates.isEmpty else { return nil }
    return .function(
      .variable("manager"), selector: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
      arguments: [.constant(.string(name)), instances])
  }

  static func archivedExpression(
    _ property: DatabaseXML.Object, _ fail: (String) -> MigrationError, _ mapping: String, _ name: String
  ) throws(MigrationError) -> MappingExpression? {
    guard let bytes = property.data("valueexpressiondata") else { return nil }
    do {
      return MappingExpression(archived: try KeyedArchive.unarchive(bytes))
    } catch {
      throw fail(
        "entity mapping \(mapping), property '\(name)': the value expression cannot be read as an archived NSExpression: \(error)"
      )
    }
  }

  /// An entity mapping's user info as the editor keeps it: a keyed archive of the dictionary in
  /// `userinfodata`. None of the fixtures' mapping models has user info; the field's name is read
  /// from a public reimplementation of Xcode's mapping compiler (a guess until a file shows it).
  static func archivedUserInfo(_ object: DatabaseXML.Object, of owner: String) throws(MigrationError)
    -> [String: String]
  {
    guard let bytes = object.data("userinfodata") else { return [:] }
    let archive: ArchivedValue
    do {
      archive = try KeyedArchive.unarchive(bytes)
    } catch {
      throw MigrationError(
        .badMapping, reason: "\(owner): its user info (userinfodata) is not a keyed archive (\(error))")
    }
    return try userInfo(archive, of: owner)
  }

  static func names(_ versions: [ObjectModel]) -> String {
    versions.map { $0.versionName ?? "?" }.joined(separator: ", ")
  }

  static func string(_ value: ArchivedValue?) -> String? { ModelCache.string(value) }
  static func integer(_ value: ArchivedValue?) -> Int64? { ModelCache.integer(value) }
  static func hash(_ value: ArchivedValue?) -> VersionHash? {
    if case .data(let bytes)? = value { return VersionHash(data: Data(bytes)) }
    return nil
  }
  /// User info as policies read it: text, numbers and Booleans; anything else is named, never
  /// passed over (a policy would read nothing where the model holds a value).
  static func userInfo(_ value: ArchivedValue?, of owner: String) throws(MigrationError) -> [String: String] {
    guard let value, value != .null else { return [:] }
    guard case .dictionary(let entries) = value else {
      throw MigrationError(.badMapping, reason: "\(owner): its user info is not a dictionary")
    }
    var result: [String: String] = [:]
    for (key, value) in entries {
      guard case .string(let name) = key else {
        throw MigrationError(.badMapping, reason: "\(owner): its user info has a key that is not text")
      }
      switch value {
      case .string(let text): result[name] = text
      case .integer(let number): result[name] = String(number)
      case .real(let number): result[name] = String(number)
      case .boolean(let flag): result[name] = flag ? "YES" : "NO"
      default:
        throw MigrationError(
          .badMapping,
          reason:
            "\(owner): user info '\(name)' is neither text, a number nor a Boolean, which policies cannot be given")
      }
    }
    return result
  }
}

/// The XML form Xcode keeps mapping models in (a Core Data XML store of the editor's own model):
/// `<object type="XDDEV…" id="z1">` elements with `<attribute name type>value</attribute>` and
/// `<relationship name idrefs="z2 z3">` children.
final class DatabaseXML: XMLScanner.Delegate {
  struct Object {
    var type: String
    var values: [String: (type: String, text: String)] = [:]
    var links: [String: [String]] = [:]

    func text(_ name: String) -> String? { values[name]?.text }
    func flag(_ name: String) -> Bool { values[name]?.text.trimmingWhitespace() == "1" }
    func data(_ name: String) -> [UInt8]? {
      guard let text = values[name]?.text, let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters)
      else { return nil }
      return Array(data)
    }
  }

  var objects: [String: Object] = [:]
  private var current: (id: String, object: Object)?
  private var attribute: (name: String, type: String, text: String)?

  func startElement(_ name: String, attributes: [String: String]) throws {
    switch name {
    case "object":
      if let type = attributes["type"], let id = attributes["id"] { current = (id, Object(type: type)) }
    case "attribute":
      if current != nil, let name = attributes["name"] { attribute = (name, attributes["type"] ?? "", "") }
    case "relationship":
      if let name = attributes["name"] {
        current?.object.links[name] = (attributes["idrefs"] ?? "").split(separator: " ").map(String.init)
      }
    default: break
    }
  }

  func endElement(_ name: String) throws {
    switch name {
    case "attribute":
      if let attribute { current?.object.values[attribute.name] = (attribute.type, attribute.text) }
      attribute = nil
    case "object":
      if let current { objects[current.id] = current.object }
      current = nil
    default: break
    }
  }

  func characters(_ text: String) throws {
    attribute?.text += text
  }
}
