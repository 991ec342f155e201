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
        return PredicateStrings.fold(haystack, options).contains(PredicateStrings.fold(needle, options))
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
      return try PredicateStrings.test(text, op, pattern, options) ?? false
    case .inList, .between: return false
    }
  }

  static func equal(_ lhs: Operands.Item, _ rhs: Operands.Item, _ options: FormatPredicate.Options) -> Bool {
    switch (lhs, rhs) {
    case (.object(let a), .object(let b)): return a.id == b.id
    case (.object, .value), (.value, .object): return false
    case (.value(.null), .value(.null)): return true
    case (.value(.null), _), (_, .value(.null)): return false
    case (.value(.string(let a)), .value(.string(let b))):
      return PredicateStrings.equal(a, b, options)
    case (.value(let a), .value(let b)):
      if let x = a.number, let y = b.number { return x == y }
      return a == b
    }
  }

  static func order(_ lhs: Operands.Item, _ rhs: Operands.Item, _ options: FormatPredicate.Options) -> Int? {
    guard case .value(let a) = lhs, case .value(let b) = rhs, a != .null, b != .null else { return nil }
    if case .string(let x) = a, case .string(let y) = b { return PredicateStrings.order(x, y, options) }
    guard let x = a.number, let y = b.number else { return nil }
    return x == y ? 0 : x < y ? -1 : 1
  }
}

extension ObjectContext {
  /// Objects of `entity` that pass `predicate`, sorted, at most `limit` of them (pending changes
  /// count, as `fetch(_:where:sortedBy:includingSubentities:)`).
  ///
  /// Where the store says the whole predicate and the order in SQL
  /// (every form the predicate guide lists) and the context has no
  /// pending changes, the store's answer is the answer, as in Core Data: the keys are selected in
  /// SQL (sorted and limited there) and only those objects read. Else the store narrows the rows
  /// where it can and each object is judged.
  ///
  /// `includesPropertyValues: false` (Core Data's option of that name) returns faults: objects
  /// whose values are read when first used (the version then read is the one a save checks), a
  /// batch of the fetch's faults at a time — a fetch of a million objects then holds their keys
  /// and little else.
  public func fetch(
    _ entityName: String, matching predicate: FormatPredicate?, sortedBy keys: [SortKey] = [], limit: Int? = nil,
    includesPropertyValues: Bool = true
  ) throws -> [ManagedObject] {
    let entity = try checked(entityName, predicate)
    let clean = pending.isEmpty
    let tested =
      predicate?.rowFilterTesting(entity, in: model, followingRelationships: clean) ?? (filter: nil, whole: true)
    if tested.whole, clean, includesPropertyValues, keys.isEmpty, limit == nil,
      store.says(tested.filter, of: entityName)
    {
      // In key order, every row that passes: one pass over the table, no keys selected first.
      var found: [ManagedObject] = []
      try storeCall(entityName) {
        try store.forEachRow(of: entityName, includingSubentities: true, filter: tested.filter) {
          found.append(try registeredObject($0.id) ?? adopt($0))
        }
      }
      return found
    }
    if tested.whole, clean,
      let ids = try storeIDs(entityName, filter: tested.filter, sortedBy: keys, limit: limit)
    {
      return includesPropertyValues ? try objects(ids) : try faults(ids)
    }
    var found: [ManagedObject] = []
    let candidates = try fetch(
      entityName, where: nil, sortedBy: keys, includingSubentities: true, rowFilter: tested.filter)
    for object in candidates {
      if try judge(predicate, object, entityName) { found.append(object) }
      if let limit, found.count >= limit { break }
    }
    return found
  }

  /// Whether `object` passes `predicate` (none: every object), an error naming the predicate else.
  func judge(_ predicate: FormatPredicate?, _ object: ManagedObject, _ entityName: String) throws -> Bool {
    do {
      return try predicate?.evaluate(object) ?? true
    } catch let error as FormatPredicateError {
      throw ContextError(
        .unknownProperty, entity: entityName, reason: "predicate \"\(predicate?.format ?? "")\": \(error.reason)")
    }
  }

  /// How many objects of `entity` pass `predicate` (pending changes count). Counted by the store in
  /// SQL, no object read, where the store says the whole predicate and the context has no pending
  /// changes; else the objects are fetched and judged.
  public func count(_ entityName: String, matching predicate: FormatPredicate?) throws -> Int {
    let entity = try checked(entityName, predicate)
    let tested = predicate.map { $0.rowFilterTesting(entity, in: model) } ?? (filter: nil, whole: true)
    if tested.whole, pending.isEmpty,
      let counted = try storeCall(
        entityName, { try store.count(of: entityName, includingSubentities: true, filter: tested.filter) })
    {
      return counted
    }
    return try fetch(entityName, matching: predicate).count
  }

  /// The entity, once every key the predicate starts with is one of its properties.
  func checked(_ entityName: String, _ predicate: FormatPredicate?) throws -> Entity {
    let entity = try entity(entityName)
    let names = Set(model.attributes(of: entity).map(\.name)).union(model.relationships(of: entity).map(\.name))
    for name in predicate?.keys ?? [] where !names.contains(name) {
      throw ContextError(
        .unknownProperty, entity: entityName,
        reason: "entity '\(entityName)' has no property '\(name)' (predicate \"\(predicate?.format ?? "")\")")
    }
    return entity
  }

  /// The keys of the objects the store selects in SQL, in order; nil when it cannot.
  func storeIDs(_ entityName: String, filter: RowFilter?, sortedBy keys: [SortKey], limit: Int?, offset: Int = 0)
    throws -> [ObjectID]?
  {
    try storeCall(entityName) {
      try store.objectIDs(
        of: entityName, includingSubentities: true, filter: filter, sortedBy: keys.map { ($0.name, $0.ascending) },
        limit: limit, offset: offset)
    }
  }

  /// The objects with these keys, in order: those registered as they are, the others read from
  /// the store a page at a time (a key naming no row is left out).
  public func objects(_ ids: [ObjectID]) throws -> [ManagedObject] {
    var found: [ManagedObject] = []
    found.reserveCapacity(ids.count)
    let page = 500
    for start in stride(from: 0, to: ids.count, by: page) {
      let chunk = ids[start..<min(start + page, ids.count)]
      let missing = chunk.filter { registeredObject($0) == nil }
      var read: [ObjectID: ManagedObject] = [:]
      if !missing.isEmpty {
        for row in try storeCall(missing[0].entity, { try store.rows(missing) }) { read[row.id] = try adopt(row) }
      }
      for id in chunk {
        if let object = read[id] ?? registeredObject(id) { found.append(object) }
      }
    }
    return found
  }

  /// A store call whose failure is a context error naming the entity.
  func storeCall<T>(_ entityName: String, _ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as ContextError {
      throw error
    } catch {
      throw ContextError(.store, entity: entityName, reason: "\(error)", underlying: error)
    }
  }
}
