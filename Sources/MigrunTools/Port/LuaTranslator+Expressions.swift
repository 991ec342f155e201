import Foundation
import MigrunScripting
import SwiftSyntax

/// Expressions: literals, names, operators, casts, closures; calls and members are in `+Calls`.
extension LuaTranslator {
  /// `inChain`: `node` is the base of a member, call, subscript or `!` whose chain was already looked
  /// at for a `?` (looking again at every link would be quadratic in a chain's length).
  func expression(_ node: ExprSyntax, type: String? = nil, inChain: Bool = false) throws -> LuaExpr {
    if let value = chainValues[node.id] { return value }
    if !inChain, let chain = try optionalChain(node) { return chain }
    if let literal = try literalExpression(node) { return literal }
    if let name = node.as(DeclReferenceExprSyntax.self) { return try reference(name) }
    if let member = node.as(MemberAccessExprSyntax.self) { return try memberAccess(member) }
    if let invocation = node.as(FunctionCallExprSyntax.self) { return try call(invocation, type: type) }
    if let infix = node.as(InfixOperatorExprSyntax.self) { return try binary(infix) }
    if let subscriptCall = node.as(SubscriptCallExprSyntax.self) { return try index(subscriptCall) }
    if let prefix = node.as(PrefixOperatorExprSyntax.self) {
      let operand = try expression(prefix.expression)
      switch prefix.operator.text {
      case "!": return LuaExpr(code: "not \(operand.operand)", kind: .boolean, isAtom: false)
      case "-": return LuaExpr(code: "-\(operand.operand)", kind: operand.kind, isAtom: false)
      default: throw Untranslatable("the prefix operator \(prefix.operator.text)")
      }
    }
    if let cast = node.as(AsExprSyntax.self) {
      var value = try expression(cast.expression)
      let kind = Self.kind(ofType: cast.type.trimmedDescription)
      if kind != .unknown, value.kind.isValue { value.kind = kind }
      return value
    }
    if let attempt = node.as(TryExprSyntax.self) {
      let value = try expression(attempt.expression, type: type)
      guard attempt.questionOrExclamationMark?.text == "?" else { return value }
      return LuaExpr(code: "swift.attempt(function() return \(value.code) end)", kind: value.kind, isCall: true)
    }
    if let wait = node.as(AwaitExprSyntax.self) { return try expression(wait.expression, type: type) }
    if let unwrap = node.as(ForceUnwrapExprSyntax.self) {
      return try expression(unwrap.expression, type: type, inChain: true)
    }
    if let ternary = node.as(TernaryExprSyntax.self) { return try conditional(ternary) }
    if let value = try compositeExpression(node, type: type) { return value }
    if node.is(SuperExprSyntax.self) { throw Untranslatable("super outside a call of Core Data's hook") }
    throw Untranslatable("a \(node.kind.syntaxNodeType) expression")
  }

  /// Parentheses, array and dictionary literals, closures, `#Predicate`, key paths; nil for another.
  func compositeExpression(_ node: ExprSyntax, type: String?) throws -> LuaExpr? {
    if let tuple = node.as(TupleExprSyntax.self), tuple.elements.count == 1, tuple.elements.first?.label == nil,
      let inner = tuple.elements.first?.expression
    {
      let value = try expression(inner, type: type)
      return LuaExpr(code: "(\(value.code))", kind: value.kind)
    }
    if let array = node.as(ArrayExprSyntax.self) {
      let elements = try array.elements.map { try expression($0.expression).code }
      return LuaExpr(code: elements.isEmpty ? "{}" : "{ \(elements.joined(separator: ", ")) }", kind: .list)
    }
    if let dictionary = node.as(DictionaryExprSyntax.self) { return try dictionaryLiteral(dictionary) }
    if let closure = node.as(ClosureExprSyntax.self) { return try function(closure) }
    if let macro = node.as(MacroExpansionExprSyntax.self), macro.macroName.text == "Predicate" {
      let (format, arguments) = try predicateMacro(macro)
      return LuaExpr(code: "", kind: .predicate(format: format, arguments: arguments))
    }
    if let keyPath = node.as(KeyPathExprSyntax.self) {
      return LuaExpr(code: LuaSource.string(Self.keyPathText(keyPath)), kind: .string)
    }
    return nil
  }

