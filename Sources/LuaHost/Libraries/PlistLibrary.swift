import PropertyList

/// `plist`: property lists and NSKeyedArchiver archives — what Core Data's Transformable attributes
/// usually hold.
///
/// - `plist.decode(bytes)` → a table (binary or XML); dates as reference seconds, data as strings
/// - `plist.encode(value [, "binary" | "xml"])` → bytes (binary by default); a string that is not
///   UTF-8 is written as data
/// - `plist.unarchive(bytes)` → an NSKeyedArchiver archive as plain tables: NSNull is `NULL`, an NSUUID
///   its 16 bytes, another class a table of its fields with `["$class"]` naming it
enum PlistLibrary {
  static func register(in vm: LuaVM) {
    vm.register("decode", in: "plist") { arguments in
      let bytes = try HostLibraries.bytes(arguments, 0, "plist.decode")
      do {
        return [lua(try PropertyListValue(decoding: bytes))]
      } catch {
        throw HostError("plist.decode: \(error)")
      }
    }
    vm.register("encode", in: "plist") { arguments in
      let value = try plist(try HostLibraries.argument(arguments, 0, "plist.encode"), depth: 0)
      let format = arguments.count > 1 ? arguments[1].stringValue ?? "" : "binary"
      switch format {
      case "binary": return [.bytes(value.binaryEncoded())]
      case "xml": return [.bytes(value.xmlEncoded())]
      default: throw HostError("plist.encode: format must be \"binary\" or \"xml\", not \"\(format)\"")
      }
    }
    vm.register("unarchive", in: "plist") { arguments in
      let bytes = try HostLibraries.bytes(arguments, 0, "plist.unarchive")
      do {
        return [lua(try KeyedArchive.unarchive(bytes))]
      } catch {
        throw HostError("plist.unarchive: \(error)")
      }
    }
  }

  static func lua(_ value: PropertyListValue) -> LuaValue {
    switch value {
    case .string(let text): .text(text)
    case .integer(let number): .integer(number)
    case .real(let number), .date(let number): .number(number)
    case .boolean(let flag): .boolean(flag)
    case .data(let bytes): .bytes(bytes)
    case .array(let elements): .table(LuaTable(array: elements.map(lua)))
    case .dictionary(let entries):
      .table(LuaTable(fields: Dictionary(uniqueKeysWithValues: entries.map { (LuaValue.text($0.key), lua($0.value)) })))
    case .uid(let reference): ["CF$UID": .integer(Int64(reference))]
    }
  }

  static func lua(_ value: ArchivedValue) -> LuaValue {
    switch value {
    case .null: .null
    case .string(let text), .url(let text): .text(text)
    case .integer(let number): .integer(number)
    case .real(let number), .date(let number): .number(number)
    case .boolean(let flag): .boolean(flag)
    case .data(let bytes), .uuid(let bytes): .bytes(bytes)
    case .array(let elements): .table(LuaTable(array: elements.map(lua)))
    case .dictionary(let entries):
      .table(
        LuaTable(fields: Dictionary(entries.map { (lua($0.key), lua($0.value)) }, uniquingKeysWith: { a, _ in a })))
    case .object(let className, let fields):
      .table(
        LuaTable(
          fields: Dictionary(uniqueKeysWithValues: fields.map { (LuaValue.text($0.key), lua($0.value)) })
            .merging([.text("$class"): .text(className)]) { _, name in name }))
    case .reference(let index): ["$ref": .integer(Int64(index))]
    }
  }

  static func plist(_ value: LuaValue, depth: Int) throws -> PropertyListValue {
    guard depth < 200 else { throw HostError("plist.encode: nested more than 200 deep (a cycle?)") }
    switch value {
    case .boolean(let flag): return .boolean(flag)
    case .integer(let number): return .integer(number)
    case .number(let number): return .real(number)
    case .string(let bytes):
      if let text = String(validating: bytes, as: UTF8.self) { return .string(text) }
      return .data(bytes)
    case .table(let table):
      if table.fields.isEmpty { return .array(try table.array.map { try plist($0, depth: depth + 1) }) }
      var entries: [String: PropertyListValue] = [:]
      for (index, element) in table.array.enumerated() {
        entries[String(index + 1)] = try plist(element, depth: depth + 1)
      }
      for (key, element) in table.fields {
        switch key {
        case .string(let bytes): entries[String(decoding: bytes, as: UTF8.self)] = try plist(element, depth: depth + 1)
        case .integer(let number): entries[String(number)] = try plist(element, depth: depth + 1)
        default: throw HostError("plist.encode: a \(key.typeName) key has no property list form")
        }
      }
      return .dictionary(entries)
    case .nil, .null, .function:
      throw HostError("plist.encode: a \(value.typeName) value has no property list form")
    }
  }
}
