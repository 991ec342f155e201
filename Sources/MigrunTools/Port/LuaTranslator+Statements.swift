import Foundation
import MigrunScripting
import SwiftSyntax

/// Expressions used as statements (assignments, calls), and the functions a translation starts from:
/// a class's method, a stage's handler.
extension LuaTranslator {
  func expressionStatement(_ node: ExprSyntax, line: Int) throws {
    var expression = node
    if let attempt = expression.as(TryExprSyntax.self) {
      if attempt.questionOrExclamationMark?.text == "?" {
        let lines = try captured { try expressionStatement(attempt.expression, line: line) }
        emit("pcall(function()", line: line)
        lines.forEach { self.lines.append($0) }
        emit("end)")
        return
      }
      expression = attempt.expression
    }
    if let wait = expression.as(AwaitExprSyntax.self) { expression = wait.expression }
    if let node = expression.as(IfExprSyntax.self) { return try ifStatement(node, line: line) }
    if let node = expression.as(SwitchExprSyntax.self) { return try switchStatement(node, line: line) }
    if let infix = expression.as(InfixOperatorExprSyntax.self), try assignment(infix, line: line) { return }
    if let call = expression.as(FunctionCallExprSyntax.self), try callStatement(call, line: line) { return }
    let value = try self.expression(expression)
    if value.kind == .null && !value.code.isEmpty {
      emit(value.code, line: line)
    } else if value.code.isEmpty {
      emit("-- \(expression.trimmedDescription.components(separatedBy: "\n")[0]): nothing to do in Lua", line: line)
    } else if value.isCall {
      emit(value.code, line: line)
    } else {
      emit("local _ = \(value.code)", line: line)
    }
  }

  /// Calls that are statements of their own kind: `performAndWait { … }` (its body, in place),
  /// `super`'s hooks that do nothing more, a `mutableSetValue(forKey:)` changed.
  private func callStatement(_ call: FunctionCallExprSyntax, line: Int) throws -> Bool {
    guard let member = call.calledExpression.as(MemberAccessExprSyntax.self), let base = member.base else {
      return false
    }
    let name = member.declName.baseName.text
    if ["performAndWait", "perform"].contains(name), let closure = call.trailingClosure, call.arguments.isEmpty {
      guard case .context = try expression(base).kind else { return false }
      emit("do -- \(name): the body runs here", line: line)
      block(closure.statements)
      emit("end")
      return true
    }
    if base.is(SuperExprSyntax.self), !["createDestinationInstances", "createRelationships"].contains(name) {
      _ = try superCall(name, Self.arguments(call))
      emit("-- super.\(name): Core Data's own does nothing more", line: line)
      return true
    }
    return false
  }

  /// `a = b`, `obj.key = value`, `x += 1`, `request.predicate = …`; false for no assignment.
  private func assignment(_ node: InfixOperatorExprSyntax, line: Int) throws -> Bool {
    let compound = node.operator.as(BinaryOperatorExprSyntax.self)?.operator.text
    guard node.operator.is(AssignmentExprSyntax.self) || ["+=", "-=", "*=", "/="].contains(compound ?? "") else {
      return false
    }
    if let member = node.leftOperand.as(MemberAccessExprSyntax.self),
      let name = member.base?.as(DeclReferenceExprSyntax.self)?.baseName.text,
      let binding = lookup(name), case .request = binding.kind
    {
      try requestAssignment(name, member.declName.baseName.text, node.rightOperand, line: line)
      return true
    }
    if node.leftOperand.is(DiscardAssignmentExprSyntax.self) {
      emit("local _ = \(try expression(node.rightOperand).code)", line: line)
      return true
    }
    let target = try expression(node.leftOperand)
    guard target.kind.isValue || target.kind == .unknown else {
      throw Untranslatable("an assignment to \(Self.describe(target.kind))")
    }
    var value = try expression(node.rightOperand)
    if let compound {
      let op = String(compound.dropLast())
      let lua = op == "+" && (target.kind == .string || value.kind == .string) ? ".." : op
      value = LuaExpr(code: "\(target.operand) \(lua) \(value.operand)", kind: target.kind, isAtom: false)
    }
    if value.code == "nil", node.leftOperand.is(MemberAccessExprSyntax.self) { value.code = "NULL" }
    guard value.kind.isValue || value.kind == .unknown else {
      if let name = node.leftOperand.as(DeclReferenceExprSyntax.self)?.baseName.text, lookup(name) != nil {
        rebind(name, value.kind)
        emit("-- \(name): \(Self.describe(value.kind)) (used below)", line: line)
        return true
      }
      throw Untranslatable("an assignment of \(Self.describe(value.kind))")
    }
    emit("\(target.code) = \(value.code)", line: line)
    if let name = node.leftOperand.as(DeclReferenceExprSyntax.self)?.baseName.text, target.kind == .unknown {
      rebind(name, value.kind)
    }
    return true
  }

  // MARK: Functions