  /// `list[i]` (Lua counts from 1: `list[i + 1]`), `dictionary[key]`.
  func index(_ node: SubscriptCallExprSyntax) throws -> LuaExpr {
    guard node.arguments.count == 1, let argument = node.arguments.first, argument.label == nil else {
      throw Untranslatable("a subscript with labels or several arguments")
    }
    let base = try expression(node.calledExpression, inChain: true)
    let key = try expression(argument.expression)
    guard base.kind.isValue else { throw Untranslatable("a subscript of \(Self.describe(base.kind))") }
    let isList = base.kind == .list || (base.kind == .unknown && key.kind == .integer)
    guard isList else { return LuaExpr(code: "\(base.operand)[\(key.code)]") }
    let shifted = Int(key.code).map { String($0 + 1) } ?? "\(key.operand) + 1"
    return LuaExpr(code: "\(base.operand)[\(shifted)]")
  }

  /// `\.name`, `\Trip.owner.name` → `name`, `owner.name`.
  static func keyPathText(_ node: KeyPathExprSyntax) -> String {
    node.components.trimmedDescription.trimmingCharacters(in: CharacterSet(charactersIn: ".")).replacingOccurrences(
      of: "?", with: "")
  }

  func literalExpression(_ node: ExprSyntax) throws -> LuaExpr? {
    if let integer = node.as(IntegerLiteralExprSyntax.self) {
      let text = integer.literal.text.replacingOccurrences(of: "_", with: "")
      if text.hasPrefix("0b") || text.hasPrefix("0o") {
        guard let value = Int(text.dropFirst(2), radix: text.hasPrefix("0b") ? 2 : 8) else {
          throw Untranslatable("the number \(text)")
        }
        return LuaExpr(code: String(value), kind: .integer)
      }
      return LuaExpr(code: text, kind: .integer)
    }
    if let float = node.as(FloatLiteralExprSyntax.self) {
      return LuaExpr(code: float.literal.text.replacingOccurrences(of: "_", with: ""), kind: .number)
    }
    if let boolean = node.as(BooleanLiteralExprSyntax.self) {
      return LuaExpr(code: boolean.literal.text, kind: .boolean)
    }
    if node.is(NilLiteralExprSyntax.self) { return LuaExpr(code: "nil", kind: .null) }
    if let string = node.as(StringLiteralExprSyntax.self) { return try stringLiteral(string) }
    return nil
  }

  /// The text of a string literal without interpolation, or nil.
  static func stringValue(_ node: ExprSyntax) -> String? {
    guard let literal = node.as(StringLiteralExprSyntax.self), literal.openingQuote.text == "\"",
      literal.openingPounds == nil
    else { return nil }
    var text = ""
    for segment in literal.segments {
      guard case .stringSegment(let part) = segment else { return nil }
      guard let value = unescaped(part.content.text) else { return nil }
      text += value
    }
    return text
  }

  /// Swift's escapes (`\n`, `\t`, `\"`, `\\`, `\0`, `\u{…}`) read; nil for one it does not know.
  static func unescaped(_ text: String) -> String? {
    var out = ""
    var characters = text.makeIterator()
    while let character = characters.next() {
      guard character == "\\" else {
        out.append(character)
        continue
      }
      switch characters.next() {
      case "n": out.append("\n")
      case "t": out.append("\t")
      case "r": out.append("\r")
      case "0": out.append("\0")
      case "\"": out.append("\"")
      case "'": out.append("'")
      case "\\": out.append("\\")
      case "u":
        guard characters.next() == "{" else { return nil }
        var hex = ""
        while let digit = characters.next(), digit != "}" { hex.append(digit) }
        guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else { return nil }
        out.unicodeScalars.append(scalar)
      default: return nil
      }
    }
    return out
  }

