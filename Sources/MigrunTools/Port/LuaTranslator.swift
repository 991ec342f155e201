import Foundation
import MigrunScripting
import SwiftSyntax

/// What the translation knows of a Lua value: enough to pick the Lua for a Swift operation (`+` on
/// strings is `..`, `count` of a list is `#`), and the Swift objects that are no Lua value at all
/// (the migration manager, a fetch request being built).
indirect enum LuaKind: Equatable {
  case unknown, string, integer, number, boolean, date, bytes, object, list, set, dictionary, null, function
  /// The migration manager (`m`), its entity mapping (`m.mapping`), `self` (the module's table).
  case manager, mapping, module
  /// A managed object context: the manager's destination or source context (`m`), a stage's (`ctx`).
  case context(receiver: String, source: Bool)
  /// A staged migration manager (`NSStagedMigrationManager`) and its container, in a stage handler.
  case stageManager, container
  case request(FetchRequest)
  /// `NSBatchDeleteRequest(fetchRequest:)`: the objects a context's `execute` deletes.
  case batchDelete(FetchRequest)
  case predicate(format: String, arguments: [String])
  case sort([String])
  /// `obj.entity` (its `name` is `obj:entity()`), `NSEntityDescription.entity(forEntityName:in:)`.
  case entityOf(String), entityNamed(String)
  /// `obj.mutableSetValue(forKey:)`: the object and the key.
  case mutableSet(object: String, key: String)
  case isoFormatter, jsonDecoder, jsonEncoder

  /// Whether a Lua value exists for it (the others are the translation's own bookkeeping).
  var isValue: Bool {
    switch self {
    case .manager, .mapping, .module, .context, .stageManager, .container, .request, .batchDelete, .predicate, .sort,
      .entityOf,
      .entityNamed, .mutableSet, .isoFormatter, .jsonDecoder, .jsonEncoder:
      return false
    default: return true
    }
  }

  /// Never `nil` or `false` in Lua, so `c and a or b` picks `a` whenever `c` holds.
  var isTruthy: Bool { [.string, .integer, .number, .date, .bytes, .object, .list, .set, .dictionary].contains(self) }
}

/// A fetch request as the Swift builds it, written as one `m:fetch` / `ctx:fetch` where it is run.
struct FetchRequest: Equatable {
  var entity: String
  var predicate: String?
  var arguments: [String] = []
  var sort: [String] = []
  var limit: String?
}

/// A Lua expression and what it is.
struct LuaExpr {
  var code: String
  var kind: LuaKind = .unknown
  /// A name, call, index, literal or parenthesized expression: usable as an operand as it is.
  var isAtom = true
  /// A function call: usable as a statement.
  var isCall = false

  /// A Lua statement the Swift wrote as a call (`obj.name = v` for `setValue`): no value to use.
  var isStatement: Bool { kind == .null && code != "nil" && !code.isEmpty }

  /// As an operand of a binary operator or a method call.
  var operand: String { isAtom ? code : "(\(code))" }
}

/// Why a Swift statement was not translated (it becomes a failing placeholder).
struct Untranslatable: Error {
  var reason: String
  init(_ reason: String) { self.reason = reason }
}

/// Translates Swift statements and expressions to Lua, one function body at a time, counting
/// statements and writing each one's Swift line beside its Lua.
final class LuaTranslator {
  enum Role {
    /// A policy class's methods: the module's table, its methods (Swift base name → Lua name) and
    /// stored properties.
    case policy(module: String, methods: [String: String], properties: Set<String>)
    /// A stage handler: SwiftData's (`context`) or Core Data's (`manager, stage`).
    case stage(swiftData: Bool)
  }

  struct Binding {
    var lua: String
    var kind: LuaKind
  }

  let reader: PortReader
  let role: Role
  var counts = PortCounts()
  var lines: [String] = []
  var depth = 0
  var scopes: [[String: Binding]] = [[:]]
  /// What a bare `return` becomes: `return false` in Core Data's per-object hooks (the Swift override
  /// replaced the default), plain `return` elsewhere.
  var voidReturn = "return"
  /// Per enclosing loop or switch: its `continue` label when a `continue` used it (nil: a switch).
  var breakTargets: [String?] = []
  var usedLabels: Set<String> = []
  var labelCount = 0
  /// Functions declared outside the class that its methods may call (`migrun port` ports those called).
  var helpers: HelperFunctions?
  /// The `x?` of optional chains being translated: what each stands for (`v1`).
  var chainValues: [SyntaxIdentifier: LuaExpr] = [:]
  /// The Lua name of the function's manager (`m`) or context (`ctx`), for `print` and inserts.
  var logger: String?

  init(reader: PortReader, role: Role) {
    self.reader = reader
    self.role = role
  }

  var file: String { reader.file }

  // MARK: Emitting

  func emit(_ code: String, line: Int? = nil) {
    let indent = String(repeating: "  ", count: depth)
    var parts = code.components(separatedBy: "\n")
    let first = parts.removeFirst()
    let safe = first.hasPrefix("(") ? ";" + first : first
    lines.append(indent + safe + (line.map { "  -- \(file):\($0)" } ?? ""))
    lines += parts
  }

