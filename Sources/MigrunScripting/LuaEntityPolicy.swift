import LuaHost
import MigrunKit
import MigrunModel
import MigrunStore

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
  /// Destination attributes computed by the script's functions, by name.
  let computed: [(attribute: Attribute, function: LuaFunction)]
  let filter: LuaFunction?
  /// What the manager `m` shows of the mapping and step, made once (it is passed on every call).
  let info: LuaValue
  let destinationEntity: String

  /// An error of the script, named after its file where Lua could only name the host's prelude.
  func described(_ error: any Error) -> String {
    (error as? LuaError).map { "\($0.attributed(to: file))" } ?? "\(error)"
  }

  init(
    bridge: MigrationBridge, invoke: LuaFunction, file: String, step: MigrationStep, mapping: EntityMapping,
    hooks: [String: LuaFunction], computed: [(attribute: Attribute, function: LuaFunction)], filter: LuaFunction?,
    userInfo: (mapping: LuaValue, model: LuaValue) = (.table(LuaTable()), .table(LuaTable()))
  ) {
    self.bridge = bridge
    self.invoke = invoke
    self.file = file
    self.step = step
    self.hooks = hooks
    self.computed = computed
    self.filter = filter
    destinationEntity = mapping.destinationEntity ?? ""
    info = [
      "mapping": [
        "name": .text(mapping.name), "source": mapping.sourceEntity.map(LuaValue.text) ?? .null,
        "destination": mapping.destinationEntity.map(LuaValue.text) ?? .null, "userInfo": userInfo.mapping,
      ],
      "model": ["userInfo": userInfo.model],
      // What `m:default(src)` computes on the object it made: the attribute functions by name.
      "computed": .table(
        LuaTable(
          fields: Dictionary(uniqueKeysWithValues: computed.map { (.text($0.attribute.name), .function($0.function)) }))
      ),
      "from": .text(step.from), "to": .text(step.to),
    ]
  }

  /// No `createDestinationInstances` hook and no filter: one destination object per source object.
  var makesDefaultDestinations: Bool { hooks["createDestinationInstances"] == nil && filter == nil }
  /// Attribute functions at most: a row transform (see ``rowTransform(for:inputs:_:)``).
  var computesAttributesOnly: Bool { hooks.isEmpty && filter == nil }

  func begin(_ mapping: EntityMapping, _ manager: MigrationManager) throws {
    try bridge.takeUserInfo()
    try call("begin", mapping, manager, nil)
  }

  func createDestinationInstances(for source: StoredObject, _ mapping: EntityMapping, _ manager: MigrationManager)
    throws
  {
    bridge.manager = manager
    if filter != nil || hooks["createDestinationInstances"] != nil {
      let view = bridge.sourceTable(source)
      if let filter, try !isTruthy(callLua(filter, mapping, view)) { return }
      bridge.associationsMade = 0
      if let hook = hooks["createDestinationInstances"] {
        bridge.defaultAction = DefaultAction(
          object: source.id, side: "src", makesObject: mapping.destinationEntity != nil
        ) { [unowned self] values in
          // The attribute functions are Lua: the prelude runs them before calling here (a host
          // function may not call back into its VM) and hands their results over, so the object is
          // inserted once with them — not inserted, then read and updated once per function.
          let overrides = try self.computedValues(values, object: source.id)
          self.bridge.associationsMade += 1
          let made = try manager.createDefaultDestination(for: source, mapping, overriding: overrides)
          return made.map { MigrationBridge.descriptor($0, side: "dst") } ?? .null
        }
        defer { bridge.defaultAction = nil }
        let result = try callLua(hook, mapping, view)
        if result == .boolean(false) || bridge.associationsMade > 0 { return }
      }
    }
    try createDefault(for: source, mapping, manager)
  }

  /// Stage 1's default: one destination object, the attribute functions' values over the mapping's.
  @discardableResult
  private func createDefault(for source: StoredObject, _ mapping: EntityMapping, _ manager: MigrationManager) throws
    -> ObjectID?
  {
    var values: [String: StoreValue] = [:]
    if !computed.isEmpty {
      // Every attribute function in one call, values in and out by position (as the row loop does).
      let rows = try objectRows(mapping, manager)
      let computedValues = try rows.transform.transform(
        source.id, rows.inputs.map { source.attributes[$0] ?? .null })
      for (index, output) in computed.enumerated() { values[output.attribute.name] = computedValues[index] }
    }
    return try manager.createDefaultDestination(for: source, mapping, overriding: values)
  }

  /// The attribute functions' results `m:default(src)` computed (a table by attribute name), as
  /// stored: every computed attribute is written, one whose function gave nil as NULL (as
  /// `made.name = nil` wrote it). Nil or not a table: none computed.
  private func computedValues(_ values: LuaValue, object id: ObjectID) throws -> [String: StoreValue] {
    guard let table = values.tableValue else { return [:] }
    var stored: [String: StoreValue] = [:]
    for (attribute, _) in computed {
      stored[attribute.name] = try self.stored(table[attribute.name] ?? .nil, for: attribute, object: id)
    }
    return stored
  }

  /// The attribute functions as one row function over every stored attribute of the source
  /// entity, made once (per mapping) for the object path.
  private var objectRowsByMapping: [String: (transform: LuaRowTransform, inputs: [String])] = [:]

  private func objectRows(_ mapping: EntityMapping, _ manager: MigrationManager) throws
    -> (transform: LuaRowTransform, inputs: [String])
  {
    if let made = objectRowsByMapping[mapping.name] { return made }
    let inputs =
      mapping.sourceEntity.flatMap { step.source.entity(named: $0) }.map { entity in
        step.source.attributes(of: entity).filter { !$0.isTransient }.map(\.name)
      } ?? []
    guard let transform = try makeRowTransform(for: mapping, inputs: inputs, manager) else {
      throw MigrationError(
        .policy, entity: mapping.destinationEntity,
        reason: "mapping \(mapping.name): the attribute functions did not load")
    }
    objectRowsByMapping[mapping.name] = (transform, inputs)
    return (transform, inputs)
  }

  /// Only attribute functions (no hook, no filter): the policy is a function of the source row.
  func rowTransform(for mapping: EntityMapping, inputs: [String], _ manager: MigrationManager) throws
    -> (any RowTransform)?
  {
    guard hooks.isEmpty, filter == nil else { return nil }
    return try makeRowTransform(for: mapping, inputs: inputs, manager)
  }

  /// The attribute functions as one row function of `inputs` (the source attributes, in order).
  private func makeRowTransform(for mapping: EntityMapping, inputs: [String], _ manager: MigrationManager) throws
    -> LuaRowTransform?
  {
    guard let rows = bridge.rows, let entityName = mapping.destinationEntity, let sourceEntity = mapping.sourceEntity
    else { return nil }
    bridge.manager = manager
    var functions = LuaTable()
    for (attribute, function) in computed { functions[attribute.name] = .function(function) }
    do {
      let made = try bridge.vm.call(
        rows,
        [
          .text(sourceEntity), .table(LuaTable(array: computed.map { .text($0.attribute.name) })),
          .table(functions), .text(mapping.name), info,
        ])
      guard case .function(let function)? = made.first, case .function(let inOrder)? = made.dropFirst().first else {
        return nil
      }
      let keys = computed.map(\.attribute.name)
      let call = try bridge.vm.prepareRowCall(function, inputKeys: ["__pk"] + inputs, outputKeys: keys)
      let loopCall = try bridge.vm.prepareRowCall(inOrder, inputKeys: ["__pk"] + inputs, outputKeys: keys)
      return LuaRowTransform(policy: self, mapping: mapping, call: call, loopCall: loopCall)
    } catch {
      throw MigrationError(.policy, entity: entityName, reason: "mapping \(mapping.name): \(described(error))")
    }
  }

  func endInstanceCreation(_ mapping: EntityMapping, _ manager: MigrationManager) throws {
    try call("endInstanceCreation", mapping, manager, nil)
  }

  func createRelationships(for destination: ObjectID, _ mapping: EntityMapping, _ manager: MigrationManager) throws {
    bridge.manager = manager
    bridge.writtenRelationships[destination] = nil
    if let hook = hooks["createRelationships"] {
      var defaulted = false
      bridge.defaultAction = DefaultAction(object: destination, side: "dst") { [unowned self] _ in
        defaulted = true
        try manager.createDefaultRelationships(
          for: destination, mapping, skipping: self.bridge.writtenRelationships[destination] ?? [])
        return MigrationBridge.descriptor(destination, side: "dst")
      }
      defer { bridge.defaultAction = nil }
      let result = try callLua(hook, mapping, MigrationBridge.destinationTable(destination))
      if result == .boolean(false) || defaulted {
        bridge.writtenRelationships[destination] = nil
        return
      }
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

  func end(_ mapping: EntityMapping, _ manager: MigrationManager) throws {
    try call("finish", mapping, manager, nil)
    try bridge.giveUserInfo()
  }

  // MARK: - Non public

  private func call(_ hook: String, _ mapping: EntityMapping, _ manager: MigrationManager, _ object: LuaValue?) throws {
    bridge.manager = manager
    guard let function = hooks[hook] else { return }
    _ = try callLua(function, mapping, object)
  }

  /// A script's value for `attribute` as stored, or an error naming the object and property.
  func stored(_ value: LuaValue, for attribute: Attribute, object id: ObjectID) throws -> StoreValue {
    do {
      return try MigrationBridge.store(value, for: attribute, entity: destinationEntity)
    } catch let error as HostError {
      throw MigrationError(
        .policy, entity: id.entity, property: attribute.name, reason: "\(file): \(error) (object \(id))")
    }
  }

  private func callLua(_ function: LuaFunction, _ mapping: EntityMapping, _ object: LuaValue?) throws -> LuaValue {
    var arguments: [LuaValue] = [.function(function), .text(mapping.name), info]
    if let object { arguments.append(object) }
    // A hook of the whole mapping earns for what its m:fetch returns; one given an object does not
    // (its budget is per object, and counting an entity for each would be quadratic).
    bridge.handed = object == nil ? HandedObjects() : nil
    do {
      return try bridge.vm.call(invoke, arguments).first ?? .nil
    } catch {
      throw MigrationError(
        .policy, entity: mapping.destinationEntity, reason: "mapping \(mapping.name): \(described(error))")
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
final class LuaRowTransform: RowLoopTransform {
  let policy: LuaEntityPolicy
  let mapping: EntityMapping
  let call: LuaRowCall
  /// The same function returning its results as values in output order (the C row loop's form).
  let loopCall: LuaRowCall
  var outputs: [String] { call.outputKeys }
  private var values: [LuaValue] = []

  init(policy: LuaEntityPolicy, mapping: EntityMapping, call: LuaRowCall, loopCall: LuaRowCall) {
    self.policy = policy
    self.mapping = mapping
    self.call = call
    self.loopCall = loopCall
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
        .policy, entity: mapping.destinationEntity,
        reason: "mapping \(mapping.name): \(policy.described(error)) (object \(id))")
    }
    return try policy.computed.enumerated().map { index, output in
      try policy.stored(index < results.count ? results[index] : .nil, for: output.attribute, object: id)
    }
  }
}

extension LuaRowTransform {
  /// The row loop in C (``LuaVM/runRowLoop(_:select:insert:plainCount:inputs:outputs:limit:)``); values
  /// it hands back are converted by the same rules as ``transform(_:_:)``.
  func runRows(
    select: OpaquePointer, insert: OpaquePointer, plainCount: Int, inputTypes: [AttributeType], limit: Int,
    currentObject: () -> ObjectID
  ) throws -> (rows: Int, stop: RowLoopStop) {
    let result: (rows: Int, stop: LuaRowLoopStop)
    do {
      result = try policy.bridge.vm.runRowLoop(
        loopCall, select: select, insert: insert, plainCount: plainCount,
        inputs: inputTypes.map(Self.inputKind),
        outputs: policy.computed.map { Self.outputKind($0.attribute.type) }, limit: limit)
    } catch {
      throw MigrationError(
        .policy, entity: mapping.destinationEntity,
        reason: "mapping \(mapping.name): \(policy.described(error)) (object \(currentObject()))")
    }
    switch result.stop {
    case .finished: return (result.rows, .finished)
    case .paused: return (result.rows, .paused)
    case .hostRow: return (result.rows, .hostRow)
    case .sqliteFailed(let key): return (result.rows, .sqliteFailed(insertOf: key))
    case .hostOutputs(let values):
      let id = currentObject()
      let computed = try policy.computed.enumerated().map { index, output in
        try policy.stored(index < values.count ? values[index] : .nil, for: output.attribute, object: id)
      }
      return (result.rows, .hostOutputs(computed))
    }
  }

  /// How a source column of `type` reaches Lua (the C loop's copy of ``MigrationBridge/lua(_:)`` over
  /// ``RawStatement``'s reading).
  static func inputKind(_ type: AttributeType) -> LuaRowLoopKind.Input {
    switch type {
    case .integer16, .integer32, .integer64: .integer
    case .boolean: .boolean
    case .double, .float, .decimal: .real
    case .date: .date
    case .string, .uri: .text
    case .binary, .transformable, .uuid: .bytes
    case .objectID, .undefined, .composite: .other
    }
  }

  /// How a Lua value is bound for an attribute of `type` (the C loop's copy of
  /// ``MigrationBridge/store(_:for:entity:)``'s common cases; the rest come back to it).
  static func outputKind(_ type: AttributeType) -> LuaRowLoopKind.Output {
    switch type {
    case .integer16: .integer16
    case .integer32: .integer32
    case .integer64: .integer
    case .boolean: .boolean
    case .double, .float, .decimal: .real
    case .date: .date
    case .string, .uri: .text
    case .uuid: .uuid
    case .binary, .transformable, .objectID, .undefined, .composite: .blob
    }
  }
}
