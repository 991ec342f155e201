import Foundation
import MigrunScripting
import SwiftSyntax

/// Fetch requests and predicates: built up as the Swift builds them, written as one `m:fetch` or
/// `ctx:fetch` with the predicate's format as it is (`%d`, `%f` and their kin read as `%@`).
extension LuaTranslator {
  func fetch(_ request: FetchRequest, receiver: String, source: Bool, count: Bool) -> LuaExpr {
    var options: [String] = []
    if !request.arguments.isEmpty { options.append("args = { \(request.arguments.joined(separator: ", ")) }") }
    if !request.sort.isEmpty {
      options.append("sort = { \(request.sort.map(LuaSource.string).joined(separator: ", ")) }")
    }
    if let limit = request.limit { options.append("limit = \(limit)") }
    if source { options.append("source = true") }
    var parts = [LuaSource.string(request.entity)]
    if request.predicate != nil || !options.isEmpty { parts.append(request.predicate.map(LuaSource.string) ?? "nil") }
    if !options.isEmpty { parts.append("{ \(options.joined(separator: ", ")) }") }
    let list = parts.joined(separator: ", ")
    if count && receiver == "ctx" { return LuaExpr(code: "ctx:count(\(list))", kind: .integer, isCall: true) }
    let call = "\(receiver):fetch(\(list))"
    return count
      ? LuaExpr(code: "#\(call)", kind: .integer, isAtom: false) : LuaExpr(code: call, kind: .list, isCall: true)
  }

  /// SwiftData's `context.enumerate(descriptor) { … }`: `ctx:each`, a batch of objects at a time.
  func each(_ request: FetchRequest, _ function: String) -> String {
    var options: [String] = []
    if !request.arguments.isEmpty { options.append("args = { \(request.arguments.joined(separator: ", ")) }") }
    if !request.sort.isEmpty {
      options.append("sort = { \(request.sort.map(LuaSource.string).joined(separator: ", ")) }")
    }
    let predicate = request.predicate.map(LuaSource.string) ?? "nil"
    let tail = options.isEmpty ? "" : ", { \(options.joined(separator: ", ")) }"
    return "ctx:each(\(LuaSource.string(request.entity)), \(predicate), \(function)\(tail))"
  }

  /// `NSPredicate(format: "name == %@ AND n > %d", name, 3)`.
  func predicateFormat(_ arguments: [Argument]) throws -> LuaExpr {
    guard let format = Self.stringValue(arguments[0].expression) else {
      throw Untranslatable("a predicate format that is no string literal")
    }
    var converted = format
    for specifier in ["%lld", "%ld", "%lu", "%li", "%d", "%i", "%u", "%lf", "%f", "%g"] {
      converted = converted.replacingOccurrences(of: specifier, with: "%@")
    }
    let values = try arguments.dropFirst().map { try expression($0.expression).code }
    return LuaExpr(code: "", kind: .predicate(format: converted, arguments: values))
  }

  /// `NSCompoundPredicate(andPredicateWithSubpredicates: [p, q])`: `(p) AND (q)`, arguments in order;
  /// `notPredicateWithSubpredicate:` is `NOT (p)`.
  func compoundPredicate(_ arguments: [Argument]) throws -> LuaExpr {
    guard arguments.count == 1, let label = arguments[0].label else { throw Untranslatable("an NSCompoundPredicate") }
    let parts: [ExprSyntax]
    if let list = arguments[0].expression.as(ArrayExprSyntax.self) {
      parts = list.elements.map(\.expression)
    } else {
      parts = [arguments[0].expression]
    }
    var formats: [String] = []
    var values: [String] = []
    for part in parts {
      guard case .predicate(let format, let partArguments) = try expression(part).kind else {
        throw Untranslatable("a subpredicate the port cannot read")
      }
      formats.append("(\(format))")
      values += partArguments
    }
    let joined: String
    switch label {
    case "andPredicateWithSubpredicates": joined = formats.joined(separator: " AND ")
    case "orPredicateWithSubpredicates": joined = formats.joined(separator: " OR ")
    case "notPredicateWithSubpredicate": joined = "NOT \(formats.joined())"
    default: throw Untranslatable("NSCompoundPredicate(\(label):)")
    }
    return LuaExpr(code: "", kind: .predicate(format: joined, arguments: values))
  }

