import CZlib
import PropertyList

/// Writing a store's `Z_MODELCACHE`: the model archived the way Core Data archives it, read off the
/// caches of Apple's own stores (`../shared`, frameworks 637 to 1344) — the same classes and field
/// names, so that whatever reads a store's cache (Core Data inferring a migration from the store
/// alone, `migrun inspect` without a model) finds the model there:
///
/// - the root `NSManagedObjectModel`: `NSEntities` as an `NSKnownKeysDictionary1` (keys sorted by
///   name, as in every archive we have), `NSVersionIdentifiers` an `NSSet`, `NSFetchRequestTemplates`,
///   and `NSConfigurations` (name → `NSSet` of entities) when the model has configurations;
/// - each `NSEntityDescription` with `NSProperties`, an `NSMutableDictionary` of every property,
///   inherited ones included, keyed in Core Foundation's dictionary order (``CFHashOrder``: the order
///   every fixture archive shows), `NSSubentities`, `NSSuperentity` and back-links to the model;
/// - `NSAttributeDescription`, `NSDerivedAttributeDescription`, `NSRelationshipDescription` and
///   `NSFetchedPropertyDescription` with their flags; `NSRenamingIdentifier` is the property's own
///   name when it has none, as Apple writes it.
///
/// What is our reading, not Apple's documented format:
/// - `_P`, the property flags word: optional 0x02, read-only 0x04 and transient 0x08 match every
///   archive; 0x30 is clear exactly where an attribute has validation predicates, 0x40 exactly where
///   a property has user info; 0x01 and 0x80 are set in every archive we have and written so.
/// - What the archive cannot carry from our model, it leaves out: validation rules (Apple archives
///   them as `NSPredicate`s, which need a predicate parser we do not have), fetched properties' and
///   fetch request templates' predicates (the requests are written with their entity only), a
///   transformable's custom class (Apple's archives leave it out too), a
///   decimal default (written as a real number, not an `NSDecimalNumber`). None of them is part of a
///   version hash.
enum ModelCacheArchive {
  /// The `Z_MODELCACHE.Z_CONTENT` for `model`: its keyed archive, raw-deflated.
  static func compressed(_ model: ObjectModel) throws(ModelCacheError) -> [UInt8] {
    try deflate(archive(model).binaryEncoded())
  }

  /// The keyed archive of `model`, as a property list.
  static func archive(_ model: ObjectModel) -> PropertyListValue {
    // A configuration's store caches the coordinator's whole model, as Core Data's does.
    var writer = Writer(model: model.wholeModel?.model ?? model)
    return writer.archive()
  }

