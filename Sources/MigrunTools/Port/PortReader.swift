import Foundation
import SwiftSyntax

/// Finds in one parsed file what `migrun port` translates — policy classes, custom stages — and
/// what names a stage's versions: `VersionedSchema`s' identifiers, `NSManagedObjectModelReference`s.
final class PortReader: SyntaxVisitor {
  struct Found {
    var classes: [PortedClass] = []
    var stages: [PortedStage] = []
    var schemaVersions: [String: String] = [:]
  }

  let file: String
  let tree: SourceFileSyntax
  let converter: SourceLocationConverter
  private var classes: [ClassDeclSyntax] = []
  private var schemaVersions: [String: String] = [:]
  /// Variables bound to a model reference or a custom stage: name → the call.
  private var bound: [String: FunctionCallExprSyntax] = [:]
  private var swiftDataStages: [FunctionCallExprSyntax] = []
  /// The functions a stage's handlers may call (those they call are ported into the stage's file).
  private var stageHelpers: HelperFunctions?
  /// `stage.willMigrateHandler = { … }`: the stage's variable, the handler, the closure.
  private var handlerAssignments: [(stage: String, handler: String, closure: ClosureExprSyntax)] = []

  init(file: String, tree: SourceFileSyntax) {
    self.file = file
    self.tree = tree
    converter = SourceLocationConverter(fileName: file, tree: tree)
    super.init(viewMode: .sourceAccurate)
  }

  /// The file's free functions and extensions' methods, which a class's methods may call.
  func collect(into helpers: HelperFunctions) {
    for item in tree.statements {
      if let function = item.item.as(FunctionDeclSyntax.self) { helpers.add(function, extending: nil, reader: self) }
      if let ext = item.item.as(ExtensionDeclSyntax.self) {
        for member in ext.memberBlock.members {
          if let function = member.decl.as(FunctionDeclSyntax.self) {
            helpers.add(function, extending: ext.extendedType.trimmedDescription, reader: self)
          }
        }
      }
      // A type's static functions (a SchemaMigrationPlan's `static func dedupe(_:)` its stage calls).
      let members = item.item.as(EnumDeclSyntax.self)?.memberBlock ?? item.item.as(StructDeclSyntax.self)?.memberBlock
      for member in members?.members ?? [] {
        if let function = member.decl.as(FunctionDeclSyntax.self),
          function.modifiers.contains(where: { $0.name.text == "static" })
        {
          helpers.add(function, extending: nil, reader: self)
        }
      }
    }
  }

  func read(helpers: HelperFunctions) -> Found {
    walk(tree)
    var found = Found(schemaVersions: schemaVersions)
    let names = Dictionary(classes.map { ($0.name.text, $0) }, uniquingKeysWith: { first, _ in first })
    for node in classes where isPolicy(node, among: names, depth: 0) {
      found.classes.append(PolicyClassWriter(reader: self, node: node, helpers: helpers).write())
    }
    stageHelpers = helpers
    for call in swiftDataStages { found.stages.append(swiftDataStage(call)) }
    for (variable, call) in bound where called(call) == "NSCustomMigrationStage" {
      found.stages.append(coreDataStage(variable, call))
    }
    found.stages.sort { $0.spot.localizedStandardCompare($1.spot) == .orderedAscending }
    return found
  }

  func spot(_ node: some SyntaxProtocol) -> String {
    "\(file):\(node.startLocation(converter: converter, afterLeadingTrivia: true).line)"
  }

  func line(_ node: some SyntaxProtocol) -> Int {
    node.startLocation(converter: converter, afterLeadingTrivia: true).line
  }

  // MARK: - Non public

  private func isPolicy(_ node: ClassDeclSyntax, among names: [String: ClassDeclSyntax], depth: Int) -> Bool {
    let inherited = node.inheritanceClause?.inheritedTypes.map { $0.type.trimmedDescription } ?? []
    if inherited.contains(where: { $0 == "NSEntityMigrationPolicy" || $0.hasSuffix(".NSEntityMigrationPolicy") }) {
      return true
    }
    guard depth < 8, let parent = inherited.first, let base = names[parent], base.name.text != node.name.text else {
      return false
    }
    return isPolicy(base, among: names, depth: depth + 1)
  }

