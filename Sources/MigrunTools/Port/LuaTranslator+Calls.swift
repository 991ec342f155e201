import Foundation
import MigrunScripting
import SwiftSyntax

/// Calls and members: Core Data's and Foundation's API as migrun's Lua says it.
extension LuaTranslator {
  struct Argument {
    var label: String?
    var expression: ExprSyntax
  }

  static func arguments(_ node: FunctionCallExprSyntax) -> [Argument] {
    var list = node.arguments.map { Argument(label: $0.label?.text, expression: $0.expression) }
    if let trailing = node.trailingClosure { list.append(Argument(label: nil, expression: ExprSyntax(trailing))) }
    for extra in node.additionalTrailingClosures {
      list.append(Argument(label: extra.label.text, expression: ExprSyntax(extra.closure)))
    }
    return list
  }

  /// `name(a:_:)`: how the cases below match a call.
  static func signature(_ name: String, _ arguments: [Argument]) -> String {
    "\(name)(\(arguments.map { "\($0.label ?? "_"):" }.joined()))"
  }

  func values(_ arguments: [Argument]) throws -> [LuaExpr] {
    try arguments.map { argument in
      let value = try expression(argument.expression)
      if value.isStatement { throw Untranslatable("the result of a call Lua writes as a statement, as an argument") }
      return value
    }
  }

  func call(_ node: FunctionCallExprSyntax, type: String? = nil) throws -> LuaExpr {
    let arguments = Self.arguments(node)
    var callee = node.calledExpression
    var generic: String?
    if let specialized = callee.as(GenericSpecializationExprSyntax.self) {
      callee = specialized.expression
      generic = specialized.genericArgumentClause.arguments.first?.argument.trimmedDescription
    }
    if let name = callee.as(DeclReferenceExprSyntax.self)?.baseName.text {
      if let binding = lookup(name), binding.kind == .function || binding.kind == .unknown {
        let list = try values(arguments).map(\.code).joined(separator: ", ")
        return LuaExpr(code: "\(binding.lua)(\(list))", isCall: true)
      }
      return try freeCall(name, arguments, generic: generic ?? type)
    }
    if callee.is(ClosureExprSyntax.self) {
      throw Untranslatable("a closure called where it is written (write the value it makes)")
    }
    guard let member = callee.as(MemberAccessExprSyntax.self), let base = member.base else {
      throw Untranslatable("a call of \(callee.trimmedDescription.prefix(40))")
    }
    let name = member.declName.baseName.text
    if base.is(SuperExprSyntax.self) { return try superCall(name, arguments) }
    if let typeName = base.as(DeclReferenceExprSyntax.self)?.baseName.text, lookup(typeName) == nil,
      typeName.first?.isUppercase == true, !isProperty(typeName)
    {
      return try staticCall(typeName, name, arguments)
    }
    return try methodCall(try expression(base, inChain: true), name, arguments)
  }

  func isProperty(_ name: String) -> Bool {
    if case .policy(_, _, let properties) = role { return properties.contains(name) }
    return false
  }

  // MARK: Functions and initializers

  func freeCall(_ name: String, _ arguments: [Argument], generic: String?) throws -> LuaExpr {
    if let known = try initializerCall(name, arguments, generic: generic) ?? functionCall(name, arguments) {
      return known
    }
    return try otherCall(name, arguments, generic: generic)
  }

