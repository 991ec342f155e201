import Foundation
import MigrunModel

/// The SQL of a fetch index's expression element, as Core Data writes it (public decompilation of
/// `NSSQLIndexIntermediate.generateSQLStringInContext:`, `NSSQLFunctionExpressionIntermediate` and
/// `NSSQLConstantValueIntermediate` in an index's scope):
///
/// - the element: a key path of the entity's own (an attribute's column, a to-one's key column;
///   `entity` → `Z_ENT`, `self` → `Z_PK`; a path through a relationship is refused — "Joins not
///   supported in index" —, a to-many too), `SELF` → `Z_PK`, or a function;
/// - functions: `uppercase:`/`lowercase:` → `NSCoreDataToUpper(…)`/`NSCoreDataToLower(…)` (of a key
///   path or a string), `abs:` → `abs(…)`, `onesComplement:` → `(~…)`, `noindex:` → `+(…)` (of a
///   key path), `length:` → `length(…)`, and `add:to:`, `from:subtract:`, `multiply:by:`,
///   `divide:by:`, `modulus:by:`, `bitwiseAnd:with:`, `bitwiseOr:with:`, `leftshift:by:`,
///   `rightshift:by:` → `(a + b)`, `(a - b)`, … ; aggregates (`max:`, `min:`, `sum:`, `average:`,
///   `count:`, `distinct:`, `groupConcat:`), `now` and every other function are refused, as Core
///   Data refuses them in an index;
/// - constants written into the statement (an index has no bound values): numbers as `NSNumber`
///   prints them, strings in single quotes, dates as seconds since 2001 (`%f`). Core Data writes
///   `nil` as the word `nil` and a string as it is between quotes; SQLite refuses the first and a
///   quote inside the second, so migrun refuses both by name instead of writing a store that
///   cannot be opened.
struct FetchIndexSQL {
  enum Column {
    case column(String)
    case toMany
    case missing
  }

  struct Refusal: Error {
    let reason: String
  }

  /// The column of one of the entity's own properties, by name.
  let lookup: (String) -> Column
  let entity: String

  func element(_ expression: IndexExpression) throws(Refusal) -> String {
    switch expression {
    case .function: return try value(expression)
    case .keyPath: return try value(expression)
    case .evaluatedObject: return "Z_PK"
    case .constant: throw Refusal(reason: "is a constant, an expression type Core Data does not index")
    case .other(let what): throw Refusal(reason: "is \(what), an expression type Core Data does not index")
    }
  }

  /// An expression inside a function, or the element itself.
  package func value(_ expression: IndexExpression) throws(Refusal) -> String {
    switch expression {
    case .keyPath(let path):
      guard !path.contains(".") else {
        throw Refusal(reason: "goes through a relationship ('\(path)'), which Core Data does not support in an index")
      }
      switch lookup(path) {
      case .column(let column): return column
      case .toMany: throw Refusal(reason: "names the to-many '\(path)', which an index cannot contain")
      case .missing:
        if path.lowercased() == "entity" { return "Z_ENT" }
        if path.lowercased() == "self" { return "Z_PK" }
        throw Refusal(reason: "names '\(path)', which \(entity) has no stored property called")
      }
    case .evaluatedObject: return "Z_PK"
    case .constant(let constant): return try Self.constant(constant)
    case .function(let selector, let arguments): return try function(selector, arguments)
    case .other(let what): throw Refusal(reason: "holds \(what), which Core Data cannot write in an index")
    }
  }

  static let operators: [String: String] = [
    "add:to:": " + ", "from:subtract:": " - ", "multiply:by:": " * ", "divide:by:": " / ", "modulus:by:": " % ",
    "bitwiseAnd:with:": " & ", "bitwiseOr:with:": " | ", "leftshift:by:": " << ", "rightshift:by:": " >> ",
  ]
  static let aggregates: Set<String> = [
    "max:", "min:", "sum:", "average:", "count:", "distinct:", "groupConcat:", "groupConcat:separator:",
  ]

  func function(_ selector: String, _ arguments: [IndexExpression]) throws(Refusal) -> String {
    func one() throws(Refusal) -> IndexExpression {
      guard arguments.count == 1 else {
        throw Refusal(reason: "calls \(selector) with \(arguments.count) arguments, where it takes 1")
      }
      return arguments[0]
    }
    if let symbol = Self.operators[selector] {
      guard arguments.count == 2 else {
        throw Refusal(reason: "calls \(selector) with \(arguments.count) arguments, where it takes 2")
      }
      return "(" + (try value(arguments[0])) + symbol + (try value(arguments[1])) + ")"
    }
    switch selector {
    case "uppercase:", "lowercase:":
      let argument = try one()
      switch argument {
      case .keyPath, .constant(.string): break
      default: throw Refusal(reason: "calls \(selector) on \(argument), where Core Data takes a key path or a string")
      }
      return (selector == "uppercase:" ? "NSCoreDataToUpper(" : "NSCoreDataToLower(") + (try value(argument)) + ")"
    case "abs:": return "abs(" + (try value(try one())) + ")"
    case "onesComplement:": return "(~" + (try value(try one())) + ")"
    case "noindex:":
      let argument = try one()
      guard case .keyPath = argument else {
        throw Refusal(reason: "calls noindex: on \(argument), where Core Data takes a key path")
      }
      return "+(" + (try value(argument)) + ")"
    case "length:":
      let argument = try one()
      switch argument {
      case .keyPath, .constant: break
      default: throw Refusal(reason: "calls length: on \(argument), where Core Data takes a key path or a value")
      }
      return "length(" + (try value(argument)) + ")"
    case _ where Self.aggregates.contains(selector):
      throw Refusal(reason: "calls \(selector), an aggregate, which Core Data does not allow in an index")
    case "now":
      throw Refusal(reason: "calls now(), which Core Data does not allow in an index")
    default:
      throw Refusal(reason: "calls \(selector), a function Core Data does not allow in an index")
    }
  }

