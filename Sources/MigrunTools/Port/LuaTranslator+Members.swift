import Foundation
import MigrunScripting
import SwiftSyntax

/// Methods and properties of values: managed objects, the manager, contexts, strings, lists, dates.
extension LuaTranslator {
  /// `obj.key` for a key that is a Lua name, `obj["key"]` for another, `obj[key]` for an expression.
  func field(_ base: LuaExpr, _ key: ExprSyntax) throws -> String {
    if let name = Self.stringValue(key) {
      return LuaSource.isIdentifier(name) ? "\(base.operand).\(name)" : "\(base.operand)[\(LuaSource.string(name))]"
    }
    return "\(base.operand)[\(try expression(key).code)]"
  }

  func methodCall(_ base: LuaExpr, _ name: String, _ arguments: [Argument]) throws -> LuaExpr {
    let signature = Self.signature(name, arguments)
    if case .policy(let module, _, _) = role, base.kind.isValue || Self.isContext(base.kind),
      let helper = helpers?.use(name, isMethod: true)
    {
      let list = ([base.code] + (try values(arguments)).map(\.code)).joined(separator: ", ")
      return LuaExpr(
        code: "\(module).\(helper.lua)(\(list))", kind: Self.kind(ofType: Self.returnType(helper.node)), isCall: true)
    }
    switch base.kind {
    case .manager: return try managerCall(signature, arguments)
    case .context(let receiver, let source): return try contextCall(receiver, source, signature, arguments)
    case .container where signature == "newBackgroundContext()":
      return LuaExpr(code: "ctx", kind: .context(receiver: "ctx", source: false))
    case .isoFormatter where signature == "date(from:)":
      return LuaExpr(code: "date.parse(\(try expression(arguments[0].expression).code))", kind: .date, isCall: true)
    case .isoFormatter where signature == "string(from:)":
      return LuaExpr(code: "date.iso(\(try expression(arguments[0].expression).code))", kind: .string, isCall: true)
    case .jsonDecoder where signature == "decode(_:from:)":
      return LuaExpr(
        code: "json.decode(\(try expression(arguments[1].expression).code))", kind: .dictionary, isCall: true)
    case .jsonEncoder where signature == "encode(_:)":
      return LuaExpr(code: "json.encode(\(try expression(arguments[0].expression).code))", kind: .bytes, isCall: true)
    case .mutableSet(let object, let key): return try mutableSetCall(object, key, signature, arguments)
    case .module:
      if case .policy(let module, let methods, _) = role, let method = methods[name] {
        return LuaExpr(
          code: "\(module).\(method)(\(try values(arguments).map(\.code).joined(separator: ", ")))", isCall: true)
      }
      throw Untranslatable("self.\(signature), which the class does not declare")
    default:
      guard base.kind.isValue else { throw Untranslatable("\(signature) on \(Self.describe(base.kind))") }
    }
    if let value = try keyValueCall(base, signature, arguments) { return value }
    if let value = try textCall(base, signature, arguments) { return value }
    return try collectionCall(base, name, signature, arguments)
  }

  static func isContext(_ kind: LuaKind) -> Bool {
    if case .context = kind { return true }
    return false
  }

  /// A function's declared result type (`NSManagedObject?`), or "" for none.
  static func returnType(_ node: FunctionDeclSyntax) -> String {
    node.signature.returnClause?.type.trimmedDescription ?? ""
  }

  private func managerCall(_ signature: String, _ arguments: [Argument]) throws -> LuaExpr {
    let values = try values(arguments)
    switch signature {
    case "associate(sourceInstance:withDestinationInstance:for:)":
      return LuaExpr(code: "m:associate(\(values[0].code), \(values[1].code))", isCall: true)
    case "destinationInstances(forEntityMappingName:sourceInstances:)":
      return LuaExpr(code: "m:destinations(\(values[0].code), \(values[1].code))", kind: .list, isCall: true)
    case "sourceInstances(forEntityMappingName:destinationInstances:)":
      return LuaExpr(code: "m:sources(\(values[0].code), \(values[1].code))", kind: .list, isCall: true)
    default: throw Untranslatable("the manager's \(signature)")
    }
  }