  /// A method of a policy class as `function Module.name(params)`: Core Data's hooks take `src`/`dst`
  /// and `m`; the others take their Swift parameters.
  func method(_ node: FunctionDeclSyntax, luaName: String, hook: PolicyHook?, selfKind: LuaKind? = nil) -> [String] {
    lines = []
    depth = 0
    var header = "local function \(luaName)"
    var isStage = true
    if case .policy(let module, _, _) = role {
      header = "function \(module).\(luaName)"
      isStage = false
    }
    let parameters = node.signature.parameterClause.parameters.map { ($0.secondName ?? $0.firstName).text }
    var luaParameters: [String] = []
    if let hook {
      voidReturn = hook.returnsFalse ? "return false" : "return"
      for (index, parameter) in parameters.enumerated() where index < hook.parameters.count {
        let (lua, kind) = hook.parameters[index]
        _ = try? bind(parameter, kind, lua: lua)
      }
      luaParameters = hook.luaParameters
      logger = "m"
    } else {
      if let selfKind {
        _ = try? bind("self", selfKind, lua: "self_")
        luaParameters.append("self_")
      }
      for (parameter, type) in zip(parameters, node.signature.parameterClause.parameters.map(\.type)) {
        let isManager = type.trimmedDescription.hasPrefix("NSMigrationManager")
        // A stage's context passed on is `ctx` in Lua, as the handler's own.
        let isStageContext = isStage && ["ModelContext", "NSManagedObjectContext"].contains(type.trimmedDescription)
        let lua = isManager ? "m" : isStageContext ? "ctx" : (try? self.luaName(parameter)) ?? "_"
        if isStageContext { logger = "ctx" }
        _ = try? bind(parameter, Self.parameterKind(type.trimmedDescription, lua: lua), lua: lua)
        luaParameters.append(lua)
      }
    }
    emit("\(header)(\(luaParameters.joined(separator: ", ")))", line: reader.line(node))
    guard let body = node.body else {
      placeholder(node, reason: "a method without a body")
      return lines
    }
    if node.signature.returnClause == nil || !implicitReturn(body.statements) { block(body.statements) }
    if let hook, hook.returnsFalse, !Self.endsInReturn(body.statements) {
      emit("  return false -- the Swift override did the whole of it: no default after")
    }
    emit("end")
    return lines
  }

  /// A helper's parameter: a context or manager passed on is the manager `m` in Lua.
  static func parameterKind(_ type: String, lua: String) -> LuaKind {
    switch type.trimmingCharacters(in: CharacterSet(charactersIn: "?!")) {
    case "NSManagedObjectContext", "ModelContext": return .context(receiver: lua, source: false)
    case "NSMigrationManager": return .manager
    default: return kind(ofType: type)
    }
  }

  static func endsInReturn(_ items: CodeBlockItemListSyntax) -> Bool {
    guard let last = items.last?.item else { return false }
    if case .stmt(let statement) = last { return statement.is(ReturnStmtSyntax.self) }
    return false
  }

  /// A stage's handler as `name = function(ctx) … end,`; a handler given as no closure is a placeholder.
  func stageHandler(_ name: String, _ expression: ExprSyntax) -> String {
    lines = []
    depth = 1
    logger = "ctx"
    emit("\(name) = function(ctx)", line: reader.line(expression))
    guard let closure = expression.as(ClosureExprSyntax.self) else {
      depth += 1
      placeholder(expression, reason: "the handler is no closure written here: port the function it names")
      depth -= 1
      emit("end,")
      return lines.joined(separator: "\n")
    }
    let parameters = Self.parameterNames(closure)
    if case .stage(let swiftData) = role, let first = parameters.first {
      let kind: LuaKind = swiftData ? .context(receiver: "ctx", source: false) : .stageManager
      _ = try? bind(first, kind, lua: swiftData ? "ctx" : "")
    }
    block(closure.statements)
    emit("end,")
    return lines.joined(separator: "\n")
  }
}

/// One of Core Data's seven hooks of `NSEntityMigrationPolicy`, as a Lua mapping file names it.
struct PolicyHook {
  var lua: String
  var luaParameters: [String]
  /// The Swift parameters' Lua names and kinds, in order.
  var parameters: [(String, LuaKind)]
  /// Per-object hooks: the override does all (Lua's `return false`: no default after it).
  var returnsFalse: Bool

  static let mapping: (String, LuaKind) = ("m.mapping", .mapping)
  static let manager: (String, LuaKind) = ("m", .manager)

  /// The hook a Swift method overrides, by its signature: `createDestinationInstances(forSource:in:manager:)`.
  static let bySignature: [String: PolicyHook] = [
    "createDestinationInstances(forSource:in:manager:)": PolicyHook(
      lua: "createDestinationInstances", luaParameters: ["src", "m"], parameters: [("src", .object), mapping, manager],
      returnsFalse: true),
    "createRelationships(forDestination:in:manager:)": PolicyHook(
      lua: "createRelationships", luaParameters: ["dst", "m"], parameters: [("dst", .object), mapping, manager],
      returnsFalse: true),
    "begin(_:with:)": PolicyHook(
      lua: "begin", luaParameters: ["m"], parameters: [mapping, manager], returnsFalse: false),
    "endInstanceCreation(forMapping:manager:)": PolicyHook(
      lua: "endInstanceCreation", luaParameters: ["m"], parameters: [mapping, manager], returnsFalse: false),
    "endRelationshipCreation(forMapping:manager:)": PolicyHook(
      lua: "endRelationshipCreation", luaParameters: ["m"], parameters: [mapping, manager], returnsFalse: false),
    "performCustomValidation(forMapping:manager:)": PolicyHook(
      lua: "performCustomValidation", luaParameters: ["m"], parameters: [mapping, manager], returnsFalse: false),
    "end(_:manager:)": PolicyHook(
      lua: "finish", luaParameters: ["m"], parameters: [mapping, manager], returnsFalse: false),
  ]
}
