import Foundation
import MigrunModel
import SwiftSyntax

/// Makes Core Data models of the declarations, as SwiftData's `Schema` makes them of `@Model`
/// classes. Each rule says where it comes from: facts read off SwiftData's own stores (CartKit's in
/// `../shared`, the two held-back apps of `../shared/fixtures/facts/composite-attributes.json`), or
/// a guess, said so beside it.
struct SchemaReader {
  let declarations: SourceDeclarations

  struct Version {
    var name: String
    var model: ObjectModel
  }

  // MARK: Versions

  /// The plan's order and where it is declared (nil without a SchemaMigrationPlan).
  func declaredOrder(of versions: [Version]) -> VersionOrder? {
    guard
      let plan = declarations.types.first(where: { $0.kind != .classType && $0.conforms(to: "SchemaMigrationPlan") })
    else { return nil }
    return VersionOrder(names: versions.map(\.name), origin: "\(plan.spot): \(plan.name).schemas")
  }

  func versions(defaultName: String) throws -> [Version] {
    let schemas = declarations.types.filter { $0.kind != .classType && $0.conforms(to: "VersionedSchema") }
    guard !schemas.isEmpty else {
      let classes = try containerSchema() ?? declarations.types.filter(\.isModel)
      guard !classes.isEmpty else {
        throw SourceError(
          spot: SourceSpot(file: defaultName, line: 0), reason: "no @Model class and no VersionedSchema in the sources")
      }
      return [Version(name: defaultName, model: try model(of: classes, versionName: defaultName, identifiers: []))]
    }
    let ordered = try orderedSchemas(schemas)
    var versions: [Version] = []
    for schema in ordered {
      let identifier = try versionParts(schema).map(String.init).joined(separator: ".")
      if let earlier = versions.first(where: { $0.name == identifier }) {
        throw SourceError(
          spot: schema.spot, reason: "\(schema.name)'s versionIdentifier \(identifier) is \(earlier.name)'s too")
      }
      guard let (list, spot) = schema.statics["models"] else {
        throw SourceError(spot: schema.spot, reason: "\(schema.name) has no static var models")
      }
      let classes = try typeReferences(list, spot: spot).map { reference in
        guard let type = declarations.resolve(reference, in: schema.scope + [schema.name]), type.isModel else {
          throw SourceError(
            spot: spot, reason: "\(schema.name).models names \(reference), which is no @Model class in the sources")
        }
        return type
      }
      versions.append(
        Version(name: identifier, model: try model(of: classes, versionName: identifier, identifiers: [identifier])))
    }
    return versions
  }

  /// The schema the app's containers are made for, as SwiftData's `Schema` makes it: the `@Model`
  /// classes they name (``SourceDeclarations/containerTypes``) and every one reachable from them —
  /// through a relationship's type (`Trip?`, `[Trip]`) or a parent class — in the sources' order;
  /// nil when no container names a type (then every `@Model` class is the schema, as before). A class
  /// nothing reaches (an old one left in the folder) is no entity of the store SwiftData writes.
  func containerSchema() throws -> [DeclaredType]? {
    guard !declarations.containerTypes.isEmpty else { return nil }
    var reached: Set<String> = []
    var pending: [DeclaredType] = []
    for (name, spot) in declarations.containerTypes {
      guard let type = declarations.resolve(name, in: []), type.isModel else {
        throw SourceError(
          spot: spot, reason: "the container is made for \(name), which is no @Model class in the sources")
      }
      if reached.insert(type.qualifiedName).inserted { pending.append(type) }
    }
    while let type = pending.popLast() {
      let linked =
        type.properties.compactMap { $0.type.flatMap { modelClass(in: $0, scope: type.scope) } } + [
          parentClass(of: type)
        ]
      for next in linked.compactMap({ $0 }) where reached.insert(next.qualifiedName).inserted { pending.append(next) }
    }
    return declarations.types.filter { $0.isModel && reached.contains($0.qualifiedName) }
  }

