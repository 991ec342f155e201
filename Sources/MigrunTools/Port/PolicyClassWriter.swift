import Foundation
import MigrunScripting
import SwiftSyntax

/// One `NSEntityMigrationPolicy` subclass as a Lua module (`ClassName.lua`): its stored properties
/// as fields of the module's table (kept across objects, as the policy instance keeps them across
/// Core Data's calls), Core Data's hooks under their Lua names, every other method under the name a
/// mapping model's `FUNCTION($entityPolicy, "selector:", …)` calls it by.
struct PolicyClassWriter {
  let reader: PortReader
  let node: ClassDeclSyntax
  let helpers: HelperFunctions

  var name: String { node.name.text }

  /// The module's text and what it holds, as it is built.
  private struct Module {
    var body: [String] = []
    var counts = PortCounts()
    var hooks: [String] = []
    var methods: [PortedMethod] = []

    mutating func add(_ method: PortedMethod, lines: [String], comment: String) {
      body += ["", comment] + lines
      counts = counts.adding(method.counts)
      methods.append(method)
    }
  }

  func write() -> PortedClass {
    helpers.reset()
    let functions = node.memberBlock.members.compactMap { $0.decl.as(FunctionDeclSyntax.self) }
    var luaNames: [String: String] = [:]
    for function in functions where Self.hook(function) == nil {
      luaNames[function.name.text] = Self.luaName(function)
    }
    // Static properties too: a policy's constants (`static let secondsPerDay`), read as `Self.name`.
    let properties = node.memberBlock.members.compactMap { $0.decl.as(VariableDeclSyntax.self) }
    let propertyNames = Set(
      properties.flatMap { $0.bindings.compactMap { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text } })
    let role = LuaTranslator.Role.policy(module: name, methods: luaNames, properties: propertyNames)
    var module = Module()
    for property in properties {
      let translator = LuaTranslator(reader: reader, role: role)
      module.body += translator.property(property, module: name)
      module.counts = module.counts.adding(translator.counts)
    }
    let propertyCounts = module.counts
    for function in functions {
      let translator = LuaTranslator(reader: reader, role: role)
      translator.helpers = helpers
      let hook = Self.hook(function)
      let luaName = hook?.lua ?? luaNames[function.name.text] ?? function.name.text
      let lines = translator.method(function, luaName: luaName, hook: hook)
      if let hook { module.hooks.append(hook.lua) }
      module.add(
        PortedMethod(
          swift: Self.swiftSignature(function), lua: luaName, isHook: hook != nil, spot: reader.spot(function),
          counts: translator.counts), lines: lines,
        comment: "-- \(Self.swiftSignature(function)) (\(reader.spot(function)))")
    }
    addHelpers(to: &module, role: role)
    let header = [
      "-- \(name): the NSEntityMigrationPolicy of \(reader.spot(node)), ported to Lua by `migrun port`.",
      "-- Each statement ends with the Swift line it came from. A statement the port could not translate is an",
      "-- error(\"migrun port: …\") naming its line and why: it fails the migration there until it is written.",
      "local swift = require \"swift\"",
      "",
      "local \(name) = {}",
    ]
    let text = (header + module.body + ["", "return \(name)"]).joined(separator: "\n") + "\n"
    return PortedClass(
      name: name, spot: reader.spot(node), module: text, hooks: module.hooks, methods: module.methods,
      propertyCounts: propertyCounts, counts: module.counts, entities: Self.entities(named: name))
  }

  /// The functions declared outside the class that it calls (and that they call), once each.
  private func addHelpers(to module: inout Module, role: LuaTranslator.Role) {
    var next = 0
    while next < helpers.used.count {
      guard let helper = helpers.byName[helpers.used[next]] else { break }
      next += 1
      let translator = LuaTranslator(reader: helper.reader, role: role)
      translator.helpers = helpers
      let signature = (helper.extending.map { "\($0)." } ?? "") + Self.swiftSignature(helper.node)
      let lines = translator.method(
        helper.node, luaName: helper.lua, hook: nil, selfKind: helper.extending == nil ? nil : helper.selfKind)
      module.add(
        PortedMethod(
          swift: signature, lua: helper.lua, isHook: false, spot: helper.reader.spot(helper.node),
          counts: translator.counts), lines: lines,
        comment: "-- \(signature) (\(helper.reader.spot(helper.node))), declared outside the class")
    }
  }

