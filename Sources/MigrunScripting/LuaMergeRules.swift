import Foundation
import LuaHost
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore

/// A Lua merge rule file for contexts: a table of per-entity functions, each called with a
/// conflict `c` and returning the values that are saved.
///
/// ```lua
/// return {
///   Employee = function(c)                 -- c.object, c.snapshot, c.store: tables of values
///     local v = c:merge("objectTrump")     -- start from a standard policy's result
///     v.salary = c:max("salary")           -- per-property helpers: max, min, newest, union
///     return v
///   end,
/// }
/// ```
///
/// In `c`: `kind` (`"update"`, `"delete"`, `"storeDeleted"`, `"uniqueness"`), `entity`, `id`,
/// `object` (the context's values; `NULL` when the context deleted the object), `snapshot` (what the
/// context read; `NULL` for a new object), `store` (the row now; `NULL` when deleted there; for a
/// uniqueness conflict the object already holding the values), `oldVersion`, `newVersion`,
/// `changed` (names the context changed), `constraint` (the constrained names). To-one targets are
/// `"Entity/pN"` strings (or `NULL`), to-many lists of them. A rule returns a table of values
/// (properties it leaves out keep the store's value), or `NULL` for "no object" (deleted). An
/// entity without a rule (nor an ancestor with one) fails the save as under the error policy.
///
/// A context uses it as its merge policy:
///
/// ```swift
/// context.mergePolicy = .rule(try LuaMergeRules(file: rulesURL, model: context.model))
/// ```
///
/// A rule that fails or breaks a limit fails the save with `ContextError.Code.mergeRule`.
public final class LuaMergeRules: MergeRule {
  let vm: LuaVM
  let file: String
  let model: ObjectModel
  let rules: [String: LuaFunction]
  /// The helpers' entry: `function(rule, c)` gives `c` its methods and calls the rule.
  private let prepare: LuaFunction
  /// The conflict being resolved, for `c:merge(policy)`.
  private let current = ConflictSlot()

  private final class ConflictSlot {
    var conflict: MergeConflict?
  }

  /// Loads `file`, whose rules run under `limits`; `require` finds modules in `policyFolders` and
  /// beside `file`. Throws `ContextError.Code.mergeRule` when the file cannot be read, does not load
  /// (a syntax error, a limit its top level ran into: the reason says which, with the file and line)
  /// or does not return a table of functions keyed by the model's entity names.
  public convenience init(
    file: URL, model: ObjectModel, policyFolders: [URL] = [], limits: ScriptLimits = ScriptLimits()
  )
    throws
  {
    do {
      try self.init(file: file, model: model, policyFolders: policyFolders, limits: limits.lua)
    } catch let error as LuaError {
      // The scripting layer's own error type is not the library's: said as the merge-rule error it is.
      throw ContextError(.mergeRule, reason: "\(error)", underlying: error)
    }
  }

  /// ``init(file:model:policyFolders:limits:)`` under the VM's own limits.
  package init(file: URL, model: ObjectModel, policyFolders: [URL] = [], limits: LuaLimits) throws {
    self.file = "\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)"
    self.model = model
    vm = try LuaVM(limits: limits, modulePaths: policyFolders + [file.deletingLastPathComponent()])
    let returned = try vm.run(file: file, name: self.file)
    guard case .table(let table)? = returned.first, table.array.isEmpty else {
      throw ContextError(
        .mergeRule,
        reason:
          "\(self.file) must return a table of functions keyed by entity name, not \(returned.first?.typeName ?? "nothing")"
      )
    }
    var rules: [String: LuaFunction] = [:]
    for (key, value) in table.fields {
      guard let name = key.stringValue, model.entity(named: name) != nil else {
        throw ContextError(
          .mergeRule, reason: "\(self.file): the model has no entity '\(key.stringValue ?? key.typeName)'")
      }
      guard let function = value.functionValue else {
        throw ContextError(.mergeRule, entity: name, reason: "\(self.file): the rule for \(name) is not a function")
      }
      rules[name] = function
    }
    self.rules = rules
    let current = self.current
    vm.register("standard", in: "__merge") { arguments in
      guard let conflict = current.conflict, let name = arguments.first?.stringValue else {
        throw HostError("c:merge(policy) is only available inside a rule")
      }
      guard let policy = MergePolicy(name: name), policy.name != "error" else {
        throw HostError("c:merge: unknown policy '\(name)' (storeTrump, objectTrump, overwrite, rollback)")
      }
      return [Self.lua(conflict.resolved(by: policy), model: model)]
    }
    guard let prepare = try vm.run(source: Self.helpers, name: "migrun merge helpers").first?.functionValue else {
      throw ContextError(.mergeRule, reason: "the merge-rule helpers did not load")
    }
    self.prepare = prepare
  }

  /// The entities the file has a rule for.
  public var entities: [String] { rules.keys.sorted() }

