/// A value that crosses between Swift and Lua.
///
/// Integers and floats stay distinct (`math.type` tells them apart in Lua); strings are byte strings,
/// so BLOBs with zero bytes pass through untouched; ``null`` is the sandbox's `NULL`, SQL's NULL —
/// distinct from ``nil``, which is an absent value.
///
/// ```swift
/// let row: LuaValue = ["name": "soup", "minutes": 20, "photo": .bytes([0, 1, 2]), "note": .null]
/// ```
package enum LuaValue: Sendable, Hashable {
  case `nil`
  case boolean(Bool)
  case integer(Int64)
  case number(Double)
  /// A byte string (Lua strings are bytes; text is UTF-8 by convention).
  case string([UInt8])
  case table(LuaTable)
  /// The sandbox's `NULL`: a stored SQL NULL.
  case null
  /// A Lua function, callable with ``LuaVM/call(_:_:)`` on the VM that returned it.
  case function(LuaFunction)

  /// A string holding `text`'s UTF-8 bytes.
  package static func text(_ text: String) -> LuaValue { .string(Array(text.utf8)) }

  /// A string holding `bytes`.
  package static func bytes(_ bytes: [UInt8]) -> LuaValue { .string(bytes) }

  /// The string's bytes decoded as UTF-8 (invalid sequences replaced), or `nil` for other values.
  package var stringValue: String? {
    if case .string(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
    return nil
  }

  /// The value as a table, or `nil`.
  package var tableValue: LuaTable? {
    if case .table(let table) = self { return table }
    return nil
  }

  /// The function, or `nil`.
  package var functionValue: LuaFunction? {
    if case .function(let function) = self { return function }
    return nil
  }

  /// The integer, or `nil` (a float is not converted).
  package var integerValue: Int64? {
    if case .integer(let value) = self { return value }
    return nil
  }

  /// The number as a Double, integer or float, or `nil`.
  package var doubleValue: Double? {
    switch self {
    case .integer(let value): Double(value)
    case .number(let value): value
    default: nil
    }
  }

  /// Lua's type name for the value (`NULL` for ``null``).
  package var typeName: String {
    switch self {
    case .nil: "nil"
    case .boolean: "boolean"
    case .integer, .number: "number"
    case .string: "string"
    case .table: "table"
    case .null: "NULL"
    case .function: "function"
    }
  }

  /// Field `key` of a table (`nil` for other values or a missing key).
  package subscript(key: String) -> LuaValue {
    tableValue?[key] ?? .nil
  }
}

/// A Lua table: its array part (keys 1…n) and every other key.
package struct LuaTable: Sendable, Hashable {
  /// Values at keys 1, 2, … n, without holes.
  package var array: [LuaValue]
  /// Every other key.
  package var fields: [LuaValue: LuaValue]

  package init(array: [LuaValue] = [], fields: [LuaValue: LuaValue] = [:]) {
    self.array = array
    self.fields = fields
  }

  /// A table from key/value pairs, with keys 1…n moved to ``array``.
  init(pairs: [(LuaValue, LuaValue)]) {
    var fields: [LuaValue: LuaValue] = [:]
    fields.reserveCapacity(pairs.count)
    for (key, value) in pairs { fields[key] = value }
    var array: [LuaValue] = []
    var index: Int64 = 1
    while let value = fields.removeValue(forKey: .integer(index)) {
      array.append(value)
      index += 1
    }
    self.init(array: array, fields: fields)
  }

  package subscript(key: String) -> LuaValue? {
    get { fields[.text(key)] }
    set { fields[.text(key)] = newValue }
  }

  /// Number of entries, array and fields.
  package var count: Int { array.count + fields.count }
}

/// A reference to a function inside one ``LuaVM``.
package struct LuaFunction: Sendable, Hashable {
  let reference: Int64
  let vm: ObjectIdentifier
}

extension LuaValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  package init(stringLiteral value: String) { self = .text(value) }
  package init(integerLiteral value: Int64) { self = .integer(value) }
  package init(floatLiteral value: Double) { self = .number(value) }
  package init(booleanLiteral value: Bool) { self = .boolean(value) }
  package init(arrayLiteral elements: LuaValue...) { self = .table(LuaTable(array: elements)) }
  package init(dictionaryLiteral elements: (String, LuaValue)...) {
    self = .table(LuaTable(pairs: elements.map { (.text($0.0), $0.1) }))
  }
}
