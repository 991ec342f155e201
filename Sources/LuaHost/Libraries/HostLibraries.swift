import Foundation
import PropertyList

/// The helper modules every script has, as globals and through `require`: `json`, `base64`, `hex`,
/// `uuid`, `date`, `plist` (see docs/policies.md, "Host helpers", for each function).
enum HostLibraries {
  static func register(in vm: LuaVM) {
    vm.register("print") { arguments in
      // Each value shown, never obeyed by the terminal: control characters escaped where it is said.
      ScriptOutput.say(arguments.map { Self.display($0) }.joined(separator: "\t"))
      return []
    }
    vm.register("encode", in: "json") { arguments in
      let pretty = arguments.count > 1 && arguments[1] == .boolean(true)
      return [.text(try JSONCodec.encode(argument(arguments, 0, "json.encode"), pretty: pretty))]
    }
    vm.register("decode", in: "json") { arguments in
      [try JSONCodec.decode(try bytes(arguments, 0, "json.decode"))]
    }
    vm.register("encode", in: "base64") { arguments in
      [.text(Data(try bytes(arguments, 0, "base64.encode")).base64EncodedString())]
    }
    vm.register("decode", in: "base64") { arguments in
      let text = String(decoding: try bytes(arguments, 0, "base64.decode"), as: UTF8.self)
      guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
        throw HostError("base64.decode: not valid base64")
      }
      return [.bytes(Array(data))]
    }
    vm.register("encode", in: "hex") { arguments in
      [.text(Hex.encode(try bytes(arguments, 0, "hex.encode")))]
    }
    vm.register("decode", in: "hex") { arguments in
      [.bytes(try Hex.decode(try bytes(arguments, 0, "hex.decode")))]
    }
    vm.register("string", in: "uuid") { arguments in
      let value = try bytes(arguments, 0, "uuid.string")
      guard value.count == 16 else { throw HostError("uuid.string: expected 16 bytes, got \(value.count)") }
      let uuid = value.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
      return [.text(uuid.uuidString)]
    }
    // A new random UUID, as text (`UUID().uuidString`, what a Swift policy writes for a new object's ID).
    vm.register("new", in: "uuid") { _ in [.text(UUID().uuidString)] }
    vm.register("bytes", in: "uuid") { arguments in
      let text = String(decoding: try bytes(arguments, 0, "uuid.bytes"), as: UTF8.self)
      guard let uuid = UUID(uuidString: text) else { throw HostError("uuid.bytes: '\(text)' is not a UUID") }
      return [.bytes(withUnsafeBytes(of: uuid.uuid) { Array($0) })]
    }
    CoreDataDate.register(in: vm)
    PlistLibrary.register(in: vm)
  }

  /// Argument `index`, or an error naming the function.
  static func argument(_ arguments: [LuaValue], _ index: Int, _ function: String) throws -> LuaValue {
    guard index < arguments.count else { throw HostError("\(function): argument #\(index + 1) is missing") }
    return arguments[index]
  }

  /// Argument `index` as a byte string.
  static func bytes(_ arguments: [LuaValue], _ index: Int, _ function: String) throws -> [UInt8] {
    let value = try argument(arguments, index, function)
    guard case .string(let bytes) = value else {
      throw HostError("\(function): argument #\(index + 1) must be a string, not \(value.typeName)")
    }
    return bytes
  }

  /// Argument `index` as a number.
  static func number(_ arguments: [LuaValue], _ index: Int, _ function: String) throws -> Double {
    let value = try argument(arguments, index, function)
    guard let number = value.doubleValue else {
      throw HostError("\(function): argument #\(index + 1) must be a number, not \(value.typeName)")
    }
    return number
  }

  static func display(_ value: LuaValue) -> String {
    switch value {
    case .nil: "nil"
    case .boolean(let flag): flag ? "true" : "false"
    case .integer(let number): String(number)
    case .number(let number): JSONCodec.format(number)
    case .string(let bytes): String(decoding: bytes, as: UTF8.self)
    case .null: "NULL"
    case .table: "table"
    case .function: "function"
    }
  }
}

extension LuaValue {
  /// The value as `print` writes it (`2`, `1.5`, `NULL`, a string's text).
  package var displayed: String { HostLibraries.display(self) }
}

enum Hex {
  static func encode(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  static func decode(_ text: [UInt8]) throws -> [UInt8] {
    guard text.count % 2 == 0 else { throw HostError("hex.decode: odd number of digits") }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.count / 2)
    var index = 0
    while index < text.count {
      guard let high = value(of: text[index]), let low = value(of: text[index + 1]) else {
        throw HostError("hex.decode: not a hex digit at position \(index + 1)")
      }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }

  private static func value(of digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

/// How many values a host helper may hand a script: each crosses as a 40-byte record and becomes a
/// Lua value, so the count follows the VM's memory limit. A decoded file whose objects are shared
/// (a property list's or archive's DAG) is copied once per reference, and would otherwise expand
/// exponentially: the helper stops with an error naming the limit instead.
struct ValueBudget {
  private(set) var left: Int
  let helper: String
  let limit: Int

  init(for vm: LuaVM, helper: String) {
    limit = max(1, vm.limits.memoryBytes / 40)
    left = limit
    self.helper = helper
  }

  mutating func spend() throws {
    left -= 1
    guard left >= 0 else {
      throw HostError(
        "\(helper): the result would hold more than \(limit) values (the memory limit; an object the input "
          + "shares is copied once per reference)")
    }
  }
}