  func sortDescriptor(_ signature: String, _ arguments: [Argument]) throws -> LuaExpr {
    let keyArgument = arguments[0].expression
    let key: String
    if let keyPath = keyArgument.as(KeyPathExprSyntax.self) {
      key = Self.keyPathText(keyPath)
    } else if let literal = Self.stringValue(keyArgument) {
      key = literal
    } else {
      throw Untranslatable("a sort key that is no literal")
    }
    var descending = false
    if arguments.count > 1 {
      switch arguments[1].expression.trimmedDescription {
      case "true", ".forward", "SortOrder.forward": descending = false
      case "false", ".reverse", "SortOrder.reverse": descending = true
      default: throw Untranslatable("a sort order that is no literal")
      }
    }
    return LuaExpr(code: "", kind: .sort([(descending ? "-" : "") + key]))
  }

  /// SwiftData's `FetchDescriptor<T>(predicate:sortBy:)`.
  func fetchDescriptor(_ arguments: [Argument], generic: String?) throws -> LuaExpr {
    guard let generic else { throw Untranslatable("a FetchDescriptor without its model type") }
    var request = FetchRequest(entity: String(generic.split(separator: ".").last ?? Substring(generic)))
    for argument in arguments {
      switch argument.label {
      case "predicate": try apply(predicate: try expression(argument.expression), to: &request)
      case "sortBy": request.sort = try sortKeys(try expression(argument.expression), argument.expression)
      default: throw Untranslatable("FetchDescriptor's \(argument.label ?? "_"):")
      }
    }
    return LuaExpr(code: "", kind: .request(request))
  }

  func apply(predicate value: LuaExpr, to request: inout FetchRequest) throws {
    switch value.kind {
    case .predicate(let format, let arguments):
      request.predicate = format
      request.arguments = arguments
    case .null:
      request.predicate = nil
      request.arguments = []
    default: throw Untranslatable("a predicate the port cannot read")
    }
  }

  /// `[NSSortDescriptor(…), …]`: the keys, `-key` descending.
  func sortKeys(_ value: LuaExpr, _ node: ExprSyntax) throws -> [String] {
    if case .sort(let keys) = value.kind { return keys }
    guard let array = node.as(ArrayExprSyntax.self) else { throw Untranslatable("sort descriptors built elsewhere") }
    return try array.elements.flatMap { element -> [String] in
      guard case .sort(let keys) = try expression(element.expression).kind else {
        throw Untranslatable("a sort descriptor the port cannot read")
      }
      return keys
    }
  }

  /// `request.predicate = …`, `request.fetchLimit = …`: the request changed, no Lua of its own.
  func requestAssignment(_ name: String, _ property: String, _ value: ExprSyntax, line: Int) throws {
    guard let binding = lookup(name), case .request(var request) = binding.kind else {
      throw Untranslatable("\(name).\(property) on no fetch request")
    }
    switch property {
    case "predicate": try apply(predicate: try expression(value), to: &request)
    case "sortDescriptors", "sortBy": request.sort = try sortKeys(try expression(value), value)
    case "fetchLimit": request.limit = try expression(value).code
    case "returnsObjectsAsFaults", "includesPendingChanges", "relationshipKeyPathsForPrefetching",
      "includesSubentities",
      "propertiesToFetch", "fetchBatchSize", "includesPropertyValues":
      emit("-- \(name).\(property): nothing to do in Lua", line: line)
      return
    default: throw Untranslatable("the fetch request's \(property)")
    }
    rebind(name, .request(request))
    emit("-- \(name).\(property) = …: in the fetch below", line: line)
  }

  // MARK: #Predicate