  /// The versioned schemas in the migration plan's order (its `schemas`), else by version identifier.
  private func orderedSchemas(_ schemas: [DeclaredType]) throws -> [DeclaredType] {
    let plans = declarations.types.filter { $0.kind != .classType && $0.conforms(to: "SchemaMigrationPlan") }
    var ordered: [DeclaredType]
    if let plan = plans.first {
      if plans.count > 1 {
        throw SourceError(
          spot: plans[1].spot,
          reason:
            "a second SchemaMigrationPlan (\(plans[1].qualifiedName), after \(plan.qualifiedName) at \(plan.spot)): give the files of one"
        )
      }
      guard let (list, spot) = plan.statics["schemas"] else {
        throw SourceError(spot: plan.spot, reason: "\(plan.name) has no static var schemas")
      }
      ordered = try typeReferences(list, spot: spot).map { reference in
        guard let schema = declarations.resolve(reference, in: plan.scope + [plan.name]),
          schema.conforms(to: "VersionedSchema")
        else {
          throw SourceError(
            spot: spot, reason: "\(plan.name).schemas names \(reference), which is no VersionedSchema in the sources")
        }
        return schema
      }
    } else {
      ordered = try schemas.sorted { try versionParts($0).lexicographicallyPrecedes(try versionParts($1)) }
    }
    return ordered
  }

  /// `static var versionIdentifier = Schema.Version(1, 0, 0)` (or `.init(1, 0, 0)`): `[1, 0, 0]`.
  func versionParts(_ schema: DeclaredType) throws -> [Int] {
    guard let (value, spot) = schema.statics["versionIdentifier"] else {
      throw SourceError(spot: schema.spot, reason: "\(schema.name) has no static var versionIdentifier")
    }
    guard let call = value.as(FunctionCallExprSyntax.self),
      case let parts = call.arguments.compactMap({ Int($0.expression.trimmedDescription) }),
      parts.count == call.arguments.count, parts.count == 3
    else {
      throw SourceError(
        spot: spot,
        reason:
          "versionIdentifier \(value.trimmedDescription): migrun reads Schema.Version(major, minor, patch) with literal numbers"
      )
    }
    return parts
  }

  /// `[A.self, V2.B.self]` → `["A", "V2.B"]`.
  func typeReferences(_ list: ExprSyntax, spot: SourceSpot) throws -> [String] {
    guard let array = list.as(ArrayExprSyntax.self) else {
      throw SourceError(spot: spot, reason: "\(list.trimmedDescription): migrun reads a literal list of Type.self")
    }
    return try array.elements.map { element in
      guard let member = element.expression.as(MemberAccessExprSyntax.self), member.declName.baseName.text == "self",
        let base = member.base
      else {
        throw SourceError(spot: spot, reason: "\(element.expression.trimmedDescription): migrun reads Type.self here")
      }
      return base.trimmedDescription
    }
  }

  // MARK: Models

  /// The model of `listed` classes and every model class their relationships reach (SwiftData's
  /// `Schema` takes those in too).
  func model(of listed: [DeclaredType], versionName: String, identifiers: [String]) throws -> ObjectModel {
    var classes: [DeclaredType] = []
    var queue = listed
    while !queue.isEmpty {
      let type = queue.removeFirst()
      guard !classes.contains(where: { $0.qualifiedName == type.qualifiedName }) else { continue }
      if let twin = classes.first(where: { $0.name == type.name }) {
        throw SourceError(
          spot: type.spot, reason: "two @Model classes named \(type.name) in one version (the other at \(twin.spot))")
      }
      classes.append(type)
      for property in type.properties where property.attribute("Transient") == nil {
        if let typeSyntax = property.type, let destination = modelClass(in: typeSyntax, scope: type.scope + [type.name])
        {
          queue.append(destination)
        }
      }
      if let parent = parentClass(of: type) { queue.append(parent) }
    }
    var entities = try classes.map { try entity(of: $0) }
    try pairInverses(&entities, classes: classes)
    do {
      return try ObjectModel(entities: entities, versionName: versionName, versionIdentifiers: identifiers)
    } catch {
      // Core Data's own checks (a constraint naming no property, say): at the class they concern.
      let spot = classes.first { $0.name == error.entity }?.spot ?? classes[0].spot
      throw ModelError(
        error.code, file: spot.description, entity: error.entity, property: error.property, reason: error.reason)
    }
  }