  private func contextCall(_ receiver: String, _ source: Bool, _ signature: String, _ arguments: [Argument]) throws
    -> LuaExpr
  {
    switch signature {
    case "fetch(_:)", "count(for:)", "fetchCount(_:)":
      let request = try expression(arguments[0].expression)
      guard case .request(let record) = request.kind else {
        throw Untranslatable("a fetch of a request built elsewhere")
      }
      return fetch(record, receiver: receiver, source: source, count: signature != "fetch(_:)")
    case "enumerate(_:_:)" where receiver == "ctx", "enumerate(_:batchSize:_:)" where receiver == "ctx":
      let request = try expression(arguments[0].expression)
      guard case .request(let record) = request.kind,
        let closure = arguments.last?.expression.as(ClosureExprSyntax.self)
      else { throw Untranslatable("an enumerate of a descriptor built elsewhere") }
      let body = try function(closure)
      return LuaExpr(code: each(record, body.code), kind: .integer, isCall: true)
    case "execute(_:)" where receiver == "ctx":
      guard case .batchDelete(let record) = try expression(arguments[0].expression).kind else {
        throw Untranslatable("a request the port cannot execute")
      }
      let objects = fetch(record, receiver: "ctx", source: false, count: false).code
      return LuaExpr(
        code: "for _, object in ipairs(\(objects)) do ctx:delete(object) end ctx:save() -- a batch delete, saved",
        kind: .null, isAtom: false)
    case "delete(_:)" where receiver == "ctx":
      return LuaExpr(code: "ctx:delete(\(try expression(arguments[0].expression).code))", isCall: true)
    case "save()" where receiver == "ctx":
      return LuaExpr(code: "ctx:save()", isCall: true)
    case "save()":
      return LuaExpr(code: "", kind: .null)
    case "insert(_:)" where receiver == "ctx":
      let object = try expression(arguments[0].expression)
      return object.isCall ? object : LuaExpr(code: "", kind: .null)
    case "object(with:)", "existingObject(with:)":
      return LuaExpr(
        code: "\(receiver):object(\(try expression(arguments[0].expression).code))", kind: .object, isCall: true)
    default: throw Untranslatable("the context's \(signature)")
    }
  }

  private func mutableSetCall(_ object: String, _ key: String, _ signature: String, _ arguments: [Argument]) throws
    -> LuaExpr
  {
    let values = try values(arguments)
    switch signature {
    case "add(_:)": return LuaExpr(code: "swift.addTo(\(object), \(key), \(values[0].code))", isCall: true)
    case "addObjects(from:)", "union(_:)", "addObjects(_:)":
      return LuaExpr(code: "swift.addAllTo(\(object), \(key), \(values[0].code))", isCall: true)
    case "remove(_:)": return LuaExpr(code: "swift.removeFrom(\(object), \(key), \(values[0].code))", isCall: true)
    case "removeAllObjects()": return LuaExpr(code: "swift.clearIn(\(object), \(key))", isCall: true)
    default: throw Untranslatable("\(signature) on a mutable set of a relationship")
    }
  }

  /// Key-value coding on managed objects (and dictionaries).
  private func keyValueCall(_ base: LuaExpr, _ signature: String, _ arguments: [Argument]) throws -> LuaExpr? {
    switch signature {
    case "value(forKey:)", "primitiveValue(forKey:)", "object(forKey:)":
      return LuaExpr(code: try field(base, arguments[0].expression))
    case "value(forKeyPath:)":
      return LuaExpr(
        code: "\(base.operand):valueForKeyPath(\(try expression(arguments[0].expression).code))", isCall: true)
    case "setValue(_:forKey:)", "setPrimitiveValue(_:forKey:)":
      let value = try expression(arguments[0].expression)
      let target = try field(base, arguments[1].expression)
      return LuaExpr(code: "\(target) = \(value.code == "nil" ? "NULL" : value.code)", kind: .null, isAtom: false)
    case "mutableSetValue(forKey:)", "mutableOrderedSetValue(forKey:)", "mutableArrayValue(forKey:)":
      guard let key = Self.stringValue(arguments[0].expression) else {
        throw Untranslatable("a key that is no literal")
      }
      return LuaExpr(code: "", kind: .mutableSet(object: base.code, key: LuaSource.string(key)))
    case "willAccessValue(forKey:)", "didAccessValue(forKey:)", "willChangeValue(forKey:)", "didChangeValue(forKey:)":
      return LuaExpr(code: "", kind: .null)
    case "addingTimeInterval(_:)", "advanced(by:)":
      return LuaExpr(
        code: "\(base.operand) + \(try expression(arguments[0].expression).operand)", kind: .date, isAtom: false)
    case "timeIntervalSince(_:)", "distance(to:)":
      let other = try expression(arguments[0].expression).operand
      return LuaExpr(
        code: signature == "distance(to:)" ? "\(other) - \(base.operand)" : "\(base.operand) - \(other)", kind: .number,
        isAtom: false)
    default: return nil
    }
  }

