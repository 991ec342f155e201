import FileDoors
import Foundation
import LuaHost
import MigrunKit
import MigrunModel

/// A Lua mapping file, `<From>-<To>.lua`: a table keyed by destination entity, turned into a
/// mapping model and Lua migration policies. Entities the file does not mention are inferred as
/// Core Data would; source entities nothing maps are removed.
///
/// ```lua
/// return {
///   Country = {
///     attributes = { isoContinent = function(src) return src.continent ~= NULL and src.continent.numericISO3166Code or NULL end },
///   },
///   AuditEntry = "remove",
/// }
/// ```
package enum LuaMappingFile {
  static let entryKeys: Set<String> = [
    "from", "kind", "filter", "attributes", "relationships", "begin", "createDestinationInstances",
    "endInstanceCreation", "createRelationships", "endRelationshipCreation", "performCustomValidation", "finish",
    "userInfo",
  ]
  static let hookNames = [
    "begin", "createDestinationInstances", "endInstanceCreation", "createRelationships", "endRelationshipCreation",
    "performCustomValidation", "finish",
  ]

  /// Loads `file` for `step`: its mapping model, policies and `merge` rules; `require` finds modules
  /// in `policyFolders`.
  package static func load(
    _ step: MigrationStep, file: URL, policyFolders: [URL], limits: LuaLimits = LuaLimits()
  ) throws -> StepMapping {
    // "<folder>/<file>": what messages show (Lua shortens long chunk names, so not the whole path).
    let name = "\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)"
    let source: String
    do {
      source = try InputFile.text(file)
    } catch let error as InputFileError {
      throw LuaError(kind: .file, message: error.reason, script: name)
    } catch {
      throw LuaError(kind: .file, message: "cannot read the script (\(error.localizedDescription))", script: name)
    }
    return try load(step, source: source, name: name, policyFolders: policyFolders, limits: limits)
  }

  /// Loads a mapping file's text for `step` (`name` names it in messages).
  package static func load(
    _ step: MigrationStep, source: String, name: String, policyFolders: [URL], limits: LuaLimits = LuaLimits()
  ) throws -> StepMapping {
    let vm = try LuaVM(limits: limits, modulePaths: policyFolders)
    let (bridge, invoke) = try loadPrelude(in: vm, file: name)
    let returned = try vm.run(source: source, name: name)
    guard case .table(let table)? = returned.first else {
      throw MigrationError(
        .badMapping,
        reason: "\(name) must return a table of entity mappings, not \(returned.first?.typeName ?? "nothing")")
    }
    var builder = Builder(step: step, file: name, bridge: bridge, invoke: invoke)
    if step.destination.entity(named: "userInfo") == nil, let info = table["userInfo"] {
      // The mapping model's own user info (`m.model.userInfo`): a table of the file's.
      guard case .table = info else {
        throw MigrationError(.badMapping, reason: "\(name): userInfo is a table of values, not a \(info.typeName)")
      }
      builder.modelUserInfo = info
    }
    var mergeRules: LuaMigrationMergeRules?
    for (key, value) in try entries(of: table, step: step, file: name) {
      guard let entity = key.stringValue else {
        throw MigrationError(.badMapping, reason: "\(name): keys are entity names, not \(key.typeName)s")
      }
      if entity == "userInfo", step.destination.entity(named: "userInfo") == nil { continue }
      if entity == "merge", step.destination.entity(named: "merge") == nil {
        mergeRules = try Self.mergeRules(value, vm: vm, file: name, destination: step.destination)
        continue
      }
      try builder.add(entity, value)
    }
    if !table.array.isEmpty {
      throw MigrationError(
        .badMapping,
        reason: "\(name): entries are keyed by entity name (found a list); give their order as order = { … }")
    }
    let mentioned = builder.mappings.map(\.name)
    let (mapping, policies) = try builder.finish()
    var stepMapping = StepMapping(mapping: mapping, policies: policies, mergeRules: mergeRules.map { [$0] } ?? [])
    stepMapping.filledIn = Set(mapping.entityMappings.map(\.name)).subtracting(mentioned)
    return stepMapping
  }

  /// The migration prelude run in `vm`: the bridge for the file's hooks, and the function that invokes them.
  static func loadPrelude(in vm: LuaVM, file: String) throws -> (MigrationBridge, invoke: LuaFunction) {
    let bridge = MigrationBridge(vm: vm, file: file)
    let prelude = try vm.run(source: Prelude.source, name: "migrun prelude")
    guard let invoke = prelude.first?.functionValue, let rows = prelude.dropFirst().first?.functionValue else {
      throw MigrationError(.badMapping, reason: "the migration prelude did not load")
    }
    bridge.rows = rows
    bridge.userInfoTable = prelude.dropFirst(2).first?.functionValue
    return (bridge, invoke)
  }

  /// The file's `merge` entry: a table of merge rules by entity.
  static func mergeRules(_ value: LuaValue, vm: LuaVM, file: String, destination: ObjectModel) throws
    -> LuaMigrationMergeRules
  {
    guard case .table(let rules) = value else {
      throw MigrationError(
        .badMapping, reason: "\(file): merge is a table of merge rules by entity, not a \(value.typeName)")
    }
    return try LuaMigrationMergeRules(vm: vm, file: file, table: rules, destination: destination, strict: true)
  }

  /// The file's entries in the order the manager runs them: those its `order = { "A", "B" }` list
  /// names, in that order (Core Data's order of a mapping model's entity mappings, which each of the
  /// three passes follows), then the others by name. `order` is the list's key unless an entity is
  /// called so.
  static func entries(of table: LuaTable, step: MigrationStep, file: String) throws -> [(LuaValue, LuaValue)] {
    let byName = table.fields.sorted { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }
    guard step.destination.entity(named: "order") == nil, step.source.entity(named: "order") == nil,
      let listed = table["order"]
    else { return byName.map { ($0.key, $0.value) } }
    guard case .table(let list) = listed, list.fields.isEmpty else {
      throw MigrationError(
        .badMapping, reason: "\(file): order is a list of the entries' keys, not a \(listed.typeName)")
    }
    var ordered: [(LuaValue, LuaValue)] = []
    var seen: Set<String> = []
    for item in list.array {
      guard let key = item.stringValue, key != "order", let value = table[key] else {
        throw MigrationError(
          .badMapping,
          reason:
            "\(file): order names \(item.stringValue.map { "'\($0)'" } ?? item.typeName), which is no entry of the file"
        )
      }
      guard seen.insert(key).inserted else {
        throw MigrationError(.badMapping, reason: "\(file): order names '\(key)' twice")
      }
      ordered.append((.text(key), value))
    }
    let rest = byName.filter { ($0.key.stringValue).map { $0 != "order" && !seen.contains($0) } ?? true }
    return ordered + rest.map { ($0.key, $0.value) }
  }

  struct Builder {
    let step: MigrationStep
    let file: String
    let bridge: MigrationBridge
    let invoke: LuaFunction
    var mappings: [EntityMapping] = []
    var policies: [String: any EntityMigrationPolicy] = [:]
    var handledDestinations: Set<String> = []
    var removedSources: Set<String> = []
    /// The file's top-level `userInfo` (`m.model.userInfo`).
    var modelUserInfo: LuaValue = .table(LuaTable())

    var source: ObjectModel { step.source }
    var destination: ObjectModel { step.destination }

    func fail(_ entity: String, _ property: String? = nil, _ reason: String) -> MigrationError {
      MigrationError(.badMapping, entity: entity, property: property, reason: "\(file): \(reason)")
    }

    mutating func add(_ name: String, _ value: LuaValue) throws {
      switch value {
      case .string:
        switch value.stringValue {
        case "remove":
          guard source.entity(named: name) != nil else {
            throw fail(name, nil, "\"remove\" names a source entity; the source model has no '\(name)'")
          }
          removedSources.insert(name)
          mappings.append(
            EntityMapping(
              name: EntityMapping.name(source: name, destination: nil), kind: .remove, sourceEntity: name,
              destinationEntity: nil))
        case "copy", "add", "transform":
          try addEntry(name, LuaTable(fields: [.text("kind"): value]))
        default:
          throw fail(name, nil, "\"\(value.stringValue ?? "")\" is not a mapping kind (remove, copy, add, or a table)")
        }
      case .table(let entry):
        try addEntry(name, entry)
      default:
        throw fail(
          name, nil, "an entity's mapping is a table or one of \"copy\", \"remove\", \"add\", not a \(value.typeName)")
      }
    }

    mutating func addEntry(_ name: String, _ entry: LuaTable) throws {
      guard let target = destination.entity(named: name) else {
        throw fail(name, nil, "the destination model (\(step.to)) has no entity '\(name)'")
      }
      for key in entry.fields.keys {
        guard let text = key.stringValue, LuaMappingFile.entryKeys.contains(text) else {
          throw fail(
            name, nil,
            "unknown field '\(key.stringValue ?? key.typeName)' (fields: \(LuaMappingFile.entryKeys.sorted().joined(separator: ", ")))"
          )
        }
      }
      let (kind, origin) = try kindAndOrigin(name, entry, target: target)
      var mapping = EntityMapping(
        name: EntityMapping.name(source: origin?.name, destination: name), kind: kind, sourceEntity: origin?.name,
        destinationEntity: name)
      let scriptAttributes = entry["attributes"]?.tableValue?.fields ?? [:]
      let scriptRelationships = entry["relationships"]?.tableValue?.fields ?? [:]
      for key in scriptAttributes.keys
      where !destination.attributes(of: target).contains(where: { $0.name == key.stringValue }) {
        throw fail(name, key.stringValue, "attributes: the destination entity has no such attribute")
      }
      for key in scriptRelationships.keys
      where !destination.relationships(of: target).contains(where: { $0.name == key.stringValue }) {
        throw fail(name, key.stringValue, "relationships: the destination entity has no such relationship")
      }
      var computed: [(attribute: Attribute, function: LuaFunction)] = []
      if let origin, kind != .custom {
        computed = try mapAttributes(name, scriptAttributes, from: origin, to: target, into: &mapping)
        try mapRelationships(name, scriptRelationships, from: origin, to: target, into: &mapping)
      }
      let (hooks, filter) = try hooksAndFilter(name, entry)
      let userInfo = entry["userInfo"] ?? .table(LuaTable())
      guard case .table = userInfo else {
        throw fail(name, nil, "userInfo is a table of values, not a \(userInfo.typeName)")
      }
      mappings.append(mapping)
      handledDestinations.insert(name)
      policies[mapping.name] = LuaEntityPolicy(
        bridge: bridge, invoke: invoke, file: file, step: step, mapping: mapping, hooks: hooks,
        computed: computed.sorted { $0.attribute.name < $1.attribute.name }, filter: filter,
        userInfo: (mapping: userInfo, model: modelUserInfo))
    }

    /// The entry's kind and its source entity (`from`, else the one Core Data would match).
    func kindAndOrigin(_ name: String, _ entry: LuaTable, target: Entity) throws -> (EntityMapping.Kind, Entity?) {
      let kindName = entry["kind"]?.stringValue
      var origin: Entity?
      if let from = entry["from"]?.stringValue {
        guard let found = source.entity(named: from) else {
          throw fail(name, nil, "from: the source model (\(step.from)) has no entity '\(from)'")
        }
        origin = found
      } else if kindName != "add" {
        origin = try MappingModel.match(target, in: source)
      }
      let kind: EntityMapping.Kind =
        switch kindName {
        case "add": .add
        case "copy": .copy
        case "custom": .custom
        case nil, "transform": .transform
        default: throw fail(name, nil, "kind '\(kindName ?? "")' is not add, copy, transform or custom")
        }
      return (kind, origin)
    }

    /// Each destination attribute's source: named, computed by a function, or inferred. Returns the
    /// computed ones.
    func mapAttributes(
      _ name: String, _ scriptAttributes: [LuaValue: LuaValue], from origin: Entity, to target: Entity,
      into mapping: inout EntityMapping
    ) throws -> [(attribute: Attribute, function: LuaFunction)] {
      var computed: [(attribute: Attribute, function: LuaFunction)] = []
      let sourceAttributes = source.attributes(of: origin)
      for attribute in destination.attributes(of: target) where !attribute.isTransient {
        switch scriptAttributes[.text(attribute.name)] {
        case .string(let bytes)?:
          // A source attribute, carried as Core Data would carry it (converted, defaulted).
          let from = String(decoding: bytes, as: UTF8.self)
          guard let old = sourceAttributes.first(where: { $0.name == from }) else {
            throw fail(
              name, attribute.name, "attributes: the source entity '\(origin.name)' has no attribute '\(from)'")
          }
          mapping.attributes[attribute.name] = try carried(attribute, from: old, entry: name)
        case .function(let function)?:
          computed.append((attribute, function))
          mapping.attributes[attribute.name] = .computed
        case nil:
          // Not mentioned: inferred; what cannot be, left to the rules (a hook may set it).
          mapping.attributes[attribute.name] = try carried(
            attribute, from: MappingModel.continued(attribute, in: sourceAttributes), entry: name,
            leavingNullToRules: true)
        case let other?:
          throw fail(
            name, attribute.name, "attributes: give a source attribute's name or a function, not a \(other.typeName)")
        }
      }
      return computed
    }

    /// Each destination relationship's source: named, left empty (`false`), or inferred.
    func mapRelationships(
      _ name: String, _ scriptRelationships: [LuaValue: LuaValue], from origin: Entity, to target: Entity,
      into mapping: inout EntityMapping
    ) throws {
      let sourceRelationships = source.relationships(of: origin)
      for relationship in destination.relationships(of: target) where !relationship.isTransient {
        switch scriptRelationships[.text(relationship.name)] {
        case .string(let bytes)?:
          let from = String(decoding: bytes, as: UTF8.self)
          guard sourceRelationships.contains(where: { $0.name == from }) else {
            throw fail(
              name, relationship.name,
              "relationships: the source entity '\(origin.name)' has no relationship '\(from)'")
          }
          mapping.relationships[relationship.name] = from
        case .boolean(false)?:
          continue
        case nil:
          if let old = MappingModel.continued(relationship, in: sourceRelationships) {
            mapping.relationships[relationship.name] = old.name
          }
        case let other?:
          throw fail(
            name, relationship.name,
            "relationships: give a source relationship's name (or false: left empty), not a \(other.typeName)")
        }
      }
    }

    /// The entry's hooks and filter, each a function.
    func hooksAndFilter(_ name: String, _ entry: LuaTable) throws -> ([String: LuaFunction], LuaFunction?) {
      var hooks: [String: LuaFunction] = [:]
      for hook in LuaMappingFile.hookNames {
        switch entry[hook] {
        case .function(let function)?: hooks[hook] = function
        case nil: continue
        case let other?: throw fail(name, nil, "\(hook) must be a function, not a \(other.typeName)")
        }
      }
      var filter: LuaFunction?
      if let value = entry["filter"] {
        guard case .function(let function) = value else { throw fail(name, nil, "filter must be a function") }
        filter = function
      }
      return (hooks, filter)
    }

    /// How `attribute` gets its value from `old` — Core Data's inference, the one rule for inferred
    /// steps and mapping files (``MappingModel/attributeSource(for:continuing:in:)``).
    func carried(_ attribute: Attribute, from old: Attribute?, entry: String, leavingNullToRules: Bool = false) throws
      -> AttributeSource
    {
      do {
        return try MappingModel.attributeSource(
          for: attribute, continuing: old, in: entry, leavingNullToRules: leavingNullToRules)
      } catch {
        throw fail(entry, attribute.name, "\(error.reason): give it a function in attributes")
      }
    }

    /// Unmentioned entities, inferred one by one; unmapped sources removed.
    mutating func finish() throws -> (MappingModel, [String: any EntityMigrationPolicy]) {
      for entity in destination.entities where !handledDestinations.contains(entity.name) {
        guard let origin = try MappingModel.match(entity, in: source) else {
          mappings.append(
            EntityMapping(
              name: EntityMapping.name(source: nil, destination: entity.name), kind: .add, sourceEntity: nil,
              destinationEntity: entity.name))
          continue
        }
        guard !origin.isAbstract else { continue }
        do {
          mappings.append(
            try MappingModel.entityMapping(
              from: origin, to: entity, source: source, destination: destination, requiredRelationshipsMayBeFilled: true
            ))
        } catch {
          throw fail(entity.name, error.property, "not mentioned, and it cannot be inferred: \(error.reason)")
        }
      }
      let mapped = Set(mappings.compactMap(\.sourceEntity))
      for entity in source.entities where !entity.isAbstract && !mapped.contains(entity.name) {
        mappings.append(
          EntityMapping(
            name: EntityMapping.name(source: entity.name, destination: nil), kind: .remove, sourceEntity: entity.name,
            destinationEntity: nil))
      }
      return (MappingModel(source: source, destination: destination, entityMappings: mappings), policies)
    }
  }
}
