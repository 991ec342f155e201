/// A property list value, exactly as the file holds it: integers and reals apart, data apart from
/// strings, and keyed-archive UIDs kept as such.
///
/// ```swift
/// let value = try PropertyListValue(decoding: bytes)   // binary (bplist00) or XML
/// value["NSStoreType"]                                 // .string("SQLite")
/// let binary = value.binaryEncoded()
/// ```
package enum PropertyListValue: Sendable, Hashable {
  case string(String)
  case integer(Int64)
  case real(Double)
  case boolean(Bool)
  /// Seconds since 2001-01-01 00:00:00 UTC.
  case date(Double)
  case data([UInt8])
  case array([PropertyListValue])
  case dictionary([String: PropertyListValue])
  /// A keyed archive's object reference (`CF$UID`).
  case uid(UInt64)

  /// Arrays and dictionaries inside one another, at most, in a property list read from bytes
  /// (binary or XML): every walk of a value (writing it, converting it, comparing it) recurses once
  /// per level, so a deeper one would overflow the stack of whatever reads it next.
  package static let maximumDepth = 512

  /// Reads a binary (`bplist00`) or XML property list.
  package init(decoding bytes: [UInt8]) throws(PropertyListError) {
    if bytes.starts(with: Array("bplist00".utf8)) {
      var reader = BinaryPropertyListReader(bytes: bytes)
      let value = try reader.read()
      // Read in linear time (each object once), but every reader after this one walks it whole: a
      // file whose arrays hold the next one twice, 45 deep, is 2^45 values to a walk. A file's own
      // references take a byte each, so a value several times the file's size shares containers.
      let budget = max(16 * bytes.count, 1 << 16)
      guard value.size(upTo: budget, depth: Self.maximumDepth + 1) != nil else {
        throw PropertyListError(
          "the result would hold more than \(budget) values: the \(bytes.count)-byte binary property list's "
            + "arrays and dictionaries share their contents over and over")
      }
      self = value
    } else {
      self = try XMLPropertyListReader.read(bytes)
    }
  }

  /// The value of `key` in a dictionary, or `nil`.
  package subscript(key: String) -> PropertyListValue? {
    if case .dictionary(let entries) = self { return entries[key] }
    return nil
  }

  package var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  package var integerValue: Int64? {
    if case .integer(let number) = self { return number }
    return nil
  }

  package var dataValue: [UInt8]? {
    if case .data(let bytes) = self { return bytes }
    return nil
  }

  package var arrayValue: [PropertyListValue]? {
    if case .array(let elements) = self { return elements }
    return nil
  }

  package var dictionaryValue: [String: PropertyListValue]? {
    if case .dictionary(let entries) = self { return entries }
    return nil
  }

  package var uidValue: UInt64? {
    if case .uid(let reference) = self { return reference }
    return nil
  }

  /// How many values this one is made of (itself and everything inside it, a shared value counted
  /// each time it is met), counting no further than `budget`; nil when it holds more, or nests
  /// deeper than `depth` levels. A property list read from a file can share one array many times
  /// over: walking it whole could take time far beyond its size.
  package func size(upTo budget: Int, depth: Int) -> Int? {
    guard budget > 0, depth > 0 else { return nil }
    var used = 1
    func add(_ value: PropertyListValue) -> Bool {
      guard let inner = value.size(upTo: budget - used, depth: depth - 1) else { return false }
      used += inner
      return true
    }
    switch self {
    case .array(let elements):
      for element in elements where !add(element) { return nil }
    case .dictionary(let entries):
      for value in entries.values where !add(value) { return nil }
    default: break
    }
    return used
  }

  /// Calls `body` with every keyed-archive reference this value holds (inside arrays and
  /// dictionaries too).
  package func forEachUID(_ body: (UInt64) -> Void) {
    switch self {
    case .uid(let reference): body(reference)
    case .array(let elements): for element in elements { element.forEachUID(body) }
    case .dictionary(let entries): for value in entries.values { value.forEachUID(body) }
    default: break
    }
  }

  /// The value with every keyed-archive reference replaced by `map`'s answer.
  package func mappingUIDs(_ map: (UInt64) -> UInt64) -> PropertyListValue {
    switch self {
    case .uid(let reference): .uid(map(reference))
    case .array(let elements): .array(elements.map { $0.mappingUIDs(map) })
    case .dictionary(let entries): .dictionary(entries.mapValues { $0.mappingUIDs(map) })
    default: self
    }
  }
}

/// A property list that cannot be read or written.
package struct PropertyListError: Error, Sendable, Hashable, CustomStringConvertible {
  package let description: String

  package init(_ description: String) { self.description = description }
}