  /// Strings: Foundation's and the standard library's, through `swift.lua` where Lua has no twin.
  private func textCall(_ base: LuaExpr, _ signature: String, _ arguments: [Argument]) throws -> LuaExpr? {
    func with(_ function: String, _ kind: LuaKind) throws -> LuaExpr {
      let rest = try values(arguments).map(\.code)
      return LuaExpr(code: "\(function)(\(([base.code] + rest).joined(separator: ", ")))", kind: kind, isCall: true)
    }
    switch signature {
    case "lowercased()": return LuaExpr(code: "string.lower(\(base.code))", kind: .string, isCall: true)
    case "uppercased()": return LuaExpr(code: "string.upper(\(base.code))", kind: .string, isCall: true)
    case "trimmingCharacters(in:)":
      let set = arguments[0].expression.trimmedDescription
      guard
        [".whitespaces", ".whitespacesAndNewlines", "CharacterSet.whitespaces", "CharacterSet.whitespacesAndNewlines"]
          .contains(set)
      else { throw Untranslatable("trimmingCharacters(in: \(set))") }
      return LuaExpr(code: "swift.trim(\(base.code))", kind: .string, isCall: true)
    case "components(separatedBy:)":
      let separator = arguments[0].expression.trimmedDescription
      if separator.hasSuffix("whitespaces") || separator.hasSuffix("whitespacesAndNewlines") {
        return LuaExpr(code: "swift.splitSpaces(\(base.code))", kind: .list, isCall: true)
      }
      return try with("swift.split", .list)
    case "split(separator:)": return try with("swift.splitOmitting", .list)
    case "hasPrefix(_:)", "starts(with:)": return try with("swift.hasPrefix", .boolean)
    case "hasSuffix(_:)": return try with("swift.hasSuffix", .boolean)
    case "replacingOccurrences(of:with:)": return try with("swift.replace", .string)
    case "data(using:)", "utf8": return LuaExpr(code: base.code, kind: .bytes, isAtom: base.isAtom)
    case "joined(separator:)", "joined()": return try with("table.concat", .string)
    case "localizedCaseInsensitiveContains(_:)", "localizedStandardContains(_:)":
      return try with("swift.containsIgnoringCase", .boolean)
    default: return nil
    }
  }

