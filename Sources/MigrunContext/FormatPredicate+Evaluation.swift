import Foundation
import MigrunModel
import MigrunStore

extension FormatPredicate {
  /// Whether `object` passes.
  public func evaluate(_ object: ManagedObject) throws -> Bool {
    try FormatPredicateEvaluator(object: object).evaluate(root)
  }
}

// MARK: - Evaluation

/// What a key path gives on one object: values, objects, and whether a to-many made it a collection.
struct Operands {
  enum Item {
    case value(StoreValue)
    case object(ManagedObject)
  }
  var items: [Item]
  var isCollection: Bool
}

struct FormatPredicateEvaluator {
  let object: ManagedObject

  func evaluate(_ node: FormatPredicate.Node) throws -> Bool {
    switch node {
    case .constant(let value): return value
    case .and(let nodes):
      for node in nodes where !(try evaluate(node)) { return false }
      return true
    case .or(let nodes):
      for node in nodes where try evaluate(node) { return true }
      return false
    case .not(let inner): return !(try evaluate(inner))
    case .comparison(let lhs, let op, let rhs, let options, let modifier):
      return try compare(lhs, op, rhs, options, modifier)
    }
  }

  func operands(_ expression: FormatPredicate.Expression) throws -> Operands {
    switch expression {
    case .value(let value): return Operands(items: [.value(value)], isCollection: false)
    case .this: return Operands(items: [.object(object)], isCollection: false)
    case .list(let items):
      return Operands(items: try items.flatMap { try operands($0).items }, isCollection: true)
    case .keyPath(let path): return try follow(path[...], from: Operands(items: [.object(object)], isCollection: false))
    }
  }

  func follow(_ path: ArraySlice<String>, from start: Operands) throws -> Operands {
    var current = start
    var rest = path
    while let key = rest.first {
      rest = rest.dropFirst()
      if key.hasPrefix("@") {
        let members = try follow(rest, from: current)
        return Operands(items: [.value(try aggregate(key, members))], isCollection: false)
      }
      var next: [Operands.Item] = []
      var isCollection = current.isCollection
      for item in current.items {
        if case .value(.null) = item {
          // Past a to-one that is not set: NULL all the way.
          next.append(.value(.null))
          continue
        }
        guard case .object(let owner) = item else {
          throw FormatPredicateError(format: "", offset: nil, reason: "'\(key)' follows a value, not an object")
        }
        let entity = owner.entity.name
        if let relationship = owner.context?.model.relationships(of: owner.entity).first(where: {
          $0.name == key
        }) {
          if relationship.isToMany {
            isCollection = true
            next += try owner.members(key).map { .object($0) }
          } else if let target = try owner.object(key) {
            next.append(.object(target))
          } else {
            next.append(.value(.null))
          }
        } else {
          do {
            next.append(.value(try owner.value(key)))
          } catch {
            throw FormatPredicateError(format: "", offset: nil, reason: "entity '\(entity)' has no property '\(key)'")
          }
        }
      }
      current = Operands(items: next, isCollection: isCollection)
    }
    return current
  }

  func aggregate(_ name: String, _ members: Operands) throws -> StoreValue {
    let numbers = members.items.compactMap { item -> Double? in
      if case .value(let value) = item { return value.number }
      return nil
    }
    switch name.lowercased() {
    case "@count":
      return .integer(Int64(members.items.filter { if case .value(.null) = $0 { false } else { true } }.count))
    case "@sum": return .double(numbers.reduce(0, +))
    case "@avg": return numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
    case "@min": return numbers.min().map(StoreValue.double) ?? .null
    case "@max": return numbers.max().map(StoreValue.double) ?? .null
    default:
      throw FormatPredicateError(
        format: "", offset: nil, reason: "\(name) is not an operator migrun knows (@count, @sum, @avg, @min, @max)")
    }
  }

  func compare(
    _ lhs: FormatPredicate.Expression, _ op: FormatPredicate.Operator, _ rhs: FormatPredicate.Expression,
    _ options: FormatPredicate.Options,
    _ modifier: FormatPredicate.Modifier
  ) throws -> Bool {
    let left = try operands(lhs)
    let right = try operands(rhs)
    if modifier == .direct, !left.isCollection || (op == .contains) {
      if op == .contains, left.isCollection {
        // `tags CONTAINS 'x'`: membership.
        return left.items.contains { item in right.items.contains { Self.equal(item, $0, options) } }
      }
      return try test(left.items.first ?? .value(.null), op, right, options)
    }
    let results = try left.items.map { try test($0, op, right, options) }
    switch modifier {
    case .all: return results.allSatisfy { $0 }
    case .none: return !results.contains(true)
    case .any, .direct: return results.contains(true)
    }
  }

