import FileDoors
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
  /// The model types a container is made for — `ModelContainer(for: A.self, B.self)`,
  /// `.modelContainer(for: [A.self])`, `Schema([A.self])` — wherever they are written: the roots
  /// of the schema when no `VersionedSchema` declares one.
  var containerTypes: [(name: String, spot: SourceSpot)] = []

  /// Parses `files` (Apple's own Swift parser: a file with syntax errors is still read as far as it
  /// parses, as the compiler would recover).
  init(files: [URL], relativeTo root: URL) throws {
    for file in files {
      let text: String
      do {
        text = try InputFile.text(file)
      } catch let error as InputFileError {
        throw SourceError(spot: SourceSpot(file: file.path, line: 0), reason: error.reason)
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
    try Self.checkShape(of: source, file: file)
    let tree = Parser.parse(source: source)
    let visitor = Collector(file: file, tree: tree)
    visitor.walk(tree)
    types += visitor.types
    aliases += visitor.aliases
    let containers = ContainerCollector(file: file, tree: tree)
    containers.walk(tree)
    containerTypes += containers.types
  }

  /// The most of a source file migrun parses: the parser and every walk of its tree recurse once
  /// per level of a chain (`a!!!…`, `try try …`, `else if …`), so a file's size bounds how deep they
  /// go — within the stack they run on (`DeepStack`).
  static let maximumFileBytes = 512 << 10

  /// The deepest `[` nest: swift-syntax tells array types and literals apart by looking ahead, in
  /// time doubling with each level (depth 20 takes half a second).
  static let maximumBracketDepth = 12
  /// The deepest `(`, `{` or `\(` nest: each level of string interpolation costs swift-syntax's
  /// lexer memory for every level below it (3,000 levels: 450 MB).
  static let maximumParenthesisDepth = 256
  /// The deepest `<` nest (generic arguments): swift-syntax's time is quadratic in it, and it does
  /// not count these levels against its own nesting limit. A `<` that compares is counted too, up
  /// to the next `{`, `}`, `;`, `=` or `"`, where no generic argument list goes on.
  static let maximumAngleDepth = 64

  /// Refuses, before parsing, a file no model is written as that would take swift-syntax more
  /// time, memory or stack than any model does: too large, or nested too deep.
  static func checkShape(of source: String, file: String) throws {
    let size = source.utf8.count
    guard size <= maximumFileBytes else {
      throw SourceError(
        spot: SourceSpot(file: file, line: 0),
        reason:
          "\(size) bytes, more than the \(maximumFileBytes >> 10) KiB a source file migrun reads may be: "
          + "give --model the folder of the model's own sources")
    }
    var (brackets, parentheses, angles) = (0, 0, 0)
    var line = 1
    var previous: UInt8 = 0
    func tooDeep(_ what: String, _ limit: Int) -> SourceError {
      SourceError(
        spot: SourceSpot(file: file, line: line),
        reason: "'\(what)' nested more than \(limit) deep (or left open): not a model migrun reads")
    }
    for byte in source.utf8 {
      switch byte {
      case UInt8(ascii: "["):
        brackets += 1
        guard brackets <= maximumBracketDepth else { throw tooDeep("[", maximumBracketDepth) }
      case UInt8(ascii: "]"): brackets = max(0, brackets - 1)
      case UInt8(ascii: "("), UInt8(ascii: "{"):
        parentheses += 1
        guard parentheses <= maximumParenthesisDepth else {
          throw tooDeep(byte == UInt8(ascii: "(") ? "(" : "{", maximumParenthesisDepth)
        }
      case UInt8(ascii: ")"), UInt8(ascii: "}"): parentheses = max(0, parentheses - 1)
      case UInt8(ascii: "<"):
        angles += 1
        guard angles <= maximumAngleDepth else { throw tooDeep("<", maximumAngleDepth) }
      case UInt8(ascii: ">") where previous != UInt8(ascii: "-"): angles = max(0, angles - 1)
      case UInt8(ascii: "\n"): line += 1
      default: break
      }
      if [UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "\"")].contains(byte)
      {
        angles = 0
      }
      previous = byte
    }
  }

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

/// Finds the model types the app's containers are made for, in any expression of a file:
/// `ModelContainer(for: A.self, B.self)`, `ModelContainer(for: [A.self], …)`,
/// `.modelContainer(for: A.self)` and `Schema([A.self, B.self])` (not `Schema(versionedSchema:)`,
/// whose `models` the versioned schema lists).
private final class ContainerCollector: SyntaxVisitor {
  let file: String
  let converter: SourceLocationConverter
  var types: [(name: String, spot: SourceSpot)] = []

  init(file: String, tree: SourceFileSyntax) {
    self.file = file
    converter = SourceLocationConverter(fileName: file, tree: tree)
    super.init(viewMode: .sourceAccurate)
  }

  override func visit(_ node: FunctionCallExprSyntax) -> SyntaxVisitorContinueKind {
    // The called name read off the node, never its text: a chain of calls (`a.b().c()…`) would be
    // written out again at every call, quadratic in the file.
    let called: String
    if let name = node.calledExpression.as(DeclReferenceExprSyntax.self) {
      called = name.baseName.text
    } else if let member = node.calledExpression.as(MemberAccessExprSyntax.self) {
      let base = member.base?.as(DeclReferenceExprSyntax.self)?.baseName.text
      called = base == "SwiftData" ? "SwiftData.\(member.declName.baseName.text)" : ".\(member.declName.baseName.text)"
    } else {
      return .visitChildren
    }
    let containers = ["ModelContainer", "SwiftData.ModelContainer", "modelContainer", ".modelContainer"]
    guard containers.contains(called) || called == "Schema" || called == "SwiftData.Schema" else {
      return .visitChildren
    }
    let spot = SourceSpot(file: file, line: node.startLocation(converter: converter).line)
    if called != "Schema" && called != "SwiftData.Schema" {
      // `for:` and the unlabelled arguments after it (a variadic list), up to the next label.
      var taking = false
      for argument in node.arguments {
        if let label = argument.label?.text { taking = label == "for" }
        if taking { types += references(argument.expression).map { ($0, spot) } }
      }
    } else if let first = node.arguments.first, first.label == nil {
      types += references(first.expression).map { ($0, spot) }
    }
    return .visitChildren
  }

  /// `A.self` → `["A"]`; `[A.self, B.self]` → `["A", "B"]`; anything else → none.
  private func references(_ expression: ExprSyntax) -> [String] {
    if let array = expression.as(ArrayExprSyntax.self) {
      return array.elements.flatMap { references($0.expression) }
    }
    guard let member = expression.as(MemberAccessExprSyntax.self), member.declName.baseName.text == "self",
      let base = member.base
    else { return [] }
    return [base.trimmedDescription]
  }
}
