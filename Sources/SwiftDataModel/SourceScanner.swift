import Foundation
import SwiftParser
import SwiftSyntax

/// A place in the user's sources: `Models/Trip.swift:12`.
struct SourceSpot: Sendable, Hashable, CustomStringConvertible {
  var file: String
  var line: Int
  var description: String { "\(file):\(line)" }
}

/// A stored property as written: its name, type, initial value and attributes (`@Attribute`,
/// `@Relationship`, `@Transient`).
struct DeclaredProperty {
  var name: String
  var type: TypeSyntax?
  var initializer: ExprSyntax?
  var attributes: [AttributeSyntax]
  var spot: SourceSpot

  func attribute(_ name: String) -> AttributeSyntax? {
    attributes.first { $0.attributeName.trimmedDescription == name }
  }
}

/// An enum case: its name and associated values' types.
struct DeclaredCase {
  var name: String
  var associatedTypes: [TypeSyntax]
}

/// A type declared in the sources, with what the model needs of it.
struct DeclaredType {
  enum Kind { case classType, structType, enumType }
  var kind: Kind
  var name: String
  /// The enclosing types (an extension's extended type counts): `["TripsSchemaV2"]`.
  var scope: [String]
  var isModel: Bool
  /// An extension's members, merged into the type it extends (``SourceDeclarations``).
  var isExtension = false
  /// The inheritance clause's types, as written.
  var inherited: [TypeSyntax]
  var properties: [DeclaredProperty] = []
  var cases: [DeclaredCase] = []
  /// `#Unique` and `#Index` in a model's body.
  var macros: [(macro: MacroExpansionDeclSyntax, spot: SourceSpot)] = []
  /// Static members' values (`static var models: … { [A.self] }`): the expression given or returned.
  var statics: [String: (ExprSyntax, SourceSpot)] = [:]
  var spot: SourceSpot

  var qualifiedName: String { (scope + [name]).joined(separator: ".") }
  var inheritedNames: [String] { inherited.map(\.trimmedDescription) }
  func conforms(to name: String) -> Bool {
    inheritedNames.contains { $0 == name || $0.hasSuffix(".\(name)") }
  }
}

/// Every declaration of a set of Swift files that a SwiftData model can be made of: types (with
/// `@Model` marked), type aliases, and the `VersionedSchema`s and `SchemaMigrationPlan`s among them.
struct SourceDeclarations {
  var types: [DeclaredType] = []
  var aliases: [(name: String, scope: [String], type: TypeSyntax)] = []

  /// Parses `files` (Apple's own Swift parser: a file with syntax errors is still read as far as it
  /// parses, as the compiler would recover).
  init(files: [URL], relativeTo root: URL) throws {
    for file in files {
      let text: String
      do {
        text = try String(contentsOf: file, encoding: .utf8)
      } catch {
        throw SourceError(
          spot: SourceSpot(file: file.path, line: 0), reason: "cannot read the file (\(error.localizedDescription))")
      }
      try add(source: text, file: Self.display(file, root: root))
    }
    mergeExtensions()
  }

  init() {}

  /// Adds one file's declarations (`file` names it in errors).
  mutating func add(source: String, file: String) throws {
    // swift-syntax's parser takes time exponential in how deep `[` nest (array types and literals
    // are told apart by looking ahead: depth 20 takes half a second, each level doubles it), so
    // a file nesting them deeper than any model does is refused before it is parsed.
    var depth = 0
    var line = 1
    for byte in source.utf8 {
      switch byte {
      case UInt8(ascii: "["):
        depth += 1
        if depth > Self.maximumBracketDepth {
          throw SourceError(
            spot: SourceSpot(file: file, line: line),
            reason: "'[' nested more than \(Self.maximumBracketDepth) deep (or left open): not a model migrun reads")
        }
      case UInt8(ascii: "]"): depth = max(0, depth - 1)
      case UInt8(ascii: "\n"): line += 1
      default: break
      }
    }
    let tree = Parser.parse(source: source)
    let visitor = Collector(file: file, tree: tree)
    visitor.walk(tree)
    types += visitor.types
    aliases += visitor.aliases
  }

  static let maximumBracketDepth = 12

