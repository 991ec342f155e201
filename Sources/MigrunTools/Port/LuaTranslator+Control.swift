import Foundation
import MigrunScripting
import SwiftSyntax

/// Control flow: `guard`, `if`, `for … in`, `while`, `switch`, `do`/`catch`.
extension LuaTranslator {
  /// A condition list's Lua: the locals its optional bindings declare (before the test), and the test.
  struct Conditions {
    var setup: [String] = []
    var parts: [String] = []
    /// The single binding tested, when that is all there is (its negation then reads plainly).
    var onlyBinding: String?

    /// The one expression tested, as written (no parentheses needed around it alone).
    var single: String?

    var test: String {
      if parts.count == 1, let single { return single }
      return parts.isEmpty ? "true" : parts.joined(separator: " and ")
    }
    var negated: String {
      if parts.count == 1, let name = onlyBinding { return "\(name) == nil or \(name) == NULL" }
      return "not (\(test))"
    }
  }

  func conditions(_ list: ConditionElementListSyntax) throws -> Conditions {
    var result = Conditions()
    var bindings = 0
    for element in list {
      switch element.condition {
      case .expression(let test):
        let value = try expression(test)
        result.parts.append(value.operand)
        result.single = value.code
      case .optionalBinding(let binding):
        guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else {
          throw Untranslatable("an optional binding to a pattern")
        }
        let value: LuaExpr
        if let initializer = binding.initializer?.value {
          value = try expression(initializer, type: binding.typeAnnotation?.type.trimmedDescription)
        } else if let existing = lookup(name) {
          value = LuaExpr(code: existing.lua, kind: existing.kind)
        } else {
          value = try expression(ExprSyntax(DeclReferenceExprSyntax(baseName: .identifier(name))))
        }
        guard value.kind.isValue else {
          try bind(name, value.kind, lua: value.code)
          continue
        }
        let lua = try luaName(name)
        if result.parts.count > 2 {
          // Held in one local, so that each later binding's guard stays short (not the whole list again).
          labelCount += 1
          result.setup.append("local _ok\(labelCount)_ = \(result.test)")
          result.parts = ["_ok\(labelCount)_"]
          result.single = nil
        }
        let guarded = result.parts.isEmpty ? value.code : "(\(result.test)) and \(value.operand) or nil"
        result.setup.append("local \(lua) = \(guarded)")
        try bind(name, value.kind == .null ? .unknown : value.kind, lua: lua)
        result.parts.append("\(lua) ~= nil and \(lua) ~= NULL")
        result.onlyBinding = lua
        bindings += 1
      default:
        throw Untranslatable("a condition of the form \(element.condition.kind.syntaxNodeType)")
      }
    }
    if bindings != 1 || result.parts.count != 1 { result.onlyBinding = nil }
    return result
  }

  func guardStatement(_ node: GuardStmtSyntax, line: Int) throws {
    let test = try conditions(node.conditions)
    if test.parts.isEmpty {
      // Only bindings of what Lua always has (a context, the manager): the else branch never runs.
      let body = Self.statementCount(Syntax(node.body))
      counts.statements += body
      counts.translated += body
      emit("-- guard: \(node.conditions.trimmedDescription) is always there in Lua", line: line)
      return
    }
    for (index, setup) in test.setup.enumerated() { emit(setup, line: index == 0 ? line : nil) }
    emit("if \(test.negated) then", line: test.setup.isEmpty ? line : nil)
    block(node.body.statements)
    emit("end")
  }

  func ifStatement(_ node: IfExprSyntax, line: Int) throws {
    let test = try conditions(node.conditions)
    for (index, setup) in test.setup.enumerated() { emit(setup, line: index == 0 ? line : nil) }
    emit("if \(test.test) then", line: test.setup.isEmpty ? line : nil)
    try ifRest(node)
    emit("end")
  }

  private func ifRest(_ node: IfExprSyntax) throws {
    block(node.body.statements)
    switch node.elseBody {
    case .ifExpr(let next)?:
      let test = try conditions(next.conditions)
      if test.setup.isEmpty {
        emit("elseif \(test.test) then", line: reader.line(next))
        try ifRest(next)
      } else {
        emit("else")
        depth += 1
        try ifStatement(next, line: reader.line(next))
        depth -= 1
      }
    case .codeBlock(let body)?:
      emit("else")
      block(body.statements)
    case nil:
      break
    }
  }

  /// A loop's body, with the label a `continue` in it jumps to.
  func loopBody(_ items: CodeBlockItemListSyntax, closing: String = "end", prefix: [String] = []) {
    labelCount += 1
    let label = labelCount == 1 ? "continue" : "continue\(labelCount)"
    breakTargets.append(label)
    depth += 1
    for text in prefix { emit(text) }
    depth -= 1
    block(items) {
      if self.usedLabels.contains(label) { self.emit("::\(label)::") }
    }
    breakTargets.removeLast()
    emit(closing)
  }