  func parentClass(of type: DeclaredType) -> DeclaredType? {
    type.inherited.lazy.compactMap { declarations.resolve($0.trimmedDescription, in: type.scope) }.first(
      where: \.isModel)
  }

  /// The `@Model` class a property's type names (`Trip`, `Trip?`, `[Trip]`), if it names one.
  func modelClass(in type: TypeSyntax, scope: [String]) -> DeclaredType? {
    let (bare, _) = unwrapOptional(type)
    if let element = arrayElement(bare) { return modelClass(in: element, scope: scope) }
    guard let found = declarations.resolve(bare.trimmedDescription, in: scope), found.isModel else { return nil }
    return found
  }

  // MARK: Entities

  static let knownPropertyAttributes: Set<String> = [
    "Attribute", "Relationship", "Transient", "ObservationIgnored", "available", "objc", "nonobjc", "MainActor",
  ]

  func entity(of type: DeclaredType) throws -> Entity {
    let scope = type.scope + [type.name]
    var attributes: [Attribute] = []
    var relationships: [Relationship] = []
    var unique: [[String]] = []
    for property in type.properties {
      try Self.checkAttributes(of: property, in: type)
      // @Transient: not part of the schema at all.
      if property.attribute("Transient") != nil { continue }
      let swiftType = try propertyType(property, owner: type.name)
      let (bare, optional) = unwrapOptional(swiftType)
      if let destination = modelClass(in: swiftType, scope: scope) {
        let toMany = arrayElement(bare) != nil
        var relationship = Relationship(
          name: property.name, destinationEntity: destination.name, minCount: 0, maxCount: toMany ? 0 : 1,
          deleteRule: .nullify, isOptional: optional, renamingIdentifier: property.name)
        if let options = property.attribute("Relationship") {
          try apply(options, to: &relationship, unique: &unique, property: property, owner: type)
        }
        if property.attribute("Attribute") != nil {
          throw SourceError(spot: property.spot, reason: "\(type.name).\(property.name): @Attribute on a relationship")
        }
        relationships.append(relationship)
        continue
      }
      if property.attribute("Relationship") != nil {
        throw SourceError(
          spot: property.spot,
          reason:
            "\(type.name).\(property.name): @Relationship on \(swiftType.trimmedDescription), which is no @Model class")
      }
      var attribute = try self.attribute(
        named: property.name, type: bare, optional: optional, scope: scope, spot: property.spot, owner: type.name)
      attribute.renamingIdentifier = property.name
      attribute.defaultValueString = Self.literal(property.initializer)
      if let options = property.attribute("Attribute") {
        try apply(options, to: &attribute, unique: &unique, property: property, owner: type)
      }
      attributes.append(attribute)
    }
    let fetchIndexes = try macroIndexes(of: type, unique: &unique)
    return Entity(
      name: type.name, parentName: parentClass(of: type)?.name, attributes: attributes, relationships: relationships,
      uniquenessConstraints: unique, className: type.qualifiedName, fetchIndexes: fetchIndexes)
  }

  /// A property's attributes are SwiftData's (or Swift's own that change nothing stored).
  static func checkAttributes(of property: DeclaredProperty, in type: DeclaredType) throws {
    for attribute in property.attributes
    where !knownPropertyAttributes.contains(attribute.attributeName.trimmedDescription) {
      throw SourceError(
        spot: property.spot,
        reason:
          "\(type.name).\(property.name): @\(attribute.attributeName.trimmedDescription) is not one SwiftData's model takes (migrun reads @Attribute, @Relationship, @Transient)"
      )
    }
  }