  /// The hook `function` overrides, or nil.
  static func hook(_ function: FunctionDeclSyntax) -> PolicyHook? {
    let labels = function.signature.parameterClause.parameters.map { "\($0.firstName.text):" }.joined()
    return PolicyHook.bySignature["\(function.name.text)(\(labels))"]
  }

  static func swiftSignature(_ function: FunctionDeclSyntax) -> String {
    let labels = function.signature.parameterClause.parameters.map { "\($0.firstName.text):" }.joined()
    return "\(function.name.text)(\(labels))"
  }

  /// The Lua name of a method: its Objective-C selector (`@objc(convert:)`, or Swift's own:
  /// `convert(_:withAlpha:)` → `convert:withAlpha:`, `convert(value:)` → `convertWithValue:`)
  /// with `:` joined by `_`, as `migrun convert` names `$entityPolicy` functions.
  static func luaName(_ function: FunctionDeclSyntax) -> String {
    let explicit = function.attributes.compactMap { element -> String? in
      guard case .attribute(let attribute) = element, attribute.attributeName.trimmedDescription == "objc",
        let pieces = attribute.arguments, pieces.trimmedDescription.hasSuffix(":")
      else { return nil }
      return pieces.trimmedDescription
    }.first
    var selector = explicit ?? ""
    if explicit == nil {
      let parameters = function.signature.parameterClause.parameters
      selector = function.name.text
      for (index, parameter) in parameters.enumerated() {
        let label = parameter.firstName.text
        if index == 0 {
          let capitalized = "\(label.prefix(1).uppercased())\(label.dropFirst())"
          selector += label == "_" ? ":" : label.hasPrefix("with") ? "\(capitalized):" : "With\(capitalized):"
        } else {
          selector += label == "_" ? ":" : "\(label):"
        }
      }
    }
    return selector.split(separator: ":").joined(separator: "_")
  }

  /// The entity mappings a class's name says: `BookToBookPolicy` → Book → Book,
  /// `Country5ToCountry6Policy` → Country → Country, `ItemV1ToItemV2MigrationPolicy` → Item → Item;
  /// every split at a `To` before a capital, for the model to choose from.
  static func entities(named name: String) -> [(source: String, destination: String)] {
    var stem = Substring(name)
    for suffix in ["Policy", "Migration", "Entity", "Mapping"] where stem.hasSuffix(suffix) {
      stem = stem.dropLast(suffix.count)
    }
    var pairs: [(String, String)] = []
    var index = stem.startIndex
    while let range = stem.range(of: "To", range: index..<stem.endIndex) {
      index = range.upperBound
      guard range.lowerBound > stem.startIndex, range.upperBound < stem.endIndex, stem[range.upperBound].isUppercase
      else { continue }
      let source = trimmedVersion(stem[..<range.lowerBound])
      let destination = trimmedVersion(stem[range.upperBound...])
      if !source.isEmpty, !destination.isEmpty { pairs.append((source, destination)) }
    }
    return pairs
  }

  /// `Country5` → `Country`, `ItemV2` → `Item`.
  private static func trimmedVersion(_ text: Substring) -> String {
    var trimmed = text
    while let last = trimmed.last, last.isNumber || last == "_" { trimmed.removeLast() }
    if trimmed.count > 1, trimmed.last == "V", text.last?.isNumber == true { trimmed.removeLast() }
    return String(trimmed)
  }
}

extension LuaTranslator {
  /// A stored property as a field of the module's table, set when the module loads.
  func property(_ node: VariableDeclSyntax, module: String) -> [String] {
    lines = []
    depth = 0
    for binding in node.bindings {
      guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else {
        placeholder(node, reason: "a stored property bound to a pattern")
        continue
      }
      let mark = (lines.count, counts)
      counts.statements += 1
      do {
        if binding.accessorBlock != nil { throw Untranslatable("a computed property") }
        let declared = binding.typeAnnotation?.type.trimmedDescription
        let value =
          try binding.initializer.map { try expression($0.value, type: declared).code }
          ?? (declared.map(Self.kind(ofType:)) == .dictionary || declared.map(Self.kind(ofType:)) == .list
            || declared.map(Self.kind(ofType:)) == .set ? "{}" : "nil")
        emit("\(module).\(name) = \(value)", line: reader.line(node))
        counts.translated += 1
      } catch {
        lines.removeSubrange(mark.0...)
        counts = mark.1
        placeholder(node, reason: (error as? Untranslatable)?.reason ?? "\(error)", assignTo: "\(module).\(name)")
      }
    }
    return lines
  }
}