  /// Raw DEFLATE (no zlib or gzip header), as Core Data stores its model cache.
  static func deflate(_ bytes: [UInt8]) throws(ModelCacheError) -> [UInt8] {
    var stream = z_stream()
    guard
      deflateInit2_(
        &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
        Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { throw ModelCacheError(reason: "zlib could not start") }
    defer { deflateEnd(&stream) }
    var input = bytes
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
    var status: Int32 = Z_OK
    var written = 0
    input.withUnsafeMutableBufferPointer { inputBuffer in
      output.withUnsafeMutableBufferPointer { outputBuffer in
        stream.next_in = inputBuffer.baseAddress
        stream.avail_in = uInt(inputBuffer.count)
        stream.next_out = outputBuffer.baseAddress
        stream.avail_out = uInt(outputBuffer.count)
        status = CZlib.deflate(&stream, Z_FINISH)
        written = outputBuffer.count - Int(stream.avail_out)
      }
    }
    guard status == Z_STREAM_END else {
      throw ModelCacheError(reason: "zlib could not compress the model (status \(status))")
    }
    return Array(output.prefix(written))
  }

  private struct Writer {
    let model: ObjectModel
    var archiver = KeyedArchiver()
    var entitySlots: [String: UInt64] = [:]
    /// Every property object, by entity and property name (inherited copies included).
    var propertySlots: [String: [String: UInt64]] = [:]
    var modelSlot: UInt64 = 0

    init(model: ObjectModel) { self.model = model }

    static let entityClasses = ["NSEntityDescription", "NSObject"]
    static let mutableDictionary = ["NSMutableDictionary", "NSDictionary", "NSObject"]
    static let mutableArray = ["NSMutableArray", "NSArray", "NSObject"]
    static let set = ["NSSet", "NSObject"]

    mutating func archive() -> PropertyListValue {
      modelSlot = archiver.reserve()
      let entities = model.entities.sorted { $0.name < $1.name }
      for entity in entities { entitySlots[entity.name] = archiver.reserve() }
      for entity in entities {
        var slots: [String: UInt64] = [:]
        for name in propertyNames(of: entity) { slots[name] = archiver.reserve() }
        propertySlots[entity.name] = slots
      }
      var fields: [String: PropertyListValue] = [:]
      let names = entities.map { archiver.string($0.name) }
      let keys = archiver.array(names)
      let mapping = archiver.object(
        ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy", "NSObject"],
        ["keys": keys, "length": .integer(Int64(names.count)), "version": .integer(1)])
      let values = archiver.array(entities.map { .uid(entitySlots[$0.name] ?? 0) })
      fields["NSEntities"] = archiver.object(
        ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject"],
        [
          "searchMapping": mapping, "values": values, "version": .integer(1),
          "emptyToken": archiver.string("__empty_slot_token_4c24_98dc_ac1e_b773__"),
        ])
      for entity in entities { writeEntity(entity) }
      fields["NSVersionIdentifiers"] = archiver.array(
        model.versionIdentifiers.map { archiver.string($0) }, classes: Self.set)
      fields["NSFetchRequestTemplates"] = fetchRequestTemplates()
      if !model.configurations.isEmpty {
        let configurations = model.configurations.sorted { $0.key < $1.key }
        let sets = configurations.map { _, members in
          archiver.array(members.sorted().compactMap { entitySlots[$0].map { .uid($0) } }, classes: Self.set)
        }
        fields["NSConfigurations"] = archiver.dictionary(
          keys: configurations.map { archiver.string($0.key) }, values: sets, classes: Self.mutableDictionary)
      }
      archiver.fill(modelSlot, classes: ["NSManagedObjectModel", "NSObject"], fields: fields)
      return archiver.archive(root: .uid(modelSlot))
    }

    /// Every property name of the entity, inherited ones included, in the order Core Data's
    /// `NSProperties` dictionary enumerates them.
    func propertyNames(of entity: Entity) -> [String] {
      let attributes = model.declaredAttributes(of: entity).map(\.name)
      let relationships = model.relationships(of: entity).map(\.name)
      let fetched = ([entity] + model.ancestors(of: entity)).reversed().flatMap { $0.fetchedProperties.map(\.name) }
      return CFHashOrder.order(of: attributes + relationships + fetched)
    }

    mutating func writeEntity(_ entity: Entity) {
      guard let slot = entitySlots[entity.name] else { return }
      let name = archiver.string(entity.name)
      var fields: [String: PropertyListValue] = [
        "NSEntityName": name, "NSManagedObjectModel": .uid(modelSlot),
        "NSClassNameForEntity": archiver.string(entity.className),
        "NSVersionHashModifier": archiver.string(entity.versionHashModifier),
        "NSRenamingIdentifier": archiver.string(entity.renamingIdentifier ?? entity.name),
        "NSSuperentity": entity.parentName.flatMap { entitySlots[$0] }.map { .uid($0) } ?? KeyedArchiver.null,
        "NSUserInfo": userInfo(entity.userInfo),
      ]
      if entity.isAbstract { fields["NSIsAbstract"] = .boolean(true) }
      let subentities = model.subentities(of: entity).sorted { $0.name < $1.name }
      fields["NSSubentities"] = archiver.dictionary(
        keys: subentities.map { archiver.string($0.name) },
        values: subentities.compactMap { entitySlots[$0.name].map { .uid($0) } }, classes: Self.mutableDictionary)
      let names = propertyNames(of: entity)
      let slots = propertySlots[entity.name] ?? [:]
      for propertyName in names {
        guard let propertySlot = slots[propertyName] else { continue }
        writeProperty(propertyName, of: entity, in: propertySlot)
      }
      fields["NSProperties"] = archiver.dictionary(
        keys: names.map { archiver.string($0) }, values: names.compactMap { slots[$0].map { .uid($0) } },
        classes: Self.mutableDictionary)
      if !entity.uniquenessConstraints.isEmpty {
        fields["NSUniqueTuples"] = archiver.array(
          entity.uniquenessConstraints.map { tuple in
            archiver.array(tuple.map { archiver.string($0) }, classes: Self.mutableArray)
          }, classes: Self.mutableArray)
      }
      if !entity.compoundIndexes.isEmpty {
        fields["NSCompoundIndexes"] = archiver.array(
          entity.compoundIndexes.map { index in
            archiver.array(index.map { archiver.string($0) }, classes: Self.mutableArray)
          })
      }
      if !entity.fetchIndexes.isEmpty {
        fields["NSFetchIndexDescriptions"] = archiver.array(entity.fetchIndexes.map { fetchIndex($0, of: slot) })
      }
      archiver.fill(slot, classes: Self.entityClasses, fields: fields)
    }

    mutating func fetchIndex(_ index: FetchIndex, of entitySlot: UInt64) -> PropertyListValue {
      let indexSlot = archiver.reserve()
      let elements = index.elements.map { element in
        var fields: [String: PropertyListValue] = [
          "NSPropertyName": archiver.string(element.property), "NSFetchIndexDescription": .uid(indexSlot),
          // NSFetchIndexElementType: 0 binary, 1 R-tree.
          "NSFetchIndexElementType": .integer(element.type == "R-Tree" ? 1 : 0),
          "NSAscending": .boolean(element.isAscending),
        ]
        // An expression element: its NSExpressionDescription under NSIndexedProperty, as
        // NSFetchIndexElementDescription's encodeWithCoder writes it.
        if let expression = element.expression {
          var described = propertyFlags(optional: true, readOnly: true, transient: false, userInfo: [:])
          described["NSPropertyName"] = archiver.string(element.property)
          described["NSExpression"] = archived(expression)
          described["NSExpressionType"] = .integer(Int64(element.expressionType?.rawValue ?? 0))
          fields["NSIndexedProperty"] = archiver.object(
            ["NSExpressionDescription", "NSPropertyDescription", "NSObject"], described)
        }
        return archiver.object(["NSFetchIndexElementDescription", "NSObject"], fields)
      }
      let partial = index.partialPredicate.map { archivedPredicate($0) } ?? KeyedArchiver.null
      archiver.fill(
        indexSlot, classes: ["NSFetchIndexDescription", "NSObject"],
        fields: [
          "NSIndexName": archiver.string(index.name), "NSEntity": .uid(entitySlot),
          "NSIndexElements": archiver.array(elements, classes: Self.mutableArray),
          "NSPartialIndexPredicate": partial,
        ])
      return .uid(indexSlot)
    }

    mutating func writeProperty(_ name: String, of entity: Entity, in slot: UInt64) {
      guard let entitySlot = entitySlots[entity.name] else { return }
      let propertyName = archiver.string(name)
      var fields: [String: PropertyListValue] = ["NSEntity": .uid(entitySlot), "NSPropertyName": propertyName]
      func flags(optional: Bool, readOnly: Bool, transient: Bool, userInfo: [String: String]) {
        let flags = propertyFlags(optional: optional, readOnly: readOnly, transient: transient, userInfo: userInfo)
        fields.merge(flags, uniquingKeysWith: { _, new in new })
      }
      if let attribute = model.declaredAttributes(of: entity).first(where: { $0.name == name }) {
        fields.merge(attributeFields(attribute), uniquingKeysWith: { _, new in new })
        archiver.fill(slot, classes: Self.attributeClasses(attribute), fields: fields)
      } else if let relationship = model.relationships(of: entity).first(where: { $0.name == name }) {
        flags(
          optional: relationship.isOptional, readOnly: relationship.isReadOnly, transient: relationship.isTransient,
          userInfo: relationship.userInfo)
        fields["NSRenamingIdentifier"] = archiver.string(relationship.renamingIdentifier ?? name)
        let destination = relationship.destinationEntity
        fields["_NSDestinationEntityName"] = archiver.string(destination)
        fields["NSDestinationEntity"] = entitySlots[destination].map { .uid($0) } ?? KeyedArchiver.null
        fields["_NSInverseRelationshipName"] = archiver.string(relationship.inverseName)
        fields["NSInverseRelationship"] =
          relationship.inverseName.flatMap { propertySlots[destination]?[$0] }.map { .uid($0) } ?? KeyedArchiver.null
        fields["NSMinCount"] = .integer(Int64(relationship.minCount))
        fields["NSMaxCount"] = .integer(Int64(relationship.maxCount))
        let deleteRules: [DeleteRule: Int64] = [.noAction: 0, .nullify: 1, .cascade: 2, .deny: 3]
        fields["NSDeleteRule"] = .integer(deleteRules[relationship.deleteRule] ?? 1)
        if relationship.isOrdered { fields["NSIsOrdered"] = .boolean(true) }
        if let modifier = relationship.versionHashModifier {
          fields["NSVersionHashModifier"] = archiver.string(modifier)
        }
        archiver.fill(
          slot, classes: ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"], fields: fields)
      } else if let fetched = ([entity] + model.ancestors(of: entity)).lazy.compactMap({
        $0.fetchedProperties.first { $0.name == name }
      }).first {
        // Fetched properties are read-only and transient in every archive.
        flags(optional: true, readOnly: true, transient: true, userInfo: fetched.userInfo)
        fields["NSRenamingIdentifier"] = propertyName
        fields["_NSFetchRequestEntityName"] = archiver.string(fetched.fetchEntity)
        fields["NSFetchRequest"] = fetchRequest(entity: fetched.fetchEntity)
        archiver.fill(
          slot, classes: ["NSFetchedPropertyDescription", "NSPropertyDescription", "NSObject"], fields: fields)
      }
    }

    /// What an attribute's description holds besides its entity: flags, type, value class, default,
    /// and for a composite (`NSCompositeAttributeDescription`, value class `NSDictionary`) its
    /// elements in `NSCompositeElements`, each a description of its own (with no entity), as
    /// SwiftData's stores archive them.
    mutating func attributeFields(_ attribute: Attribute) -> [String: PropertyListValue] {
      var fields = propertyFlags(
        optional: attribute.isOptional, readOnly: attribute.isReadOnly || attribute.derivation != nil,
        transient: attribute.isTransient, userInfo: attribute.userInfo)
      fields.merge(
        [
          "NSPropertyName": archiver.string(attribute.name),
          "NSRenamingIdentifier": archiver.string(attribute.renamingIdentifier ?? attribute.name),
          "NSAttributeType": .integer(Int64(attribute.type.rawValue)),
          // The type's value class; a transformable's custom class is not archived ($null in Apple's).
          "NSAttributeValueClassName": archiver.string(Self.valueClassName(attribute.type)),
          "NSValueTransformerName": archiver.string(attribute.valueTransformerName),
          "NSDefaultValue": defaultValue(attribute),
          // As NSAttributeDescription's encodeWithCoder: (ModelCache.AttributeFlags).
          "NSFlagsKey": .integer(
            (attribute.allowsExternalBinaryDataStorage ? 4 : 0) | (attribute.preservesValueInHistoryOnDeletion ? 16 : 0)
          ),
        ], uniquingKeysWith: { _, new in new })
      if attribute.isIndexed { fields["NSIsIndexed"] = .boolean(true) }
      if let modifier = attribute.versionHashModifier { fields["NSVersionHashModifier"] = archiver.string(modifier) }
      if let derivation = attribute.derivation {
        fields["NSDerivationExpression"] = expression(derivation.expression)
        fields["NSFilteringPredicate"] = KeyedArchiver.null
      }
      if attribute.type == .composite {
        var elements: [PropertyListValue] = []
        for element in attribute.elements {
          let elementFields = attributeFields(element)
          elements.append(archiver.object(Self.attributeClasses(element), elementFields))
        }
        fields["NSCompositeElements"] = archiver.array(elements, classes: Self.mutableArray)
      }
      return fields
    }

    /// The flags every property description has: `NSIsOptional`, `NSIsReadOnly`, `NSIsTransient`
    /// when set, the `_P` word (see the type's notes) and `NSUserInfo` when there is any.
    mutating func propertyFlags(optional: Bool, readOnly: Bool, transient: Bool, userInfo: [String: String])
      -> [String: PropertyListValue]
    {
      var flags: [String: PropertyListValue] = [
        "_P": .integer(
          0x81 | 0x30 | (optional ? 0x02 : 0) | (readOnly ? 0x04 : 0) | (transient ? 0x08 : 0)
            | (userInfo.isEmpty ? 0x40 : 0))
      ]
      if optional { flags["NSIsOptional"] = .boolean(true) }
      if readOnly { flags["NSIsReadOnly"] = .boolean(true) }
      if transient { flags["NSIsTransient"] = .boolean(true) }
      if !userInfo.isEmpty { flags["NSUserInfo"] = self.userInfo(userInfo) }
      return flags
    }

    static func attributeClasses(_ attribute: Attribute) -> [String] {
      let base = ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]
      if attribute.type == .composite { return ["NSCompositeAttributeDescription"] + base }
      if attribute.derivation != nil { return ["NSDerivedAttributeDescription"] + base }
      return base
    }

    /// An `NSFetchRequest` for the entity, with no predicate (see the type's notes).
    mutating func fetchRequest(entity: String?) -> PropertyListValue {
      archiver.object(
        ["NSFetchRequest", "NSPersistentStoreRequest", "NSObject"],
        [
          "NSEntity": entity.flatMap { entitySlots[$0] }.map { .uid($0) } ?? KeyedArchiver.null,
          "NSPredicate": KeyedArchiver.null, "NSSortDescriptors": KeyedArchiver.null,
          "NSFetchLimit": .integer(0), "NSFetchOffset": .integer(0), "NSBatchSize": .integer(0),
          "NSResultType": .integer(0), "NSAllocationType": .integer(0),
        ])
    }

    mutating func fetchRequestTemplates() -> PropertyListValue {
      guard !model.fetchRequests.isEmpty else { return KeyedArchiver.null }
      let templates = model.fetchRequests.sorted { $0.name < $1.name }
      let keys = templates.map { archiver.string($0.name) }
      let values = templates.map { fetchRequest(entity: $0.entity) }
      return archiver.dictionary(keys: keys, values: values)
    }

    mutating func userInfo(_ entries: [String: String]) -> PropertyListValue {
      let sorted = entries.sorted { $0.key < $1.key }
      return archiver.dictionary(
        keys: sorted.map { archiver.string($0.key) }, values: sorted.map { archiver.string($0.value) })
    }

    /// The default value as Core Data archives it: an `NSNumber` (integer, real or boolean), a string
    /// or an `NSDate`.
    mutating func defaultValue(_ attribute: Attribute) -> PropertyListValue {
      switch attribute.defaultValue {
      case .integer(let number): archiver.value(.integer(number))
      case .boolean(let flag): archiver.value(.boolean(flag))
      case .double(let number): archiver.value(.real(number))
      case .string(let text): archiver.string(text)
      case .date(let seconds): archiver.object(["NSDate", "NSObject"], ["NS.time": .real(seconds)])
      default: KeyedArchiver.null
      }
    }

    /// A derivation as an `NSExpression`: `pages.@count` (or `count:(pages)`) as Apple archives it
    /// (the function `count:` over the key path), the other functions (`lowercase:(title)`,
    /// `now()`) the same way — a guess for those: no archive we have shows one — and a plain key
    /// path as a key-path expression.
    mutating func expression(_ text: String) -> PropertyListValue {
      let (function, argument) = DerivationFormat.parse(DerivationFormat.expression(text))
      guard let function else { return keyPathExpression(text) }
      let arguments = argument.map { [keyPathExpression($0)] } ?? []
      return functionExpression(function == "now()" ? "now" : function, arguments)
    }

    /// A partial index's predicate as `NSPredicate` archives it: `NSComparisonPredicate`
    /// (`NSLeftExpression`, `NSPredicateOperator`, `NSRightExpression`), `NSCompoundPredicate`
    /// (`NSCompoundPredicateType`, `NSSubpredicates`), `NSTruePredicate`/`NSFalsePredicate`. The
    /// operator objects' classes and keys (`NSEqualityPredicateOperator` for `==`/`!=`,
    /// `NSComparisonPredicateOperator` for the orderings; `NSOperatorType`, `NSModifier`, `NSOptions`,
    /// `NSNegate`) are a guess from public archives: no model cache we have holds a partial index.
    /// Only the forms a store can be written with (``FetchIndexSQL/partialIndex(_:)``) get here.
    mutating func archivedPredicate(_ format: String) -> PropertyListValue {
      guard let predicate = try? FormatPredicate(format) else { return KeyedArchiver.null }
      return archived(predicate.root)
    }

    private mutating func archived(_ node: FormatPredicate.Node) -> PropertyListValue {
      let predicateClasses = ["NSPredicate", "NSObject"]
      switch node {
      case .constant(let flag):
        return archiver.object([flag ? "NSTruePredicate" : "NSFalsePredicate"] + predicateClasses, [:])
      case .and(let nodes), .or(let nodes):
        let type: Int64 = if case .and = node { 1 } else { 2 }
        return archiver.object(
          ["NSCompoundPredicate"] + predicateClasses,
          ["NSCompoundPredicateType": .integer(type), "NSSubpredicates": archiver.array(nodes.map { archived($0) })])
      case .not(let inner):
        return archiver.object(
          ["NSCompoundPredicate"] + predicateClasses,
          ["NSCompoundPredicateType": .integer(0), "NSSubpredicates": archiver.array([archived(inner)])])
      case .comparison(let lhs, let op, let rhs, _, _):
        let types: [FormatPredicate.Operator: Int64] = [
          .less: 0, .lessOrEqual: 1, .greater: 2, .greaterOrEqual: 3, .equal: 4, .notEqual: 5,
        ]
        let type = types[op] ?? 4
        let operatorClasses =
          type >= 4
          ? ["NSEqualityPredicateOperator", "NSComparisonPredicateOperator", "NSPredicateOperator", "NSObject"]
          : ["NSComparisonPredicateOperator", "NSPredicateOperator", "NSObject"]
        let predicateOperator = archiver.object(
          operatorClasses,
          [
            "NSOperatorType": .integer(type), "NSModifier": .integer(0), "NSOptions": .integer(0),
            "NSNegate": .boolean(false),
          ])
        return archiver.object(
          ["NSComparisonPredicate"] + predicateClasses,
          [
            "NSLeftExpression": archived(lhs), "NSPredicateOperator": predicateOperator,
            "NSRightExpression": archived(rhs),
          ])
      }
    }

    private mutating func archived(_ expression: FormatPredicate.Expression) -> PropertyListValue {
      switch expression {
      case .keyPath(let path): return keyPathExpression(path.joined(separator: "."))
      case .this: return archived(IndexExpression.evaluatedObject)
      case .value(.null): return archived(IndexExpression.constant(.null))
      case .value(.integer(let number)): return archived(IndexExpression.constant(.integer(number)))
      case .value(.boolean(let flag)):
        return archiver.object(
          ["NSConstantValueExpression", "NSExpression", "NSObject"],
          ["NSExpressionType": .integer(0), "NSConstantValue": archiver.value(.boolean(flag))])
      case .value(.double(let number)): return archived(IndexExpression.constant(.real(number)))
      case .value(.string(let text)): return archived(IndexExpression.constant(.string(text)))
      case .value(.date(let seconds)): return archived(IndexExpression.constant(.date(seconds)))
      case .value, .list: return KeyedArchiver.null
      }
    }

    /// An index element's expression as `NSExpression` archives it: key paths as the object
    /// receiving `valueForKey:`, functions of `_NSPredicateUtilities`, constants, `SELF`.
    mutating func archived(_ expression: IndexExpression) -> PropertyListValue {
      switch expression {
      case .evaluatedObject:
        return archiver.object(["NSSelfExpression", "NSExpression", "NSObject"], ["NSExpressionType": .integer(1)])
      case .keyPath(let path):
        return keyPathExpression(path)
      case .constant(let constant):
        let value: PropertyListValue
        switch constant {
        case .null: value = KeyedArchiver.null
        case .integer(let number): value = archiver.value(.integer(number))
        case .real(let number): value = archiver.value(.real(number))
        case .string(let text): value = archiver.string(text)
        case .date(let seconds): value = archiver.object(["NSDate", "NSObject"], ["NS.time": .real(seconds)])
        }
        return archiver.object(
          ["NSConstantValueExpression", "NSExpression", "NSObject"],
          ["NSExpressionType": .integer(0), "NSConstantValue": value])
      case .function(let selector, let arguments):
        return functionExpression(selector, arguments.map { archived($0) })
      case .other:
        // Refused before any store is written (StoreSchema.Builder); archived as nothing.
        return KeyedArchiver.null
      }
    }

    /// A key path: the object receiving `valueForKey:`/`valueForKeyPath:` with the path.
    mutating func keyPathExpression(_ path: String) -> PropertyListValue {
      let specifier = archiver.object(
        ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"],
        ["NSExpressionType": .integer(10), "NSKeyPath": archiver.string(path)])
      let operand = archiver.object(
        ["NSSelfExpression", "NSExpression", "NSObject"], ["NSExpressionType": .integer(1)])
      return archiver.object(
        ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
        [
          "NSExpressionType": .integer(3), "NSOperand": operand,
          "NSSelectorName": archiver.string(path.contains(".") ? "valueForKeyPath:" : "valueForKey:"),
          "NSArguments": archiver.array([specifier], classes: Self.mutableArray),
        ])
    }

    /// A function of `_NSPredicateUtilities` (`count:`, `lowercase:`, `now`…) over its arguments.
    mutating func functionExpression(_ selector: String, _ arguments: [PropertyListValue]) -> PropertyListValue {
      let utilities = archiver.object(
        ["NSConstantValueExpression", "NSExpression", "NSObject"],
        ["NSExpressionType": .integer(0), "NSConstantValueClassName": archiver.string("_NSPredicateUtilities")])
      return archiver.object(
        ["NSFunctionExpression", "NSExpression", "NSObject"],
        [
          "NSExpressionType": .integer(4), "NSOperand": utilities, "NSSelectorName": archiver.string(selector),
          "NSArguments": archiver.array(arguments),
        ])
    }

    /// The value class Core Data names for an attribute type (`attributeValueClassName`).
    static func valueClassName(_ type: AttributeType) -> String? {
      switch type {
      case .integer16, .integer32, .integer64, .double, .float, .boolean: "NSNumber"
      case .decimal: "NSDecimalNumber"
      case .string: "NSString"
      case .date: "NSDate"
      case .binary: "NSData"
      case .uuid: "NSUUID"
      case .uri: "NSURL"
      case .composite: "NSDictionary"
      default: nil
      }
    }
  }
}

extension ObjectModel {
  /// The model as a store's `Z_MODELCACHE.Z_CONTENT`: Core Data's keyed archive, raw-deflated.
  package func modelCache() throws(ModelCacheError) -> [UInt8] { try ModelCacheArchive.compressed(self) }
}