  /// Foundation's and the standard library's initializers: dates, numbers, strings, sets, UUIDs.
  func initializerCall(_ name: String, _ arguments: [Argument], generic: String?) throws -> LuaExpr? {
    let signature = Self.signature(name, arguments)
    func first() throws -> LuaExpr { try expression(arguments[0].expression) }
    func helper(_ function: String, _ kind: LuaKind) throws -> LuaExpr {
      LuaExpr(
        code: "\(function)(\(try values(arguments).map(\.code).joined(separator: ", ")))", kind: kind, isCall: true)
    }
    switch signature {
    case "Date()": return LuaExpr(code: "date.now()", kind: .date, isCall: true)
    case "Date(timeIntervalSince1970:)":
      return LuaExpr(code: "date.fromUnix(\(try first().code))", kind: .date, isCall: true)
    case "Date(timeIntervalSinceReferenceDate:)": return LuaExpr(code: try first().operand, kind: .date)
    case "Date(timeIntervalSinceNow:)":
      return LuaExpr(code: "date.now() + \(try first().operand)", kind: .date, isAtom: false)
    case "Date(timeInterval:since:)":
      let values = try values(arguments)
      return LuaExpr(code: "\(values[1].operand) + \(values[0].operand)", kind: .date, isAtom: false)
    case "Int(_:)", "Int16(_:)", "Int32(_:)", "Int64(_:)", "Int8(_:)", "UInt(_:)", "Int(exactly:)", "Int(truncating:)",
      "Int16(truncatingIfNeeded:)", "Int32(truncatingIfNeeded:)", "Int64(truncatingIfNeeded:)":
      return LuaExpr(code: "swift.int(\(try first().code))", kind: .integer, isCall: true)
    case "Double(_:)", "Float(_:)", "TimeInterval(_:)", "CGFloat(_:)", "Decimal(_:)":
      return LuaExpr(code: "swift.double(\(try first().code))", kind: .number, isCall: true)
    case "Bool(_:)": return LuaExpr(code: "swift.bool(\(try first().code))", kind: .boolean, isCall: true)
    case "String(_:)", "String(describing:)":
      let value = try first()
      return value.kind == .string ? value : LuaExpr(code: "swift.str(\(value.code))", kind: .string, isCall: true)
    case "String(data:encoding:)", "String(decoding:as:)":
      return LuaExpr(code: "swift.utf8(\(try first().code))", kind: .string, isCall: true)
    case "String(format:_:)", "String(format:_:_:)", "String(format:_:_:_:)", "String(format:_:_:_:_:)":
      return try stringFormat(arguments)
    case "NSNumber(value:)", "NSSet(array:)", "NSOrderedSet(array:)", "NSSet(set:)", "NSArray(array:)",
      "Data(_:)", "NSString(string:)":
      var value = try first()
      if signature.hasPrefix("NS"), signature.contains("Set") || signature.contains("Array") { value.kind = .list }
      return value
    case "Set(_:)" where generic == nil || Self.kind(ofType: "Set<\(generic ?? "")>") == .set:
      let value = try first()
      return value.kind == .list && generic == nil
        ? LuaExpr(code: "swift.set(\(value.code))", kind: .set, isCall: true) : value
    case "Set()", "NSMutableSet()", "NSMutableArray()", "NSMutableDictionary()", "Array()", "Dictionary()":
      let kind: LuaKind =
        name == "Set" ? Self.kind(ofType: "Set<\(generic ?? "")>") : name.contains("Dictionary") ? .dictionary : .list
      return LuaExpr(code: "{}", kind: kind)
    case "Array(_:)": return try helper("swift.list", .list)
    case "Data()": return LuaExpr(code: "\"\"", kind: .bytes)
    case "UUID()": return LuaExpr(code: "uuid.bytes(uuid.new())", kind: .bytes, isCall: true)
    case "UUID(uuidString:)": return LuaExpr(code: "uuid.bytes(\(try first().code))", kind: .bytes, isCall: true)
    default: return nil
    }
  }

  /// Functions of the standard library: arithmetic, failures, assertions; Foundation's formatters.
  func functionCall(_ name: String, _ arguments: [Argument]) throws -> LuaExpr? {
    let signature = Self.signature(name, arguments)
    func first() throws -> LuaExpr { try expression(arguments[0].expression) }
    func helper(_ function: String, _ kind: LuaKind) throws -> LuaExpr {
      LuaExpr(
        code: "\(function)(\(try values(arguments).map(\.code).joined(separator: ", ")))", kind: kind, isCall: true)
    }
    switch signature {
    case "abs(_:)": return try helper("math.abs", try first().kind)
    case "min(_:_:)", "max(_:_:)", "min(_:_:_:)", "max(_:_:_:)": return try helper("math.\(name)", try first().kind)
    case "round(_:)": return try helper("swift.round", .number)
    case "floor(_:)", "ceil(_:)": return try helper("swift.\(name)", .number)
    case "fatalError()", "preconditionFailure()", "assertionFailure()":
      return LuaExpr(code: "error(\(LuaSource.string("\(name)")))", isCall: true)
    case "fatalError(_:)", "preconditionFailure(_:)", "assertionFailure(_:)":
      return LuaExpr(code: "error(\(try first().code))", isCall: true)
    case "precondition(_:)", "assert(_:)", "precondition(_:_:)", "assert(_:_:)":
      return try helper("assert", .unknown)
    case "ISO8601DateFormatter()": return LuaExpr(code: "", kind: .isoFormatter)
    case "JSONDecoder()": return LuaExpr(code: "", kind: .jsonDecoder)
    case "JSONEncoder()": return LuaExpr(code: "", kind: .jsonEncoder)
    case "NSPredicate(value:)":
      let value = try first().code
      return LuaExpr(
        code: "", kind: .predicate(format: value == "true" ? "TRUEPREDICATE" : "FALSEPREDICATE", arguments: []))
    case "NSFetchRequest(entityName:)":
      guard let entity = Self.stringValue(arguments[0].expression) else {
        throw Untranslatable("a fetch request for an entity not named by a string literal")
      }
      return LuaExpr(code: "", kind: .request(FetchRequest(entity: entity)))
    case "NSSortDescriptor(key:ascending:)", "SortDescriptor(_:order:)", "SortDescriptor(_:)",
      "NSSortDescriptor(keyPath:ascending:)":
      return try sortDescriptor(signature, arguments)
    default: return nil
    }
  }

