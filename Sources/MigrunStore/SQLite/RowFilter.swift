import MigrunModel

/// A test on an entity's objects that a store can make while reading rows (in SQL): comparisons
/// of attributes with values, strings tested as predicates test them, to-one targets' properties,
/// to-many members (any, all, none) and their count, joined by AND, OR and NOT.
///
/// The context builds one from a predicate (``FormatPredicate``) only where it answers exactly as
/// the predicate judges objects; a store that cannot say a filter in full tests none of it.
package struct RowFilter: Sendable {
  package enum Test: String, Sendable, Hashable {
    case equal = "=", notEqual = "IS NOT", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case isNull = "IS NULL", isNotNull = "IS NOT NULL"

    /// What the test says of `lhs` compared with `rhs` (-1, 0, 1); NULL tests are not comparisons.
    func holds(_ order: Int) -> Bool {
      switch self {
      case .equal: order == 0
      case .notEqual: order != 0
      case .less: order < 0
      case .lessOrEqual: order <= 0
      case .greater: order > 0
      case .greaterOrEqual: order >= 0
      case .isNull, .isNotNull: false
      }
    }
  }

  package enum Quantifier: Sendable, Hashable { case any, all, none }

  package indirect enum Node: Sendable {
    case constant(Bool)
    case and([Node]), or([Node]), not(Node)
    /// A property compared with a value of the attribute's kind (a value never NULL but for
    /// `isNull`/`isNotNull`, which a to-one relationship also takes: whether it is set).
    case compare(String, Test, StoreValue)
    /// A string attribute tested as ``PredicateStrings/test(_:_:_:_:)`` tests it (by a function
    /// the store registers): options, `CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `LIKE`.
    case string(String, FormatPredicate.Operator, String, FormatPredicate.Options)
    /// A to-one relationship's target passes the node (an object whose to-one is not set passes
    /// when the node holds for an object of NULLs: ``holdsForNothing``).
    case toOne(String, Node)
    /// A to-many relationship's members pass the node: any of them, all (none failing), or none.
    case members(String, Quantifier, Node)
    /// The number of a to-many relationship's members compared with a number.
    case memberCount(String, Test, StoreValue)

    /// Whether the node holds where every value is NULL — past a to-one that is not set, a
    /// predicate's key path gives NULL all the way (and a to-many there gives one NULL, not none).
    package var holdsForNothing: Bool {
      switch self {
      case .constant(let value): value
      case .and(let nodes): nodes.allSatisfy(\.holdsForNothing)
      case .or(let nodes): nodes.contains { $0.holdsForNothing }
      case .not(let node): !node.holdsForNothing
      case .compare(_, let test, _): test == .isNull || test == .notEqual
      case .string(_, let op, _, _): op == .notEqual
      case .toOne(_, let node): node.holdsForNothing
      case .members(_, let quantifier, let node): quantifier == .none ? !node.holdsForNothing : node.holdsForNothing
      case .memberCount(_, let test, let value): value.number.map { test.holds(0 < $0 ? -1 : 0 == $0 ? 0 : 1) } ?? false
      }
    }

    /// The node's opposite with the NOT pushed inward, so that SQLite can serve each comparison by an
    /// index (`NOT coalesce(x IS NOT ?, 0)` reads every row; `x = ?` one): `NOT (a AND b)` is
    /// `NOT a OR NOT b` and the reverse (De Morgan), `NOT NOT a` is `a`, `=` and `IS NOT` turn into
    /// each other, as do `IS NULL` and `IS NOT NULL`, and `NOT (x < v)` is `x >= v OR x IS NULL`
    /// (a comparison with NULL is false, so its NOT holds there). Exact because a node is true or
    /// false, never NULL (SQL's NULL is the predicate's false), and SQLite orders every two non-NULL
    /// values, of one type or not. Relationship tests, string functions and an `IN` list (an OR
    /// of one attribute's equalities: SQL binds it as one list, its De Morgan would be a chain of
    /// `IS NOT` SQLite refuses past 1,000, and no index serves either) keep their NOT.
    package var negated: Node {
      switch self {
      case .constant(let value): return .constant(!value)
      case .and(let nodes): return .or(nodes.map(\.negated))
      case .or(let nodes) where Self.list(nodes) != nil: return .not(self)
      case .or(let nodes): return .and(nodes.map(\.negated))
      case .not(let node): return node
      case .compare(let name, let test, let value):
        guard let opposite = Self.opposites[test] else { return .not(self) }
        let flipped = Node.compare(name, opposite, value)
        // `=`, `IS NOT` and the NULL tests are true or false on NULL already; an order is not.
        return [.equal, .notEqual, .isNull, .isNotNull].contains(test)
          ? flipped : .or([flipped, .compare(name, .isNull, .null)])
      case .string, .toOne, .members, .memberCount: return .not(self)
      }
    }

    /// The attribute and its values when the nodes are equalities of one attribute with values (more
    /// than one) — a predicate's `IN` list; nil for any other OR. The one test of a list: negation
    /// keeps its NOT, the SQL binds it as one list (`SQLiteStore.bindsAsOneList`).
    package static func list(_ nodes: [Node]) -> (name: String, values: [StoreValue])? {
      guard nodes.count > 1, case .compare(let name, .equal, _) = nodes[0] else { return nil }
      var values: [StoreValue] = []
      for node in nodes {
        guard case .compare(name, .equal, let value) = node else { return nil }
        values.append(value)
      }
      return (name, values)
    }

    private static let opposites: [Test: Test] = [
      .equal: .notEqual, .notEqual: .equal, .less: .greaterOrEqual, .lessOrEqual: .greater, .greater: .lessOrEqual,
      .greaterOrEqual: .less, .isNull: .isNotNull, .isNotNull: .isNull,
    ]
  }

  package var root: Node

  package init(_ root: Node) { self.root = root }
}