  /// Merges each extension into the type it extends (an extension of a type the sources do not
  /// declare — `Schema.Version`, say — is left out).
  mutating func mergeExtensions() {
    let extensions = types.filter(\.isExtension)
    types.removeAll(where: \.isExtension)
    for ext in extensions {
      guard
        let index = types.firstIndex(where: { $0.scope + [$0.name] == ext.scope + [ext.name] })
          ?? types.firstIndex(where: { $0.name == ext.name && ext.scope.isEmpty })
      else { continue }
      types[index].properties += ext.properties
      types[index].cases += ext.cases
      types[index].macros += ext.macros
      types[index].inherited += ext.inherited
      types[index].statics.merge(ext.statics) { first, _ in first }
    }
  }

  static func display(_ file: URL, root: URL) -> String {
    let path = file.standardizedFileURL.path
    let base = root.standardizedFileURL.path
    guard path != base, path.hasPrefix(base + "/") else { return file.lastPathComponent }
    return String(path.dropFirst(base.count + 1))
  }

  /// The type `name` (possibly qualified: `V2.Trip`) means where `scope` uses it: the innermost
  /// enclosing scope that declares it, then the top level; a type alias is followed.
  func resolve(_ name: String, in scope: [String], depth: Int = 0) -> DeclaredType? {
    let components = name.split(separator: ".").map(String.init)
    guard !components.isEmpty, depth < 16 else { return nil }
    for length in stride(from: scope.count, through: 0, by: -1) {
      let candidate = Array(scope.prefix(length)) + components
      if let found = types.first(where: { $0.scope + [$0.name] == candidate }) { return found }
      if let alias = aliases.first(where: { $0.scope + [$0.name] == candidate }) {
        return resolve(alias.type.trimmedDescription, in: alias.scope, depth: depth + 1)
      }
    }
    return nil
  }
}

/// A Swift source migrun cannot make a model of, at its file and line.
struct SourceError: Error {
  var spot: SourceSpot
  var reason: String
}

/// Walks one file's tree, keeping the scope (enclosing types and extensions) of each declaration.
private final class Collector: SyntaxVisitor {
  let file: String
  let converter: SourceLocationConverter
  var scope: [String] = []
  var types: [DeclaredType] = []
  var aliases: [(name: String, scope: [String], type: TypeSyntax)] = []

  init(file: String, tree: SourceFileSyntax) {
    self.file = file
    converter = SourceLocationConverter(fileName: file, tree: tree)
    super.init(viewMode: .sourceAccurate)
  }

  func spot(_ node: some SyntaxProtocol) -> SourceSpot {
    SourceSpot(file: file, line: node.startLocation(converter: converter).line)
  }

  func begin(
    _ kind: DeclaredType.Kind, name: String, attributes: AttributeListSyntax,
    inheritance: InheritanceClauseSyntax?, members: MemberBlockSyntax, node: some SyntaxProtocol
  ) {
    let isModel = attributes.contains { element in
      if case .attribute(let attribute) = element {
        let name = attribute.attributeName.trimmedDescription
        return name == "Model" || name == "SwiftData.Model"
      }
      return false
    }
    var type = DeclaredType(
      kind: kind, name: name, scope: scope, isModel: isModel,
      inherited: inheritance?.inheritedTypes.map(\.type) ?? [], spot: spot(node))
    collectMembers(members, into: &type)
    types.append(type)
    scope.append(name)
  }

  func end() { scope.removeLast() }

  func collectMembers(_ members: MemberBlockSyntax, into type: inout DeclaredType) {
    for member in members.members {
      collect(member.decl, into: &type)
    }
  }

