import LuaHost
import MigrunKit

/// An entity mapping's policy written in Lua: Core Data's seven hooks (`end` is `finish`), an
/// optional `filter`, and per-attribute functions. A hook that is missing does the default; a
/// per-object hook that returns nothing also keeps the default for whatever it did not do itself
/// (`createDestinationInstances` creates the default object unless the hook associated one;
/// `createRelationships` fills the relationships the hook did not set); returning `false` skips it.
final class LuaEntityPolicy: EntityMigrationPolicy {
  let bridge: MigrationBridge
  let invoke: LuaFunction
  let file: String
  let step: MigrationStep
  let hooks: [String: LuaFunction]
  let attributeFunctions: [String: LuaFunction]
  let filter: LuaFunction?

  init(
    bridge: MigrationBridge, invoke: LuaFunction, file: String, step: MigrationStep, hooks: [String: LuaFunction],
    attributeFunctions: [String: LuaFunction], filter: LuaFunction?
  ) {
    self.bridge = bridge
    self.invoke = invoke
    self.file = file
    self.step = step
    self.hooks = hooks
    self.attributeFunctions = attributeFunctions
    self.filter = filter
  }

  func begin(_ mapping: EntityMapping, _ manager: MigrationManager) throws { try call("begin", mapping, manager, nil) }

  func createDestinationInstances(for source: StoredObject, _ mapping: EntityMapping, _ manager: MigrationManager)
    throws
  {
    bridge.manager = manager
    let view = bridge.sourceTable(source)
    if let filter, try !isTruthy(callLua(filter, mapping, view)) { return }
    bridge.associationsMade = 0
    if let hook = hooks["createDestinationInstances"] {
      let result = try callLua(hook, mapping, view)
      if result == .boolean(false) || bridge.associationsMade > 0 { return }
    }
    var computed: [String: StoreValue] = [:]
    if let entityName = mapping.destinationEntity, let entity = manager.mapping.destination.entity(named: entityName) {
      for (name, function) in attributeFunctions.sorted(by: { $0.key < $1.key }) {
        guard let attribute = manager.mapping.destination.attributes(of: entity).first(where: { $0.name == name })
        else { continue }
        do {
          computed[name] = try MigrationBridge.store(
            try callLua(function, mapping, view), for: attribute, entity: entityName)
        } catch let error as HostError {
          throw MigrationError(
            .policy, entity: source.id.entity, property: name, reason: "\(file): \(error) (object \(source.id))")
        }
      }
    }
    try manager.createDefaultDestination(for: source, mapping, overriding: computed)
  }

  /// Only attribute functions (no hook, no filter): the policy is a function of the source row.
  func rowTransform(for mapping: EntityMapping, inputs: [String], _ manager: MigrationManager) throws
    -> (any RowTransform)?
  {
    guard hooks.isEmpty, filter == nil, let rows = bridge.rows, let entityName = mapping.destinationEntity,
      let sourceEntity = mapping.sourceEntity, let entity = manager.mapping.destination.entity(named: entityName)
    else { return nil }
    bridge.manager = manager
    let attributes = manager.mapping.destination.attributes(of: entity)
    let outputs = attributeFunctions.keys.sorted().compactMap { name in attributes.first { $0.name == name } }
    var functions = LuaTable()
    for output in outputs { functions[output.name] = attributeFunctions[output.name].map(LuaValue.function) ?? .nil }
    do {
      let made = try bridge.vm.call(
        rows,
        [
          .text(sourceEntity), .table(LuaTable(array: outputs.map { .text($0.name) })), .table(functions),
          .text(mapping.name), info(mapping),
        ])
      guard case .function(let function)? = made.first else { return nil }
      let call = try bridge.vm.prepareRowCall(function, inputKeys: ["__pk"] + inputs, outputKeys: outputs.map(\.name))
      return LuaRowTransform(policy: self, mapping: mapping, call: call, outputAttributes: outputs)
    } catch {
      throw MigrationError(.policy, entity: entityName, reason: "mapping \(mapping.name): \(error)")
    }
  }

  func endInstanceCreation(_ mapping: EntityMapping, _ manager: MigrationManager) throws {
    try call("endInstanceCreation", mapping, manager, nil)
  }