  /// SwiftData's `#Predicate<T> { trip in trip.name == name }` as an NSPredicate format with
  /// `%@` for each value: comparisons of key paths, `&&`, `||`, `!`, `contains`, `starts(with:)`.
  func predicateMacro(_ node: MacroExpansionExprSyntax) throws -> (String, [String]) {
    guard let closure = node.trailingClosure, closure.statements.count == 1, let only = closure.statements.first
    else { throw Untranslatable("a #Predicate other than one expression") }
    // The one expression, or the one `return` of it.
    let body: ExprSyntax
    switch only.item {
    case .expr(let expression): body = expression
    case .stmt(let statement):
      guard let returned = statement.as(ReturnStmtSyntax.self)?.expression else {
        throw Untranslatable("a #Predicate other than one expression")
      }
      body = returned
    default: throw Untranslatable("a #Predicate other than one expression")
    }
    let parameter = Self.parameterNames(closure).first ?? "$0"
    var arguments: [String] = []
    let format = try predicatePart(body, parameter, &arguments)
    return (format, arguments)
  }

  private func keyPath(_ node: ExprSyntax, _ parameter: String) -> String? {
    var names: [String] = []
    var current = node
    while true {
      if let chain = current.as(OptionalChainingExprSyntax.self) { current = chain.expression; continue }
      if let unwrap = current.as(ForceUnwrapExprSyntax.self) { current = unwrap.expression; continue }
      if let member = current.as(MemberAccessExprSyntax.self), let base = member.base {
        names.insert(member.declName.baseName.text, at: 0)
        current = base
        continue
      }
      break
    }
    guard current.as(DeclReferenceExprSyntax.self)?.baseName.text == parameter, !names.isEmpty else { return nil }
    return names.joined(separator: ".")
  }

  private func predicatePart(_ node: ExprSyntax, _ parameter: String, _ arguments: inout [String]) throws -> String {
    if let tuple = node.as(TupleExprSyntax.self), tuple.elements.count == 1, let inner = tuple.elements.first {
      return "(\(try predicatePart(inner.expression, parameter, &arguments)))"
    }
    if let prefix = node.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "!" {
      return "NOT (\(try predicatePart(prefix.expression, parameter, &arguments)))"
    }
    if let path = keyPath(node, parameter) { return "\(path) == YES" }
    if let call = node.as(FunctionCallExprSyntax.self),
      let member = call.calledExpression.as(MemberAccessExprSyntax.self),
      let base = member.base, call.arguments.count == 1, let argument = call.arguments.first?.expression
    {
      let operators = [
        "contains": "CONTAINS", "localizedStandardContains": "CONTAINS[cd]", "starts": "BEGINSWITH",
        "hasPrefix": "BEGINSWITH", "hasSuffix": "ENDSWITH",
      ]
      if let path = keyPath(base, parameter), let op = operators[member.declName.baseName.text] {
        arguments.append(try expression(argument).code)
        return "\(path) \(op) %@"
      }
      if member.declName.baseName.text == "contains", let path = keyPath(argument, parameter) {
        arguments.append(try expression(base).code)
        return "\(path) IN %@"
      }
    }
    guard let infix = node.as(InfixOperatorExprSyntax.self),
      let op = infix.operator.as(BinaryOperatorExprSyntax.self)?.operator.text
    else { throw Untranslatable("a #Predicate part the port cannot say as a format") }
    if op == "&&" || op == "||" {
      let left = try predicatePart(infix.leftOperand, parameter, &arguments)
      let right = try predicatePart(infix.rightOperand, parameter, &arguments)
      return "\(left) \(op == "&&" ? "AND" : "OR") \(right)"
    }
    let flipped = ["<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="]
    guard let mirror = flipped[op] else { throw Untranslatable("the operator \(op) in a #Predicate") }
    if let path = keyPath(infix.leftOperand, parameter) {
      if let other = keyPath(infix.rightOperand, parameter) { return "\(path) \(op) \(other)" }
      if infix.rightOperand.is(NilLiteralExprSyntax.self) { return "\(path) \(op) nil" }
      arguments.append(try expression(infix.rightOperand).code)
      return "\(path) \(op) %@"
    }
    guard let path = keyPath(infix.rightOperand, parameter) else {
      throw Untranslatable("a #Predicate comparison of no key path")
    }
    arguments.append(try expression(infix.leftOperand).code)
    return "\(path) \(mirror) %@"
  }
}