  func stringLiteral(_ node: StringLiteralExprSyntax) throws -> LuaExpr {
    guard node.openingQuote.text == "\"", node.openingPounds == nil else {
      throw Untranslatable("a multi-line or raw string literal")
    }
    var parts: [String] = []
    for segment in node.segments {
      switch segment {
      case .stringSegment(let part):
        guard let text = Self.unescaped(part.content.text) else { throw Untranslatable("a string escape") }
        if !text.isEmpty { parts.append(LuaSource.string(text)) }
      case .expressionSegment(let interpolation):
        guard interpolation.expressions.count == 1, let inner = interpolation.expressions.first else {
          throw Untranslatable("an interpolation with options")
        }
        let value = try expression(inner.expression)
        parts.append(value.kind == .string ? value.operand : "swift.str(\(value.code))")
      }
    }
    if parts.isEmpty { return LuaExpr(code: "\"\"", kind: .string) }
    return LuaExpr(code: parts.joined(separator: " .. "), kind: .string, isAtom: parts.count == 1)
  }

  func dictionaryLiteral(_ node: DictionaryExprSyntax) throws -> LuaExpr {
    guard case .elements(let elements) = node.content else { return LuaExpr(code: "{}", kind: .dictionary) }
    let fields = try elements.map { element -> String in
      let value = try expression(element.value).code
      if let key = Self.stringValue(element.key) { return "\(LuaSource.key(key)) = \(value)" }
      return "[\(try expression(element.key).code)] = \(value)"
    }
    return LuaExpr(code: "{ \(fields.joined(separator: ", ")) }", kind: .dictionary)
  }

  func reference(_ node: DeclReferenceExprSyntax) throws -> LuaExpr {
    let name = node.baseName.text
    if let binding = lookup(name) {
      return LuaExpr(code: binding.lua, kind: binding.kind)
    }
    if case .policy(let module, let methods, let properties) = role {
      if name == "self" { return LuaExpr(code: module, kind: .module) }
      if properties.contains(name) { return LuaExpr(code: "\(module).\(name)", kind: .unknown) }
      if let method = methods[name] { return LuaExpr(code: "\(module).\(method)", kind: .function) }
    }
    throw Untranslatable("\(name) is not declared in the code translated (a global, or a member of another type)")
  }

  func conditional(_ node: TernaryExprSyntax) throws -> LuaExpr {
    let test = try expression(node.condition)
    let yes = try expression(node.thenExpression)
    let no = try expression(node.elseExpression)
    let kind = yes.kind == no.kind ? yes.kind : .unknown
    if yes.kind.isTruthy {
      return LuaExpr(code: "\(test.operand) and \(yes.operand) or \(no.operand)", kind: kind, isAtom: false)
    }
    return LuaExpr(
      code: "(function() if \(test.code) then return \(yes.code) end return \(no.code) end)()", kind: kind, isCall: true
    )
  }