  func createRelationships(for destination: ObjectID, _ mapping: EntityMapping, _ manager: MigrationManager) throws {
    bridge.manager = manager
    bridge.writtenRelationships[destination] = nil
    if let hook = hooks["createRelationships"] {
      if try callLua(hook, mapping, MigrationBridge.destinationTable(destination)) == .boolean(false) { return }
    }
    try manager.createDefaultRelationships(
      for: destination, mapping, skipping: bridge.writtenRelationships[destination] ?? [])
    bridge.writtenRelationships[destination] = nil
  }

  func endRelationshipCreation(_ mapping: EntityMapping, _ manager: MigrationManager) throws {
    try call("endRelationshipCreation", mapping, manager, nil)
  }

  func performCustomValidation(_ mapping: EntityMapping, _ manager: MigrationManager) throws {
    try call("performCustomValidation", mapping, manager, nil)
  }

  func end(_ mapping: EntityMapping, _ manager: MigrationManager) throws { try call("finish", mapping, manager, nil) }

  // MARK: - Non public

  private func call(_ hook: String, _ mapping: EntityMapping, _ manager: MigrationManager, _ object: LuaValue?) throws {
    bridge.manager = manager
    guard let function = hooks[hook] else { return }
    _ = try callLua(function, mapping, object)
  }

  /// What the manager `m` shows of the mapping and step.
  private func info(_ mapping: EntityMapping) -> LuaValue {
    [
      "mapping": [
        "name": .text(mapping.name), "source": mapping.sourceEntity.map(LuaValue.text) ?? .null,
        "destination": mapping.destinationEntity.map(LuaValue.text) ?? .null,
      ],
      "from": .text(step.from), "to": .text(step.to),
    ]
  }

  private func callLua(_ function: LuaFunction, _ mapping: EntityMapping, _ object: LuaValue?) throws -> LuaValue {
    var arguments: [LuaValue] = [.function(function), .text(mapping.name), info(mapping)]
    if let object { arguments.append(object) }
    do {
      return try bridge.vm.call(invoke, arguments).first ?? .nil
    } catch {
      throw MigrationError(.policy, entity: mapping.destinationEntity, reason: "mapping \(mapping.name): \(error)")
    }
  }

  private func isTruthy(_ value: LuaValue) -> Bool {
    switch value {
    case .nil, .boolean(false): false
    default: true
    }
  }
}

/// A Lua policy's attribute functions as one row function (see ``LuaEntityPolicy/rowTransform(for:inputs:_:)``):
/// values in and out by position, no object built.
final class LuaRowTransform: RowTransform {
  let policy: LuaEntityPolicy
  let mapping: EntityMapping
  let call: LuaRowCall
  let outputAttributes: [Attribute]
  var outputs: [String] { outputAttributes.map(\.name) }
  private var values: [LuaValue] = []

  init(policy: LuaEntityPolicy, mapping: EntityMapping, call: LuaRowCall, outputAttributes: [Attribute]) {
    self.policy = policy
    self.mapping = mapping
    self.call = call
    self.outputAttributes = outputAttributes
  }

  func transform(_ id: ObjectID, _ attributes: [StoreValue]) throws -> [StoreValue] {
    values.removeAll(keepingCapacity: true)
    values.append(.integer(id.primaryKey))
    for attribute in attributes { values.append(MigrationBridge.lua(attribute)) }
    let results: [LuaValue]
    do {
      results = try policy.bridge.vm.call(call, values) ?? []
    } catch {
      throw MigrationError(
        .policy, entity: mapping.destinationEntity, reason: "mapping \(mapping.name): \(error) (object \(id))")
    }
    var stored: [StoreValue] = []
    stored.reserveCapacity(outputAttributes.count)
    for (index, attribute) in outputAttributes.enumerated() {
      let value = index < results.count ? results[index] : .nil
      do {
        stored.append(try MigrationBridge.store(value, for: attribute, entity: mapping.destinationEntity ?? ""))
      } catch let error as HostError {
        throw MigrationError(
          .policy, entity: id.entity, property: attribute.name, reason: "\(policy.file): \(error) (object \(id))")
      }
    }
    return stored
  }
}