  func collect(_ decl: DeclSyntax, into type: inout DeclaredType) {
    if let variable = decl.as(VariableDeclSyntax.self) {
      let isStatic = variable.modifiers.contains { ["static", "class"].contains($0.name.text) }
      for binding in variable.bindings {
        guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else { continue }
        if isStatic {
          if let value = binding.initializer?.value ?? Self.returned(binding.accessorBlock) {
            type.statics[name] = (value, spot(binding))
          }
          continue
        }
        guard Self.isStored(binding.accessorBlock) else { continue }
        type.properties.append(
          DeclaredProperty(
            name: name, type: binding.typeAnnotation?.type ?? variable.bindings.last?.typeAnnotation?.type,
            initializer: binding.initializer?.value,
            attributes: variable.attributes.compactMap {
              if case .attribute(let attribute) = $0 { return attribute }
              return nil
            }, spot: spot(binding)))
      }
    } else if let cases = decl.as(EnumCaseDeclSyntax.self) {
      for element in cases.elements {
        type.cases.append(
          DeclaredCase(
            name: element.name.text, associatedTypes: element.parameterClause?.parameters.map(\.type) ?? []))
      }
    } else if let macro = decl.as(MacroExpansionDeclSyntax.self) {
      type.macros.append((macro, spot(macro)))
    } else if let ifConfig = decl.as(IfConfigDeclSyntax.self) {
      // Members inside #if: every clause's (a model is the same on every platform it builds for).
      for clause in ifConfig.clauses {
        if case .decls(let members) = clause.elements {
          for member in members { collect(member.decl, into: &type) }
        }
      }
    }
  }

  /// Whether a binding stores a value: no accessors, or only observers (`willSet`/`didSet`).
  static func isStored(_ block: AccessorBlockSyntax?) -> Bool {
    guard let block else { return true }
    switch block.accessors {
    case .getter: return false
    case .accessors(let list):
      return list.allSatisfy { ["willSet", "didSet"].contains($0.accessorSpecifier.text) }
    }
  }

  /// The value a computed static property returns: its body's one expression, or a `return`'s.
  static func returned(_ block: AccessorBlockSyntax?) -> ExprSyntax? {
    guard let block else { return nil }
    let items: CodeBlockItemListSyntax?
    switch block.accessors {
    case .getter(let body): items = body
    case .accessors(let list): items = list.first { $0.accessorSpecifier.text == "get" }?.body?.statements
    }
    guard let last = items?.last?.item else { return nil }
    if let expression = last.as(ExprSyntax.self) { return expression }
    if let statement = last.as(ReturnStmtSyntax.self) { return statement.expression }
    return nil
  }

  override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind { begin(.classType, node) }
  override func visitPost(_ node: ClassDeclSyntax) { end() }
  override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind { begin(.structType, node) }
  override func visitPost(_ node: StructDeclSyntax) { end() }
  override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind { begin(.enumType, node) }
  override func visitPost(_ node: EnumDeclSyntax) { end() }

  /// A class, struct or enum: its declaration kept, its scope opened for what it declares.
  func begin(_ kind: DeclaredType.Kind, _ node: some DeclGroupSyntax & NamedDeclSyntax) -> SyntaxVisitorContinueKind {
    begin(
      kind, name: node.name.text, attributes: node.attributes, inheritance: node.inheritanceClause,
      members: node.memberBlock, node: node)
    return .visitChildren
  }

  override func visit(_ node: ExtensionDeclSyntax) -> SyntaxVisitorContinueKind {
    let extended = node.extendedType.trimmedDescription.split(separator: ".").map(String.init)
    // An extension's members join the type it extends once every file is read (a schema's
    // `static var models` may be written in one); the types declared in it are scoped to that type.
    var type = DeclaredType(
      kind: .enumType, name: extended.last ?? "", scope: scope + extended.dropLast(), isModel: false,
      inherited: node.inheritanceClause?.inheritedTypes.map(\.type) ?? [], spot: spot(node))
    type.isExtension = true
    collectMembers(node.memberBlock, into: &type)
    types.append(type)
    scope.append(contentsOf: extended)
    extensionDepths.append(extended.count)
    return .visitChildren
  }
  override func visitPost(_ node: ExtensionDeclSyntax) {
    scope.removeLast(extensionDepths.removeLast())
  }
  var extensionDepths: [Int] = []

  override func visit(_ node: TypeAliasDeclSyntax) -> SyntaxVisitorContinueKind {
    aliases.append((node.name.text, scope, node.initializer.value))
    return .skipChildren
  }

  // Bodies of functions, initializers and closures declare no model types.
  override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
  override func visit(_ node: InitializerDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
  override func visit(_ node: VariableDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }

}
