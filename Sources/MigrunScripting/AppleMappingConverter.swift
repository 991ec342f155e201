import Foundation
import MigrunKit
import MigrunModel

/// Writes a mapping model made with Xcode (``AppleMappingModel``) as a Lua mapping file: one entry
/// per entity mapping, value expressions as Lua, custom `NSEntityMigrationPolicy` classes as Lua
/// modules named after the class (`Migrations.Country5ToCountry6Policy` → `Country5ToCountry6Policy.lua`
/// in a policy folder) whose hooks the entry takes.
///
/// migrun runs a mapping model by converting it and loading the result, so `migrun convert` writes
/// exactly what runs. Expressions it can write: key paths from `$source` (through relationships,
/// with KVC collection operators), constants, `FUNCTION($manager,
/// "destinationInstancesForEntityMappingNamed:sourceInstances:" | "destinationInstancesForSourceRelationshipNamed:sourceInstances:", …)`,
/// `FUNCTION($source, "valueForKey:", …)` and `FUNCTION($entityPolicy, "selector:", …)`; anything
/// else is refused, naming the mapping model, the entity mapping and the property.
package enum AppleMappingConverter {
  package struct Conversion: Sendable {
    /// The Lua mapping file.
    package let lua: String
    /// Custom policy classes the mapping model names → the Lua module each is looked up as.
    package let policyModules: [String: String]
    /// Modules not found in the policy folders (written as stubs when asked to).
    package let missingModules: [String]
  }

  /// What to do about a custom policy class with no `ClassName.lua` in the policy folders.
  package enum MissingPolicy: Sendable {
    /// Refuse, listing every class still missing (running a mapping model).
    case fail
    /// Write a stub table with the seven hooks to fill in (`migrun convert`).
    case stub
  }

  /// The Lua module a policy class is looked up as: the class name without its module prefix.
  package static func moduleName(ofClass className: String) -> String {
    String(className.split(separator: ".").last ?? Substring(className))
  }

  package static func convert(
    _ model: AppleMappingModel, source: ObjectModel, destination: ObjectModel, policyFolders: [URL],
    missing: MissingPolicy
  ) throws(MigrationError) -> Conversion {
    var writer = Writer(model: model, source: source, destination: destination)
    var modules: [String: String] = [:]
    for mapping in model.entityMappings {
      if let className = mapping.policyClassName { modules[className] = moduleName(ofClass: className) }
    }
    let missingModules = Set(modules.values).filter { module in
      !policyFolders.contains {
        FileManager.default.fileExists(atPath: $0.appendingPathComponent("\(module).lua").path)
      }
    }.sorted()
    if missing == .fail, !missingModules.isEmpty {
      let uses = model.entityMappings.compactMap { mapping -> String? in
        guard let className = mapping.policyClassName, missingModules.contains(moduleName(ofClass: className)) else {
          return nil
        }
        return "\(className) (entity mapping \(mapping.name))"
      }
      let folders =
        policyFolders.isEmpty
        ? "no --policies folder given" : "looked in \(policyFolders.map(\.path).joined(separator: ", "))"
      throw MigrationError(
        .badMapping,
        reason: "\(model.fileName): custom policy classes without a Lua policy: \(uses.joined(separator: ", ")); "
          + "write \(missingModules.map { "\($0).lua" }.joined(separator: ", ")) returning the class's hooks in a "
          + "policy folder (\(folders))")
    }
    let lua = try writer.write(modules: modules, stubs: Set(missingModules))
    return Conversion(lua: lua, policyModules: modules, missingModules: missingModules)
  }

  struct Writer {
    let model: AppleMappingModel
    let source: ObjectModel
    let destination: ObjectModel
    var lines: [String] = []
    /// The entries' keys in the mapping model's order (`order = { … }`: the manager runs them so).
    var order: [String] = []

    init(model: AppleMappingModel, source: ObjectModel, destination: ObjectModel) {
      self.model = model
      self.source = source
      self.destination = destination
    }

    func fail(_ mapping: AppleMappingModel.EntityMapping, _ property: String?, _ reason: String) -> MigrationError {
      let place = "entity mapping \(mapping.name)" + (property.map { ", property '\($0)'" } ?? "")
      return MigrationError(.badMapping, reason: "\(model.fileName): \(place): \(reason)")
    }

    /// The name a mapping has in a Lua mapping file (Xcode names added/removed entities' mappings
    /// after the entity alone; migrun's Lua files say `AddX`/`RemoveX`).
    func luaMappingName(_ appleName: String) -> String? {
      model.entityMappings.first { $0.name == appleName }.map {
        EntityMapping.name(source: $0.sourceEntity, destination: $0.destinationEntity)
      }
    }

    mutating func write(modules: [String: String], stubs: Set<String>) throws(MigrationError) -> String {
      lines = [
        "-- \(model.sourceVersion) → \(model.destinationVersion), converted by `migrun convert` from \(model.fileName).",
        "-- One entry per entity mapping, keyed by destination entity; each value expression is written as Lua",
        "-- (the expression is in the comment beside it). Only these entity mappings run, as in Core Data: a",
        "-- destination entity the mapping model does not map is \"add\" (no objects but what a policy inserts),",
        "-- a source entity it does not map is dropped (reported; --no-drops refuses).",
      ]
      let used = Set(modules.values).sorted()
      for module in used {
        let classes = modules.filter { $0.value == module }.keys.sorted().joined(separator: ", ")
        lines.append("")
        if stubs.contains(module) {
          lines += [
            "-- \(classes): a custom NSEntityMigrationPolicy of the app. Its hooks were Swift or Objective-C;",
            "-- write them here in Lua (or in \(module).lua in a policy folder, then `local \(module) = require \"\(module)\"`).",
            "local \(module) = {",
            "  -- Until the hooks are written, the step fails here, before anything is written (Core Data",
            "  -- would run the class): remove this `begin` (or fill it in) once they are.",
            "  begin = function() error(\(lua("\(classes): the custom policy is not written in Lua yet: write its hooks in this table (or \(module).lua in a policy folder)"))) end,",
          ]
          for hook in LuaMappingFile.hookNames where hook != "begin" {
            let argument =
              hook == "createDestinationInstances" ? "src, m" : hook == "createRelationships" ? "dst, m" : "m"
            lines.append("  -- \(hook) = function(\(argument)) end,")
          }
          lines.append("}")
        } else {
          lines.append("local \(module) = require \"\(module)\" -- the custom policy \(classes)")
        }
      }
      lines += ["", "return {"]
      var keys: Set<String> = []
      for mapping in model.entityMappings {
        try entry(mapping, modules: modules, keys: &keys)
      }
      unmapped(keys: &keys)
      // Core Data runs the entity mappings in the model's order, pass by pass: a policy may find in
      // the destination what an earlier mapping made. (An entity named `order` keeps the key.)
      if destination.entity(named: "order") == nil, source.entity(named: "order") == nil, order.count > 1 {
        lines += [
          "  -- The entity mappings in \(model.fileName)'s order, which each of Core Data's passes follows.",
          "  order = { \(order.map(lua).joined(separator: ", ")) },",
        ]
      }
      lines.append("}")
      return lines.joined(separator: "\n") + "\n"
    }

    /// Destination entities no entity mapping of the model maps, each written as `"add"`. Core Data
    /// migrates exactly the entity mappings a mapping model holds (`NSMigrationManager` walks
    /// `mappingModel.entityMappings`, nothing else): such an entity gets only what a policy inserts —
    /// never an inferred copy of the source entity of its name, whose objects a policy may be making
    /// itself (a policy splitting Measurement's locations into Tracks inserts the GeoLocations). The
    /// source entities no mapping takes are left to the mapping file's rule: removed, and reported.
    mutating func unmapped(keys: inout Set<String>) {
      let mapped = Set(model.entityMappings.compactMap(\.destinationEntity))
      for entity in destination.entities.sorted(by: { $0.name < $1.name })
      where !mapped.contains(entity.name) && keys.insert(entity.name).inserted {
        order.append(entity.name)
        lines += [
          "  -- \(entity.name): no entity mapping in \(model.fileName), so Core Data makes none of its objects",
          "  \(key(entity.name)) = \"add\",",
        ]
      }
    }

    mutating func entry(
      _ mapping: AppleMappingModel.EntityMapping, modules: [String: String], keys: inout Set<String>
    ) throws(MigrationError) {
      try checkSourceExpression(of: mapping)
      let module = mapping.policyClassName.map { modules[$0] ?? AppleMappingConverter.moduleName(ofClass: $0) }
      let header =
        "  -- \(mapping.name) (\(mapping.kind.rawValue))" + (mapping.policyClassName.map { ", policy \($0)" } ?? "")
      guard let destinationName = mapping.destinationEntity else {
        guard let sourceName = mapping.sourceEntity else { return }
        // A removed entity: the key is the source entity (unless a destination entity has that name).
        if destination.entity(named: sourceName) == nil, module == nil, keys.insert(sourceName).inserted {
          order.append(sourceName)
          lines += [header, "  \(sourceName) = \"remove\","]
        } else {
          lines.append("\(header): objects of \(sourceName) are not migrated")
        }
        return
      }
      guard let target = destination.entity(named: destinationName) else {
        throw fail(mapping, nil, "the destination model has no entity '\(destinationName)'")
      }
      guard keys.insert(destinationName).inserted else {
        throw fail(
          mapping, nil,
          "a second entity mapping to \(destinationName): a Lua mapping file has one entry per destination entity")
      }
      order.append(destinationName)
      lines += [header, "  \(destinationName) = {"]
      let origin = try sourceEntity(of: mapping)
      if let origin {
        lines.append("    from = \(lua(origin.name)),")
      } else {
        lines.append("    kind = \"add\",")
      }
      if !mapping.userInfo.isEmpty {
        // The entity mapping's user info (`m.mapping.userInfo`), its values as the archive holds them.
        let fields = mapping.userInfo.sorted { $0.key < $1.key }.map { "[\(lua($0.key))] = \(lua($0.value))" }
        lines.append("    userInfo = { \(fields.joined(separator: ", ")) },")
      }
      var relationshipCode: [String] = []
      if let origin {
        try attributes(mapping, origin: origin, target: target, module: module)
        relationshipCode = try relationships(mapping, origin: origin, target: target, module: module)
      }
      hooks(mapping, module: module, relationshipCode: relationshipCode)
      lines.append("  },")
    }

    /// The entity an entity mapping maps from, nil for one that adds objects.
    func sourceEntity(of mapping: AppleMappingModel.EntityMapping) throws(MigrationError) -> Entity? {
      try mapping.sourceEntity.map { (name) throws(MigrationError) -> Entity in
        guard let entity = source.entity(named: name) else {
          throw fail(mapping, nil, "the source model has no entity '\(name)'")
        }
        return entity
      }
    }

    /// An entity mapping's source expression, which a Lua mapping file can say only as every object
    /// of its source entity.
    func checkSourceExpression(of mapping: AppleMappingModel.EntityMapping) throws(MigrationError) {
      guard let expression = mapping.sourceExpression else { return }
      guard case .fetch(let entity, let predicate) = expression, entity == mapping.sourceEntity else {
        throw fail(mapping, nil, "unsupported source expression \(expression)")
      }
      guard predicate == "TRUEPREDICATE" else {
        throw fail(
          mapping, nil, "the filter predicate \(predicate) is not supported: write the mapping in Lua (`filter`)")
      }
    }

    /// The entry's hooks: the policy module's, and `createRelationships` running the relationships'
    /// code (`relationshipCode`) before the module's own.
    mutating func hooks(_ mapping: AppleMappingModel.EntityMapping, module: String?, relationshipCode: [String]) {
      for hook in LuaMappingFile.hookNames {
        if hook == "createRelationships", !relationshipCode.isEmpty {
          let sourceMapping = EntityMapping.name(source: mapping.sourceEntity, destination: mapping.destinationEntity)
          lines.append("    createRelationships = function(dst, m)")
          lines.append("      local src = m:sources(\(lua(sourceMapping)), dst)[1]")
          lines += relationshipCode.map { "      " + $0 }
          if let module {
            lines.append("      if \(module).createRelationships then return \(module).createRelationships(dst, m) end")
          }
          lines.append("    end,")
        } else if let module {
          lines.append("    \(hook) = \(module).\(hook),")
        }
      }
    }

    mutating func attributes(
      _ mapping: AppleMappingModel.EntityMapping, origin: Entity, target: Entity, module: String?
    ) throws(MigrationError) {
      let byName = Dictionary(mapping.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      let sourceAttributes = source.attributes(of: origin)
      var entries: [String] = []
      for attribute in destination.attributes(of: target) where !attribute.isTransient {
        guard let expression = byName[attribute.name]?.expression else {
          // No value expression: Core Data leaves the attribute at its default. Said explicitly when
          // the Lua file would otherwise copy a source attribute of that name.
          if MappingModel.continued(attribute, in: sourceAttributes) != nil {
            entries.append(
              "\(key(attribute.name)) = function() return \(literal(attribute.defaultValue)) end, -- no value expression"
            )
          }
          continue
        }
        if case .keyPath(.variable("source"), let keys) = expression, keys.count == 1,
          let old = sourceAttributes.first(where: { $0.name == keys[0] }), old.type == attribute.type
        {
          entries.append("\(key(attribute.name)) = \(lua(keys[0])),")
          continue
        }
        let code = try value(expression, mapping, attribute.name, module: module, inRelationships: false)
        entries.append("\(key(attribute.name)) = function(src, m) return \(code) end, -- \(expression)")
      }
      guard !entries.isEmpty else { return }
      lines.append("    attributes = {")
      lines += entries.map { "      " + $0 }
      lines.append("    },")
    }

    /// Writes the `relationships` table; returns the statements of a `createRelationships` hook
    /// for the relationships whose expressions need one.
    mutating func relationships(
      _ mapping: AppleMappingModel.EntityMapping, origin: Entity, target: Entity, module: String?
    ) throws(MigrationError) -> [String] {
      let byName = Dictionary(mapping.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
      let sourceRelationships = source.relationships(of: origin)
      var entries: [String] = []
      var code: [String] = []
      for relationship in destination.relationships(of: target) where !relationship.isTransient {
        guard let expression = byName[relationship.name]?.expression else {
          if MappingModel.continued(relationship, in: sourceRelationships) != nil {
            entries.append("\(key(relationship.name)) = false, -- no value expression: left empty")
          }
          continue
        }
        if let name = plainRelationship(expression, relationship, sourceRelationships) {
          entries.append("\(key(relationship.name)) = \(lua(name)), -- \(expression)")
          continue
        }
        let found = try value(expression, mapping, relationship.name, module: module, inRelationships: true)
        code.append("-- \(expression)")
        code.append(
          relationship.isToMany
            ? "dst.\(relationship.name) = \(found)" : "dst.\(relationship.name) = (\(found))[1] or NULL")
      }
      if !entries.isEmpty {
        lines.append("    relationships = {")
        lines += entries.map { "      " + $0 }
        lines.append("    },")
      }
      return code
    }

    /// A relationship expression that is the default of a Lua mapping file (the destinations of one
    /// source relationship's targets): the source relationship's name.
    func plainRelationship(
      _ expression: MappingExpression, _ relationship: Relationship, _ sourceRelationships: [Relationship]
    ) -> String? {
      guard case .function(.variable("manager"), let selector, let arguments) = expression, arguments.count == 2,
        case .constant(.string(let name)) = arguments[0],
        case .keyPath(.variable("source"), let keys) = arguments[1], keys.count == 1,
        let old = sourceRelationships.first(where: { $0.name == keys[0] }), old.isToMany == relationship.isToMany
      else { return nil }
      switch selector {
      case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
        return name == keys[0] ? name : nil
      case "destinationInstancesForEntityMappingNamed:sourceInstances:":
        // Through the one mapping that takes objects of the target's entity: the Lua default's result.
        let candidates = model.entityMappings.filter { mapping in
          guard let entity = mapping.sourceEntity.flatMap({ source.entity(named: $0) }) else { return false }
          return source.entity(entity, isKindOf: old.destinationEntity)
        }
        guard candidates.count == 1, candidates[0].name == name, let to = candidates[0].destinationEntity,
          let entity = destination.entity(named: to),
          destination.entity(entity, isKindOf: relationship.destinationEntity)
        else { return nil }
        return keys[0]
      default:
        return nil
      }
    }

    /// A constant of a value expression, as Lua writes it.
    func luaConstant(_ constant: MappingExpression.ConstantValue) -> String {
      switch constant {
      case .null: return "NULL"
      case .string(let text): return lua(text)
      case .integer(let number): return String(number)
      case .real(let number): return number.isFinite ? "\(number)" : "(\(number > 0 ? "" : "-")math.huge)"
      case .boolean(let flag): return flag ? "true" : "false"
      }
    }

    /// A Lua expression for `expression`, in a function of `src` and `m`.
    func value(
      _ expression: MappingExpression, _ mapping: AppleMappingModel.EntityMapping, _ property: String,
      module: String?, inRelationships: Bool
    ) throws(MigrationError) -> String {
      func unsupported(_ part: MappingExpression) -> MigrationError {
        let whole = part == expression ? "" : " in \(expression)"
        return fail(
          mapping, property,
          "unsupported value expression \(part)\(whole) (migrun runs key paths from $source, constants, "
            + "$manager's destinationInstancesForEntityMappingNamed:sourceInstances: and "
            + "destinationInstancesForSourceRelationshipNamed:sourceInstances:, and $entityPolicy functions)")
      }
      func convert(_ part: MappingExpression) throws(MigrationError) -> String {
        switch part {
        case .constant(let constant): return luaConstant(constant)
        case .variable("source"): return "src"
        case .variable("manager"): return "m"
        case .keyPath(.variable("source"), let keys):
          if keys.count == 1, !keys[0].hasPrefix("@") { return "src.\(keys[0])" }
          return "src:valueForKeyPath(\(lua(keys.joined(separator: "."))))"
        case .function(.variable("manager"), let selector, let arguments) where arguments.count == 2:
          let instances = try convert(arguments[1])
          switch (selector, arguments[0]) {
          case ("destinationInstancesForEntityMappingNamed:sourceInstances:", .constant(.string(let name))):
            guard let luaName = luaMappingName(name) else {
              throw fail(
                mapping, property, "\(expression) names the entity mapping \(name), which the model does not have")
            }
            return "m:destinations(\(lua(luaName)), \(instances))"
          case ("destinationInstancesForSourceRelationshipNamed:sourceInstances:", .constant(.string)):
            return "m:destinations(nil, \(instances))"
          default: throw unsupported(part)
          }
        case .function(.variable("entityPolicy"), let selector, let arguments):
          guard let module else {
            throw fail(
              mapping, property,
              "\(expression) calls $entityPolicy, but the entity mapping names no custom policy class")
          }
          var converted: [String] = []
          for argument in arguments { converted.append(try convert(argument)) }
          return "\(module).\(functionName(selector))(\(converted.joined(separator: ", ")))"
        default:
          throw unsupported(part)
        }
      }
      return try convert(expression)
    }

    /// `convertColor:withAlpha:` → `convertColor_withAlpha`: the Lua function a policy module gives
    /// for an `$entityPolicy` selector.
    func functionName(_ selector: String) -> String {
      selector.split(separator: ":").joined(separator: "_")
    }

    func key(_ name: String) -> String { LuaSource.key(name) }

    static func isIdentifier(_ name: String) -> Bool { LuaSource.isIdentifier(name) }

    func literal(_ value: StoreValue) -> String { LuaSource.literal(value) }

    /// A Lua string literal.
    func lua(_ text: String) -> String { LuaSource.string(text) }
  }
}