  /// The fetch indexes of `type`'s `#Index` macros; its `#Unique` macros' constraints added to `unique`.
  func macroIndexes(of type: DeclaredType, unique: inout [[String]]) throws -> [FetchIndex] {
    var fetchIndexes: [FetchIndex] = []
    for (macro, spot) in type.macros {
      let groups = try keyPathGroups(macro, owner: type, spot: spot)
      switch macro.macroName.text {
      case "Unique": unique += groups
      case "Index":
        // The index's name is a guess: no store we have shows what SwiftData calls one.
        fetchIndexes += groups.map { group in
          FetchIndex(
            name: "\(type.name)_\(group.joined(separator: "_"))",
            elements: group.map { FetchIndex.Element(property: $0) })
        }
      default:
        throw SourceError(
          spot: spot,
          reason: "\(type.name): #\(macro.macroName.text) is not one migrun reads (#Unique, #Index)")
      }
    }
    return fetchIndexes
  }

  /// A property's declared type, or the type its initial value says as Swift infers it: a literal
  /// (`var count = 0`), an initializer call (`UUID()`, `[Item]()`, `Budget(…)`), a static member of
  /// a standard type (`Date.now`). Anything else (`makeDate()`, `.now`) would need the compiler.
  func propertyType(_ property: DeclaredProperty, owner: String) throws -> TypeSyntax {
    if let type = property.type { return type }
    var inferred: TypeSyntax? = nil
    let initializer = property.initializer
    switch initializer?.kind {
    case .integerLiteralExpr: inferred = TypeSyntax(IdentifierTypeSyntax(name: .identifier("Int")))
    case .floatLiteralExpr: inferred = TypeSyntax(IdentifierTypeSyntax(name: .identifier("Double")))
    case .booleanLiteralExpr: inferred = TypeSyntax(IdentifierTypeSyntax(name: .identifier("Bool")))
    case .stringLiteralExpr: inferred = TypeSyntax(IdentifierTypeSyntax(name: .identifier("String")))
    default:
      if let call = initializer?.as(FunctionCallExprSyntax.self), call.trailingClosure == nil {
        // `[Item]()`, `[String: Int]()`: the collection type written as the callee.
        if let array = call.calledExpression.as(ArrayExprSyntax.self), array.elements.count == 1,
          let element = array.elements.first?.expression.as(DeclReferenceExprSyntax.self)
        {
          inferred = TypeSyntax(
            ArrayTypeSyntax(element: TypeSyntax(IdentifierTypeSyntax(name: .identifier(element.baseName.text)))))
        } else if let reference = call.calledExpression.as(DeclReferenceExprSyntax.self),
          reference.baseName.text.first?.isUppercase == true
        {
          // `UUID()`, `Date()`, `Budget(amount: 1)`: a type's initializer (URL(string:) is optional, so no).
          if reference.baseName.text != "URL" {
            inferred = TypeSyntax(IdentifierTypeSyntax(name: .identifier(reference.baseName.text)))
          }
        }
      } else if let member = initializer?.as(MemberAccessExprSyntax.self),
        let base = member.base?.as(DeclReferenceExprSyntax.self),
        Self.primitives[base.baseName.text] != nil
      {
        inferred = TypeSyntax(IdentifierTypeSyntax(name: .identifier(base.baseName.text)))
      }
    }
    guard let inferred else {
      throw SourceError(
        spot: property.spot,
        reason:
          "\(owner).\(property.name) has no type: write it (migrun reads types from the text, it does not compile it)")
    }
    return inferred
  }

  // MARK: Attribute types

  /// Swift's types as SwiftData stores them. `Int`, `Double`, `String`, `Bool`, `Date`, `Data`,
  /// `UUID`, `URL`, `Decimal` as SwiftData's documentation lists; the widths of the smaller and
  /// unsigned integers are a guess (no store we have holds one).
  static let primitives: [String: AttributeType] = [
    "String": .string, "Int": .integer64, "Int64": .integer64, "UInt": .integer64, "UInt64": .integer64,
    "Int32": .integer32, "UInt32": .integer64, "Int16": .integer16, "UInt16": .integer32, "Int8": .integer16,
    "UInt8": .integer16, "Double": .double, "CGFloat": .double, "TimeInterval": .double, "Float": .float,
    "Bool": .boolean, "Date": .date, "Data": .binary, "UUID": .uuid, "URL": .uri, "Decimal": .decimal,
  ]

