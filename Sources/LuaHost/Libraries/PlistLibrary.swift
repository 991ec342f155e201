import PropertyList

/// `plist`: property lists and NSKeyedArchiver archives — what Core Data's Transformable attributes
/// usually hold.
///
/// - `plist.decode(bytes)` → a table (binary or XML); dates as reference seconds, data as strings
/// - `plist.encode(value [, "binary" | "xml"])` → bytes (binary by default); a string that is not
///   UTF-8 is written as data
/// - `plist.unarchive(bytes)` → an NSKeyedArchiver archive as plain tables: NSNull is `NULL`, an NSUUID
///   its 16 bytes, another class a table of its fields with `["$class"]` naming it
/// - `plist.archive(value)` → an NSKeyedArchiver archive (binary) of the classes Foundation's own
///   archives use and Core Data's secure unarchiving (`NSSecureUnarchiveFromData`) accepts: a list is
///   an NSArray, a table with keys an NSDictionary (keys in sorted order), a string NSString (bytes
///   that are not UTF-8 NSData), an integer, float or boolean NSNumber, `NULL` NSNull; and
///   `plist.date(seconds)`, `plist.data(bytes)`, `plist.uuid(bytes)`, `plist.url(text)` for NSDate,
///   NSData, NSUUID and NSURL
enum PlistLibrary {
  static func register(in vm: LuaVM) {
    vm.register("decode", in: "plist") { [unowned vm] arguments in
      let bytes = try HostLibraries.bytes(arguments, 0, "plist.decode")
      do {
        let value = try PropertyListValue(decoding: bytes)
        var budget = ValueBudget(for: vm, helper: "plist.decode")
        return [try lua(value, budget: &budget)]
      } catch let error as HostError {
        throw error
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
    vm.register("archive", in: "plist") { arguments in
      var archiver = KeyedArchiver()
      let root = try archived(try HostLibraries.argument(arguments, 0, "plist.archive"), into: &archiver, depth: 0)
      return [.bytes(archiver.archive(root: root).binaryEncoded())]
    }
    registerWrappers(in: vm)
    vm.register("unarchive", in: "plist") { [unowned vm] arguments in
      let bytes = try HostLibraries.bytes(arguments, 0, "plist.unarchive")
      do {
        let value = try KeyedArchive.unarchive(bytes)
        var budget = ValueBudget(for: vm, helper: "plist.unarchive")
        return [try lua(value, budget: &budget)]
      } catch let error as HostError {
        throw error
      } catch {
        throw HostError("plist.unarchive: \(error)")
      }
    }
  }

  /// `plist.date`, `plist.data`, `plist.uuid`, `plist.url`: values marked with the class an archive
  /// gives them.
  static func registerWrappers(in vm: LuaVM) {
    vm.register("date", in: "plist") { arguments in
      guard let seconds = try HostLibraries.argument(arguments, 0, "plist.date").doubleValue else {
        throw HostError("plist.date: give seconds since 2001 (a number)")
      }
      return [["$class": "NSDate", "time": .number(seconds)]]
    }
    vm.register("data", in: "plist") { arguments in
      [["$class": "NSData", "bytes": .bytes(try HostLibraries.bytes(arguments, 0, "plist.data"))]]
    }
    vm.register("uuid", in: "plist") { arguments in
      let bytes = try HostLibraries.bytes(arguments, 0, "plist.uuid")
      guard bytes.count == 16 else { throw HostError("plist.uuid: a UUID is 16 bytes, not \(bytes.count)") }
      return [["$class": "NSUUID", "bytes": .bytes(bytes)]]
    }
    vm.register("url", in: "plist") { arguments in
      [["$class": "NSURL", "string": .bytes(try HostLibraries.bytes(arguments, 0, "plist.url"))]]
    }
  }

  static func lua(_ value: PropertyListValue, budget: inout ValueBudget) throws -> LuaValue {
    try budget.spend()
    switch value {
    case .string(let text): return .text(text)
    case .integer(let number): return .integer(number)
    case .real(let number), .date(let number): return .number(number)
    case .boolean(let flag): return .boolean(flag)
    case .data(let bytes): return .bytes(bytes)
    case .array(let elements):
      var converted: [LuaValue] = []
      for element in elements { converted.append(try lua(element, budget: &budget)) }
      return .table(LuaTable(array: converted))
    case .dictionary(let entries):
      var fields: [LuaValue: LuaValue] = [:]
      for (key, element) in entries { fields[.text(key)] = try lua(element, budget: &budget) }
      return .table(LuaTable(fields: fields))
    case .uid(let reference): return ["CF$UID": .integer(Int64(reference))]
    }
  }

  static func lua(_ value: ArchivedValue, budget: inout ValueBudget) throws -> LuaValue {
    try budget.spend()
    switch value {
    case .null: return .null
    case .string(let text), .url(let text): return .text(text)
    case .integer(let number): return .integer(number)
    case .real(let number), .date(let number): return .number(number)
    case .boolean(let flag): return .boolean(flag)
    case .data(let bytes), .uuid(let bytes): return .bytes(bytes)
    case .array(let elements):
      var converted: [LuaValue] = []
      for element in elements { converted.append(try lua(element, budget: &budget)) }
      return .table(LuaTable(array: converted))
    case .dictionary(let entries):
      var fields: [LuaValue: LuaValue] = [:]
      for (key, element) in entries {
        let converted = try lua(key, budget: &budget)
        if fields[converted] == nil { fields[converted] = try lua(element, budget: &budget) }
      }
      return .table(LuaTable(fields: fields))
    case .object(let className, let fields):
      var converted: [LuaValue: LuaValue] = [.text("$class"): .text(className)]
      for (key, element) in fields where key != "$class" {
        converted[.text(key)] = try lua(element, budget: &budget)
      }
      return .table(LuaTable(fields: converted))
    case .reference(let index): return ["$ref": .integer(Int64(index))]
    }
  }

  /// `value` in `archiver`: the UID of the object it became.
  static func archived(_ value: LuaValue, into archiver: inout KeyedArchiver, depth: Int) throws -> PropertyListValue {
    guard depth < 200 else { throw HostError("plist.archive: nested more than 200 deep (a cycle?)") }
    switch value {
    case .boolean(let flag): return archiver.value(.boolean(flag))
    case .integer(let number): return archiver.value(.integer(number))
    case .number(let number): return archiver.value(.real(number))
    case .string(let bytes):
      if let text = String(validating: bytes, as: UTF8.self) { return archiver.string(text) }
      return archiver.value(.data(bytes))
    case .null: return archiver.object(["NSNull", "NSObject"], [:])
    case .table(let table):
      if let tag = table["$class"]?.stringValue { return try archivedObject(tag, table, into: &archiver) }
      if table.fields.isEmpty {
        var elements: [PropertyListValue] = []
        for element in table.array { elements.append(try archived(element, into: &archiver, depth: depth + 1)) }
        return archiver.array(elements)
      }
      guard table.array.isEmpty else {
        throw HostError("plist.archive: a table is a list or has keys, not both (an NSArray or an NSDictionary)")
      }
      var keys: [PropertyListValue] = []
      var values: [PropertyListValue] = []
      let entries = try table.fields.map { key, element -> (String, LuaValue) in
        guard case .string(let bytes) = key else {
          throw HostError("plist.archive: dictionary keys are strings, not \(key.typeName)s")
        }
        return (String(decoding: bytes, as: UTF8.self), element)
      }
      for (key, element) in entries.sorted(by: { $0.0 < $1.0 }) {
        keys.append(archiver.string(key))
        values.append(try archived(element, into: &archiver, depth: depth + 1))
      }
      return archiver.dictionary(keys: keys, values: values)
    case .nil, .function:
      throw HostError("plist.archive: a \(value.typeName) has no archived form")
    }
  }

  /// A value `plist.date`, `plist.data`, `plist.uuid` or `plist.url` made, archived as its class.
  static func archivedObject(_ tag: String, _ table: LuaTable, into archiver: inout KeyedArchiver) throws
    -> PropertyListValue
  {
    func bytes(_ key: String) throws -> [UInt8] {
      guard case .string(let bytes)? = table[key] else {
        throw HostError("plist.archive: a \(tag) needs its \(key) (made by plist.\(tag.dropFirst(2).lowercased()))")
      }
      return bytes
    }
    switch tag {
    case "NSDate":
      guard let seconds = table["time"]?.doubleValue else {
        throw HostError("plist.archive: an NSDate needs its time")
      }
      return archiver.object(["NSDate", "NSObject"], ["NS.time": .real(seconds)])
    case "NSData": return archiver.value(.data(try bytes("bytes")))
    case "NSUUID": return archiver.object(["NSUUID", "NSObject"], ["NS.uuidbytes": .data(try bytes("bytes"))])
    case "NSURL":
      let relative = archiver.string(String(decoding: try bytes("string"), as: UTF8.self))
      return archiver.object(["NSURL", "NSObject"], ["NS.base": KeyedArchiver.null, "NS.relative": relative])
    default:
      throw HostError(
        "plist.archive: \(tag) is not a class migrun archives (NSDate, NSData, NSUUID, NSURL, or plain values)")
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