  func test(
    _ item: Operands.Item, _ op: FormatPredicate.Operator, _ right: Operands, _ options: FormatPredicate.Options
  ) throws
    -> Bool
  {
    switch op {
    case .inList:
      if !right.isCollection, case .value(.string(let haystack)) = right.items.first,
        case .value(.string(let needle)) = item
      {
        return Self.fold(haystack, options).contains(Self.fold(needle, options))
      }
      return right.items.contains { Self.equal(item, $0, options) }
    case .between:
      guard right.items.count == 2 else { return false }
      return Self.order(item, right.items[0], options).map { $0 >= 0 } == true
        && Self.order(item, right.items[1], options).map { $0 <= 0 } == true
    default: break
    }
    let other = right.items.first ?? .value(.null)
    switch op {
    case .equal: return Self.equal(item, other, options)
    case .notEqual: return !Self.equal(item, other, options)
    case .less: return Self.order(item, other, options).map { $0 < 0 } ?? false
    case .lessOrEqual: return Self.order(item, other, options).map { $0 <= 0 } ?? false
    case .greater: return Self.order(item, other, options).map { $0 > 0 } ?? false
    case .greaterOrEqual: return Self.order(item, other, options).map { $0 >= 0 } ?? false
    case .contains, .beginsWith, .endsWith, .like, .matches:
      guard case .value(.string(let text)) = item, case .value(.string(let pattern)) = other else { return false }
      let (subject, needle) = (Self.fold(text, options), Self.fold(pattern, options))
      switch op {
      case .contains: return subject.contains(needle)
      case .beginsWith: return subject.hasPrefix(needle)
      case .endsWith: return subject.hasSuffix(needle)
      case .like: return try Self.like(subject, needle)
      default: return try Self.matches(text, pattern, options)
      }
    case .inList, .between: return false
    }
  }

  static func fold(_ text: String, _ options: FormatPredicate.Options) -> String {
    var fold: String.CompareOptions = []
    if options.contains(.caseInsensitive) { fold.insert(.caseInsensitive) }
    if options.contains(.diacriticInsensitive) { fold.insert(.diacriticInsensitive) }
    return fold.isEmpty ? text : text.folding(options: fold, locale: nil)
  }

  static func equal(_ lhs: Operands.Item, _ rhs: Operands.Item, _ options: FormatPredicate.Options) -> Bool {
    switch (lhs, rhs) {
    case (.object(let a), .object(let b)): return a.id == b.id
    case (.object, .value), (.value, .object): return false
    case (.value(.null), .value(.null)): return true
    case (.value(.null), _), (_, .value(.null)): return false
    case (.value(.string(let a)), .value(.string(let b))):
      // Without options, as Core Data's SQL compares (BINARY): scalar by scalar — "é" and "e\u{301}"
      // differ, as they do to `NSString.isEqual:` (Swift's `==` would take them as one).
      if options.isEmpty { return a.unicodeScalars.elementsEqual(b.unicodeScalars) }
      return fold(a, options) == fold(b, options)
    case (.value(let a), .value(let b)):
      if let x = a.number, let y = b.number { return x == y }
      return a == b
    }
  }

  static func order(_ lhs: Operands.Item, _ rhs: Operands.Item, _ options: FormatPredicate.Options) -> Int? {
    guard case .value(let a) = lhs, case .value(let b) = rhs, a != .null, b != .null else { return nil }
    if case .string(let x) = a, case .string(let y) = b {
      // Without options in code-point order, as SQLite's BINARY collation orders UTF-8.
      if options.isEmpty {
        let (p, q) = (x.unicodeScalars.map(\.value), y.unicodeScalars.map(\.value))
        return p == q ? 0 : p.lexicographicallyPrecedes(q) ? -1 : 1
      }
      let (p, q) = (fold(x, options), fold(y, options))
      return p == q ? 0 : p < q ? -1 : 1
    }
    guard let x = a.number, let y = b.number else { return nil }
    return x == y ? 0 : x < y ? -1 : 1
  }