  static func primitive(_ type: TypeSyntax) -> AttributeType? {
    var name = type.trimmedDescription
    if name.hasPrefix("Foundation.") { name.removeFirst("Foundation.".count) }
    if name.hasPrefix("Swift.") { name.removeFirst("Swift.".count) }
    return primitives[name]
  }

  func attribute(
    named name: String, type: TypeSyntax, optional: Bool, scope: [String], spot: SourceSpot, owner: String
  ) throws -> Attribute {
    if let primitive = Self.primitive(type) {
      return Attribute(name: name, type: primitive, isOptional: optional)
    }
    if arrayElement(type) != nil || type.is(DictionaryTypeSyntax.self) || genericBase(type) == "Set"
      || genericBase(type) == "Dictionary"
    {
      // A collection of values: one Transformable attribute, archived (SDRecipe.imageData, an
      // `[Data]`: class `Array<Data>`, NSSecureUnarchiveFromData).
      return Attribute(
        name: name, type: .transformable, isOptional: optional, valueTransformerName: "NSSecureUnarchiveFromData",
        customClassName: Self.collectionClassName(type))
    }
    guard let declared = declarations.resolve(type.trimmedDescription, in: scope) else {
      // One of Apple's value types (Color.Resolved, CGPoint…), when the sources do not declare it.
      if let elements = SDKValueTypes.elements(of: type) {
        return Attribute(name: name, type: .composite, isOptional: optional, elements: elements)
      }
      throw SourceError(
        spot: spot,
        reason: "\(owner).\(name): \(type.trimmedDescription) is not a type SwiftData stores and is not defined in "
          + "the sources given: give the file that declares it")
    }
    let elements = try compositeElements(of: declared, property: name, spot: spot, owner: owner, depth: 0)
    return Attribute(name: name, type: .composite, isOptional: optional, elements: elements)
  }

  /// A value type's elements as a composite attribute (`NSCompositeAttributeDescription`):
  /// - a struct: one element per stored property (the facts' `author{id, person, place, year}`);
  ///   a collection among them is Binary (the facts' `compiledTags{flavors…}`);
  /// - an enum with a raw type: one element named after the property, of the raw type (the facts'
  ///   `glasswareType{glasswareType}`, `unit{unit}` — the Swift types behind them are not in the
  ///   facts, so reading them as raw-value enums is a guess);
  /// - an enum without one: one element per case, a String (the facts' `folderType{systemAll,…}`;
  ///   the element's type for a case with associated values is a guess).
  /// Every element is optional, as in every SwiftData store the facts hold.
  func compositeElements(
    of declared: DeclaredType, property: String, spot: SourceSpot, owner: String, depth: Int
  ) throws -> [Attribute] {
    guard depth < 8 else {
      throw SourceError(spot: spot, reason: "\(owner).\(property): \(declared.name) nests itself")
    }
    switch declared.kind {
    case .classType:
      throw SourceError(
        spot: spot,
        reason: "\(owner).\(property): \(declared.name) is a class without @Model: SwiftData stores no such value")
    case .enumType:
      // The raw type is the one primitive among the conformances (`enum Kind: Codable, String`).
      if let type = declared.inherited.lazy.compactMap(Self.primitive).first {
        return [.compositeElement(property, type)]
      }
      guard !declared.cases.isEmpty else {
        throw SourceError(spot: spot, reason: "\(owner).\(property): the enum \(declared.name) has no cases")
      }
      return declared.cases.map { .compositeElement($0.name, .string) }
    case .structType:
      return try declared.properties.map { member in
        try compositeElement(member, of: declared, depth: depth)
      }
    }
  }

