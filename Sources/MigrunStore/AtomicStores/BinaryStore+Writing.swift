import Foundation
import MigrunModel
import PropertyList

extension BinaryStoreFile {
  /// The bytes of a binary store holding `objects` (keyed by `keys`: one number per object, unique
  /// in the store) and `metadata`, laid out as ``BinaryStoreFile`` describes. A value a binary store
  /// cannot hold as Core Data would is an error naming the object and attribute.
  package static func bytes(
    of objects: [StoredObject], keys: [ObjectID: Int64], metadata: PropertyListValue, model: ObjectModel,
    nextPrimaryKey: Int64
  ) throws(StoreError) -> [UInt8] {
    var map = KeyedArchiver()
    let null = map.object(["NSNull", "NSObject"], [:])
    var keyReferences: [PropertyListValue] = []
    var nodeReferences: [PropertyListValue] = []
    var slotsByEntity: [String: (slots: [Attribute], count: Int)] = [:]
    for object in objects.sorted(by: { (keys[$0.id] ?? 0) < (keys[$1.id] ?? 0) }) {
      guard let key = keys[object.id], let entity = model.entity(named: object.id.entity) else { continue }
      if slotsByEntity[entity.name] == nil {
        slotsByEntity[entity.name] = (attributeSlots(of: entity, in: model), propertyOrder(of: entity, in: model).count)
      }
      let (slots, count) = slotsByEntity[entity.name] ?? ([], 0)
      keyReferences.append(map.value(.integer(key)))
      nodeReferences.append(
        try node(
          object, key: key, entity: entity, slots: slots, slotCount: count, keys: keys, model: model, map: &map,
          null: null))
    }
    let root = map.dictionary(
      keys: keyReferences, values: nodeReferences, classes: ["NSMutableDictionary", "NSDictionary", "NSObject"])
    let mapBytes = map.archive(top: ["mapData": root]).binaryEncoded()
    var metadataArchiver = KeyedArchiver()
    let metadataRoot = archivedPlist(metadata, into: &metadataArchiver)
    let metadataBytes = metadataArchiver.archive(top: ["metadata": metadataRoot]).binaryEncoded()
    return header(mapLength: mapBytes.count, metadataLength: metadataBytes.count, next: nextPrimaryKey)
      + mapBytes + metadataBytes
  }