  func forStatement(_ node: ForStmtSyntax, line: Int) throws {
    guard node.tryKeyword == nil, node.awaitKeyword == nil, node.caseKeyword == nil else {
      throw Untranslatable("a for try/await/case loop")
    }
    var prefix: [String] = []
    scopes.append([:])
    defer { scopes.removeLast() }
    if let range = node.sequence.as(InfixOperatorExprSyntax.self),
      let op = range.operator.as(BinaryOperatorExprSyntax.self)?.operator.text, op == "..<" || op == "..."
    {
      let name = try loopName(node.pattern)
      let low = try expression(range.leftOperand)
      let high = try expression(range.rightOperand)
      emit("for \(name) = \(low.code), \(op == "..<" ? "\(high.operand) - 1" : high.code) do", line: line)
    } else if let tuple = node.pattern.as(TuplePatternSyntax.self), tuple.elements.count == 2 {
      let names = try tuple.elements.map { try loopName($0.pattern) }
      if let call = node.sequence.as(FunctionCallExprSyntax.self), call.arguments.isEmpty,
        let member = call.calledExpression.as(MemberAccessExprSyntax.self),
        member.declName.baseName.text == "enumerated",
        let base = member.base
      {
        let list = try expression(base)
        emit("for \(names[0])_, \(names[1]) in ipairs(\(list.code)) do", line: line)
        prefix.append("local \(names[0]) = \(names[0])_ - 1")
      } else {
        emit("for \(names[0]), \(names[1]) in pairs(\(try expression(node.sequence).code)) do", line: line)
      }
    } else {
      let name = try loopName(node.pattern)
      let sequence = try expression(node.sequence)
      switch sequence.kind {
      case .set: emit("for \(name) in pairs(\(sequence.code)) do", line: line)
      case .dictionary: throw Untranslatable("a loop over a dictionary's pairs bound to one name")
      default: emit("for _, \(name) in ipairs(\(sequence.code)) do", line: line)
      }
    }
    if let condition = node.whereClause?.condition {
      let test = try expression(condition)
      prefix.append("if not (\(test.code)) then goto continue\(labelCount + 1 == 1 ? "" : "\(labelCount + 1)") end")
      usedLabels.insert(labelCount + 1 == 1 ? "continue" : "continue\(labelCount + 1)")
    }
    loopBody(node.body.statements, prefix: prefix)
  }

  private func loopName(_ pattern: PatternSyntax) throws -> String {
    if pattern.is(WildcardPatternSyntax.self) { return "_" }
    guard let name = pattern.as(IdentifierPatternSyntax.self)?.identifier.text else {
      throw Untranslatable("a loop over a pattern")
    }
    return try bind(name, .unknown)
  }

  /// `do { … } catch { … }`: the body in `pcall`, the first catch-all clause on failure (`error` is
  /// the Lua error).
  func doStatement(_ node: DoStmtSyntax, line: Int) throws {
    let words = Set(node.body.tokens(viewMode: .sourceAccurate).map(\.text))
    guard words.isDisjoint(with: ["return", "break", "continue"]) else {
      throw Untranslatable("return, break or continue inside do { } (a Lua function runs the body)")
    }
    guard !node.catchClauses.isEmpty else {
      emit("do", line: line)
      block(node.body.statements)
      emit("end")
      return
    }
    guard let clause = node.catchClauses.first(where: { $0.catchItems.isEmpty }) else {
      throw Untranslatable("catch clauses with patterns")
    }
    emit("local ok_, err_ = pcall(function()", line: line)
    block(node.body.statements)
    emit("end)")
    emit("if not ok_ then")
    scopes.append([:])
    try bind("error", .string, lua: "err_")
    block(clause.body.statements)
    scopes.removeLast()
    emit("end")
  }

  func switchStatement(_ node: SwitchExprSyntax, line: Int) throws {
    let subject = try expression(node.subject)
    var name = subject.code
    if !LuaSource.isIdentifier(subject.code) {
      name = "subject_"
      emit("local subject_ = \(subject.code)", line: line)
    }
    var first = true
    breakTargets.append(nil)
    defer { breakTargets.removeLast() }
    for element in node.cases {
      guard case .switchCase(let switchCase) = element else { throw Untranslatable("#if inside a switch") }
      switch switchCase.label {
      case .default:
        emit(first ? "do" : "else", line: first ? line : nil)
      case .case(let label):
        let tests = try label.caseItems.map { item -> String in
          guard item.whereClause == nil, let pattern = item.pattern.as(ExpressionPatternSyntax.self),
            !pattern.expression.is(MemberAccessExprSyntax.self)
              || pattern.expression.as(MemberAccessExprSyntax.self)?.base != nil
          else { throw Untranslatable("a case pattern other than a value") }
          return "\(name) == \(try expression(pattern.expression).operand)"
        }
        emit(
          "\(first ? "if" : "elseif") \(tests.joined(separator: " or ")) then", line: first ? line : reader.line(label))
      }
      first = false
      block(switchCase.statements)
    }
    emit("end")
  }
}
