import CZlib
import Foundation
import PropertyList

/// A store's own model: `Z_MODELCACHE.Z_CONTENT`, raw DEFLATE around an NSKeyedArchiver archive of
/// the `NSManagedObjectModel` that wrote the store. With it, a store can be described, exported and
/// identified without its model file.
package enum ModelCache {
  /// Back-links of the archived object graph, left as references (names are read instead).
  static let links: Set<String> = [
    "NSEntity", "NSSuperentity", "NSDestinationEntity", "NSInverseRelationship", "NSManagedObjectModel",
    // An _NSPropertyDescriptionProxy's entity (the subentity holding it).
    "NSEntityDescription",
  ]

  package static func model(fromCompressed bytes: [UInt8]) throws(ModelCacheError) -> ObjectModel {
    let archive: ArchivedValue
    do {
      archive = try KeyedArchive.unarchive(try inflate(bytes), linkKeys: links)
    } catch let error as ModelCacheError {
      throw error
    } catch {
      throw ModelCacheError(reason: "Z_MODELCACHE is not an archived model (\(error))")
    }
    return try model(from: archive)
  }

  /// The most an inflated cache may hold (a few kilobytes of DEFLATE data can inflate to gigabytes).
  static let maximumInflated = 256 << 20

  /// Inflates raw DEFLATE data (no zlib or gzip header) with the system zlib.
  static func inflate(_ bytes: [UInt8]) throws(ModelCacheError) -> [UInt8] {
    var stream = z_stream()
    guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
      throw ModelCacheError(reason: "zlib could not start")
    }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    var input = bytes
    var status: Int32 = Z_OK
    input.withUnsafeMutableBufferPointer { inputBuffer in
      stream.next_in = inputBuffer.baseAddress
      stream.avail_in = uInt(inputBuffer.count)
      repeat {
        chunk.withUnsafeMutableBufferPointer { chunkBuffer in
          stream.next_out = chunkBuffer.baseAddress
          stream.avail_out = uInt(chunkBuffer.count)
          status = CZlib.inflate(&stream, Z_NO_FLUSH)
          output.append(contentsOf: chunkBuffer.prefix(chunkBuffer.count - Int(stream.avail_out)))
        }
      } while status == Z_OK && output.count < maximumInflated
    }
    guard status != Z_OK else {
      throw ModelCacheError(
        reason: "Z_MODELCACHE inflates to more than \(maximumInflated >> 20) MB: no model's cache is that large")
    }
    guard status == Z_STREAM_END else {
      throw ModelCacheError(reason: "Z_MODELCACHE is not valid DEFLATE data (zlib status \(status))")
    }
    return output
  }

  package static func model(from archive: ArchivedValue, versionName: String? = nil) throws(ModelCacheError)
    -> ObjectModel
  {
    guard case .object("NSManagedObjectModel", let fields) = archive,
      case .dictionary(let archivedEntities)? = fields["NSEntities"]
    else { throw ModelCacheError(reason: "Z_MODELCACHE does not hold an NSManagedObjectModel") }
    var parents: [String: String] = [:]
    var entities: [Entity] = []
    // In name order: an error names the same entity in every run.
    var named: [(String, [String: ArchivedValue])] = []
    for (key, value) in archivedEntities {
      // An entry that is no named entity is named, never passed over: its table would be missing.
      guard let name = string(key), case .object(_, let entityFields) = value else {
        throw ModelCacheError(reason: "NSEntities holds an entry that is not a named entity (\(key))")
      }
      named.append((name, entityFields))
    }
    for (name, entityFields) in named.sorted(by: { $0.0 < $1.0 }) {
      if case .dictionary(let subentities)? = entityFields["NSSubentities"] {
        for case .string(let child) in subentities.keys { parents[child] = name }
      }
      entities.append(try entity(named: name, entityFields))
    }
    for index in entities.indices { entities[index].parentName = parents[entities[index].name] }
    entities = withoutInheritedCopies(entities)
    var identifiers: [String] = []
    if case .array(let values)? = fields["NSVersionIdentifiers"] {
      identifiers = values.compactMap { if case .string(let text) = $0 { text } else { nil } }.sorted()
    }
    let configurations = try self.configurations(fields["NSConfigurations"])
    do {
      return try ObjectModel(
        entities: entities, versionName: versionName, versionIdentifiers: identifiers, configurations: configurations)
    } catch {
      throw ModelCacheError(reason: "the store's model cannot be loaded: \(error)")
    }
  }

  /// `NSConfigurations`: configuration name → the names of its entities. An entry migrun cannot read
  /// is an error: a configuration narrower than archived would mislead the search for the
  /// configuration a store was written for.
  static func configurations(_ archive: ArchivedValue?) throws(ModelCacheError) -> [String: [String]] {
    var configurations: [String: [String]] = [:]
    guard case .dictionary(let archived)? = archive else { return configurations }
    for (key, members) in archived {
      guard case .string(let name) = key, case .array(let items) = members else {
        throw ModelCacheError(reason: "NSConfigurations holds an entry that is not a name and a set")
      }
      configurations[name] = try items.map { item throws(ModelCacheError) -> String in
        if case .object(_, let entity) = item, let name = string(entity["NSEntityName"]) { return name }
        if let name = string(item) { return name }
        throw ModelCacheError(reason: "configuration '\(name)' holds something that is no entity")
      }.sorted()
    }
    return configurations
  }

  /// A compiled model repeats every inherited property in each subentity; keep only what an entity
  /// declares itself (a property equal to the inherited one is a copy, a different one a redeclaration).
  static func withoutInheritedCopies(_ entities: [Entity]) -> [Entity] {
    let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    func ancestors(of entity: Entity) -> [Entity] {
      var chain: [Entity] = []
      var next = entity.parentName.flatMap { byName[$0] }
      while let current = next, chain.count < entities.count {
        chain.append(current)
        next = current.parentName.flatMap { byName[$0] }
      }
      return chain
    }
    return entities.map { entity in
      let inherited = ancestors(of: entity)
      guard !inherited.isEmpty else { return entity }
      var own = entity
      own.attributes.removeAll { attribute in inherited.contains { $0.attributes.contains(attribute) } }
      own.relationships.removeAll { relationship in inherited.contains { $0.relationships.contains(relationship) } }
      own.fetchedProperties.removeAll { fetched in inherited.contains { $0.fetchedProperties.contains(fetched) } }
      own.uniquenessConstraints.removeAll { constraint in
        inherited.contains { $0.uniquenessConstraints.contains(constraint) }
      }
      return own
    }
  }

  static func entity(named name: String, _ fields: [String: ArchivedValue]) throws(ModelCacheError) -> Entity {
    var entity = Entity(
      name: name, isAbstract: fields["NSIsAbstract"] == .boolean(true),
      versionHashModifier: string(fields["NSVersionHashModifier"]),
      renamingIdentifier: string(fields["NSRenamingIdentifier"]).flatMap { $0 == name ? nil : $0 },
      className: string(fields["NSClassNameForEntity"]))
    if case .array(let tuples)? = fields["NSUniqueTuples"] {
      entity.uniquenessConstraints = tuples.compactMap { tuple in
        if case .array(let names) = tuple { names.compactMap { string($0) } } else { nil }
      }
    }
    // The model compiler writes every fetch index a second time as a compound index (the older form);
    // stores made from such a model have only the fetch index (SampleModel_V2.sqlite), so the
    // compound indexes count only in archives without fetch indexes.
    if fields["NSFetchIndexDescriptions"] == nil || fields["NSFetchIndexDescriptions"] == .null,
      case .array(let indexes)? = fields["NSCompoundIndexes"]
    {
      entity.compoundIndexes = indexes.compactMap(compoundIndex)
    }
    if case .array(let indexes)? = fields["NSFetchIndexDescriptions"] {
      entity.fetchIndexes = indexes.compactMap(fetchIndex)
    }
    guard case .dictionary(let archived)? = fields["NSProperties"] else { return entity }
    for (propertyName, className, property) in try properties(archived, of: name) {
      let renaming = string(property["NSRenamingIdentifier"]).flatMap { $0 == propertyName ? nil : $0 }
      let flags = (
        optional: property["NSIsOptional"] == .boolean(true), transient: property["NSIsTransient"] == .boolean(true),
        readOnly: property["NSIsReadOnly"] == .boolean(true)
      )
      switch className {
      case "NSAttributeDescription", "NSDerivedAttributeDescription", "NSCompositeAttributeDescription":
        entity.attributes.append(try attribute(propertyName, className, property, of: name))
      case "NSRelationshipDescription":
        entity.relationships.append(
          try relationship(propertyName, property, of: name, renaming: renaming, flags: flags))
      case "NSFetchedPropertyDescription":
        entity.fetchedProperties.append(
          FetchedProperty(name: propertyName, fetchEntity: string(property["_NSFetchRequestEntityName"])))
      default:
        // Skipping what we do not know would lose its values without a word.
        throw ModelCacheError(
          entity: name, reason: "property '\(propertyName)' is a \(className), which migrun does not know")
      }
    }
    // The archive keeps properties in a hashed dictionary, not in the model's order (which it does
    // not record): read them in name order, the same in every run.
    return entity.sortedByName()
  }

  /// An entity's `NSProperties` in name order — the archive's dictionary has no order of its own, so
  /// an error names the same property in every run — each as the description it is, an
  /// `_NSPropertyDescriptionProxy` as the property it stands for (``underlying(_:_:_:of:)``).
  static func properties(_ archived: [ArchivedValue: ArchivedValue], of entity: String) throws(ModelCacheError)
    -> [(name: String, className: String, fields: [String: ArchivedValue])]
  {
    var properties: [(name: String, className: String, fields: [String: ArchivedValue])] = []
    for (key, value) in archived {
      guard let name = string(key) else {
        throw ModelCacheError(entity: entity, reason: "NSProperties holds a key that is not a property name")
      }
      guard case .object(let className, let fields) = value else {
        throw ModelCacheError(entity: entity, reason: "property '\(name)' is not an archived property description")
      }
      let (underlyingClass, underlying) = try self.underlying(name, className, fields, of: entity)
      properties.append((name, underlyingClass, underlying))
    }
    return properties.sorted { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }
  }

  /// The property an `_NSPropertyDescriptionProxy` stands for, or the description itself when it is
  /// none. Core Data's `-[NSEntityDescription _flattenProperties]` gives a subentity each property
  /// of its superentity as such a proxy when the model is marked so (otherwise as a copy), and the
  /// proxy's `encodeWithCoder:` archives `NSUnderlyingProperty` (the superentity's own description,
  /// never another proxy: `_flattenProperties` unwraps one first), `NSReferenceID` and
  /// `NSEntityDescription` (the subentity). So a proxy is an inherited property, read as its
  /// declaration: the public decompilation of `_NSPropertyDescriptionProxy` (iOS 18.2's CoreData).
  static func underlying(
    _ name: String, _ className: String, _ fields: [String: ArchivedValue], of entity: String
  ) throws(ModelCacheError) -> (className: String, fields: [String: ArchivedValue]) {
    guard className == proxyClass else { return (className, fields) }
    guard case .object(let underlyingClass, let underlying)? = fields["NSUnderlyingProperty"],
      underlyingClass != proxyClass
    else {
      throw ModelCacheError(
        entity: entity,
        reason: "property '\(name)' is an \(proxyClass) (an inherited property) that holds no property description")
    }
    if let declared = string(underlying["NSPropertyName"]), declared != name {
      throw ModelCacheError(
        entity: entity,
        reason: "property '\(name)' is an \(proxyClass) for a property named '\(declared)', a model migrun cannot read")
    }
    return (underlyingClass, underlying)
  }

  /// Core Data's class for a property a subentity inherits (see ``underlying(_:_:_:of:)``).
  static let proxyClass = "_NSPropertyDescriptionProxy"

  /// An archived compound index: property names, or (older archives) the property descriptions themselves.
  static func compoundIndex(_ index: ArchivedValue) -> [String]? {
    guard case .array(let names) = index else { return nil }
    let properties = names.compactMap { name -> String? in
      if case .object(_, let property) = name { return string(property["NSPropertyName"]) }
      return string(name)
    }
    return properties.isEmpty ? nil : properties
  }

  /// An archived `NSFetchIndexDescription`, or nil when it names nothing.
  static func fetchIndex(_ index: ArchivedValue) -> FetchIndex? {
    guard case .object(_, let description) = index, let indexName = string(description["NSIndexName"]),
      case .array(let elements)? = description["NSIndexElements"]
    else { return nil }
    return FetchIndex(
      name: indexName,
      elements: elements.compactMap { element in
        guard case .object(_, let fields) = element else { return nil }
        // NSFetchIndexElementType: 0 binary, 1 R-tree. An expression element archives its
        // NSExpressionDescription under NSIndexedProperty (its name under NSPropertyName);
        // an element naming nothing is kept as an expression migrun cannot write, never dropped.
        var property = string(fields["NSPropertyName"])
        var expression: IndexExpression?
        var resultType: AttributeType?
        if case .object(_, let described)? = fields["NSIndexedProperty"] {
          property = property ?? string(described["NSPropertyName"])
          expression = described["NSExpression"].map { IndexExpression.archived($0) } ?? .other("no expression")
          resultType = integer(described["NSExpressionType"]).flatMap { UInt32(exactly: $0) }.flatMap(
            AttributeType.init(rawValue:))
        } else if property == nil {
          expression = .other("no property and no expression")
        }
        return FetchIndex.Element(
          property: property ?? "", type: integer(fields["NSFetchIndexElementType"]) == 1 ? "R-Tree" : "Binary",
          isAscending: fields["NSAscending"] != .boolean(false), expression: expression,
          expressionType: resultType)
      },
      partialPredicate: description["NSPartialIndexPredicate"].flatMap(PredicateFormat.format))
  }

  /// An archived `NSRelationshipDescription`.
  static func relationship(
    _ propertyName: String, _ property: [String: ArchivedValue], of name: String, renaming: String?,
    flags: (optional: Bool, transient: Bool, readOnly: Bool)
  ) throws(ModelCacheError) -> Relationship {
    guard let destination = string(property["_NSDestinationEntityName"]) else {
      throw ModelCacheError(entity: name, reason: "relationship '\(propertyName)' has no destination")
    }
    let maxCount = integer(property["NSMaxCount"]) ?? 0
    let deleteRules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
    return Relationship(
      name: propertyName, destinationEntity: destination,
      inverseName: string(property["_NSInverseRelationshipName"]),
      minCount: Int32(clamping: integer(property["NSMinCount"]) ?? 0),
      // Kept as archived: a model built in code may say -1 for "unbounded", and Core Data
      // hashes that -1 (SampleModel2's stores), where Xcode's models say 0.
      maxCount: Int32(clamping: maxCount), isOrdered: property["NSIsOrdered"] == .boolean(true),
      deleteRule: deleteRules[integer(property["NSDeleteRule"]) ?? 1] ?? .nullify, isOptional: flags.optional,
      isTransient: flags.transient, isReadOnly: flags.readOnly,
      versionHashModifier: string(property["NSVersionHashModifier"]), renamingIdentifier: renaming)
  }

  /// An archived attribute: `NSAttributeDescription`, `NSDerivedAttributeDescription`, or
  /// `NSCompositeAttributeDescription` (type 2100) with its elements in `NSCompositeElements`, each
  /// an archived attribute itself (named by its own `NSPropertyName`).
  static func attribute(
    _ propertyName: String, _ className: String, _ property: [String: ArchivedValue], of entity: String
  ) throws(ModelCacheError) -> Attribute {
    guard case .integer(let code)? = property["NSAttributeType"],
      let type = AttributeType(rawValue: UInt32(clamping: code))
    else {
      throw ModelCacheError(entity: entity, reason: "attribute '\(propertyName)' has an unknown type")
    }
    let flags = AttributeFlags(property)
    var derivation: Derivation?
    if className == "NSDerivedAttributeDescription", let expression = property["NSDerivationExpression"] {
      derivation = Derivation(expression: IndexExpression.archived(expression).description)
    }
    var elements: [Attribute] = []
    if type == .composite || className == "NSCompositeAttributeDescription" {
      guard type == .composite, className == "NSCompositeAttributeDescription",
        case .array(let archived)? = property["NSCompositeElements"], !archived.isEmpty
      else {
        throw ModelCacheError(
          entity: entity,
          reason: "attribute '\(propertyName)' is not a composite attribute with elements (\(className), type \(code))")
      }
      for item in archived {
        guard case .object(let elementClass, let fields) = item, let elementName = string(fields["NSPropertyName"]),
          ["NSAttributeDescription", "NSCompositeAttributeDescription"].contains(elementClass)
        else {
          throw ModelCacheError(
            entity: entity,
            reason: "composite attribute '\(propertyName)' has an element migrun does not know")
        }
        elements.append(try attribute(elementName, elementClass, fields, of: entity))
      }
    }
    let renaming = string(property["NSRenamingIdentifier"]).flatMap { $0 == propertyName ? nil : $0 }
    return Attribute(
      name: propertyName, type: type, isOptional: property["NSIsOptional"] == .boolean(true),
      isTransient: property["NSIsTransient"] == .boolean(true), isReadOnly: property["NSIsReadOnly"] == .boolean(true),
      versionHashModifier: string(property["NSVersionHashModifier"]), renamingIdentifier: renaming,
      defaultValueString: defaultValueText(property["NSDefaultValue"], type: type),
      allowsExternalBinaryDataStorage: flags.allowsExternalStorage,
      preservesValueInHistoryOnDeletion: flags.preservesValueInHistory, derivation: derivation,
      // A guess: no compiled model we have marks an attribute indexed.
      isIndexed: property["NSIsIndexed"] == .boolean(true),
      valueTransformerName: string(property["NSValueTransformerName"]), elements: elements)
  }

  /// An attribute's `NSFlagsKey`, as `-[NSAttributeDescription initWithCoder:]` reads it (public
  /// decompilations of CoreData, iOS 17 and 18): 0x01 a maximum value follows (`NSMaxValueName`),
  /// 0x02 a minimum (`NSMinValueName`), 0x04 allows external storage, 0x10 preserves its value in
  /// history after deletion, 0x20 a file-backed future. External storage is part of the version
  /// hash: read as 0x01, an attachment's data attribute hashed unlike Core Data's and its entity's
  /// hash disagreed with the store's metadata.
  struct AttributeFlags {
    let allowsExternalStorage: Bool
    let preservesValueInHistory: Bool

    init(_ property: [String: ArchivedValue]) {
      let word = ModelCache.integer(property["NSFlagsKey"]) ?? 0
      // migrun before this reading wrote external storage as 0x01 with no maximum value: an archive
      // with 0x01 and no NSMaxValueName is one of those.
      let oldExternal = word & 0x01 != 0 && property["NSMaxValueName"] == nil
      allowsExternalStorage = word & 0x04 != 0 || oldExternal
      preservesValueInHistory = word & 0x10 != 0
    }
  }

  /// An archived `NSDefaultValue` written the way a model file's `defaultValueString` says it.
  static func defaultValueText(_ value: ArchivedValue?, type: AttributeType) -> String? {
    switch value {
    case .string(let text)?: return text
    case .integer(let number)?:
      return type == .boolean ? (number != 0 ? "YES" : "NO") : String(number)
    case .boolean(let flag)?: return type == .boolean ? (flag ? "YES" : "NO") : (flag ? "1" : "0")
    case .real(let number)?: return String(number)
    case .date(let seconds)?: return String(seconds)
    case .url(let text)?: return text
    // momc archives NSDecimalNumberPlaceholder (CartKit's model); NSDecimalNumber is the class proper.
    case .object(let className, let fields)? where className.hasPrefix("NSDecimalNumber"): return decimalText(fields)
    default: return nil
    }
  }

  /// An archived `NSDecimalNumber` (a Decimal attribute's default in a compiled model or a cache) as
  /// text: `NS.mantissa` holds up to eight 16-bit words, least significant first (byte order
  /// `NS.mantissa.bo`, 1 = little-endian), the value is mantissa × 10^`NS.exponent`, negated by
  /// `NS.negative`. Read off momc's output (CartKit's model); nil when the fields are not these.
  static func decimalText(_ fields: [String: ArchivedValue]) -> String? {
    guard case .data(let bytes)? = fields["NS.mantissa"] else { return nil }
    let length = Int(integer(fields["NS.length"]) ?? Int64(bytes.count / 2))
    let bigEndian = integer(fields["NS.mantissa.bo"]) == 0
    var mantissa = Decimal(0)
    var scale = Decimal(1)
    for word in 0..<min(length, bytes.count / 2) {
      let (low, high) = (UInt16(bytes[word * 2]), UInt16(bytes[word * 2 + 1]))
      let value = bigEndian ? (low << 8 | high) : (high << 8 | low)
      mantissa += Decimal(Int(value)) * scale
      scale *= 65536
    }
    let exponent = Int(integer(fields["NS.exponent"]) ?? 0)
    guard (-128...127).contains(exponent) else { return nil }
    var value = Decimal(sign: .plus, exponent: exponent, significand: mantissa)
    if case .boolean(true)? = fields["NS.negative"] { value.negate() }
    if case .integer(let flag)? = fields["NS.negative"], flag != 0 { value.negate() }
    // As text the way a real default reads back (migrun holds a Decimal default as a Double, and
    // writes it to a cache as a real): one spelling whichever way the model came.
    return String(NSDecimalNumber(decimal: value).doubleValue)
  }

  package static func string(_ value: ArchivedValue?) -> String? {
    if case .string(let text)? = value { return text }
    return nil
  }

  package static func integer(_ value: ArchivedValue?) -> Int64? {
    if case .integer(let number)? = value { return number }
    return nil
  }
}