  /// `NSBinaryObjectStoreFile`'s 64-byte header: the map right after it, the metadata after the map.
  static func header(mapLength: Int, metadataLength: Int, next: Int64) -> [UInt8] {
    var header: [UInt8] = magic
    func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.bigEndian) { header += $0 } }
    append(headerVersion)
    append(databaseVersion)
    append(UInt64(mapLength + 64))
    append(UInt64(metadataLength))
    append(UInt64(64))
    append(UInt64(mapLength))
    append(UInt64(max(0, next)))
    append(UInt64(0))
    return header
  }

  /// One object's `NSDictionaryMapNode`: its key, entity, a slot per property (values in the
  /// attributes' slots, NSNull in the others) and the references its relationships hold.
  private static func node(
    _ object: StoredObject, key: Int64, entity: Entity, slots: [Attribute], slotCount: Int, keys: [ObjectID: Int64],
    model: ObjectModel, map: inout KeyedArchiver, null: PropertyListValue
  ) throws(StoreError) -> PropertyListValue {
    var values: [PropertyListValue] = []
    for attribute in slots {
      do {
        values.append(try archived(attribute, of: object, path: attribute.name, into: &map, null: null))
      } catch {
        throw StoreError(
          .unsupportedValue, entity: entity.name, primaryKey: object.id.primaryKey,
          reason: "'\(attribute.name)': \(error.reason)")
      }
    }
    values += Array(repeating: null, count: max(0, slotCount - values.count))
    var fields: [String: PropertyListValue] = [
      "NSPrimaryKey64": .integer(key), "NSEntityName": map.string(entity.name), "NSAttributeValues": map.array(values),
    ]
    let related = relatedNodes(of: object, keys: keys, model: model, entity: entity)
    if !related.isEmpty {
      let names = related.keys.sorted()
      fields["NSRelatedNodes"] = map.dictionary(
        keys: names.map { map.string($0) },
        values: names.map { name in
          map.array(
            (related[name] ?? []).map { map.value(.integer($0)) }, classes: ["NSMutableArray", "NSArray", "NSObject"])
        }, classes: ["NSMutableDictionary", "NSDictionary", "NSObject"])
    }
    return map.object(["NSDictionaryMapNode", "NSStoreMapNode", "NSObject"], fields)
  }

  /// The references each relationship of `object` holds (to-ones as one-element lists; empty
  /// relationships left out, as Core Data leaves them out).
  private static func relatedNodes(
    of object: StoredObject, keys: [ObjectID: Int64], model: ObjectModel, entity: Entity
  ) -> [String: [Int64]] {
    var related: [String: [Int64]] = [:]
    for relationship in model.relationships(of: entity) where !relationship.isTransient {
      let targets =
        relationship.isToMany
        ? (object.toMany[relationship.name] ?? []) : object.toOne[relationship.name].map { [$0] } ?? []
      let references = targets.compactMap { keys[$0] }
      if !references.isEmpty { related[relationship.name] = references }
    }
    return related
  }

  /// The attribute's value in `object` as Core Data archives it: a composite as a dictionary of its
  /// elements (nested composites as dictionaries too; the object holds them by key path,
  /// `author.person` — the dictionary form is a guess no real binary store has confirmed), NSNull
  /// when every element is empty.
  static func archived(
    _ attribute: Attribute, of object: StoredObject, path: String, into map: inout KeyedArchiver,
    null: PropertyListValue
  ) throws(StoreError) -> PropertyListValue {
    guard attribute.type == .composite else {
      return try archived(object.attributes[path] ?? .null, attribute.type, into: &map, null: null)
    }
    var names: [PropertyListValue] = []
    var values: [PropertyListValue] = []
    for element in attribute.elements {
      let value = try archived(element, of: object, path: path + "." + element.name, into: &map, null: null)
      guard value != null else { continue }
      names.append(map.string(element.name))
      values.append(value)
    }
    return values.isEmpty ? null : map.dictionary(keys: names, values: values)
  }

  /// A value as the archived object Core Data keeps for `type`.
  static func archived(
    _ value: StoreValue, _ type: AttributeType, into map: inout KeyedArchiver, null: PropertyListValue
  ) throws(StoreError) -> PropertyListValue {
    switch value {
    case .null: return null
    case .integer(let number): return map.value(.integer(number))
    case .boolean(let flag): return map.value(.boolean(flag))
    case .double(let number) where type == .decimal: return decimalNumber(number, into: &map)
    case .double(let number): return map.value(.real(number))
    case .string(let text) where type == .uri:
      return map.object(["NSURL", "NSObject"], ["NS.base": KeyedArchiver.null, "NS.relative": map.string(text)])
    case .string(let text): return map.string(text)
    case .date(let seconds): return map.object(["NSDate", "NSObject"], ["NS.time": .real(seconds)])
    case .uuid(let bytes): return map.object(["NSUUID", "NSObject"], ["NS.uuidbytes": .data(bytes)])
    case .data(let bytes) where type == .transformable:
      // A binary store holds the value itself: the object graph of the keyed archive the
      // transformer made. Data that is no keyed archive came from a custom transformer, whose
      // value migrun cannot make.
      guard let archive = try? PropertyListValue(decoding: bytes),
        archive["$archiver"]?.stringValue == "NSKeyedArchiver", let objects = archive["$objects"]?.arrayValue,
        let root = archive["$top"]?["root"]?.uidValue
      else {
        throw StoreError(
          .unsupportedValue,
          reason: "the transformable's data is no keyed archive (a custom value transformer's?): a binary store "
            + "keeps the value itself, which migrun cannot make from the data")
      }
      return map.embed(root, from: objects)
    case .data(let bytes): return map.value(.data(bytes))
    }
  }

  /// An `NSDecimalNumber` with the digits of `number`'s shortest decimal form (a NaN or infinity
  /// as NSDecimalNumber's NaN: length 0, negative).
  private static func decimalNumber(_ number: Double, into map: inout KeyedArchiver) -> PropertyListValue {
    let (negative, mantissa, exponent) = decimalParts(number) ?? (true, 0, 0)
    var length = 0
    var rest = mantissa
    while rest > 0 {
      length += 1
      rest >>= 16
    }
    if mantissa == 0 && number.isFinite { length = 0 }
    var bytes = withUnsafeBytes(of: mantissa.littleEndian) { Array($0) }
    bytes += Array(repeating: 0, count: 8)
    return map.object(
      ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"],
      [
        "NS.exponent": .integer(Int64(exponent)), "NS.length": .integer(Int64(length)),
        "NS.negative": .boolean(negative && (mantissa != 0 || !number.isFinite)), "NS.compact": .boolean(true),
        "NS.mantissa.bo": .integer(1), "NS.mantissa": .data(bytes),
      ])
  }

  /// Sign, digits and power of ten of `number`'s shortest decimal form (`-1.25e-3` → (true, 125,
  /// -5)); nil for a NaN or an infinity.
  static func decimalParts(_ number: Double) -> (negative: Bool, mantissa: UInt64, exponent: Int)? {
    guard number.isFinite else { return nil }
    var text = Substring("\(abs(number))")
    var exponent = 0
    if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      exponent = Int(text[text.index(after: e)...]) ?? 0
      text = text[..<e]
    }
    var digits = ""
    if let dot = text.firstIndex(of: ".") {
      let fraction = text[text.index(after: dot)...]
      digits = String(text[..<dot]) + fraction
      exponent -= fraction.count
    } else {
      digits = String(text)
    }
    while digits.count > 1, digits.last == "0" {
      digits.removeLast()
      exponent += 1
    }
    let mantissa = UInt64(digits) ?? 0
    return (number.sign == .minus, mantissa, mantissa == 0 ? 0 : exponent)
  }

  /// A property list value (the metadata) as archived objects.
  static func archivedPlist(_ value: PropertyListValue, into archiver: inout KeyedArchiver) -> PropertyListValue {
    switch value {
    case .dictionary(let entries):
      let names = entries.keys.sorted()
      return archiver.dictionary(
        keys: names.map { archiver.string($0) },
        values: names.map { archivedPlist(entries[$0] ?? .string(""), into: &archiver) })
    case .array(let elements):
      return archiver.array(elements.map { archivedPlist($0, into: &archiver) })
    case .string(let text): return archiver.string(text)
    case .date(let seconds): return archiver.object(["NSDate", "NSObject"], ["NS.time": .real(seconds)])
    case .uid: return KeyedArchiver.null
    case .integer, .real, .boolean, .data: return archiver.value(value)
    }
  }
}