  func binary(_ node: InfixOperatorExprSyntax) throws -> LuaExpr {
    guard let op = node.operator.as(BinaryOperatorExprSyntax.self)?.operator.text else {
      throw Untranslatable("an assignment inside an expression")
    }
    let left = try expression(node.leftOperand)
    if op == "??" {
      let right = try expression(node.rightOperand)
      let kind = left.kind == .unknown || left.kind == .null ? right.kind : left.kind
      return LuaExpr(code: "swift.coalesce(\(left.code), \(right.code))", kind: kind, isCall: true)
    }
    if op == "==" || op == "!=", node.rightOperand.is(NilLiteralExprSyntax.self) {
      let code =
        op == "=="
        ? "(\(left.operand) == nil or \(left.operand) == NULL)" : "(\(left.operand) ~= nil and \(left.operand) ~= NULL)"
      return LuaExpr(code: code, kind: .boolean)
    }
    let right = try expression(node.rightOperand)
    let numeric: LuaKind = left.kind == .integer && right.kind == .integer ? .integer : .number
    func infix(_ lua: String, _ kind: LuaKind) -> LuaExpr {
      LuaExpr(code: "\(left.operand) \(lua) \(right.operand)", kind: kind, isAtom: false)
    }
    switch op {
    case "==", "===": return infix("==", .boolean)
    case "!=", "!==": return infix("~=", .boolean)
    case "<", "<=", ">", ">=": return infix(op, .boolean)
    case "&&": return infix("and", .boolean)
    case "||": return infix("or", .boolean)
    case "+" where left.kind == .string || right.kind == .string: return infix("..", .string)
    case "+" where left.kind == .list || right.kind == .list:
      return LuaExpr(code: "swift.concat(\(left.code), \(right.code))", kind: .list, isCall: true)
    case "+" where left.kind == .date || right.kind == .date: return infix("+", .date)
    case "+" where left.kind == .unknown && right.kind == .unknown:
      return LuaExpr(code: "swift.plus(\(left.code), \(right.code))", kind: .unknown, isCall: true)
    case "+", "-", "*": return infix(op, left.kind == .date && op == "-" && right.kind == .date ? .number : numeric)
    case "/" where numeric == .integer:
      return LuaExpr(code: "swift.idiv(\(left.code), \(right.code))", kind: .integer, isCall: true)
    case "/": return infix("/", .number)
    case "%": return LuaExpr(code: "math.fmod(\(left.code), \(right.code))", kind: numeric, isCall: true)
    case "&", "|", "<<", ">>": return infix(op, .integer)
    case "^": return infix("~", .integer)
    default: throw Untranslatable("the operator \(op)")
    }
  }

  /// A closure as a Lua function: its parameters (or `$0`, `$1`, …), its body; a body of one
  /// expression returns it.
  func function(_ node: ClosureExprSyntax) throws -> LuaExpr {
    scopes.append([:])
    defer { scopes.removeLast() }
    var luaNames: [String] = []
    for name in Self.parameterNames(node) {
      let lua = name == "_" ? "_" : name.hasPrefix("$") ? "a\(name.dropFirst())" : try luaName(name)
      if name != "_" { try bind(name, .unknown, lua: lua) }
      luaNames.append(lua)
    }
    let body = closureBody(node)
    let indent = String(repeating: "  ", count: depth)
    let code = (["function(\(luaNames.joined(separator: ", ")))"] + body + [indent + "end"]).joined(separator: "\n")
    return LuaExpr(code: code, kind: .function)
  }

  /// A closure's parameters as written, or `$0`, `$1`, … as far as its body uses them.
  static func parameterNames(_ node: ClosureExprSyntax) -> [String] {
    switch node.signature?.parameterClause {
    case .simpleInput(let list)?: return list.map(\.name.text)
    case .parameterClause(let clause)?: return clause.parameters.map { ($0.secondName ?? $0.firstName).text }
    case nil:
      let used = node.statements.tokens(viewMode: .sourceAccurate).compactMap { token -> Int? in
        if case .dollarIdentifier(let text) = token.tokenKind { return Int(text.dropFirst()) }
        return nil
      }
      return (0..<((used.max() ?? -1) + 1)).map { "$\($0)" }
    }
  }

  /// A closure's body as Lua lines, one level deeper: a lone expression is returned.
  func closureBody(_ node: ClosureExprSyntax) -> [String] {
    let savedReturn = voidReturn
    let savedTargets = breakTargets
    voidReturn = "return"
    breakTargets = []
    defer {
      voidReturn = savedReturn
      breakTargets = savedTargets
    }
    return captured {
      depth -= 1
      if !implicitReturn(node.statements) { block(node.statements) }
      depth += 1
    }
  }