extension ObjectModel {
  /// The model in a store's `Z_MODELCACHE.Z_CONTENT`: raw DEFLATE around a keyed archive.
  package static func decodingModelCache(compressed bytes: [UInt8]) throws(ModelCacheError) -> ObjectModel {
    try ModelCache.model(fromCompressed: bytes)
  }

  /// The model in an inflated `Z_MODELCACHE` archive (a binary property list).
  package static func decodingModelCache(archive bytes: [UInt8]) throws(ModelCacheError) -> ObjectModel {
    let archive: ArchivedValue
    do {
      archive = try KeyedArchive.unarchive(bytes, linkKeys: ModelCache.links)
    } catch {
      throw ModelCacheError(reason: "Z_MODELCACHE is not an archived model (\(error))")
    }
    return try ModelCache.model(from: archive)
  }

  /// Inflates a `Z_MODELCACHE` blob to its archive.
  package static func inflateModelCache(_ bytes: [UInt8]) throws(ModelCacheError) -> [UInt8] {
    try ModelCache.inflate(bytes)
  }
}

/// Prints an archived `NSPredicate` in its format syntax (for a fetch index's partial-index
/// predicate): comparisons (`NSLeftExpression`, `NSPredicateOperator`, `NSRightExpression`),
/// compounds (`NSSubpredicates`, `NSCompoundPredicateType`: 0 NOT, 1 AND, 2 OR) and
/// TRUEPREDICATE/FALSEPREDICATE. What it cannot print becomes text the predicate parser refuses,
/// naming what it was — never a predicate that selects other rows.
enum PredicateFormat {
  static let operators: [Int64: String] = [
    0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE", 8: "BEGINSWITH", 9: "ENDSWITH",
    10: "IN", 99: "CONTAINS", 100: "BETWEEN",
  ]