  private func collectionCall(_ base: LuaExpr, _ name: String, _ signature: String, _ arguments: [Argument]) throws
    -> LuaExpr
  {
    let values = try values(arguments)
    let all = ([base.code] + values.map(\.code)).joined(separator: ", ")
    switch signature {
    case "contains(_:)" where base.kind == .set:
      return LuaExpr(code: "\(base.operand)[\(values[0].code)] ~= nil", kind: .boolean, isAtom: false)
    case "contains(_:)": return LuaExpr(code: "swift.contains(\(all))", kind: .boolean, isCall: true)
    case "contains(where:)", "first(where:)", "allSatisfy(_:)", "filter(_:)", "map(_:)", "compactMap(_:)",
      "flatMap(_:)", "sorted(by:)", "sorted()", "reduce(_:_:)", "min()", "max()", "reversed()", "prefix(_:)",
      "suffix(_:)", "dropFirst()", "dropFirst(_:)", "dropLast()", "dropLast(_:)", "forEach(_:)", "last(where:)",
      "firstIndex(of:)":
      let function = ["contains": "containsWhere", "first": "firstWhere", "last": "lastWhere"][name] ?? name
      let kinds: [String: LuaKind] = [
        "contains": .boolean, "allSatisfy": .boolean, "filter": .list, "map": .list, "compactMap": .list,
        "flatMap": .list,
        "sorted": .list, "reversed": .list, "dropFirst": base.kind == .string ? .string : .list,
        "dropLast": base.kind == .string ? .string : .list, "prefix": base.kind == .string ? .string : .list,
        "suffix": base.kind == .string ? .string : .list, "firstIndex": .integer,
      ]
      return LuaExpr(code: "swift.\(function)(\(all))", kind: kinds[name] ?? .unknown, isCall: true)
    case "append(_:)":
      return LuaExpr(code: "\(base.operand)[#\(base.operand) + 1] = \(values[0].code)", kind: .null, isAtom: false)
    case "append(contentsOf:)": return LuaExpr(code: "swift.appendAll(\(all))", isCall: true)
    case "insert(_:)" where base.kind == .set || base.kind == .unknown:
      return LuaExpr(code: "\(base.operand)[\(values[0].code)] = true", kind: .null, isAtom: false)
    case "insert(_:at:)":
      return LuaExpr(code: "table.insert(\(base.code), \(values[1].operand) + 1, \(values[0].code))", isCall: true)
    case "remove(_:)" where base.kind == .set:
      return LuaExpr(code: "\(base.operand)[\(values[0].code)] = nil", kind: .null, isAtom: false)
    case "remove(at:)": return LuaExpr(code: "table.remove(\(base.code), \(values[0].operand) + 1)", isCall: true)
    case "removeFirst()": return LuaExpr(code: "table.remove(\(base.code), 1)", isCall: true)
    case "removeLast()": return LuaExpr(code: "table.remove(\(base.code))", isCall: true)
    case "removeAll()": return LuaExpr(code: "swift.clear(\(base.code))", isCall: true)
    case "removeValue(forKey:)":
      return LuaExpr(code: "\(base.operand)[\(values[0].code)] = nil", kind: .null, isAtom: false)
    case "truncatingRemainder(dividingBy:)":
      return LuaExpr(code: "math.fmod(\(all))", kind: .number, isCall: true)
    case "union(_:)", "union(with:)": return LuaExpr(code: "swift.union(\(all))", kind: .list, isCall: true)
    case "rounded()": return LuaExpr(code: "swift.round(\(base.code))", kind: .number, isCall: true)
    case "isEmpty": return LuaExpr(code: "swift.isEmpty(\(base.code))", kind: .boolean, isCall: true)
    default: throw Untranslatable("calls .\(signature), which the port does not know")
    }
  }

  // MARK: Properties

  func memberAccess(_ node: MemberAccessExprSyntax) throws -> LuaExpr {
    let name = node.declName.baseName.text
    guard let baseNode = node.base else { throw Untranslatable("the implicit member .\(name)") }
    if let type = baseNode.as(DeclReferenceExprSyntax.self)?.baseName.text, lookup(type) == nil,
      type.first?.isUppercase == true, !isProperty(type)
    {
      if case .policy(let module, _, let properties) = role, type == "Self" || type == module,
        properties.contains(name)
      {
        return LuaExpr(code: "\(module).\(name)")
      }
      switch "\(type).\(name)" {
      case "Date.now": return LuaExpr(code: "date.now()", kind: .date, isCall: true)
      case "Int.max", "Int64.max": return LuaExpr(code: "math.maxinteger", kind: .integer)
      case "Int.min", "Int64.min": return LuaExpr(code: "math.mininteger", kind: .integer)
      case "Double.infinity": return LuaExpr(code: "math.huge", kind: .number)
      default: throw Untranslatable("\(type).\(name)")
      }
    }
    if baseNode.is(SuperExprSyntax.self) { throw Untranslatable("super.\(name)") }
    let base = try expression(baseNode, inChain: true)
    switch base.kind {
    case .module: return LuaExpr(code: "\(base.code).\(name)")
    case .mapping:
      let fields = [
        "name": "name", "destinationEntityName": "destination", "sourceEntityName": "source", "userInfo": "userInfo",
      ]
      guard let field = fields[name] else { throw Untranslatable("the entity mapping's \(name)") }
      return LuaExpr(code: "m.mapping.\(field)", kind: name == "userInfo" ? .dictionary : .string)
    case .manager:
      switch name {
      case "destinationContext": return LuaExpr(code: "m", kind: .context(receiver: "m", source: false))
      case "sourceContext": return LuaExpr(code: "m", kind: .context(receiver: "m", source: true))
      case "currentEntityMapping": return LuaExpr(code: "m.mapping", kind: .mapping)
      default: throw Untranslatable("the manager's \(name)")
      }
    case .stageManager where name == "container": return LuaExpr(code: "", kind: .container)
    case .container where name == "viewContext":
      return LuaExpr(code: "ctx", kind: .context(receiver: "ctx", source: false))
    case .entityOf(let object) where name == "name":
      return LuaExpr(code: "\(object):entity()", kind: .string, isCall: true)
    case .entityNamed(let entity) where name == "name": return LuaExpr(code: entity, kind: .string)
    default:
      guard base.kind.isValue else { throw Untranslatable("\(name) of \(Self.describe(base.kind))") }
    }
    return try valueMember(base, name)
  }