  override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
    classes.append(node)
    return .visitChildren
  }

  override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind {
    schemaVersion(node.name.text, node.inheritanceClause, node.memberBlock)
    return .visitChildren
  }

  override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
    schemaVersion(node.name.text, node.inheritanceClause, node.memberBlock)
    return .visitChildren
  }

  /// A `VersionedSchema`'s `versionIdentifier = Schema.Version(1, 0, 0)` (or `.init(…)`, or returned).
  private func schemaVersion(_ name: String, _ inheritance: InheritanceClauseSyntax?, _ members: MemberBlockSyntax) {
    guard
      inheritance?.inheritedTypes.contains(where: { $0.type.trimmedDescription.hasSuffix("VersionedSchema") }) == true
    else { return }
    for member in members.members {
      guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
      for binding in variable.bindings
      where binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == "versionIdentifier" {
        let call =
          binding.initializer?.value.as(FunctionCallExprSyntax.self)
          ?? binding.accessorBlock.flatMap { block in
            if case .getter(let items) = block.accessors {
              return items.last.flatMap { item in
                item.item.as(ExprSyntax.self)?.as(FunctionCallExprSyntax.self)
                  ?? item.item.as(ReturnStmtSyntax.self)?.expression?.as(FunctionCallExprSyntax.self)
              }
            }
            return nil
          }
        let parts = call?.arguments.compactMap { Int($0.expression.trimmedDescription) } ?? []
        if parts.count == 3 { schemaVersions[name] = parts.map(String.init).joined(separator: ".") }
      }
    }
  }

  override func visit(_ node: PatternBindingSyntax) -> SyntaxVisitorContinueKind {
    if let name = node.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
      let call = node.initializer?.value.as(FunctionCallExprSyntax.self),
      ["NSManagedObjectModelReference", "NSCustomMigrationStage"].contains(called(call))
    {
      bound[name] = call
    }
    return .visitChildren
  }

  override func visit(_ node: FunctionCallExprSyntax) -> SyntaxVisitorContinueKind {
    let labels = Set(node.arguments.compactMap { $0.label?.text })
    if called(node) == "custom", labels.contains("fromVersion"), labels.contains("toVersion") {
      swiftDataStages.append(node)
    }
    return .visitChildren
  }

  override func visit(_ node: InfixOperatorExprSyntax) -> SyntaxVisitorContinueKind {
    if node.operator.is(AssignmentExprSyntax.self), let member = node.leftOperand.as(MemberAccessExprSyntax.self),
      let stage = member.base?.as(DeclReferenceExprSyntax.self)?.baseName.text,
      let closure = node.rightOperand.as(ClosureExprSyntax.self)
    {
      switch member.declName.baseName.text {
      case "willMigrateHandler": handlerAssignments.append((stage, "willMigrate", closure))
      case "didMigrateHandler": handlerAssignments.append((stage, "didMigrate", closure))
      default: break
      }
    }
    return .visitChildren
  }

  /// The name a call calls: `f` for `f(…)`, `custom` for `MigrationStage.custom(…)` and `.custom(…)`.
  func called(_ call: FunctionCallExprSyntax) -> String? {
    if let name = call.calledExpression.as(DeclReferenceExprSyntax.self) { return name.baseName.text }
    if let member = call.calledExpression.as(MemberAccessExprSyntax.self) { return member.declName.baseName.text }
    return nil
  }

  private func swiftDataStage(_ call: FunctionCallExprSyntax) -> PortedStage {
    var closures: [String: ExprSyntax] = [:]
    for argument in call.arguments {
      if let label = argument.label?.text { closures[label] = argument.expression }
    }
    if let trailing = call.trailingClosure {
      closures[closures["willMigrate"] == nil && closures["didMigrate"] != nil ? "willMigrate" : "didMigrate"] =
        ExprSyntax(trailing)
    }
    for extra in call.additionalTrailingClosures { closures[extra.label.text] = ExprSyntax(extra.closure) }
    let version = { (label: String) -> [String] in
      guard let expression = closures[label] else { return [] }
      let text = expression.trimmedDescription
      let type = text.hasSuffix(".self") ? String(text.dropLast(5)) : text
      return [String(type.split(separator: ".").last ?? Substring(type))]
    }
    var stage = PortedStage(
      spot: spot(call), from: version("fromVersion"), to: version("toVersion"), handlers: [], functions: [],
      counts: PortCounts())
    for handler in ["willMigrate", "didMigrate"] {
      guard let expression = closures[handler], !expression.is(NilLiteralExprSyntax.self) else { continue }
      add(handler, expression, to: &stage, swiftData: true)
    }
    return stage
  }

  private func coreDataStage(_ variable: String, _ call: FunctionCallExprSyntax) -> PortedStage {
    let versions = { (label: String) -> [String] in
      guard let argument = call.arguments.first(where: { $0.label?.text == label })?.expression else { return [] }
      let reference =
        argument.as(DeclReferenceExprSyntax.self).flatMap { self.bound[$0.baseName.text] }
        ?? argument.as(FunctionCallExprSyntax.self)
      return reference.map(Self.strings) ?? [argument.trimmedDescription]
    }
    var stage = PortedStage(
      spot: spot(call), from: versions("migratingFrom"), to: versions("to"), handlers: [], functions: [],
      counts: PortCounts())
    for handler in ["willMigrate", "didMigrate"] {
      for assignment in handlerAssignments where assignment.stage == variable && assignment.handler == handler {
        add(handler, ExprSyntax(assignment.closure), to: &stage, swiftData: false)
      }
    }
    return stage
  }

  private func add(_ handler: String, _ expression: ExprSyntax, to stage: inout PortedStage, swiftData: Bool) {
    let writer = LuaTranslator(reader: self, role: .stage(swiftData: swiftData))
    writer.helpers = stageHelpers
    stageHelpers?.reset()
    let lua = writer.stageHandler(handler, expression)
    stage.handlers.append((handler, lua))
    stage.counts = stage.counts.adding(writer.counts)
    // The functions it calls, as local functions of the stage's file (once each per stage).
    var next = 0
    while let helpers = stageHelpers, next < helpers.used.count {
      guard let helper = helpers.byName[helpers.used[next]] else { break }
      next += 1
      guard !stage.functions.contains(where: { $0.name == helper.lua }) else { continue }
      let translator = LuaTranslator(reader: helper.reader, role: .stage(swiftData: swiftData))
      translator.helpers = helpers
      let text = translator.method(helper.node, luaName: helper.lua, hook: nil).joined(separator: "\n")
      stage.functions.append(
        (
          helper.lua,
          "-- \(PolicyClassWriter.swiftSignature(helper.node)) (\(helper.reader.spot(helper.node)))\n\(text)"
        ))
      stage.counts = stage.counts.adding(translator.counts)
    }
  }

  /// The string literals of a call's arguments, in order (a model reference's version name among them).
  static func strings(_ call: FunctionCallExprSyntax) -> [String] {
    call.arguments.flatMap { argument in
      argument.expression.tokens(viewMode: .sourceAccurate).compactMap { token in
        if case .stringSegment(let text) = token.tokenKind { return text }
        return nil
      }
    }
  }
}
