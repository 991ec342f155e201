import MigrunModel
import MigrunStore

/// Which objects a fetch returns: comparisons of attributes (and to-one targets) with values.
///
/// ```swift
/// let seniors = try context.fetch("Employee", where: .greater("age", .integer(60)) && .isNotNull("email"),
///                                 sortedBy: [.ascending("name")])
/// ```
/// Comparisons follow SQL: a NULL equals only NULL (``isNull(_:)``) and is never less or greater.
package indirect enum Filter: Sendable {
  case equals(String, StoreValue)
  case notEquals(String, StoreValue)
  case less(String, StoreValue)
  case lessOrEqual(String, StoreValue)
  case greater(String, StoreValue)
  case greaterOrEqual(String, StoreValue)
  case isNull(String)
  case isNotNull(String)
  /// A to-one relationship's target is this object.
  case targets(String, ObjectID)
  case and([Filter])
  case or([Filter])
  case not(Filter)

  package static func && (lhs: Filter, rhs: Filter) -> Filter { .and([lhs, rhs]) }
  package static func || (lhs: Filter, rhs: Filter) -> Filter { .or([lhs, rhs]) }

  /// Whether an object in `state` passes the filter.
  package func matches(_ state: StoredObject) -> Bool {
    func value(_ name: String) -> StoreValue { state.attributes[name] ?? .null }
    func compare(_ name: String, _ other: StoreValue, _ accept: (Int) -> Bool) -> Bool {
      let own = value(name)
      guard own != .null, other != .null else { return false }
      return StoreValue.order(own, other).map(accept) ?? false
    }
    switch self {
    case .equals(let name, let other): return other == .null ? value(name) == .null : compare(name, other) { $0 == 0 }
    case .notEquals(let name, let other):
      return other == .null ? value(name) != .null : value(name) != .null && compare(name, other) { $0 != 0 }
    case .less(let name, let other): return compare(name, other) { $0 < 0 }
    case .lessOrEqual(let name, let other): return compare(name, other) { $0 <= 0 }
    case .greater(let name, let other): return compare(name, other) { $0 > 0 }
    case .greaterOrEqual(let name, let other): return compare(name, other) { $0 >= 0 }
    case .isNull(let name): return value(name) == .null && state.toOne[name] == nil
    case .isNotNull(let name): return value(name) != .null || state.toOne[name] != nil
    case .targets(let name, let id): return state.toOne[name] == id
    case .and(let filters): return filters.allSatisfy { $0.matches(state) }
    case .or(let filters): return filters.contains { $0.matches(state) }
    case .not(let filter): return !filter.matches(state)
    }
  }

  /// The property names the filter reads (checked against the entity before a fetch).
  var names: [String] {
    switch self {
    case .equals(let name, _), .notEquals(let name, _), .less(let name, _), .lessOrEqual(let name, _),
      .greater(let name, _), .greaterOrEqual(let name, _), .isNull(let name), .isNotNull(let name),
      .targets(let name, _):
      [name]
    case .and(let filters), .or(let filters): filters.flatMap(\.names)
    case .not(let filter): filter.names
    }
  }
}

/// One key of a fetch's order.
public struct SortKey: Sendable {
  public let name: String
  public let ascending: Bool

  public init(_ name: String, ascending: Bool = true) {
    self.name = name
    self.ascending = ascending
  }

  public static func ascending(_ name: String) -> SortKey { SortKey(name) }
  public static func descending(_ name: String) -> SortKey { SortKey(name, ascending: false) }

  /// Whether `lhs` comes before `rhs` under `keys` (NULL first, as SQLite orders); ties keep
  /// primary-key order.
  static func precedes(_ lhs: StoredObject, _ rhs: StoredObject, by keys: [SortKey]) -> Bool {
    for key in keys {
      let order = StoreValue.order(lhs.attributes[key.name] ?? .null, rhs.attributes[key.name] ?? .null) ?? 0
      if order != 0 { return key.ascending ? order < 0 : order > 0 }
    }
    // Ties in key order, as the store's SQL breaks them (a table's keys are unique across its entities).
    return (lhs.id.primaryKey, lhs.id.entity) < (rhs.id.primaryKey, rhs.id.entity)
  }
}

extension StoreValue {
  /// -1, 0 or 1 as SQLite orders values (NULL < numbers < text < bytes); `nil` for values of
  /// different kinds in the same class that cannot be compared.
  static func order(_ lhs: StoreValue, _ rhs: StoreValue) -> Int? {
    func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a > b ? 1 : 0 }
    switch (lhs, rhs) {
    case (.null, .null): return 0
    case (.null, _): return -1
    case (_, .null): return 1
    case (.integer(let a), .integer(let b)): return sign(a, b)
    case (.string(let a), .string(let b)): return a == b ? 0 : a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    case (.data(let a), .data(let b)), (.uuid(let a), .uuid(let b)):
      return a == b ? 0 : a.lexicographicallyPrecedes(b) ? -1 : 1
    default:
      guard let a = lhs.number, let b = rhs.number else { return nil }
      return sign(a, b)
    }
  }

}