  /// Runs the rule of the conflict's entity (or its nearest ancestor's); `.unhandled` when none has one.
  public func resolve(_ conflict: MergeConflict) throws -> MergeDecision {
    guard let entity = model.entity(named: conflict.id.entity),
      let rule = ([entity] + model.ancestors(of: entity)).lazy.compactMap({ self.rules[$0.name] }).first
    else { return .unhandled }
    current.conflict = conflict
    defer { current.conflict = nil }
    let context: LuaValue = [
      "kind": .text(conflict.kind.rawValue), "entity": .text(conflict.id.entity), "id": .text(conflict.id.description),
      "object": Self.lua(conflict.object, model: model), "snapshot": Self.lua(conflict.snapshot, model: model),
      "store": Self.lua(conflict.store, model: model),
      "oldVersion": .integer(conflict.oldVersion), "newVersion": .integer(conflict.newVersion),
      "changed": .table(LuaTable(array: conflict.changed.sorted().map { .text($0) })),
      "constraint": .table(LuaTable(array: conflict.constraint.map { .text($0) })),
    ]
    let made: [LuaValue]
    do {
      made = try vm.call(prepare, [.function(rule), context])
    } catch {
      throw ContextError(.mergeRule, object: conflict.id, reason: "the merge rule failed: \(error)", underlying: error)
    }
    guard let value = made.first, value != .nil else {
      throw ContextError(
        .mergeRule, object: conflict.id, reason: "\(file): the rule for \(conflict.id.entity) returned nothing")
    }
    if value == .null { return .save(nil) }
    guard case .table(let table) = value else {
      throw ContextError(
        .mergeRule, object: conflict.id,
        reason: "\(file): the rule for \(conflict.id.entity) returned a \(value.typeName), not a table of values")
    }
    do {
      return .save(
        try Self.state(table, base: conflict.store ?? conflict.object ?? StoredObject(id: conflict.id), model: model))
    } catch let error as HostError {
      throw ContextError(.mergeRule, object: conflict.id, reason: "\(file): \(error.description)", underlying: error)
    }
  }

  // MARK: - Values

  /// An object's values as a plain Lua table (`NULL` for no object); with its `model`, a composite
  /// attribute is a table of its elements (`author.person`), as everywhere in Lua.
  static func lua(_ state: StoredObject?, model: ObjectModel? = nil) -> LuaValue {
    guard let state else { return .null }
    var table = LuaTable()
    let composites =
      model.flatMap { model in
        model.entity(named: state.id.entity).map { model.declaredAttributes(of: $0).filter { $0.type == .composite } }
      } ?? []
    for composite in composites {
      table[composite.name] = MigrationBridge.compositeTable(composite, path: composite.name, of: state)
    }
    for (name, value) in state.attributes
    where !composites.contains(where: { name.hasPrefix($0.name + ".") }) {
      table[name] = MigrationBridge.lua(value)
    }
    for (name, target) in state.toOne { table[name] = .text(target.description) }
    for (name, members) in state.toMany { table[name] = .table(LuaTable(array: members.map { .text($0.description) })) }
    return .table(table)
  }

  /// The state a returned table gives, on top of `base` (properties it leaves out keep their value).
  static func state(_ table: LuaTable, base: StoredObject, model: ObjectModel) throws -> StoredObject {
    var state = base
    guard let entity = model.entity(named: base.id.entity) else { return state }
    let attributes = Dictionary(model.attributes(of: entity).map { ($0.name, $0) }) { first, _ in first }
    let relationships = Dictionary(model.relationships(of: entity).map { ($0.name, $0) }) { first, _ in first }
    for (key, value) in table.fields {
      guard let name = key.stringValue else { continue }
      if let attribute = attributes[name] {
        state.attributes[name] = try MigrationBridge.store(value, for: attribute, entity: entity.name)
      } else if let composite = MigrationBridge.composite(name, of: entity, in: model) {
        try MigrationBridge.storeComposite(value, composite, path: name, entity: entity.name, into: &state)
      } else if let relationship = relationships[name] {
        if relationship.isToMany {
          let list = value == .null ? [] : (value.tableValue?.array ?? [])
          state.toMany[name] = try list.map { try objectID($0, name) }
        } else {
          state.toOne[name] = value == .null ? nil : try objectID(value, name)
        }
      } else if name != "__entity" && name != "__pk" {
        throw HostError("entity '\(entity.name)' has no property '\(name)'")
      }
    }
    return state
  }

  /// `"Entity/pN"` → the object ID.
  static func objectID(_ value: LuaValue, _ property: String) throws -> ObjectID {
    if let text = value.stringValue, let id = ObjectID(Substring(text)) { return id }
    if value.tableValue != nil { return try MigrationBridge.objectID(value) }
    throw HostError("'\(property)' takes objects as \"Entity/pN\" strings, not a \(value.typeName)")
  }

  // MARK: - Non public

  static let helpers = #"""
    local standard, NULL, setmetatable, ipairs, type = __merge.standard, NULL, setmetatable, ipairs, type
    local C = {}
    C.__index = C
    local function present(v) return v ~= nil and v ~= NULL end
    local function values(t) return (t ~= NULL and t) or {} end
    function C:merge(name) return standard(name) end
    local function pick(self, field, better)
      local a, b = values(self.object)[field], values(self.store)[field]
      if not present(a) then return present(b) and b or NULL end
      if not present(b) then return a end
      return better(a, b) and a or b
    end
    function C:max(field) return pick(self, field, function(a, b) return a >= b end) end
    function C:min(field) return pick(self, field, function(a, b) return a <= b end) end
    -- The whole values table (object or store) whose `field` is larger: the newer edit.
    function C:newest(field)
      local a, b = values(self.object)[field], values(self.store)[field]
      if not present(b) or (present(a) and a >= b) then return self.object end
      return self.store
    end
    function C:union(field)
      local out, seen = {}, {}
      for _, side in ipairs({ values(self.store)[field], values(self.object)[field] }) do
        if type(side) == "table" then
          for _, item in ipairs(side) do
            if not seen[item] then seen[item] = true; out[#out + 1] = item end
          end
        end
      end
      return out
    end
    return function(rule, c) return rule(setmetatable(c, C)) end
    """#
}