  /// Predicates, fetch descriptors, `print`, the class's methods, entities' initializers.
  func otherCall(_ name: String, _ arguments: [Argument], generic: String?) throws -> LuaExpr {
    let signature = Self.signature(name, arguments)
    func first() throws -> LuaExpr { try expression(arguments[0].expression) }
    if name == "NSPredicate", arguments.first?.label == "format" { return try predicateFormat(arguments) }
    if name == "NSCompoundPredicate" { return try compoundPredicate(arguments) }
    if signature == "NSManagedObject(entity:insertInto:)" {
      guard case .entityNamed(let entity) = try first().kind else {
        throw Untranslatable("an entity description the port cannot name")
      }
      return try insert(entity: entity, into: try expression(arguments[1].expression), values: [])
    }
    if name == "FetchDescriptor" { return try fetchDescriptor(arguments, generic: generic) }
    if signature == "NSBatchDeleteRequest(fetchRequest:)" {
      guard case .request(let request) = try first().kind else {
        throw Untranslatable("a batch delete of no fetch request")
      }
      return LuaExpr(code: "", kind: .batchDelete(request))
    }
    if name == "print" || name == "debugPrint" || name == "NSLog" {
      let text = try values(arguments).map { $0.kind == .string ? $0.code : "swift.str(\($0.code))" }
      guard let logger else { return LuaExpr(code: "swift.log(\(text.joined(separator: ", ")))", isCall: true) }
      return LuaExpr(code: "\(logger):log(\(text.joined(separator: ", ")))", isCall: true)
    }
    if let value = try ownCall(name, arguments) { return value }
    if name.first?.isUppercase == true, arguments.count == 1, arguments[0].label == "context" {
      return try insert(entity: LuaSource.string(name), into: try first(), values: [])
    }
    if name.first?.isUppercase == true, case .stage(swiftData: true) = role, let logger {
      // A SwiftData model's initializer: its arguments name its properties.
      var fields: [String] = []
      for argument in arguments {
        guard let label = argument.label else { throw Untranslatable("\(name)(…) with an unlabelled argument") }
        fields.append("\(LuaSource.key(label)) = \(try expression(argument.expression).code)")
      }
      let table = fields.isEmpty ? "" : ", { \(fields.joined(separator: ", ")) }"
      return LuaExpr(code: "\(logger):insert(\(LuaSource.string(name))\(table))", kind: .object, isCall: true)
    }
    throw Untranslatable("calls \(signature), which the port does not know")
  }

  /// A method of the class (called without `self.`), a free function of the sources, or — inside an
  /// extension's method — another method of `self`'s; nil for none.
  func ownCall(_ name: String, _ arguments: [Argument]) throws -> LuaExpr? {
    // A class's functions are its module's; a stage's are local functions of its file.
    var prefix = ""
    if case .policy(let module, let methods, _) = role {
      prefix = "\(module)."
      if let method = methods[name] {
        return LuaExpr(
          code: "\(module).\(method)(\(try values(arguments).map(\.code).joined(separator: ", ")))", isCall: true)
      }
    }
    let me = lookup("self")
    guard let helper = helpers?.use(name, isMethod: false) ?? (me == nil ? nil : helpers?.use(name, isMethod: true))
    else { return nil }
    let list = ((helper.extending == nil ? [] : [me?.lua ?? "self_"]) + (try values(arguments)).map(\.code))
    return LuaExpr(
      code: "\(prefix)\(helper.lua)(\(list.joined(separator: ", ")))",
      kind: Self.kind(ofType: Self.returnType(helper.node)), isCall: true)
  }