  /// A body of one expression (a closure's, a method's that returns a value) as `return` it, one
  /// level deeper; false for another body.
  func implicitReturn(_ items: CodeBlockItemListSyntax) -> Bool {
    guard items.count == 1, let only = items.first, case .expr(let value) = only.item, !value.is(IfExprSyntax.self),
      !value.is(SwitchExprSyntax.self), !Self.isStatementCall(value)
    else { return false }
    depth += 1
    let mark = (lines.count, counts)
    counts.statements += 1
    do {
      emit("return \(try expression(value).code)", line: reader.line(only))
      counts.translated += 1
    } catch {
      lines.removeSubrange(mark.0...)
      counts = mark.1
      placeholder(only, reason: (error as? Untranslatable)?.reason ?? "\(error)")
    }
    depth -= 1
    return true
  }

  /// Calls that are statements in Lua (`setValue(_:forKey:)`, `append`), not values to return.
  static func isStatementCall(_ node: ExprSyntax) -> Bool {
    var expression = node
    if let attempt = expression.as(TryExprSyntax.self) { expression = attempt.expression }
    if let infix = expression.as(InfixOperatorExprSyntax.self) {
      // An assignment, plain or compound (`a = b`, `n += 1`): a statement, not a value to return.
      return infix.operator.is(AssignmentExprSyntax.self)
        || ["+=", "-=", "*=", "/="].contains(infix.operator.as(BinaryOperatorExprSyntax.self)?.operator.text ?? "")
    }
    guard let call = expression.as(FunctionCallExprSyntax.self),
      let member = call.calledExpression.as(MemberAccessExprSyntax.self)
    else { return false }
    return [
      "setValue", "setPrimitiveValue", "append", "insert", "remove", "add", "delete", "save", "associate",
      "removeAll", "forEach",
    ].contains(member.declName.baseName.text)
  }

  // MARK: Optional chains

  /// The `x?`s on the chain of postfix expressions `node` ends, innermost first.
  func optionalChains(_ node: ExprSyntax) -> [OptionalChainingExprSyntax] {
    var current: ExprSyntax? = node
    var found: [OptionalChainingExprSyntax] = []
    while let expression = current, chainValues[expression.id] == nil {
      if let chain = expression.as(OptionalChainingExprSyntax.self) {
        if chain.id != node.id { found.append(chain) }
        current = chain.expression
      } else if let member = expression.as(MemberAccessExprSyntax.self) {
        current = member.base
      } else if let call = expression.as(FunctionCallExprSyntax.self) {
        current = call.calledExpression
      } else if let subscriptCall = expression.as(SubscriptCallExprSyntax.self) {
        current = subscriptCall.calledExpression
      } else if let unwrap = expression.as(ForceUnwrapExprSyntax.self) {
        current = unwrap.expression
      } else {
        current = nil
      }
    }
    return found.reversed()
  }

  /// `a?.b?.c` → `swift.opt(a, function(_v1_) return swift.opt(_v1_.b, function(_v2_) return _v2_.c end) end)`:
  /// nil as soon as a link is nil or NULL. Each part of the chain is translated once, with the `x?`
  /// below it standing for its variable; nil when the chain has no `?`.
  func optionalChain(_ node: ExprSyntax) throws -> LuaExpr? {
    let chains = optionalChains(node)
    guard let first = chains.first else { return nil }
    defer { for chain in chains { chainValues[chain.id] = nil } }
    var value = try expression(first.expression, inChain: true)
    var opened: [(base: String, name: String)] = []
    for (index, chain) in chains.enumerated() {
      labelCount += 1
      let name = "_v\(labelCount)_"
      chainValues[chain.id] = LuaExpr(code: name, kind: value.kind)
      opened.append((value.code, name))
      value = try expression(index + 1 < chains.count ? chains[index + 1].expression : node, inChain: true)
    }
    var code = value.code
    for (base, name) in opened.reversed() { code = "swift.opt(\(base), function(\(name)) return \(code) end)" }
    return LuaExpr(code: code, kind: value.kind, isCall: true)
  }
}
