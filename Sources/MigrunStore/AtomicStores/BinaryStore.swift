import Foundation
import MigrunModel
import PropertyList

/// A Core Data binary store (`NSBinaryStoreType`: an atomic store written whole on save), read and
/// written as Core Data's `NSBinaryObjectStoreFile` and `NSDictionaryStoreMap` lay it out (their
/// public decompilation; no real binary store is in `../shared`, so what a real file has not
/// confirmed is said where it is assumed):
///
/// - a 64-byte header, big-endian: `CoreData` (8 bytes), header version 1, database version
///   134481920, the metadata's offset and length, the map's offset (64) and length, the next
///   primary key, 8 zero bytes;
/// - the map: a keyed archive whose top key `mapData` is a dictionary from each object's reference
///   (an integer, unique in the store) to an `NSDictionaryMapNode` — `NSPrimaryKey64`,
///   `NSEntityName`, `NSRelatedNodes` (relationship name → the references it holds, left out when
///   none) and `NSAttributeValues` (one slot per property of the entity in Core Data's property
///   order, `NSNull` where there is no value; an older form, `NSAttributes`, is a dictionary by name);
/// - the metadata: a keyed archive whose top key `metadata` is the metadata dictionary.
///
/// Values are archived objects: NSNumber, NSString, NSDate, NSData, NSUUID, NSURL, NSDecimalNumber;
/// a transformable attribute's value is its object graph itself (hence Core Data's
/// `NSBinaryStoreSecureDecodingClasses`), turned here into the keyed archive a SQLite store holds.
package struct BinaryStoreFile: Sendable {
  static let magic = Array("CoreData".utf8)
  static let headerVersion: UInt32 = 1
  /// `NSDictionaryStoreMap`'s `_databaseVersion`; Core Data refuses any other.
  static let databaseVersion: UInt32 = 134_481_920

  package struct Node: Sendable {
    package var key: Int64
    package var entity: String
    /// References to the value objects, slot by slot (`NSAttributeValues`).
    package var slots: [UInt64] = []
    /// References to the value objects by name (the older `NSAttributes`).
    package var named: [String: UInt64] = [:]
    package var related: [String: [Int64]] = [:]
  }

  package var metadata: PropertyListValue
  package var nextPrimaryKey: Int64
  package var nodes: [Node]
  /// The map archive's `$objects`: what the nodes' references point at.
  let objects: [PropertyListValue]

  /// Whether `bytes` start as a binary store does.
  package static func looksLikeBinaryStore(_ bytes: some Collection<UInt8>) -> Bool {
    bytes.starts(with: magic)
  }

  /// Reads the file's structure; an error names the file and what is wrong.
  package static func read(_ bytes: [UInt8], file: String) throws(StoreError) -> BinaryStoreFile {
    func bad(_ reason: String) -> StoreError {
      StoreError(.notACoreDataStore, file: file, reason: "not a readable Core Data binary store: \(reason)")
    }
    let (metadataBytes, mapBytes, next) = try parts(of: bytes, file: file)
    let metadataArchive: PropertyListValue
    let mapArchive: PropertyListValue
    do {
      metadataArchive = try PropertyListValue(decoding: metadataBytes)
      mapArchive = try PropertyListValue(decoding: mapBytes)
    } catch {
      throw bad("a keyed archive in it does not read (\(error))")
    }
    // An archived object is a dictionary of fields (a value, a reference, or a list of them): a
    // file whose objects nest deeper, or share values beyond its size, is no archive Core Data wrote.
    var budget = 8 * bytes.count + 1024
    for archive in [metadataArchive, mapArchive] {
      for object in archive["$objects"]?.arrayValue ?? [] {
        guard let size = object.size(upTo: budget, depth: 4) else {
          throw bad("an archived object nests deeper or holds more than an archive's objects do")
        }
        budget -= size
      }
    }
    guard let metadataObjects = metadataArchive["$objects"]?.arrayValue,
      let metadataRoot = metadataArchive["$top"]?["metadata"]?.uidValue
    else { throw bad("its metadata archive has no 'metadata'") }
    var expansion = Archived.Expansion(archiveBytes: metadataBytes.count)
    let metadata = try Archived(objects: metadataObjects, file: file).plist(metadataRoot, expansion: &expansion)
    guard case .dictionary = metadata else { throw bad("its metadata is not a dictionary") }
    guard let objects = mapArchive["$objects"]?.arrayValue, let root = mapArchive["$top"]?["mapData"]?.uidValue else {
      throw bad("its map archive has no 'mapData'")
    }
    let nodes = try Archived(objects: objects, file: file).nodes(root)
    return BinaryStoreFile(
      metadata: metadata, nextPrimaryKey: Int64(clamping: next), nodes: nodes, objects: objects)
  }

  /// The header's parts: the metadata archive's bytes, the map archive's, the next primary key.
  private static func parts(of bytes: [UInt8], file: String) throws(StoreError) -> (
    metadata: [UInt8], map: [UInt8], next: UInt64
  ) {
    func bad(_ reason: String) -> StoreError {
      StoreError(.notACoreDataStore, file: file, reason: "not a readable Core Data binary store: \(reason)")
    }
    guard bytes.count >= 64 else { throw bad("the file is \(bytes.count) bytes, shorter than its 64-byte header") }
    guard looksLikeBinaryStore(bytes) else { throw bad("it does not start with 'CoreData'") }
    func word(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
    func long(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
    guard word(8) == headerVersion else { throw bad("header version \(word(8)), not 1") }
    guard word(12) == databaseVersion else {
      throw bad("database version \(word(12)) (Core Data writes \(databaseVersion); the file is of another version)")
    }
    func part(_ name: String, offset: UInt64, length: UInt64) throws(StoreError) -> [UInt8] {
      guard offset >= 64, length > 0, offset <= UInt64(bytes.count), length <= UInt64(bytes.count) - offset else {
        throw bad("its \(name) (\(length) bytes at \(offset)) lies outside the file's \(bytes.count) bytes")
      }
      return Array(bytes[Int(offset)..<Int(offset + length)])
    }
    return (
      try part("metadata", offset: long(16), length: long(24)),
      try part("map of objects", offset: long(32), length: long(40)),
      long(48)
    )
  }

  /// Reads and checks the keyed archives' objects, naming the file in every error.
  struct Archived {
    let objects: [PropertyListValue]
    let file: String

    func bad(_ reason: String) -> StoreError {
      StoreError(.notACoreDataStore, file: file, reason: "not a readable Core Data binary store: \(reason)")
    }

    func object(_ reference: UInt64) throws(StoreError) -> PropertyListValue {
      guard reference < UInt64(objects.count) else { throw bad("reference \(reference) names no archived object") }
      return objects[Int(reference)]
    }

    /// The class name of the archived object at `reference` (nil for a plain value).
    func className(_ reference: UInt64) throws(StoreError) -> String? {
      guard case .dictionary(let fields) = try object(reference), let classReference = fields["$class"]?.uidValue
      else { return nil }
      guard let name = try object(classReference)["$classname"]?.stringValue else {
        throw bad("object \(reference)'s class has no name")
      }
      return name
    }

    func fields(_ reference: UInt64) throws(StoreError) -> [String: PropertyListValue] {
      guard case .dictionary(let fields) = try object(reference) else {
        throw bad("object \(reference) is a plain value where an object was expected")
      }
      return fields
    }

    /// An `NSArray`'s (or set's) element references.
    func list(_ reference: UInt64) throws(StoreError) -> [UInt64] {
      guard let elements = try fields(reference)["NS.objects"]?.arrayValue else {
        throw bad("object \(reference) is not an array")
      }
      var references: [UInt64] = []
      for element in elements {
        guard let reference = element.uidValue else { throw bad("an array holds something other than references") }
        references.append(reference)
      }
      return references
    }

    /// An `NSDictionary`'s entries as references, key by key.
    func entries(_ reference: UInt64) throws(StoreError) -> [(key: UInt64, value: UInt64)] {
      let fields = try fields(reference)
      guard let keys = fields["NS.keys"]?.arrayValue, let values = fields["NS.objects"]?.arrayValue,
        keys.count == values.count
      else { throw bad("object \(reference) is not a dictionary") }
      var found: [(UInt64, UInt64)] = []
      for (key, value) in zip(keys, values) {
        guard let key = key.uidValue, let value = value.uidValue else {
          throw bad("a dictionary holds something other than references")
        }
        found.append((key, value))
      }
      return found
    }

    func string(_ reference: UInt64) throws(StoreError) -> String? {
      switch try object(reference) {
      case .string(let text): return reference == 0 ? nil : text
      case .dictionary(let fields):
        if let text = fields["NS.string"]?.stringValue { return text }
        if let bytes = fields["NS.bytes"]?.dataValue { return String(decoding: bytes, as: UTF8.self) }
        return nil
      default: return nil
      }
    }

    /// Whether the archived object at `reference` is `$null` or an `NSNull`.
    func isNull(_ reference: UInt64) throws(StoreError) -> Bool {
      if reference == 0 { return true }
      return try className(reference) == "NSNull"
    }

    func integer(_ reference: UInt64) throws(StoreError) -> Int64? {
      if case .integer(let number) = try object(reference) { return number }
      return nil
    }

    /// What an archived value may still expand to (``KeyedArchive``'s bounds): each object is
    /// counted every time a field refers to it, as the value built holds it.
    struct Expansion {
      let nodeBound: Int
      let byteBound: Int
      var nodes = 0
      var bytes = 0

      init(archiveBytes: Int) {
        nodeBound = max(KeyedArchive.minimumExpandedNodes, 4 * archiveBytes)
        byteBound = max(KeyedArchive.minimumExpandedBytes, 4 * archiveBytes)
      }
    }

    /// `value`, its string's or data's bytes counted against `expansion`.
    func counted(_ value: PropertyListValue, _ expansion: inout Expansion) throws(StoreError) -> PropertyListValue {
      switch value {
      case .string(let text): expansion.bytes += text.utf8.count
      case .data(let bytes): expansion.bytes += bytes.count
      default: break
      }
      guard expansion.bytes <= expansion.byteBound else {
        throw bad(
          "its metadata archive shares its strings and data so often its expanded form exceeds "
            + "\(expansion.byteBound) bytes")
      }
      return value
    }

    /// An archived property list value (the metadata): dictionaries, arrays, strings, numbers,
    /// data, dates. An archive whose objects refer to each other over and over (each to the next
    /// twice, 50 deep) is refused past `expansion`, never walked 2^50 times.
    func plist(_ reference: UInt64, depth: Int = 0, expansion: inout Expansion) throws(StoreError)
      -> PropertyListValue
    {
      guard depth < 64 else { throw bad("the metadata nests deeper than 64 levels") }
      expansion.nodes += 1
      guard expansion.nodes <= expansion.nodeBound else {
        throw bad(
          "its metadata archive shares objects so deeply its expanded form exceeds \(expansion.nodeBound) nodes, "
            + "an object counted once for each field that refers to it")
      }
      let value = try object(reference)
      guard case .dictionary(let fields) = value, fields["$class"] != nil else {
        if case .uid = value { throw bad("a reference where a value was expected") }
        return try counted(value, &expansion)
      }
      switch try className(reference) {
      case "NSDictionary", "NSMutableDictionary":
        var result: [String: PropertyListValue] = [:]
        for (key, element) in try entries(reference) {
          guard let name = try string(key) else { throw bad("a metadata key is not a string") }
          result[name] = try plist(element, depth: depth + 1, expansion: &expansion)
        }
        return .dictionary(result)
      case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
        var result: [PropertyListValue] = []
        for element in try list(reference) {
          result.append(try plist(element, depth: depth + 1, expansion: &expansion))
        }
        return .array(result)
      case "NSString", "NSMutableString":
        return try counted(.string(try string(reference) ?? ""), &expansion)
      case "NSData", "NSMutableData":
        return try counted(.data(fields["NS.data"]?.dataValue ?? []), &expansion)
      case "NSDate":
        guard case .real(let seconds)? = fields["NS.time"] else { throw bad("an NSDate without its time") }
        return .date(seconds)
      case let other:
        throw bad("the metadata holds an object of class \(other ?? "?"), which is no property list value")
      }
    }

    /// The node at `reference`, for the object of `key`: every field understood or an error naming it.
    func node(_ key: Int64, at nodeReference: UInt64) throws(StoreError) -> Node {
      let name = try className(nodeReference)
      guard name == "NSDictionaryMapNode" else {
        throw bad("object \(key) is an archived \(name ?? "value"), not an NSDictionaryMapNode")
      }
      let fields = try fields(nodeReference)
      // A field this reader does not know would be passed over with whatever it holds: refused.
      let known: Set<String> = [
        "$class", "NSPrimaryKey64", "NSKey", "NSEntityName", "NSAttributeValues", "NSAttributes", "NSRelatedNodes",
      ]
      if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
        throw bad("object \(key) has a field '\(unknown)' this reader does not know")
      }
      if let own = fields["NSPrimaryKey64"]?.integerValue, own != key {
        throw bad("object \(key) says its key is \(own)")
      }
      guard let entityReference = fields["NSEntityName"]?.uidValue, let entity = try string(entityReference) else {
        throw bad("object \(key) has no entity name")
      }
      var node = Node(key: key, entity: entity)
      if let values = fields["NSAttributeValues"]?.uidValue {
        node.slots = try list(values)
      } else if let values = fields["NSAttributes"]?.uidValue {
        for (nameReference, value) in try entries(values) {
          guard let property = try string(nameReference) else {
            throw bad("object \(key): an attribute name is not a string")
          }
          node.named[property] = value
        }
      }
      if let related = fields["NSRelatedNodes"]?.uidValue {
        for (nameReference, targets) in try entries(related) {
          guard let property = try string(nameReference) else {
            throw bad("object \(key): a relationship name is not a string")
          }
          var keys: [Int64] = []
          for target in try list(targets) {
            guard let targetKey = try integer(target) else {
              throw bad("object \(key)'s relationship '\(property)' holds something other than a reference")
            }
            keys.append(targetKey)
          }
          node.related[property] = keys
        }
      }
      return node
    }

    /// The map's nodes.
    func nodes(_ root: UInt64) throws(StoreError) -> [Node] {
      var nodes: [Node] = []
      for (keyReference, nodeReference) in try entries(root) {
        guard let key = try integer(keyReference) else {
          throw bad("an object's reference is not a number (a store with custom reference objects?)")
        }
        nodes.append(try node(key, at: nodeReference))
      }
      return nodes.sorted { $0.key < $1.key }
    }
  }
}

// MARK: - Core Data's property order

extension BinaryStoreFile {
  /// The entity's properties in Core Data's order (`-[NSEntityDescription _createCachesAndOptimizeState]`):
  /// persistent attributes (derived and composite ones among them), transient attributes, to-ones,
  /// unordered to-manys, ordered to-manys, then the transient relationships in the same groups;
  /// within each group the superentity's first, in its order, then the entity's own sorted by name.
  /// A node's `NSAttributeValues` has a slot per property in this order.
  static func propertyOrder(of entity: Entity, in model: ObjectModel) -> [String] {
    var groups = Array(repeating: [String](), count: 8)
    for level in ([entity] + model.ancestors(of: entity)).reversed() {
      let known = Set(groups.joined())
      var own = Array(repeating: [String](), count: 8)
      for attribute in level.attributes where !known.contains(attribute.name) {
        own[attribute.isTransient ? 1 : 0].append(attribute.name)
      }
      for relationship in level.relationships where !known.contains(relationship.name) {
        let kind = relationship.isToMany ? (relationship.isOrdered ? 4 : 3) : 2
        own[relationship.isTransient ? kind + 3 : kind].append(relationship.name)
      }
      for index in groups.indices { groups[index] += own[index].sorted() }
    }
    return Array(groups.joined())
  }

  /// The persistent attributes' slots: the first ones of ``propertyOrder(of:in:)``.
  static func attributeSlots(of entity: Entity, in model: ObjectModel) -> [Attribute] {
    let attributes = Dictionary(
      model.declaredAttributes(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    return propertyOrder(of: entity, in: model).prefix { attributes[$0]?.isTransient == false }
      .compactMap { attributes[$0] }
  }
}

// MARK: - Objects of a model

extension BinaryStoreFile {
  /// The store's objects as `model` has them: values by the attributes' slots, links resolved. An
  /// object of an entity the model lacks, a value that is not of its attribute's kind, or a link to
  /// no object is an error naming the object.
  package func objects(of model: ObjectModel, file: String) throws(StoreError) -> [StoredObject] {
    let archived = Archived(objects: objects, file: file)
    var entities: [Int64: String] = [:]
    for node in nodes {
      guard model.entity(named: node.entity) != nil else {
        throw StoreError(
          .unknownEntity, file: file, entity: node.entity,
          reason: "object \(node.key) is of entity \(node.entity), which the model does not have")
      }
      entities[node.key] = node.entity
    }
    var found: [StoredObject] = []
    for node in nodes {
      guard let entity = model.entity(named: node.entity) else { continue }
      var stored = StoredObject(id: ObjectID(entity: entity.name, primaryKey: node.key))
      try readAttributes(of: node, entity, model, archived, into: &stored, file: file)
      try readRelationships(of: node, entity, model, entities: entities, into: &stored, file: file)
      found.append(stored)
    }
    return found
  }

  private func readAttributes(
    of node: Node, _ entity: Entity, _ model: ObjectModel, _ archived: Archived, into stored: inout StoredObject,
    file: String
  ) throws(StoreError) {
    let slots = Self.attributeSlots(of: entity, in: model)
    for attribute in slots { stored.attributes[attribute.name] = .null }
    var references: [(Attribute, UInt64)] = []
    if node.named.isEmpty {
      // One slot per property: the attributes' first, NSNull in the relationships'. A slot past the
      // attributes that holds a value, or fewer slots than attributes, means the property order is
      // not the one this reader knows — an error naming the object, never a value misplaced.
      var extraValue = false
      for reference in node.slots.dropFirst(slots.count) where try !archived.isNull(reference) { extraValue = true }
      guard node.slots.count >= slots.count || node.slots.isEmpty, !extraValue else {
        throw StoreError(
          .badValue, file: file, entity: entity.name, primaryKey: node.key,
          reason: "object \(node.key) has \(node.slots.count) value slots where entity \(entity.name) has "
            + "\(slots.count) attributes followed by empty slots")
      }
      for (attribute, reference) in zip(slots, node.slots) { references.append((attribute, reference)) }
    } else {
      let byName = Dictionary(slots.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      for (name, reference) in node.named {
        guard let attribute = byName[name] else {
          throw StoreError(
            .unknownProperty, file: file, entity: entity.name, primaryKey: node.key,
            reason: "object \(node.key) has attribute '\(name)', which entity \(entity.name) does not have")
        }
        references.append((attribute, reference))
      }
    }
    for attribute in slots where attribute.type == .composite {
      for leaf in attribute.leaves { stored.attributes[leaf.name] = .null }
      stored.attributes[attribute.name] = nil
    }
    for (attribute, reference) in references {
      do {
        try Self.read(attribute, path: attribute.name, reference, archived, into: &stored)
      } catch {
        throw StoreError(
          .badValue, file: file, entity: entity.name, primaryKey: node.key,
          reason: "object \(node.key): the value of '\(attribute.name)' (\(attribute.type.xmlName)): \(error.reason)")
      }
    }
  }

  private func readRelationships(
    of node: Node, _ entity: Entity, _ model: ObjectModel, entities: [Int64: String], into stored: inout StoredObject,
    file: String
  ) throws(StoreError) {
    let relationships = Dictionary(
      model.relationships(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    for (name, keys) in node.related {
      guard let relationship = relationships[name] else {
        throw StoreError(
          .unknownProperty, file: file, entity: entity.name, primaryKey: node.key,
          reason: "object \(node.key) has relationship '\(name)', which entity \(entity.name) does not have")
      }
      var targets: [ObjectID] = []
      for key in keys {
        guard let target = entities[key] else {
          throw StoreError(
            .notACoreDataStore, file: file, entity: entity.name, primaryKey: node.key,
            reason: "object \(node.key)'s relationship '\(name)' names \(key), which is no object of the store")
        }
        guard model.entity(named: target, isKindOf: relationship.destinationEntity) else {
          throw StoreError(
            .badValue, file: file, entity: entity.name, primaryKey: node.key,
            reason:
              "object \(node.key)'s relationship '\(name)' names \(key), a \(target), not a \(relationship.destinationEntity)"
          )
        }
        targets.append(ObjectID(entity: target, primaryKey: key))
      }
      if relationship.isToMany {
        stored.toMany[name] = relationship.isOrdered ? targets : targets.sorted()
      } else if targets.count > 1 {
        throw StoreError(
          .badValue, file: file, entity: entity.name, primaryKey: node.key,
          reason: "object \(node.key)'s to-one relationship '\(name)' names \(targets.count) objects")
      } else if let target = targets.first {
        stored.toOne[name] = target
      }
    }
  }

  /// The attribute's archived value into `stored`: a composite's dictionary element by element, by
  /// key path (`author.person`).
  static func read(
    _ attribute: Attribute, path: String, _ reference: UInt64, _ archived: Archived, into stored: inout StoredObject
  ) throws(StoreError) {
    guard attribute.type == .composite else {
      stored.attributes[path] = try value(reference, attribute.type, archived)
      return
    }
    guard reference != 0, try archived.className(reference) != "NSNull" else { return }
    let elements = Dictionary(attribute.elements.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    for (key, element) in try archived.entries(reference) {
      guard let name = try archived.string(key), let attribute = elements[name] else {
        throw archived.bad("the composite holds an element the model's '\(path)' does not have")
      }
      try read(attribute, path: path + "." + name, element, archived, into: &stored)
    }
  }

  /// The archived value at `reference` as a value of `type`: numbers, strings, dates, data, UUIDs,
  /// URLs, decimals by their archived class; a transformable's object graph as a keyed archive of
  /// its own.
  static func value(_ reference: UInt64, _ type: AttributeType, _ archived: Archived) throws(StoreError)
    -> StoreValue
  {
    let raw = try archived.object(reference)
    if reference == 0 { return .null }
    switch raw {
    case .integer(let number): return StoreValueCoding.value(integer: number, type: type)
    case .real(let number): return StoreValueCoding.value(double: number, type: type)
    case .boolean(let flag): return type == .boolean ? .boolean(flag) : .integer(flag ? 1 : 0)
    case .string(let text):
      return type == .transformable
        ? .data(extracted(reference, archived)) : StoreValueCoding.value(text: text, type: type)
    case .data(let bytes):
      return StoreValueCoding.value(bytes: bytes, type: type)
    case .dictionary(let fields):
      let name = try archived.className(reference)
      if type == .transformable, name != "NSData", name != "NSMutableData" {
        return name == "NSNull" ? .null : .data(extracted(reference, archived))
      }
      switch name {
      case "NSNull": return .null
      case "NSString", "NSMutableString":
        return StoreValueCoding.value(text: try archived.string(reference) ?? "", type: type)
      case "NSData", "NSMutableData":
        return StoreValueCoding.value(bytes: fields["NS.data"]?.dataValue ?? [], type: type)
      case "NSDate":
        guard case .real(let seconds)? = fields["NS.time"] else { throw archived.bad("an NSDate without its time") }
        return .date(seconds)
      case "NSUUID":
        guard let bytes = fields["NS.uuidbytes"]?.dataValue, bytes.count == 16 else {
          throw archived.bad("an NSUUID without its 16 bytes")
        }
        return type == .string ? .string(UUID(uuid: uuidTuple(bytes)).uuidString) : .uuid(bytes)
      case "NSURL":
        let base = try fields["NS.base"]?.uidValue.flatMap { reference throws(StoreError) in
          try archived.string(reference)
        }
        let relative = try fields["NS.relative"]?.uidValue.flatMap { reference throws(StoreError) in
          try archived.string(reference)
        }
        return .string((base ?? "") + (relative ?? ""))
      case "NSDecimalNumber", "NSDecimalNumberPlaceholder":
        return .double(try decimal(fields, archived))
      default:
        throw archived.bad("an archived \(name ?? "?") where a \(type.xmlName) value was expected")
      }
    case .array, .uid, .date:
      throw archived.bad("a value that is no archived object")
    }
  }

  private static func extracted(_ reference: UInt64, _ archived: Archived) -> [UInt8] {
    KeyedArchiver.extract(reference, from: archived.objects).binaryEncoded()
  }

  private static func uuidTuple(_ bytes: [UInt8]) -> uuid_t {
    (
      bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10],
      bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
    )
  }

  /// An archived `NSDecimalNumber` (`NS.mantissa`: 16 bytes, little-endian unless `NS.mantissa.bo`
  /// says 0; `NS.exponent`, `NS.negative`) as a Double, as a SQLite store holds decimals.
  private static func decimal(_ fields: [String: PropertyListValue], _ archived: Archived) throws(StoreError)
    -> Double
  {
    guard let mantissa = fields["NS.mantissa"]?.dataValue, let exponent = fields["NS.exponent"]?.integerValue else {
      throw archived.bad("an NSDecimalNumber without its mantissa and exponent")
    }
    let length = fields["NS.length"]?.integerValue ?? 8
    if length == 0 && fields["NS.negative"] == .boolean(true) { return .nan }
    let littleEndian = fields["NS.mantissa.bo"]?.integerValue != 0
    var mantissaValue = 0.0
    let units = stride(from: 0, to: min(mantissa.count, 16) - 1, by: 2).prefix(Int(max(0, length))).map {
      index -> Double in
      let low = Double(mantissa[index]), high = Double(mantissa[index + 1])
      return littleEndian ? low + high * 256 : high + low * 256
    }
    for unit in units.reversed() { mantissaValue = mantissaValue * 65536 + unit }
    // Divided by an exact power of ten (not multiplied by an inexact one): 123456e-3 reads as 123.456.
    let value =
      exponent < 0 && exponent >= -22
      ? mantissaValue / pow(10, Double(-exponent)) : mantissaValue * pow(10, Double(exponent))
    return fields["NS.negative"] == .boolean(true) || fields["NS.negative"] == .integer(1) ? -value : value
  }
}