  /// One stored property of a struct kept as a composite: an element of its primitive type, Binary
  /// for a collection, or a composite of its own (a struct of the sources, one of Apple's value types).
  func compositeElement(_ member: DeclaredProperty, of declared: DeclaredType, depth: Int) throws -> Attribute {
    func element(_ type: AttributeType, elements: [Attribute] = []) -> Attribute {
      .compositeElement(member.name, type, elements: elements)
    }
    // Typed as an @Model class's property is: written, or spelled by its initial value.
    let (bare, _) = unwrapOptional(try propertyType(member, owner: declared.name))
    if let primitive = Self.primitive(bare) { return element(primitive) }
    if arrayElement(bare) != nil || bare.is(DictionaryTypeSyntax.self) || genericBase(bare) == "Set" {
      return element(.binary)
    }
    let nested = declarations.resolve(bare.trimmedDescription, in: declared.scope + [declared.name])
    if nested == nil, let elements = SDKValueTypes.elements(of: bare) { return element(.composite, elements: elements) }
    guard let nested else {
      throw SourceError(
        spot: member.spot,
        reason: "\(declared.name).\(member.name): \(bare.trimmedDescription) is not a value SwiftData stores and is "
          + "not defined in the sources given: give the file that declares it")
    }
    guard !nested.isModel else {
      throw SourceError(
        spot: member.spot,
        reason:
          "\(declared.name).\(member.name): \(bare.trimmedDescription) is not a value SwiftData stores in a composite")
    }
    // A composite inside a composite: nested as Core Data nests them (a guess: no store shows one).
    return element(
      .composite,
      elements: try compositeElements(
        of: nested, property: member.name, spot: member.spot, owner: declared.name, depth: depth + 1))
  }

  static func collectionClassName(_ type: TypeSyntax) -> String {
    if let array = type.as(ArrayTypeSyntax.self) { return "Array<\(array.element.trimmedDescription)>" }
    if let dictionary = type.as(DictionaryTypeSyntax.self) {
      return "Dictionary<\(dictionary.key.trimmedDescription), \(dictionary.value.trimmedDescription)>"
    }
    return type.trimmedDescription
  }

  // MARK: Options

  func apply(
    _ attributeSyntax: AttributeSyntax, to attribute: inout Attribute, unique: inout [[String]],
    property: DeclaredProperty, owner: DeclaredType
  ) throws {
    for argument in arguments(of: attributeSyntax) {
      let spot = property.spot
      switch argument.label?.text {
      case "originalName": attribute.renamingIdentifier = try string(argument.expression, spot: spot)
      case "hashModifier": attribute.versionHashModifier = try string(argument.expression, spot: spot)
      case nil:
        let option = Self.optionName(argument.expression)
        switch option {
        case "unique": unique.append([property.name])
        case "externalStorage": attribute.allowsExternalBinaryDataStorage = true
        case "preserveValueOnDeletion": attribute.preservesValueInHistoryOnDeletion = true
        case "ephemeral": attribute.isTransient = true
        // Spotlight indexing and CloudKit encryption are not in the version hash nor the store's tables.
        case "spotlight", "allowsCloudEncryption", "encrypt": break
        case "transformable":
          attribute.type = .transformable
          if let call = argument.expression.as(FunctionCallExprSyntax.self), let by = call.arguments.first?.expression {
            let name = by.trimmedDescription
            attribute.valueTransformerName =
              name.hasSuffix(".self") ? String(name.dropLast(5)) : (try? string(by, spot: spot)) ?? name
          }
        default:
          throw SourceError(
            spot: spot,
            reason:
              "\(owner.name).\(property.name): @Attribute option \(argument.expression.trimmedDescription) is not one migrun reads"
          )
        }
      default:
        throw SourceError(
          spot: property.spot,
          reason: "\(owner.name).\(property.name): @Attribute has no argument \(argument.label?.text ?? "")")
      }
    }
  }