  /// The steps one `LIKE` may take (text × pattern at worst); beyond, the evaluation is refused.
  static let likeCostLimit = 1e9

  /// `LIKE`: `*` any run of characters, `?` one character. Matched without recursion (a long text
  /// must not run out of stack): greedily, going back only to the last `*` — text × pattern steps at
  /// worst, which is checked first when the pattern has a `*`.
  static func like(_ text: String, _ pattern: String) throws -> Bool {
    let t = Array(text)
    let p = Array(pattern)
    if p.contains("*"), Double(t.count + 1) * Double(p.count + 1) > likeCostLimit {
      throw FormatPredicateError(
        format: pattern.count > 40 ? String(pattern.prefix(40)) + "…" : pattern, offset: nil,
        reason:
          "LIKE of a \(p.count)-character pattern on a \(t.count)-character string could take ~\(t.count * p.count) steps (limit 1e9): shorten them"
      )
    }
    var i = 0
    var j = 0
    var star: Int?
    var resume = 0
    while i < t.count {
      if j < p.count, p[j] == "*" {
        star = j
        j += 1
        resume = i
      } else if j < p.count, p[j] == "?" || p[j] == t[i] {
        i += 1
        j += 1
      } else if let star {
        j = star + 1
        resume += 1
        i = resume
      } else {
        return false
      }
    }
    while j < p.count, p[j] == "*" { j += 1 }
    return j == p.count
  }

  /// How long one `MATCHES` may take. Regular expressions with nested repetition backtrack
  /// exponentially (`(a|a)*b`), and the match runs in ICU, where no script limit reaches: it is
  /// given up after this long, with an error naming the expression.
  static let matchSeconds = 0.25

  /// `MATCHES`: an ICU regular expression that must match the whole string.
  static func matches(_ text: String, _ pattern: String, _ options: FormatPredicate.Options) throws -> Bool {
    var regexOptions: NSRegularExpression.Options = []
    if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
    let expression: NSRegularExpression
    do {
      expression = try NSRegularExpression(pattern: "^(?:\(pattern))$", options: regexOptions)
    } catch {
      throw FormatPredicateError(format: pattern, offset: nil, reason: "not a regular expression MATCHES can take")
    }
    let subject = options.contains(.diacriticInsensitive) ? fold(text, [.diacriticInsensitive]) : text
    let deadline = Date().addingTimeInterval(matchSeconds)
    var found = false
    var gaveUp = false
    expression.enumerateMatches(
      in: subject, options: [.reportProgress], range: NSRange(subject.startIndex..., in: subject)
    ) { match, _, stop in
      if match != nil {
        found = true
        stop.pointee = true
      } else if Date() > deadline {
        gaveUp = true
        stop.pointee = true
      }
    }
    if gaveUp {
      throw FormatPredicateError(
        format: pattern, offset: nil,
        reason:
          "MATCHES gave up after \(matchSeconds) s on a \(subject.count)-character string: the expression backtracks too much (simplify its nested repetition)"
      )
    }
    return found
  }
}

extension FormatPredicate {
  /// What of the predicate a store can test on `entity`'s rows: the comparisons, joined by AND at
  /// the top, of one of its attributes (numbers, Booleans, dates, strings) with a value — `==`,
  /// `!=`, `<`, `<=`, `>`, `>=`, and `== nil`/`!= nil` — without options or ANY/ALL. Every object
  /// the predicate takes passes it (a row filter narrows, the predicate still judges): `!=` keeps
  /// NULLs (`IS NOT`), strings compare as the predicate compares them without options (scalar by
  /// scalar), and integers beyond 2^53, which the predicate compares as doubles, are left out.
  func rowFilter(for entity: Entity, in model: ObjectModel) -> RowFilter? {
    rowFilterTesting(entity, in: model).filter
  }

