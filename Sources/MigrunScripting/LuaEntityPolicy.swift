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

  private func callLua(_ function: LuaFunction, _ mapping: EntityMapping, _ object: LuaValue?) throws -> LuaValue {
    let info: LuaValue = [
      "mapping": [
        "name": .text(mapping.name), "source": mapping.sourceEntity.map(LuaValue.text) ?? .null,
        "destination": mapping.destinationEntity.map(LuaValue.text) ?? .null,
      ],
      "from": .text(step.from), "to": .text(step.to),
    ]
    var arguments: [LuaValue] = [.function(function), .text(mapping.name), info]
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