  func apply(
    _ attributeSyntax: AttributeSyntax, to relationship: inout Relationship, unique: inout [[String]],
    property: DeclaredProperty, owner: DeclaredType
  ) throws {
    let spot = property.spot
    for argument in arguments(of: attributeSyntax) {
      switch argument.label?.text {
      case "deleteRule":
        relationship.deleteRule = try Self.deleteRule(argument.expression, spot: spot)
      case "minimumModelCount", "maximumModelCount":
        let count = try integer(argument.expression, spot: spot)
        guard let fitting = Int32(exactly: count), fitting >= 0 else {
          throw SourceError(
            spot: spot,
            reason:
              "\(owner.name).\(property.name): \(argument.label?.text ?? "") \(count) is no count Core Data holds (0 to \(Int32.max))"
          )
        }
        if argument.label?.text == "minimumModelCount" {
          relationship.minCount = fitting
        } else {
          relationship.maxCount = fitting
        }
      case "originalName": relationship.renamingIdentifier = try string(argument.expression, spot: spot)
      case "hashModifier": relationship.versionHashModifier = try string(argument.expression, spot: spot)
      case "inverse":
        let path = argument.expression.trimmedDescription.drop { $0 == "\\" }
        let parts = path.split(separator: ".").map(String.init)
        guard let last = parts.last else {
          throw SourceError(
            spot: spot, reason: "inverse \(argument.expression.trimmedDescription): a key path \\Type.property")
        }
        relationship.inverseName = last
        relationship.inverseEntity = relationship.destinationEntity
      case nil:
        switch Self.optionName(argument.expression) {
        case "unique": unique.append([property.name])
        case "spotlight", "allowsCloudEncryption", "encrypt": break
        default:
          throw SourceError(
            spot: spot, reason: "@Relationship option \(argument.expression.trimmedDescription) is not one migrun reads"
          )
        }
      default:
        throw SourceError(spot: spot, reason: "@Relationship has no argument \(argument.label?.text ?? "")")
      }
    }
  }

  /// `.cascade`, `.nullify`, `.deny` or `.noAction`.
  static func deleteRule(_ expression: ExprSyntax, spot: SourceSpot) throws -> DeleteRule {
    switch optionName(expression) {
    case "cascade": return .cascade
    case "nullify": return .nullify
    case "deny": return .deny
    case "noAction": return .noAction
    default:
      throw SourceError(spot: spot, reason: "deleteRule \(expression.trimmedDescription) is not one of SwiftData's")
    }
  }

  func arguments(of attribute: AttributeSyntax) -> LabeledExprListSyntax {
    if case .argumentList(let list) = attribute.arguments { return list }
    return LabeledExprListSyntax([])
  }

  /// `.unique`, `Schema.Attribute.Option.unique`, `.transformable(by: …)` → `unique`, `transformable`.
  static func optionName(_ expression: ExprSyntax) -> String {
    let called = expression.as(FunctionCallExprSyntax.self)?.calledExpression ?? expression
    return called.trimmedDescription.split(separator: ".").last.map(String.init) ?? ""
  }

  func string(_ expression: ExprSyntax, spot: SourceSpot) throws -> String {
    guard let literal = expression.as(StringLiteralExprSyntax.self),
      literal.segments.allSatisfy({ $0.is(StringSegmentSyntax.self) })
    else {
      throw SourceError(
        spot: spot, reason: "\(expression.trimmedDescription): migrun reads a plain string literal here")
    }
    return literal.segments.compactMap { $0.as(StringSegmentSyntax.self)?.content.text }.joined()
  }

  func integer(_ expression: ExprSyntax, spot: SourceSpot) throws -> Int {
    guard let value = Int(expression.trimmedDescription) else {
      throw SourceError(spot: spot, reason: "\(expression.trimmedDescription): migrun reads an integer literal here")
    }
    return value
  }

  /// A literal initial value as Core Data writes a default (`0`, `2.5`, `YES`, `text`); nil for
  /// anything else — a value computed when the app runs (`Date.now`, `UUID()`) is no default
  /// migrun can know, so the model has none (a step that would need it is refused as Core Data's
  /// inference refuses a new required attribute without a default).
  static func literal(_ expression: ExprSyntax?) -> String? {
    guard let expression else { return nil }
    if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-",
      let inner = literal(prefix.expression), Double(inner) != nil
    {
      return "-" + inner
    }
    switch expression.kind {
    case .integerLiteralExpr, .floatLiteralExpr:
      return expression.trimmedDescription.replacingOccurrences(of: "_", with: "")
    case .booleanLiteralExpr: return expression.trimmedDescription == "true" ? "YES" : "NO"
    case .stringLiteralExpr:
      guard let literal = expression.as(StringLiteralExprSyntax.self),
        literal.segments.allSatisfy({ $0.is(StringSegmentSyntax.self) })
      else { return nil }
      return literal.segments.compactMap { $0.as(StringSegmentSyntax.self)?.content.text }.joined()
    default: return nil
    }
  }