  /// `String(format:…)`: `%@` written with `%s` of the value as text.
  func stringFormat(_ arguments: [Argument]) throws -> LuaExpr {
    guard let format = Self.stringValue(arguments[0].expression) else {
      throw Untranslatable("String(format:) with a format that is no literal")
    }
    let lua = format.replacingOccurrences(of: "%@", with: "%s").replacingOccurrences(of: "%ld", with: "%d")
      .replacingOccurrences(of: "%lld", with: "%d").replacingOccurrences(of: "%lu", with: "%d")
    let rest = try arguments.dropFirst().map { argument -> String in
      let value = try expression(argument.expression)
      return value.kind == .string ? value.code : "swift.str(\(value.code))"
    }
    return LuaExpr(
      code: "string.format(\(([LuaSource.string(lua)] + rest).joined(separator: ", ")))", kind: .string, isCall: true)
  }

  /// `NSEntityDescription.insertNewObject(forEntityName:into:)` and its kin: a new object, in the
  /// manager's destination (`m:insert`) or a stage's context (`ctx:insert`).
  func insert(entity: String, into context: LuaExpr, values: [String]) throws -> LuaExpr {
    guard case .context(let receiver, let source) = context.kind, !source else {
      throw Untranslatable("an insert into a context the port cannot name")
    }
    var table = ""
    if case .policy = role { table = ", {}" }
    return LuaExpr(code: "\(receiver):insert(\(entity)\(table))", kind: .object, isCall: true)
  }

  func staticCall(_ type: String, _ name: String, _ arguments: [Argument]) throws -> LuaExpr {
    let signature = Self.signature("\(type).\(name)", arguments)
    let values = try values(arguments)
    switch signature {
    case "NSEntityDescription.insertNewObject(forEntityName:into:)":
      return try insert(entity: values[0].code, into: values[1], values: [])
    case "NSEntityDescription.entity(forEntityName:in:)":
      return LuaExpr(code: "", kind: .entityNamed(values[0].code))
    case "JSONSerialization.jsonObject(with:)", "JSONSerialization.jsonObject(with:options:)":
      return LuaExpr(code: "json.decode(\(values[0].code))", isCall: true)
    case "JSONSerialization.data(withJSONObject:)", "JSONSerialization.data(withJSONObject:options:)":
      return LuaExpr(code: "json.encode(\(values[0].code))", kind: .bytes, isCall: true)
    case "PropertyListSerialization.propertyList(from:format:)",
      "PropertyListSerialization.propertyList(from:options:format:)":
      return LuaExpr(code: "plist.decode(\(values[0].code))", isCall: true)
    case "NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(_:)", "NSKeyedUnarchiver.unarchivedObject(ofClass:from:)",
      "NSKeyedUnarchiver.unarchivedObject(ofClasses:from:)":
      return LuaExpr(code: "plist.unarchive(\(values[values.count - 1].code))", isCall: true)
    case "NSKeyedArchiver.archivedData(withRootObject:requiringSecureCoding:)":
      return LuaExpr(code: "plist.archive(\(values[0].code))", kind: .bytes, isCall: true)
    default: break
    }
    if name == "fetchRequest", arguments.isEmpty {
      return LuaExpr(code: "", kind: .request(FetchRequest(entity: type)))
    }
    if let helper = helpers?.byName[name], helper.isStatic, let value = try ownCall(name, arguments) { return value }
    if type == "NSNumber" || type == "Int" || type == "String" || type == "Double" {
      throw Untranslatable("calls \(signature), which the port does not know")
    }
    if case .policy(let module, let methods, _) = role, let method = methods[name] {
      return LuaExpr(code: "\(module).\(method)(\(values.map(\.code).joined(separator: ", ")))", isCall: true)
    }
    throw Untranslatable("calls \(signature), which the port does not know")
  }

  /// `super.createDestinationInstances(…)` is `m:default(src)`, `super.createRelationships(…)`
  /// `m:default(dst)`: Core Data's default, then the hook's changes.
  func superCall(_ name: String, _ arguments: [Argument]) throws -> LuaExpr {
    switch name {
    case "createDestinationInstances", "createRelationships":
      return LuaExpr(code: "m:default(\(try expression(arguments[0].expression).code))", kind: .object, isCall: true)
    case "begin", "endInstanceCreation", "endRelationshipCreation", "performCustomValidation", "end":
      return LuaExpr(code: "", kind: .null)
    default:
      throw Untranslatable("super.\(name), which is no hook of Core Data's")
    }
  }
}