  static func constant(_ constant: IndexExpression.Constant) throws(Refusal) -> String {
    switch constant {
    case .null:
      throw Refusal(reason: "holds nil, which Core Data writes as the word nil and SQLite refuses in an index")
    case .integer(let number): return String(number)
    case .real(let number): return String(number)
    case .string(let text):
      guard !text.contains("'") else {
        throw Refusal(
          reason: "holds the string \"\(text)\", whose quote Core Data writes unescaped and SQLite refuses")
      }
      return "'\(text)'"
    case .date(let seconds): return String(format: "%f", seconds)
    }
  }
}

extension FetchIndexSQL {
  /// A partial index's `WHERE` clause (`NSFetchIndexDescription.partialIndexPredicate`, written by
  /// Core Data's where intermediates in the index's scope): comparisons `==`, `!=`, `<`, `<=`, `>`,
  /// `>=` between the entity's own key paths and values written in (`== nil` as `IS NULL`, `!= nil`
  /// as `IS NOT NULL`; an ordering against nil refused, as Core Data refuses "illegal comparison
  /// with NULL"), joined by AND, OR and NOT, and TRUEPREDICATE/FALSEPREDICATE. The meaning is Core
  /// Data's; the statement's spacing and parentheses are a guess (no store we have shows a partial
  /// index). Anything else — string operators, options, ANY/ALL, key paths through relationships —
  /// is refused by name.
  func partialIndex(_ format: String) throws(Refusal) -> String {
    let predicate: FormatPredicate
    do {
      predicate = try FormatPredicate(format)
    } catch {
      throw Refusal(reason: "has the partial-index predicate \(format), which migrun cannot read (\(error.reason))")
    }
    do {
      return try clause(predicate.root)
    } catch {
      throw Refusal(reason: "has the partial-index predicate \(format), which \(error.reason)")
    }
  }

  private func clause(_ node: FormatPredicate.Node) throws(Refusal) -> String {
    switch node {
    case .constant(let flag): return flag ? "1" : "0"
    case .and(let nodes):
      return "(" + (try nodes.map { node throws(Refusal) in try clause(node) }.joined(separator: " AND ")) + ")"
    case .or(let nodes):
      return "(" + (try nodes.map { node throws(Refusal) in try clause(node) }.joined(separator: " OR ")) + ")"
    case .not(let inner): return "NOT (" + (try clause(inner)) + ")"
    case .comparison(let lhs, let op, let rhs, let options, let modifier):
      guard case .direct = modifier, options.isEmpty else {
        throw Refusal(reason: "compares with ANY, ALL, NONE or [cd] options, which migrun cannot write in an index")
      }
      let symbols: [FormatPredicate.Operator: String] = [
        .equal: "=", .notEqual: "<>", .less: "<", .lessOrEqual: "<=", .greater: ">", .greaterOrEqual: ">=",
      ]
      guard let symbol = symbols[op] else {
        throw Refusal(reason: "uses \(op.rawValue), which migrun cannot write in an index")
      }
      let leftIsNull = Self.isNull(lhs)
      let rightIsNull = Self.isNull(rhs)
      if leftIsNull || rightIsNull {
        guard op == .equal || op == .notEqual, !(leftIsNull && rightIsNull) else {
          throw Refusal(reason: "orders against nil, which Core Data refuses (illegal comparison with NULL)")
        }
        return (try operand(leftIsNull ? rhs : lhs)) + (op == .equal ? " IS NULL" : " IS NOT NULL")
      }
      return (try operand(lhs)) + " \(symbol) " + (try operand(rhs))
    }
  }

  private static func isNull(_ expression: FormatPredicate.Expression) -> Bool {
    if case .value(.null) = expression { return true }
    return false
  }

  private func operand(_ expression: FormatPredicate.Expression) throws(Refusal) -> String {
    switch expression {
    case .keyPath(let path): return try value(.keyPath(path.joined(separator: ".")))
    case .this: return "Z_PK"
    case .value(.integer(let number)): return try value(.constant(.integer(number)))
    case .value(.boolean(let flag)): return flag ? "1" : "0"
    case .value(.double(let number)): return try value(.constant(.real(number)))
    case .value(.date(let seconds)): return try value(.constant(.date(seconds)))
    case .value(.string(let text)): return try value(.constant(.string(text)))
    case .value(let other): throw Refusal(reason: "compares with \(other), which Core Data cannot write in an index")
    case .list: throw Refusal(reason: "compares with a list, which migrun cannot write in an index")
    }
  }
}