  static func format(_ value: ArchivedValue) -> String? {
    format(value, depth: 0)
  }

  private static func format(_ value: ArchivedValue, depth: Int) -> String? {
    guard depth < 64 else { return "<a predicate nested too deeply>" }
    guard case .object(let className, let fields) = value else { return value == .null ? nil : "<not a predicate>" }
    switch className {
    case "NSTruePredicate": return "TRUEPREDICATE"
    case "NSFalsePredicate": return "FALSEPREDICATE"
    case "NSCompoundPredicate":
      guard case .array(let parts)? = fields["NSSubpredicates"] else { return "<a compound predicate without parts>" }
      let printed = parts.map { "(" + (format($0, depth: depth + 1) ?? "<nothing>") + ")" }
      switch ModelCache.integer(fields["NSCompoundPredicateType"]) {
      case 0: return printed.count == 1 ? "NOT \(printed[0])" : "<a NOT of \(printed.count) predicates>"
      case 1: return printed.joined(separator: " AND ")
      case 2: return printed.joined(separator: " OR ")
      default: return "<a compound predicate of an unknown kind>"
      }
    case "NSComparisonPredicate":
      guard case .object(_, let predicateOperator)? = fields["NSPredicateOperator"],
        let type = ModelCache.integer(predicateOperator["NSOperatorType"]), let symbol = operators[type],
        let lhs = fields["NSLeftExpression"], let rhs = fields["NSRightExpression"]
      else { return "<a comparison migrun cannot read>" }
      var options = ""
      if let flags = ModelCache.integer(predicateOperator["NSOptions"]), flags & 3 != 0 {
        options = "[" + (flags & 1 != 0 ? "c" : "") + (flags & 2 != 0 ? "d" : "") + "]"
      }
      let modifier = ["", "ALL ", "ANY "][Int(min(2, max(0, ModelCache.integer(predicateOperator["NSModifier"]) ?? 0)))]
      let negated = predicateOperator["NSNegate"] == .boolean(true)
      let comparison =
        "\(modifier)\(IndexExpression.archived(lhs).predicateText) \(symbol)\(options) \(IndexExpression.archived(rhs).predicateText)"
      return negated ? "NOT (\(comparison))" : comparison
    default: return "<a predicate \(className)>"
    }
  }
}