  /// The row filter, and whether it says the whole predicate (every conjunct a condition the store
  /// tests exactly as the predicate does): then the store's answer is the predicate's.
  func rowFilterTesting(_ entity: Entity, in model: ObjectModel) -> (filter: RowFilter?, whole: Bool) {
    let attributes = Dictionary(
      model.attributes(of: entity).filter { !$0.isTransient && $0.derivation == nil }.map { ($0.name, $0.type) },
      uniquingKeysWith: { first, _ in first })
    let conjuncts: [Node]
    switch root {
    case .and(let nodes): conjuncts = nodes
    case .comparison: conjuncts = [root]
    case .constant(true): return (nil, true)
    default: return (nil, false)
    }
    let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .double, .float, .decimal, .boolean, .date]
    var conditions: [RowFilter.Condition] = []
    var whole = 0
    for case .comparison(let lhs, var op, let rhs, let options, .direct) in conjuncts where options.isEmpty {
      var key = lhs
      var other = rhs
      if case .value = lhs, case .keyPath = rhs {
        (key, other) = (rhs, lhs)
        op = [.less: .greater, .lessOrEqual: .greaterOrEqual, .greater: .less, .greaterOrEqual: .lessOrEqual][op] ?? op
      }
      guard case .keyPath(let path) = key, path.count == 1, let type = attributes[path[0]],
        case .value(let value) = other
      else { continue }
      if value == .null {
        if op == .equal || op == .notEqual {
          conditions.append(.init(attribute: path[0], test: op == .equal ? .isNull : .isNotNull, value: .null))
          whole += 1
        }
        continue
      }
      let fits: Bool
      switch value {
      case .string: fits = type == .string
      case .integer(let number): fits = numeric.contains(type) && abs(number) < 1 << 53
      case .boolean, .double, .date: fits = numeric.contains(type)
      default: fits = false
      }
      let tests: [Operator: RowFilter.Test] = [
        .equal: .equal, .notEqual: .notEqual, .less: .less, .lessOrEqual: .lessOrEqual, .greater: .greater,
        .greaterOrEqual: .greaterOrEqual,
      ]
      guard fits, let test = tests[op] else { continue }
      conditions.append(.init(attribute: path[0], test: test, value: value))
      whole += 1
    }
    return (conditions.isEmpty ? nil : RowFilter(conditions: conditions), whole == conjuncts.count)
  }
}

extension ObjectContext {
  /// Objects of `entity` that pass `predicate`, sorted, at most `limit` of them (pending changes
  /// count, as `fetch(_:where:sortedBy:includingSubentities:)`). The comparisons a store can test
  /// (`FormatPredicate.rowFilter(for:in:)`) are tested while reading its rows.
  public func fetch(
    _ entityName: String, matching predicate: FormatPredicate?, sortedBy keys: [SortKey] = [], limit: Int? = nil
  ) throws -> [ManagedObject] {
    let entity = try entity(entityName)
    let names = Set(model.attributes(of: entity).map(\.name)).union(model.relationships(of: entity).map(\.name))
    for name in predicate?.keys ?? [] where !names.contains(name) {
      throw ContextError(
        .unknownProperty, entity: entityName,
        reason: "entity '\(entityName)' has no property '\(name)' (predicate \"\(predicate?.format ?? "")\")")
    }
    var found: [ManagedObject] = []
    let candidates = try fetch(
      entityName, where: nil, sortedBy: keys, includingSubentities: true,
      rowFilter: predicate?.rowFilter(for: entity, in: model))
    for object in candidates {
      do {
        if try predicate?.evaluate(object) ?? true { found.append(object) }
      } catch let error as FormatPredicateError {
        throw ContextError(
          .unknownProperty, entity: entityName,
          reason: "predicate \"\(predicate?.format ?? "")\": \(error.reason)")
      }
      if let limit, found.count >= limit { break }
    }
    return found
  }

  /// How many objects of `entity` pass `predicate`.
  /// How many objects of `entity` pass `predicate` (pending changes count). Counted by the store in
  /// SQL, no object read, where the store tests the whole predicate (ANDed comparisons of attributes
  /// with values) and the context holds no object of the entity's hierarchy (its snapshots and
  /// changes would differ from the rows); else the objects are fetched and judged.
  public func count(_ entityName: String, matching predicate: FormatPredicate?) throws -> Int {
    let entity = try entity(entityName)
    let tested = predicate.map { $0.rowFilterTesting(entity, in: model) } ?? (filter: nil, whole: true)
    if tested.whole, !holdsObjects(ofKind: entityName),
      let counted = try store.count(of: entityName, includingSubentities: true, filter: tested.filter)
    {
      return counted
    }
    return try fetch(entityName, matching: predicate).count
  }
}
