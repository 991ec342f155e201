/// A value decoded from an `NSKeyedArchiver` archive, with Foundation's classes turned into plain
/// values: NSDictionary (and Foundation's NSKnownKeysDictionary1) → ``dictionary``, NSArray/NSSet/NSOrderedSet → ``array``, NSString,
/// NSNumber, NSData, NSDate, NSUUID, NSURL, NSNull → their values; any other class → ``object``
/// with its encoded fields. A back-reference to an object being decoded is a ``reference``.
package indirect enum ArchivedValue: Sendable, Hashable {
  case null
  case string(String)
  case integer(Int64)
  case real(Double)
  case boolean(Bool)
  /// Seconds since 2001-01-01 00:00:00 UTC.
  case date(Double)
  case data([UInt8])
  /// An NSUUID's 16 bytes.
  case uuid([UInt8])
  case url(String)
  case array([ArchivedValue])
  case dictionary([ArchivedValue: ArchivedValue])
  case object(className: String, fields: [String: ArchivedValue])
  /// An object that is already being decoded further up (the archive's graph has a cycle here):
  /// its index in `$objects`.
  case reference(UInt64)
}

/// Reads `NSKeyedArchiver` archives (the usual content of a Transformable attribute, and of a
/// store's `Z_MODELCACHE`).
///
/// ```swift
/// let value = try KeyedArchive.unarchive(bytes)   // ArchivedValue
/// ```
package enum KeyedArchive {
  /// Decodes the archive's root object (or, when `$top` has no `root`, a dictionary of its entries).
  ///
  /// Fields named in `linkKeys` that point at another object are not followed: they decode as
  /// ``ArchivedValue/reference(_:)``. Use it for back-links in object graphs (an attribute's
  /// `NSEntity`), which would otherwise be expanded again and again.
  package static func unarchive(_ bytes: [UInt8], linkKeys: Set<String> = []) throws(PropertyListError) -> ArchivedValue
  {
    try unarchive(PropertyListValue(decoding: bytes), linkKeys: linkKeys)
  }

  package static func unarchive(_ archive: PropertyListValue, linkKeys: Set<String> = []) throws(PropertyListError)
    -> ArchivedValue
  {
    guard archive["$archiver"]?.stringValue == "NSKeyedArchiver", let objects = archive["$objects"]?.arrayValue,
      let top = archive["$top"]?.dictionaryValue
    else { throw PropertyListError("not an NSKeyedArchiver archive ($archiver, $objects or $top missing)") }
    var decoder = Decoder(objects: objects, linkKeys: linkKeys)
    if let root = top["root"] { return try decoder.value(root, depth: 0) }
    var entries: [ArchivedValue: ArchivedValue] = [:]
    for (key, value) in top { entries[.string(key)] = try decoder.value(value, depth: 0) }
    return .dictionary(entries)
  }

  private struct Decoder {
    let objects: [PropertyListValue]
    let linkKeys: Set<String>
    var visiting = Set<UInt64>()
    /// Objects already decoded: each is decoded once, however many fields point at it.
    var decoded: [UInt64: ArchivedValue] = [:]

    mutating func value(_ item: PropertyListValue, depth: Int) throws(PropertyListError) -> ArchivedValue {
      guard depth < 200 else { throw PropertyListError("archive nested more than 200 deep") }
      switch item {
      case .uid(let reference): return try object(reference, depth: depth)
      case .string(let text): return .string(text)
      case .integer(let number): return .integer(number)
      case .real(let number): return .real(number)
      case .boolean(let flag): return .boolean(flag)
      case .date(let seconds): return .date(seconds)
      case .data(let bytes): return .data(bytes)
      case .array(let elements):
        var decoded: [ArchivedValue] = []
        for element in elements { decoded.append(try value(element, depth: depth + 1)) }
        return .array(decoded)
      case .dictionary(let entries):
        var decoded: [ArchivedValue: ArchivedValue] = [:]
        for (key, element) in entries { decoded[.string(key)] = try value(element, depth: depth + 1) }
        return .dictionary(decoded)
      }
    }

    mutating func object(_ reference: UInt64, depth: Int) throws(PropertyListError) -> ArchivedValue {
      guard reference < objects.count else { throw PropertyListError("archive refers to missing object \(reference)") }
      let item = objects[Int(reference)]
      if item.stringValue == "$null" { return .null }
      if let known = decoded[reference] { return known }
      guard case .dictionary(let fields) = item, case .uid? = fields["$class"] else {
        // A plain array or dictionary among the objects is decoded once too: arrays of references to
        // the next, 45 deep, would otherwise be 2^45 values.
        let plain = try value(item, depth: depth + 1)
        decoded[reference] = plain
        return plain
      }
      guard visiting.insert(reference).inserted else { return .reference(reference) }
      defer { visiting.remove(reference) }
      let value = try decodeObject(fields, depth: depth)
      decoded[reference] = value
      return value
    }

    mutating func decodeObject(_ fields: [String: PropertyListValue], depth: Int)
      throws(PropertyListError) -> ArchivedValue
    {
      guard case .uid(let classReference)? = fields["$class"] else { return .null }
      guard classReference < objects.count, let className = objects[Int(classReference)]["$classname"]?.stringValue
      else {
        throw PropertyListError("an archived object has no class name")
      }
      func field(_ name: String) throws(PropertyListError) -> ArchivedValue {
        guard let raw = fields[name] else { return .null }
        return try value(raw, depth: depth + 1)
      }
      func list(_ name: String) throws(PropertyListError) -> [ArchivedValue] {
        guard case .array(let elements)? = fields[name] else { return [] }
        var decoded: [ArchivedValue] = []
        for element in elements { decoded.append(try value(element, depth: depth + 1)) }
        return decoded
      }
      switch className {
      case "NSDictionary", "NSMutableDictionary":
        let keys = try list("NS.keys")
        let values = try list("NS.objects")
        guard keys.count == values.count else { throw PropertyListError("archived dictionary keys and values differ") }
        return .dictionary(Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last }))
      case "NSKnownKeysDictionary1":
        // Foundation's dictionary with a shared key list: searchMapping.keys and values, by position.
        guard case .object(_, let mapping) = try field("searchMapping"), case .array(let keys)? = mapping["keys"],
          case .array(let values) = try field("values"), keys.count <= values.count
        else { throw PropertyListError("archived NSKnownKeysDictionary1 is malformed") }
        return .dictionary(Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last }))
      case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
        return .array(try list("NS.objects"))
      case "NSString", "NSMutableString":
        if case .data(let bytes)? = fields["NS.bytes"] { return .string(String(decoding: bytes, as: UTF8.self)) }
        return try field("NS.string")
      case "NSData", "NSMutableData":
        return try field("NS.data")
      case "NSDate":
        if case .real(let seconds)? = fields["NS.time"] { return .date(seconds) }
        return try field("NS.time")
      case "NSUUID":
        guard case .data(let bytes)? = fields["NS.uuidbytes"] else { return .null }
        return .uuid(bytes)
      case "NSURL":
        let relative = try field("NS.relative")
        let base = try field("NS.base")
        guard case .string(let path) = relative else { return relative }
        if case .url(let baseText) = base { return .url(baseText + path) }
        return .url(path)
      case "NSNull":
        return .null
      default:
        var decoded: [String: ArchivedValue] = [:]
        for (key, raw) in fields where key != "$class" {
          if linkKeys.contains(key), case .uid(let link) = raw {
            decoded[key] =
              objects.indices.contains(Int(link)) && objects[Int(link)].stringValue == "$null"
              ? .null : .reference(link)
          } else {
            decoded[key] = try value(raw, depth: depth + 1)
          }
        }
        return .object(className: className, fields: decoded)
      }
    }
  }
}