extension IndexExpression {
  /// As the predicate parser reads it: strings in single quotes, anything migrun cannot read as
  /// text that parser refuses.
  var predicateText: String {
    switch self {
    case .constant(.string(let text)): "'\(text.replacingOccurrences(of: "'", with: "\\'"))'"
    case .constant(.date(let seconds)): String(seconds)
    case .other(let what): "<\(what)>"
    default: description
    }
  }
}

/// A model archive (`Z_MODELCACHE`, a compiled `.mom`) that cannot be read: the entity where known
/// and what is wrong. The store layer reports it as a store error of code `badModelCache`.
package struct ModelCacheError: Error, Sendable, Hashable, CustomStringConvertible {
  package let entity: String?
  package let reason: String

  package init(entity: String? = nil, reason: String) {
    self.entity = entity
    self.reason = reason
  }

  package var description: String { ErrorMessage.line(nil, entity: entity, detail: nil, reason) }
}

extension Entity {
  /// The entity with its attributes, relationships and fetched properties in name order.
  fileprivate func sortedByName() -> Entity {
    var entity = self
    entity.attributes.sort { $0.name < $1.name }
    entity.relationships.sort { $0.name < $1.name }
    entity.fetchedProperties.sort { $0.name < $1.name }
    return entity
  }
}
