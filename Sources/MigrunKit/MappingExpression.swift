import PropertyList

/// A value expression of a mapping model made with Xcode: an archived `NSExpression`, read into
/// the parts mapping models use. What an expression means is decided by whoever runs it (the Lua
/// conversion in MigrunScripting); anything this type cannot represent is kept as ``unsupported(_:)``
/// with what it was, so the error can name it and where it appears.
///
/// ```
/// $source.continent.numericISO3166Code
/// FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)
/// ```
package indirect enum MappingExpression: Sendable, Hashable, CustomStringConvertible {
  /// A constant: `NSConstantValueExpression`.
  case constant(ConstantValue)
  /// `$name`: the migration's variables (`source`, `manager`, `entityPolicy`, `destination`, …).
  case variable(String)
  /// `SELF`.
  case evaluatedObject
  /// `base.key1.key2…`: `valueForKeyPath:`/`valueForKey:` on `base` (key paths through
  /// relationships and KVC collection operators such as `@distinctUnionOfSets` stay as written).
  case keyPath(MappingExpression, [String])
  /// `FUNCTION(target, "selector:", arguments…)`.
  case function(MappingExpression, selector: String, arguments: [MappingExpression])
  /// The source objects of an entity mapping: a fetch of `entity` matching `predicate`.
  case fetch(entity: String, predicate: String)
  /// Anything else, as far as it could be described.
  case unsupported(String)

  package enum ConstantValue: Sendable, Hashable {
    case null
    case string(String)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
  }

  package var description: String {
    switch self {
    case .constant(let value):
      switch value {
      case .null: return "nil"
      case .string(let text): return "\"\(text.replacingOccurrences(of: "\"", with: "\\\""))\""
      case .integer(let number): return String(number)
      case .real(let number): return String(number)
      case .boolean(let flag): return flag ? "YES" : "NO"
      }
    case .variable(let name): return "$\(name)"
    case .evaluatedObject: return "SELF"
    case .keyPath(.evaluatedObject, let keys): return keys.joined(separator: ".")
    case .keyPath(let base, let keys): return ([base.description] + keys).joined(separator: ".")
    case .function(let target, let selector, let arguments):
      return
        "FUNCTION(\(([target.description, "\"\(selector)\""] + arguments.map(\.description)).joined(separator: ", ")))"
    case .fetch(let entity, let predicate): return "FETCH(\"\(entity)\", \(predicate))"
    case .unsupported(let text): return text
    }
  }

  /// `base.a.b` with a key path appended (kept flat: `$source.a` + `b` is `$source.a.b`).
  static func path(_ base: MappingExpression, _ keyPath: String) -> MappingExpression {
    let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard !keys.contains(where: \.isEmpty) else { return .unsupported("\(base).\(keyPath)") }
    if case .keyPath(let inner, let first) = base { return .keyPath(inner, first + keys) }
    return .keyPath(base, keys)
  }

  /// A key path as the mapping editor stores it in text (`$source.country.continent`).
  package init(keyPathText text: String) {
    let trimmed = text.trimmingWhitespace()
    guard trimmed.hasPrefix("$"), !trimmed.contains(where: { " ()\"',".contains($0) }) else {
      self = .unsupported(trimmed)
      return
    }
    let parts = trimmed.dropFirst().split(separator: ".", maxSplits: 1).map(String.init)
    guard let variable = parts.first, !variable.isEmpty else {
      self = .unsupported(trimmed)
      return
    }
    self = parts.count == 2 ? Self.path(.variable(variable), parts[1]) : .variable(variable)
  }

  /// Reads an archived `NSExpression` (already unarchived into ``ArchivedValue``s).
  package init(archived value: ArchivedValue) {
    self = Self.read(value, depth: 0)
  }

  private static func read(_ value: ArchivedValue, depth: Int) -> MappingExpression {
    guard depth < 64 else { return .unsupported("an expression nested more than 64 deep") }
    guard case .object(let className, let fields) = value else {
      return .unsupported("a \(Self.kind(of: value)) where an expression belongs")
    }
    func argument(_ field: ArchivedValue?) -> [MappingExpression] {
      switch field {
      case .array(let items)?: return items.map { read($0, depth: depth + 1) }
      case nil, .null?: return []
      case let other?: return [read(other, depth: depth + 1)]
      }
    }
    switch className {
    case "NSConstantValueExpression":
      return archivedConstant(fields["NSConstantValue"] ?? .null)
    case "NSVariableExpression":
      guard case .string(let name)? = fields["NSVariable"] else { return .unsupported("a variable without a name") }
      return .variable(name)
    case "NSSelfExpression":
      return .evaluatedObject
    case "NSKeyPathSpecifierExpression":
      guard case .string(let path)? = fields["NSKeyPath"] else { return .unsupported("a key path without keys") }
      return .keyPath(.evaluatedObject, path.split(separator: ".").map(String.init))
    case "NSKeyPathExpression", "NSFunctionExpression":
      guard case .string(let selector)? = fields["NSSelectorName"] else {
        return .unsupported("a function without a selector")
      }
      let target = fields["NSOperand"].map { read($0, depth: depth + 1) } ?? .evaluatedObject
      let arguments = argument(fields["NSArguments"])
      // valueForKey:/valueForKeyPath: with one key path or string argument is a key path.
      if selector == "valueForKeyPath:" || selector == "valueForKey:", arguments.count == 1 {
        switch arguments[0] {
        case .keyPath(.evaluatedObject, let keys): return path(target, keys.joined(separator: "."))
        case .constant(.string(let keys)): return path(target, keys)
        default: break
        }
      }
      return .function(target, selector: selector, arguments: arguments)
    case "NSFetchRequestExpression":
      return fetchRequest(fields["NSFRExpression"].map { read($0, depth: depth + 1) })
    default:
      let type = fields["NSExpressionType"].flatMap { if case .integer(let code) = $0 { code } else { nil } }
      return .unsupported("an \(className)\(type.map { " (expression type \($0))" } ?? "")")
    }
  }

  /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", entity, predicate),
  /// $manager.sourceContext)`: the source objects of an entity mapping.
  private static func fetchRequest(_ request: MappingExpression?) -> MappingExpression {
    if case .function(.variable("manager"), "fetchRequestForSourceEntityNamed:predicateString:", let arguments)? =
      request, arguments.count == 2,
      case .constant(.string(let entity)) = arguments[0], case .constant(.string(let predicate)) = arguments[1]
    {
      return .fetch(entity: entity, predicate: predicate)
    }
    return .unsupported("a fetch request expression")
  }

  /// An archived `NSConstantValueExpression`'s value.
  private static func archivedConstant(_ value: ArchivedValue) -> MappingExpression {
    switch value {
    case .null: return .constant(.null)
    case .string(let text): return .constant(.string(text))
    case .integer(let number): return .constant(.integer(number))
    case .real(let number): return .constant(.real(number))
    case .boolean(let flag): return .constant(.boolean(flag))
    case let other: return .unsupported("a constant \(Self.kind(of: other))")
    }
  }

  private static func kind(of value: ArchivedValue) -> String {
    switch value {
    case .null: "nil"
    case .string: "string"
    case .integer, .real: "number"
    case .boolean: "boolean"
    case .date: "date"
    case .data: "data"
    case .uuid: "UUID"
    case .url: "URL"
    case .array: "list"
    case .dictionary: "dictionary"
    case .object(let className, _): className
    case .reference: "reference"
    }
  }
}
