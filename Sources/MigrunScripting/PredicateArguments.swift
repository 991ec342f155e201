import LuaHost
import MigrunContext
import MigrunModel
import MigrunStore

/// What a script hands a fetch: a predicate's arguments and the sort keys — one reading for a
/// stage's `ctx:fetch` and a mapping file's `m:fetch`.
enum PredicateArguments {
  /// A predicate's argument: a value, or a list of values (`name IN %@` with `{ "a", "b" }`).
  static func argument(_ value: LuaValue) throws -> FormatPredicate.Argument {
    guard case .table(let table) = value, table.fields.isEmpty else { return .value(try storeValue(value)) }
    return .list(try table.array.map(storeValue))
  }

  /// `{ "name", "-start" }`: ascending by name, then descending by start.
  static func sortKeys(_ value: LuaValue) throws -> [SortKey] {
    try (value.tableValue?.array ?? []).map { key -> SortKey in
      guard let name = key.stringValue else { throw HostError("a sort key is a string, not \(key.typeName)") }
      return name.hasPrefix("-") ? .descending(String(name.dropFirst())) : .ascending(name)
    }
  }

  private static func storeValue(_ value: LuaValue) throws -> StoreValue {
    switch value {
    case .null, .nil: return .null
    case .boolean(let flag): return .boolean(flag)
    case .integer(let number): return .integer(number)
    case .number(let number): return .double(number)
    case .string(let bytes): return .string(String(decoding: bytes, as: UTF8.self))
    default:
      throw HostError(
        "a predicate's argument is a value (number, string, boolean, NULL) or a list of them, not a \(value.typeName)")
    }
  }
}
