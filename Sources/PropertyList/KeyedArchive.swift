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
  /// The most levels an archive's decoded value may have, every shared object counted where it is
  /// met: each reader of an ``ArchivedValue`` recurses once per level.
  package static let maximumDepth = 200

  /// The fewest nodes an archive's expanded form may always hold (the bound grows with the
  /// archive: four per byte of it). The expanded form is the tree every reader of an
  /// ``ArchivedValue`` walks — comparing, hashing, converting, printing — with an object that many
  /// fields refer to counted once per field. An archive is decoded in time of its own size (each
  /// object once), but one whose objects each refer twice to the next, 50 deep, is 5 KB that
  /// expands to 2^50 nodes: it is refused before any reader walks it.
  package static let minimumExpandedNodes = 500_000

  /// The fewest bytes of strings and data an archive's expanded form may always hold (the bound
  /// grows with the archive: four per byte of it), each shared string or data counted where it is
  /// met: a megabyte string shared by a few thousand fields would print as gigabytes.
  package static let minimumExpandedBytes = 64 << 20

  /// Decodes the archive's root object (or, when `$top` has no `root`, a dictionary of its entries).
  ///
  /// Fields named in `linkKeys` that point at another object are not followed: they decode as
  /// ``ArchivedValue/reference(_:)``. Use it for back-links in object graphs (an attribute's
  /// `NSEntity`), which would otherwise be expanded again and again.
  ///
  /// Throws when the archive is malformed, nests deeper than ``maximumDepth``, or shares objects so
  /// often that its expanded form exceeds the bounds of ``minimumExpandedNodes`` and
  /// ``minimumExpandedBytes`` (four nodes and four bytes per byte of `bytes`, where that is more).
  package static func unarchive(_ bytes: [UInt8], linkKeys: Set<String> = []) throws(PropertyListError) -> ArchivedValue
  {
    let bounds = Bounds(
      nodes: max(minimumExpandedNodes, 4 * bytes.count), bytes: max(minimumExpandedBytes, 4 * bytes.count))
    return try unarchive(PropertyListValue(decoding: bytes), linkKeys: linkKeys, bounds: bounds)
  }

  /// ``unarchive(_:linkKeys:)`` of an archive already read as a property list, held to the floors
  /// of the bounds (``minimumExpandedNodes``, ``minimumExpandedBytes``): its size in bytes is unknown.
  package static func unarchive(_ archive: PropertyListValue, linkKeys: Set<String> = []) throws(PropertyListError)
    -> ArchivedValue
  {
    try unarchive(archive, linkKeys: linkKeys, bounds: Bounds(nodes: minimumExpandedNodes, bytes: minimumExpandedBytes))
  }

  // MARK: - Non public

  /// How much an archive's expanded form may hold.
  private struct Bounds {
    var nodes: Int
    var bytes: Int
  }

  private static func unarchive(_ archive: PropertyListValue, linkKeys: Set<String>, bounds: Bounds)
    throws(PropertyListError) -> ArchivedValue
  {
    guard archive["$archiver"]?.stringValue == "NSKeyedArchiver", let objects = archive["$objects"]?.arrayValue,
      let top = archive["$top"]?.dictionaryValue
    else { throw PropertyListError("not an NSKeyedArchiver archive ($archiver, $objects or $top missing)") }
    var decoder = Decoder(objects: objects, linkKeys: linkKeys, bounds: bounds)
    if let root = top["root"] { return try decoder.value(root, depth: 0).value }
    var entries: [ArchivedValue: ArchivedValue] = [:]
    var size = Size()
    for (key, value) in top.sorted(by: { $0.key < $1.key }) {
      entries[.string(key)] = try decoder.take(decoder.value(value, depth: 1), into: &size, depth: 0)
    }
    return .dictionary(entries)
  }

  /// What a decoded value expands to: its nodes, the bytes of its strings and data, its levels.
  private struct Size {
    var nodes = 1
    var bytes = 0
    var height = 1
  }

  private struct Decoded {
    var value: ArchivedValue
    var size: Size

    init(_ value: ArchivedValue, size: Size = Size()) {
      self.value = value
      self.size = size
    }
  }

  private struct Decoder {
    let objects: [PropertyListValue]
    let linkKeys: Set<String>
    let bounds: Bounds
    var visiting = Set<UInt64>()
    /// Objects already decoded, with their expanded sizes: each is decoded once, however many
    /// fields point at it.
    var decoded: [UInt64: Decoded] = [:]

    init(objects: [PropertyListValue], linkKeys: Set<String>, bounds: Bounds) {
      self.objects = objects
      self.linkKeys = linkKeys
      self.bounds = bounds
    }

    /// Adds a child's expanded size to its parent's (at `depth`), refusing past the bounds: checked
    /// at every child, so a sum of 2^50 is never reached.
    func take(_ child: Decoded, into size: inout Size, depth: Int) throws(PropertyListError) -> ArchivedValue {
      size.nodes += child.size.nodes
      size.bytes += child.size.bytes
      size.height = max(size.height, child.size.height + 1)
      guard size.nodes <= bounds.nodes else {
        throw PropertyListError(
          "the archive shares objects so deeply its expanded form exceeds \(bounds.nodes) nodes, "
            + "an object counted once for each field that refers to it")
      }
      guard size.bytes <= bounds.bytes else {
        throw PropertyListError(
          "the archive shares its strings and data so often its expanded form exceeds \(bounds.bytes) bytes")
      }
      guard depth + size.height <= KeyedArchive.maximumDepth else { throw Self.tooDeep }
      return child.value
    }

    static let tooDeep = PropertyListError("archive nested more than \(KeyedArchive.maximumDepth) deep")

    mutating func value(_ item: PropertyListValue, depth: Int) throws(PropertyListError) -> Decoded {
      guard depth < KeyedArchive.maximumDepth else { throw Self.tooDeep }
      switch item {
      case .uid(let reference): return try object(reference, depth: depth)
      case .string(let text): return Decoded(.string(text), size: Size(bytes: text.utf8.count))
      case .integer(let number): return Decoded(.integer(number))
      case .real(let number): return Decoded(.real(number))
      case .boolean(let flag): return Decoded(.boolean(flag))
      case .date(let seconds): return Decoded(.date(seconds))
      case .data(let bytes): return Decoded(.data(bytes), size: Size(bytes: bytes.count))
      case .array(let elements):
        var size = Size()
        var decoded: [ArchivedValue] = []
        for element in elements {
          decoded.append(try take(value(element, depth: depth + 1), into: &size, depth: depth))
        }
        return Decoded(.array(decoded), size: size)
      case .dictionary(let entries):
        var size = Size()
        var decoded: [ArchivedValue: ArchivedValue] = [:]
        for (key, element) in entries {
          decoded[.string(key)] = try take(value(element, depth: depth + 1), into: &size, depth: depth)
        }
        return Decoded(.dictionary(decoded), size: size)
      }
    }

    mutating func object(_ reference: UInt64, depth: Int) throws(PropertyListError) -> Decoded {
      guard reference < objects.count else { throw PropertyListError("archive refers to missing object \(reference)") }
      let item = objects[Int(reference)]
      if item.stringValue == "$null" { return Decoded(.null) }
      if let known = decoded[reference] {
        // Met again: its whole expanded form is met again, and as deep as it is met here.
        guard depth + known.size.height <= KeyedArchive.maximumDepth else { throw Self.tooDeep }
        return known
      }
      guard case .dictionary(let fields) = item, case .uid? = fields["$class"] else {
        // A plain array or dictionary among the objects is decoded once too.
        let plain = try value(item, depth: depth + 1)
        decoded[reference] = plain
        return plain
      }
      guard visiting.insert(reference).inserted else { return Decoded(.reference(reference)) }
      defer { visiting.remove(reference) }
      let value = try decodeObject(fields, depth: depth)
      decoded[reference] = value
      return value
    }

    mutating func decodeObject(_ fields: [String: PropertyListValue], depth: Int)
      throws(PropertyListError) -> Decoded
    {
      guard case .uid(let classReference)? = fields["$class"] else { return Decoded(.null) }
      guard classReference < objects.count, let className = objects[Int(classReference)]["$classname"]?.stringValue
      else {
        throw PropertyListError("an archived object has no class name")
      }
      var size = Size()
      func field(_ name: String) throws(PropertyListError) -> ArchivedValue {
        guard let raw = fields[name] else { return .null }
        return try take(value(raw, depth: depth + 1), into: &size, depth: depth)
      }
      func list(_ name: String) throws(PropertyListError) -> [ArchivedValue] {
        guard case .array(let elements)? = fields[name] else { return [] }
        var decoded: [ArchivedValue] = []
        for element in elements {
          decoded.append(try take(value(element, depth: depth + 1), into: &size, depth: depth))
        }
        return decoded
      }
      let decoded = try Self.decodeFields(
        className, fields, linkKeys: linkKeys, objects: objects, field: field, list: list)
      return Decoded(decoded, size: size)
    }

    /// The value of an object of `className`, its fields read through `field` and `list` (which
    /// count what they decode).
    static func decodeFields(
      _ className: String, _ fields: [String: PropertyListValue], linkKeys: Set<String>,
      objects: [PropertyListValue], field: (String) throws(PropertyListError) -> ArchivedValue,
      list: (String) throws(PropertyListError) -> [ArchivedValue]
    ) throws(PropertyListError) -> ArchivedValue {
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
        if fields["NS.bytes"]?.dataValue != nil { return try field("NS.bytes").asString }
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
        return try decodeObject(className, fields, linkKeys: linkKeys, objects: objects, field: field)
      }
    }

    /// An object of a class with no value of its own: its fields, those in `linkKeys` kept as
    /// references to other objects (`$null` as null).
    static func decodeObject(
      _ className: String, _ fields: [String: PropertyListValue], linkKeys: Set<String>,
      objects: [PropertyListValue], field: (String) throws(PropertyListError) -> ArchivedValue
    ) throws(PropertyListError) -> ArchivedValue {
      var decoded: [String: ArchivedValue] = [:]
      for (key, raw) in fields where key != "$class" {
        if linkKeys.contains(key), case .uid(let link) = raw {
          decoded[key] =
            objects.indices.contains(Int(link)) && objects[Int(link)].stringValue == "$null"
            ? .null : .reference(link)
        } else {
          decoded[key] = try field(key)
        }
      }
      return .object(className: className, fields: decoded)
    }
  }
}

extension ArchivedValue {
  /// Data read as UTF-8 text (an `NSString`'s `NS.bytes`).
  fileprivate var asString: ArchivedValue {
    if case .data(let bytes) = self { return .string(String(decoding: bytes, as: UTF8.self)) }
    return self
  }
}
