import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunStore

/// Merge rules for a migration's uniqueness collisions, in Lua: per destination entity, a function
/// of the object already written and the one colliding with it, returning the values that survive.
///
/// ```lua
/// local dedupe = require "merge.dedupe"
/// return {                                    -- a mapping file's `merge` table, or a --merge-rules file
///   Person = dedupe.rule { newest = "modified", max = { "visits" } },
///   Tag = function(existing, incoming) return existing end,
/// }
/// ```
/// `existing` and `incoming` are plain tables of values (`NULL` for SQL NULL; `existing` also has its
/// relationships as `"Entity/pN"` strings, as in context merge rules). The result's attributes
/// replace the existing object's (those it leaves out are kept). Relationships of every
/// folded source object are joined: to-many members are the union, a to-one comes from the first
/// source that has one.
package final class LuaMigrationMergeRules: MigrationMergeRule {
  let vm: LuaVM
  let file: String
  let destination: ObjectModel
  let rules: [String: LuaFunction]

  /// A `--merge-rules` file: entities the step's destination model does not have are left out
  /// (a chain's steps differ), but a rule that is not a function is an error.
  package convenience init(
    file: URL, destination: ObjectModel, policyFolders: [URL] = [], limits: LuaLimits = LuaLimits()
  )
    throws
  {
    let name = "\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)"
    let vm = try LuaVM(limits: limits, modulePaths: policyFolders + [file.deletingLastPathComponent()])
    let returned = try vm.run(file: file, name: name)
    guard case .table(let table)? = returned.first else {
      throw MigrationError(
        .badMapping,
        reason:
          "\(name) must return a table of merge rules keyed by entity name, not \(returned.first?.typeName ?? "nothing")"
      )
    }
    try self.init(vm: vm, file: name, table: table, destination: destination, strict: false)
  }

  /// The `merge` table of a mapping file (every entity must exist in the destination model).
  init(vm: LuaVM, file: String, table: LuaTable, destination: ObjectModel, strict: Bool) throws {
    self.vm = vm
    self.file = file
    self.destination = destination
    var rules: [String: LuaFunction] = [:]
    guard table.array.isEmpty else {
      throw MigrationError(.badMapping, reason: "\(file): merge rules are keyed by entity name (found a list)")
    }
    for (key, value) in table.fields {
      guard let name = key.stringValue else {
        throw MigrationError(.badMapping, reason: "\(file): merge rules are keyed by entity name, not \(key.typeName)s")
      }
      guard let function = value.functionValue else {
        throw MigrationError(
          .badMapping, entity: name,
          reason: "\(file): the merge rule is a function(existing, incoming), not a \(value.typeName)")
      }
      guard destination.entity(named: name) != nil else {
        if strict {
          throw MigrationError(
            .badMapping, entity: name, reason: "\(file): merge: the destination model has no entity '\(name)'")
        }
        continue
      }
      rules[name] = function
    }
    self.rules = rules
  }

  package var entities: [String] { rules.keys.sorted() }

  package func handles(_ entity: String) -> Bool { rules[entity] != nil }

  package func merge(entity: String, existing: StoredObject, incoming: StoredObject) throws -> [String: StoreValue] {
    guard let rule = rules[entity], let found = destination.entity(named: existing.id.entity) else { return [:] }
    let made: [LuaValue]
    do {
      made = try vm.call(
        rule, [LuaMergeRules.lua(existing, model: destination), LuaMergeRules.lua(incoming, model: destination)])
    } catch {
      throw MigrationError(.policy, entity: entity, reason: "merge rule: \(error)", underlying: error)
    }
    guard case .table(let table)? = made.first else {
      throw MigrationError(
        .policy, entity: entity,
        reason: "\(file): the merge rule returned \(made.first?.typeName ?? "nothing"), not a table of values")
    }
    var values: [String: StoreValue] = [:]
    let attributes = destination.attributes(of: found)
    for (key, value) in table.fields {
      guard let name = key.stringValue else { continue }
      if let composite = MigrationBridge.composite(name, of: found, in: destination) {
        var elements = StoredObject(id: existing.id, attributes: [:])
        do {
          try MigrationBridge.storeComposite(value, composite, path: name, entity: found.name, into: &elements)
        } catch {
          throw MigrationError(.policy, entity: entity, property: name, reason: "\(file): \(error)", underlying: error)
        }
        values.merge(elements.attributes) { _, new in new }
        continue
      }
      guard let attribute = attributes.first(where: { $0.name == name }) else {
        // Relationships are joined by the migration; other names are mistakes.
        if destination.relationships(of: found).contains(where: { $0.name == name }) { continue }
        throw MigrationError(
          .policy, entity: entity, property: name, reason: "\(file): the merge rule returned an unknown attribute")
      }
      do {
        values[name] = try MigrationBridge.store(value, for: attribute, entity: found.name)
      } catch {
        throw MigrationError(.policy, entity: entity, property: name, reason: "\(file): \(error)", underlying: error)
      }
    }
    return values
  }
}