  /// Runs `body` with the lines it emits kept apart and returned, one level deeper.
  func captured(_ body: () throws -> Void) rethrows -> [String] {
    let saved = lines
    lines = []
    depth += 1
    defer {
      depth -= 1
      lines = saved
    }
    try body()
    return lines
  }

  // MARK: Names

  static let reserved: Set<String> = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in", "local", "nil",
    "not", "or", "repeat", "return", "then", "true", "until", "while", "NULL", "json", "date", "uuid", "plist", "hex",
    "base64", "string", "table", "math", "utf8", "os", "coroutine", "swift", "m", "src", "dst", "ctx", "error",
    "assert", "type", "tostring", "tonumber", "pairs", "ipairs", "next", "select", "print", "require", "pcall",
    "rawget", "rawset", "setmetatable", "getmetatable", "test", "expect", "migrate", "self", "_ENV", "_G",
  ]

  /// A Lua local for a Swift name (Lua's words and migrun's globals get a `_`).
  func luaName(_ swift: String) throws -> String {
    let name = swift.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
    guard LuaSource.isIdentifier(name) else { throw Untranslatable("the name \(swift) is no Lua name") }
    if case .policy(let module, _, _) = role, name == module { return name + "_" }
    return Self.reserved.contains(name) ? name + "_" : name
  }

  @discardableResult
  func bind(_ swift: String, _ kind: LuaKind, lua: String? = nil) throws -> String {
    let name = try lua ?? luaName(swift)
    scopes[scopes.count - 1][swift] = Binding(lua: name, kind: kind)
    return name
  }

  func lookup(_ swift: String) -> Binding? {
    for scope in scopes.reversed() {
      if let binding = scope[swift] { return binding }
    }
    return nil
  }

  func rebind(_ swift: String, _ kind: LuaKind) {
    for index in scopes.indices.reversed() where scopes[index][swift] != nil {
      scopes[index][swift]?.kind = kind
      return
    }
  }

  // MARK: Statements

  /// The statements of a block, one level deeper, in a scope of their own.
  func block(_ items: CodeBlockItemListSyntax, after: (() -> Void)? = nil) {
    scopes.append([:])
    depth += 1
    for (index, item) in items.enumerated() { statement(item, isLast: index == items.count - 1) }
    after?()
    depth -= 1
    scopes.removeLast()
  }

  /// One statement: its Lua, or a placeholder that fails, naming the line and why.
  func statement(_ item: CodeBlockItemSyntax, isLast: Bool = true) {
    let mark = (lines.count, counts, scopes, usedLabels)
    counts.statements += 1
    do {
      try translate(item.item, line: reader.line(item), isLast: isLast)
      counts.translated += 1
    } catch {
      lines.removeSubrange(mark.0...)
      counts = mark.1
      scopes = mark.2
      usedLabels = mark.3
      let reason = (error as? Untranslatable)?.reason ?? "\(error)"
      placeholder(item, reason: reason)
    }
  }

  /// A failing `error(…)` in place of `node`, counting every statement inside it as left.
  /// `assignTo`: a module's field the placeholder is the value of (`swift.placeholder(…)`, which fails
  /// where it is used, so that the module still loads for `plan` and `review`).
  func placeholder(_ node: some SyntaxProtocol, reason: String, assignTo field: String? = nil) {
    let spot = reader.spot(node)
    let nested = Self.statementCount(Syntax(node))
    counts.statements += max(nested, 1)
    counts.placeholders.append(PortPlaceholder(spot: spot, reason: reason))
    var swift = node.trimmedDescription.components(separatedBy: "\n").first ?? ""
    if swift.count > 60 { swift = String(swift.prefix(57)) + "..." }
    let message = "migrun port: \(spot): not translated (\(reason)): \(swift)"
    let call = field.map { "\($0) = swift.placeholder" } ?? "error"
    emit("\(call)(\(LuaSource.string(message)))", line: reader.line(node))
  }

  /// The statements a node holds, itself included when it is one.
  static func statementCount(_ node: Syntax) -> Int {
    final class Counter: SyntaxVisitor {
      var count = 0
      override func visit(_ node: CodeBlockItemSyntax) -> SyntaxVisitorContinueKind {
        count += 1
        return .visitChildren
      }
    }
    let counter = Counter(viewMode: .sourceAccurate)
    counter.walk(node)
    return node.is(CodeBlockItemSyntax.self) ? counter.count : max(counter.count, 1)
  }

  func translate(_ item: CodeBlockItemSyntax.Item, line: Int, isLast: Bool) throws {
    switch item {
    case .decl(let decl):
      guard let variable = decl.as(VariableDeclSyntax.self) else {
        throw Untranslatable("a declaration of a \(decl.kind.syntaxNodeType) inside a function")
      }
      try variableDeclaration(variable, line: line)
    case .stmt(let statement):
      try translate(statement, line: line, isLast: isLast)
    case .expr(let expression):
      try expressionStatement(expression, line: line)
    }
  }

  func translate(_ statement: StmtSyntax, line: Int, isLast: Bool) throws {
    if let node = statement.as(ExpressionStmtSyntax.self) {
      try expressionStatement(node.expression, line: line)
    } else if let node = statement.as(GuardStmtSyntax.self) {
      try guardStatement(node, line: line)
    } else if let node = statement.as(ReturnStmtSyntax.self) {
      let value = try node.expression.map { node -> String in
        let value = try expression(node)
        if value.isStatement { throw Untranslatable("the result of a call Lua writes as a statement") }
        return value.code
      }
      let text = value.map { "return \($0)" } ?? voidReturn
      emit(isLast ? text : "do \(text) end", line: line)
    } else if let node = statement.as(ForStmtSyntax.self) {
      try forStatement(node, line: line)
    } else if let node = statement.as(WhileStmtSyntax.self) {
      let test = try conditions(node.conditions)
      guard test.setup.isEmpty else { throw Untranslatable("a while with an optional binding") }
      emit("while \(test.test) do", line: line)
      loopBody(node.body.statements)
    } else if let node = statement.as(RepeatStmtSyntax.self) {
      emit("repeat", line: line)
      loopBody(node.body.statements, closing: "until not (\(try expression(node.condition).code))")
    } else if let node = statement.as(ThrowStmtSyntax.self) {
      emit("error(\(LuaSource.string("\(reader.spot(node)): \(node.expression.trimmedDescription)")))", line: line)
    } else if statement.is(ContinueStmtSyntax.self) {
      guard let target = breakTargets.last(where: { $0 != nil }), let label = target else {
        throw Untranslatable("continue outside a loop")
      }
      usedLabels.insert(label)
      emit("goto \(label)", line: line)
    } else if statement.is(BreakStmtSyntax.self) {
      guard let target = breakTargets.last else { throw Untranslatable("break outside a loop") }
      emit(target == nil ? "-- break: the end of the case" : "break", line: line)
    } else if let node = statement.as(DoStmtSyntax.self) {
      try doStatement(node, line: line)
    } else {
      throw Untranslatable("a \(statement.kind.syntaxNodeType) statement")
    }
  }

  func variableDeclaration(_ node: VariableDeclSyntax, line: Int) throws {
    for binding in node.bindings {
      let declared = binding.typeAnnotation?.type.trimmedDescription
      if binding.pattern.is(WildcardPatternSyntax.self), let value = binding.initializer?.value {
        emit("local _ = \(try expression(value).code)", line: line)
        continue
      }
      guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else {
        throw Untranslatable("a tuple pattern in a declaration")
      }
      guard let value = binding.initializer?.value else {
        emit("local \(try bind(name, declared.map(Self.kind(ofType:)) ?? .unknown))", line: line)
        continue
      }
      var made = try expression(value, type: declared)
      if made.isStatement { throw Untranslatable("the result of a call Lua writes as a statement") }
      if let declared, made.kind == .unknown || made.kind == .null { made.kind = Self.kind(ofType: declared) }
      guard made.kind.isValue else {
        try bind(name, made.kind, lua: made.code.isEmpty ? name : made.code)
        emit("-- \(name): \(Self.describe(made.kind)) (used below)", line: line)
        continue
      }
      emit("local \(try bind(name, made.kind)) = \(made.code)", line: line)
    }
  }

  static func describe(_ kind: LuaKind) -> String {
    switch kind {
    case .request(let request): return "a fetch request for \(request.entity)"
    case .predicate(let format, _): return "the predicate \(format)"
    case .context: return "a managed object context"
    case .sort(let keys): return "sorted by \(keys.joined(separator: ", "))"
    default: return "\(kind)"
    }
  }

  /// The Lua kind of a Swift type as written.
  static func kind(ofType type: String) -> LuaKind {
    var name = type.trimmingCharacters(in: .whitespaces)
    while name.hasSuffix("?") || name.hasSuffix("!") { name.removeLast() }
    switch name {
    case "String", "NSString", "Substring", "Character": return .string
    case "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64": return .integer
    case "Double", "Float", "CGFloat", "TimeInterval", "Decimal", "NSDecimalNumber", "NSNumber": return .number
    case "Bool": return .boolean
    case "Date", "NSDate": return .date
    case "Data", "NSData", "UUID": return .bytes
    case "NSManagedObject": return .object
    case "NSSet", "NSOrderedSet", "NSArray": return .list
    case "NSDictionary", "NSMutableDictionary": return .dictionary
    default: break
    }
    if name.hasPrefix("["), name.contains(":") { return .dictionary }
    if name.hasPrefix("Dictionary<") { return .dictionary }
    if name.hasPrefix("[") || name.hasPrefix("Array<") { return .list }
    if name.hasPrefix("Set<") {
      let element = name.dropFirst(4).dropLast()
      return ["String", "Int", "Int16", "Int32", "Int64", "UUID", "Double"].contains(String(element)) ? .set : .list
    }
    return .unknown
  }
}