  /// `#Unique<Trip>([\.name, \.start], [\.id])` → `[["name", "start"], ["id"]]`.
  func keyPathGroups(_ macro: MacroExpansionDeclSyntax, owner: DeclaredType, spot: SourceSpot) throws -> [[String]] {
    try macro.arguments.map { argument in
      guard let array = argument.expression.as(ArrayExprSyntax.self) else {
        throw SourceError(
          spot: spot,
          reason: "#\(macro.macroName.text) in \(owner.name): migrun reads lists of key paths [\\.a, \\.b]")
      }
      return array.elements.map { element in
        String(element.expression.trimmedDescription.split(separator: ".").last ?? "")
      }
    }
  }

  // MARK: Inverses

  /// Inverses: the one a `@Relationship(inverse:)` names, set on both sides; else, where each side
  /// has exactly one relationship to the other and neither has an inverse, the two are paired —
  /// SwiftData's inference as we read its documentation ("when it can"; the facts' stores agree: a
  /// relationship whose destination has none back stays without one). The rule is a guess where
  /// the documentation is silent.
  func pairInverses(_ entities: inout [Entity], classes: [DeclaredType]) throws {
    func index(_ name: String) -> Int? { entities.firstIndex { $0.name == name } }
    for source in entities.indices {
      for slot in entities[source].relationships.indices {
        let relationship = entities[source].relationships[slot]
        guard let inverse = relationship.inverseName, let destination = index(relationship.destinationEntity) else {
          continue
        }
        guard let back = entities[destination].relationships.firstIndex(where: { $0.name == inverse }) else {
          throw SourceError(
            spot: classes[source].spot,
            reason:
              "\(entities[source].name).\(relationship.name): its inverse \(relationship.destinationEntity).\(inverse) is no relationship"
          )
        }
        entities[destination].relationships[back].inverseName = relationship.name
        entities[destination].relationships[back].inverseEntity = entities[source].name
      }
    }
    for source in entities.indices {
      for slot in entities[source].relationships.indices where entities[source].relationships[slot].inverseName == nil {
        let relationship = entities[source].relationships[slot]
        guard let destination = index(relationship.destinationEntity), destination != source else { continue }
        let mine = entities[source].relationships.filter { $0.destinationEntity == relationship.destinationEntity }
        let theirs = entities[destination].relationships.enumerated().filter {
          $0.element.destinationEntity == entities[source].name
        }
        guard mine.count == 1, theirs.count == 1, let (back, other) = theirs.first, other.inverseName == nil else {
          continue
        }
        entities[source].relationships[slot].inverseName = other.name
        entities[source].relationships[slot].inverseEntity = entities[destination].name
        entities[destination].relationships[back].inverseName = relationship.name
        entities[destination].relationships[back].inverseEntity = entities[source].name
      }
    }
  }

  // MARK: Types

  func unwrapOptional(_ type: TypeSyntax) -> (TypeSyntax, Bool) {
    if let optional = type.as(OptionalTypeSyntax.self) { return (unwrapOptional(optional.wrappedType).0, true) }
    if let implicit = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return (implicit.wrappedType, true) }
    if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
      let argument = identifier.genericArgumentClause?.arguments.first, case .type(let wrapped) = argument.argument
    {
      return (wrapped, true)
    }
    return (type, false)
  }

  func arrayElement(_ type: TypeSyntax) -> TypeSyntax? {
    if let array = type.as(ArrayTypeSyntax.self) { return array.element }
    if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Array",
      let argument = identifier.genericArgumentClause?.arguments.first, case .type(let element) = argument.argument
    {
      return element
    }
    return nil
  }

  func genericBase(_ type: TypeSyntax) -> String? {
    guard let identifier = type.as(IdentifierTypeSyntax.self), identifier.genericArgumentClause != nil else {
      return nil
    }
    return identifier.name.text
  }
}