  private func valueMember(_ base: LuaExpr, _ name: String) throws -> LuaExpr {
    let list = base.kind == .list
    switch name {
    case "count" where list: return LuaExpr(code: "#\(base.operand)", kind: .integer, isAtom: false)
    case "count": return LuaExpr(code: "swift.count(\(base.code))", kind: .integer, isCall: true)
    case "isEmpty" where base.kind == .string:
      return LuaExpr(code: "\(base.operand) == \"\"", kind: .boolean, isAtom: false)
    case "isEmpty" where list: return LuaExpr(code: "#\(base.operand) == 0", kind: .boolean, isAtom: false)
    case "isEmpty": return LuaExpr(code: "swift.isEmpty(\(base.code))", kind: .boolean, isCall: true)
    case "first" where list: return LuaExpr(code: "\(base.operand)[1]")
    case "first", "last", "keys", "values", "capitalized":
      return LuaExpr(
        code: "swift.\(name)(\(base.code))", kind: name == "keys" || name == "values" ? .list : .unknown, isCall: true)
    case "timeIntervalSince1970": return LuaExpr(code: "date.toUnix(\(base.code))", kind: .number, isCall: true)
    case "timeIntervalSinceReferenceDate": return LuaExpr(code: base.code, kind: .number, isAtom: base.isAtom)
    case "doubleValue", "floatValue", "decimalValue":
      return LuaExpr(code: "swift.double(\(base.code))", kind: .number, isCall: true)
    case "intValue", "int16Value", "int32Value", "int64Value", "integerValue", "uintValue":
      return LuaExpr(code: "swift.int(\(base.code))", kind: .integer, isCall: true)
    case "boolValue": return LuaExpr(code: "swift.bool(\(base.code))", kind: .boolean, isCall: true)
    case "stringValue", "description": return LuaExpr(code: "swift.str(\(base.code))", kind: .string, isCall: true)
    case "uuidString": return LuaExpr(code: "uuid.string(\(base.code))", kind: .string, isCall: true)
    case "utf8", "utf8String": return LuaExpr(code: base.code, kind: base.kind, isAtom: base.isAtom)
    case "allObjects", "array", "set": return LuaExpr(code: base.code, kind: .list, isAtom: base.isAtom)
    case "entity": return LuaExpr(code: "", kind: .entityOf(base.operand))
    case "objectID": return LuaExpr(code: "\(base.operand):id()", kind: .string, isCall: true)
    case "managedObjectContext":
      if case .stage = role { return LuaExpr(code: "ctx", kind: .context(receiver: "ctx", source: false)) }
      return LuaExpr(code: "m", kind: .context(receiver: "m", source: false))
    case "isInserted", "isDeleted", "isUpdated", "hasChanges", "isFault", "changedValues":
      throw Untranslatable("the object's \(name)")
    default:
      let key = LuaSource.isIdentifier(name) ? "\(base.operand).\(name)" : "\(base.operand)[\(LuaSource.string(name))]"
      return LuaExpr(code: key)
    }
  }
}
