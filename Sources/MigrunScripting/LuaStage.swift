import Foundation
import LuaHost
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore

/// A custom migration stage in Lua, `<From>-<To>.stage.lua` beside the mapping files: SwiftData's
/// `.custom(fromVersion:toVersion:willMigrate:didMigrate:)` and Core Data's `NSCustomMigrationStage`.
/// Each handler is given a context on the store — before the step on the source version, after it on
/// the destination — and saves what it changes.
///
/// ```lua
/// return {
///   willMigrate = function(ctx)                -- dedupe before a uniqueness constraint is added
///     local seen = {}
///     for _, trip in ipairs(ctx:fetch("Trip", nil, { sort = { "name", "-start" } })) do
///       if seen[trip.name] then ctx:delete(trip) else seen[trip.name] = true end
///     end
///     ctx:save()
///   end,
///   didMigrate = function(ctx) … end,
/// }
/// ```
///
/// `ctx:fetch(entity [, predicate [, options]])` — `predicate` in NSPredicate's format syntax,
/// `options` `{ args = {…} (for %@, %K; a list fills IN %@), sort = { "name", "-date" }, limit = n,
/// batch = n (a list read a batch at a time), ids = true (IDs only), properties = {…} (plain tables) }`;
/// `ctx:each(entity, predicate, fn [, options])` walks in batches (`batch`, 1000; `save = true` saves
/// after each), letting go of each batch's unchanged objects; `ctx:object(id)`; `ctx:count(entity
/// [, predicate [, options]])` (in SQL where the predicate is); `ctx:insert(entity [, values])`; `ctx:delete(object)` (delete rules
/// apply); `ctx:save()` (validation applies; a uniqueness conflict fails it); `ctx:reset()` (lets go
/// of every object handed out, after a save: a handler holds at most the Lua memory limit / 256
/// objects at once); `ctx:log(text)`;
/// `ctx.version`, `ctx.from`, `ctx.to`. Objects: `obj.name` reads (a to-one an object or `NULL`, a
/// to-many a list of objects), `obj.name = value` writes (objects and lists of them for
/// relationships), `obj:id()` (`"Trip/p3"`; a new object's until saved is temporary), `obj:entity()`.
/// Objects are the same table each time they are met, so `==` compares them.
package final class LuaStage: MigrationStageHandlers {
  package static func fileName(from: String, to: String) -> String { "\(from)-\(to).stage.lua" }

  let vm: LuaVM
  let file: String
  /// The stage file.
  package let url: URL
  let handlers: [StageHook: LuaFunction]
  let runner: LuaFunction
  let state = State()

  final class State {
    var context: ObjectContext?
    /// Objects handed to Lua, by handle. Handles are never reused (a handle kept across
    /// `ctx:reset()` names nothing, never another object).
    var objects: [Int: ManagedObject] = [:]
    var lastHandle = 0
    var handles: [ObjectIdentifier: Int] = [:]
    var changes = StageChanges()
    /// Keys a batched fetch or `ctx:each` walks, by token (held here, not as Lua strings), and the
    /// handles of the batch last handed out (let go of when the next one is asked for, or the
    /// walk ends).
    var lists: [Int: (keys: StageKeys, batch: [Int64])] = [:]
    var lastList = 0
    /// Entity → property → what it is (``StageHost/kind(_:of:)``).
    var kinds: [String: [String: PropertyKind]] = [:]
    /// The handler running, and its file: what `ctx:log` lines name.
    var place = ""
    /// Objects a handler may hold at once (each handed to Lua is kept until `ctx:reset()`): the
    /// host's memory for them counts too, about 256 bytes of the Lua memory limit each (a stage
    /// that inserted half a million objects held 1.8 GB under a 64 MiB limit).
    var maximumObjects = 262_144
    /// The objects handed to the handler running, by entity: what its budget has grown by.
    var handed = HandedObjects()
  }

  enum PropertyKind {
    case attribute(Attribute)
    case toOne, toMany
  }

  package var hooks: Set<StageHook> { Set(handlers.keys) }
  /// The handlers, in the order they run.
  package var hookNames: [String] { StageHook.allCases.filter { handlers[$0] != nil }.map(\.rawValue) }

  /// The stage file of the step `from` → `to` in `folders` (the first folder holding one).
  package static func file(from: String, to: String, in folders: [URL]) -> URL? {
    let name = fileName(from: from, to: to)
    return folders.lazy.map { $0.appendingPathComponent(name) }.first {
      FileManager.default.fileExists(atPath: $0.path)
    }
  }

  /// The stage file for `step` in `folders`, loaded; nil when none has one.
  package static func find(for step: MigrationStep, in folders: [URL], limits: LuaLimits = LuaLimits()) throws
    -> LuaStage?
  {
    guard let file = file(from: step.from, to: step.to, in: folders) else { return nil }
    return try LuaStage(file: file, policyFolders: folders, limits: limits)
  }

  /// A script's log line, where `print` writes too (``ScriptOutput``): `folder/file.lua: …`.
  static func say(_ line: String) { ScriptOutput.say(line) }

  /// Loads `file`; `require` finds modules in `policyFolders`.
  package init(file: URL, policyFolders: [URL] = [], limits: LuaLimits = LuaLimits()) throws {
    self.file = "\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)"
    url = file
    vm = try LuaVM(limits: limits, modulePaths: policyFolders + [file.deletingLastPathComponent()])
    let returned = try vm.run(file: file, name: self.file)
    guard case .table(let table)? = returned.first, table.array.isEmpty else {
      throw MigrationError(
        .badMapping,
        reason: "\(self.file) must return a table { willMigrate = function(ctx) … end, didMigrate = … }, not "
          + (returned.first?.typeName ?? "nothing"))
    }
    var handlers: [StageHook: LuaFunction] = [:]
    for (key, value) in table.fields {
      guard let name = key.stringValue, let hook = StageHook(rawValue: name) else {
        throw MigrationError(
          .badMapping,
          reason: "\(self.file): '\(key.stringValue ?? key.typeName)' is no stage handler (willMigrate, didMigrate)")
      }
      guard let function = value.functionValue else {
        throw MigrationError(.badMapping, reason: "\(self.file): \(name) is a \(value.typeName), not a function")
      }
      handlers[hook] = function
    }
    self.handlers = handlers
    state.maximumObjects = max(1024, limits.memoryBytes / 256)
    Self.register(vm, state: state)
    guard let runner = try vm.run(source: Self.helpers, name: "migrun stage helpers").first?.functionValue else {
      throw MigrationError(.badMapping, reason: "the stage helpers did not load")
    }
    self.runner = runner
  }

  package func run(_ hook: StageHook, on context: ObjectContext, step: MigrationStep) throws -> StageChanges {
    guard let handler = handlers[hook] else { return StageChanges() }
    state.context = context
    state.objects = [:]
    state.handles = [:]
    state.changes = StageChanges()
    state.handed = HandedObjects()
    state.place = "\(file): \(hook.rawValue)"
    defer {
      state.context = nil
      state.objects = [:]
      state.handles = [:]
      _ = vm.hold(bytes: -state.lists.values.reduce(0) { $0 + $1.keys.bytes })
      state.lists = [:]
    }
    let info: LuaValue = [
      "version": .text(hook == .willMigrate ? step.from : step.to), "from": .text(step.from), "to": .text(step.to),
    ]
    do {
      _ = try vm.call(runner, [.function(handler), info])
    } catch {
      throw MigrationError(
        .policy, step: step.name, reason: "\(hook.rawValue): \(error)\(Self.hint(for: error))", underlying: error)
    }
    return state.changes
  }

  /// What to do when a handler's budget ran out: its whole run is one call, whose budget grows with
  /// the objects it is handed (``HandedObjects``), for two passes over an entity.
  static func hint(for error: any Error) -> String {
    let grows =
      "a handler's budget grows with each object ctx:each, ctx:fetch or ctx:object hands it, "
      + "for two passes over an entity at most"
    switch (error as? LuaError)?.kind {
    case .instructionLimit?:
      return " (\(grows): more work per object, or walks past those, need ScriptLimits.instructions raised)"
    case .deadline?:
      return " (\(grows): more time per object, or walks past those, need ScriptLimits.seconds raised)"
    default: return ""
    }
  }

  // MARK: - The host side

  static func register(_ vm: LuaVM, state: State) {
    let host = StageHost(state: state)
    host.registerReads(vm)
    host.registerLists(vm)
    host.registerWrites(vm)
  }

  /// Objects as tables with a metatable (one table per object), and the context's methods.
  static let helpers = """
    local stage = __stage
    local setmetatable, rawget, type, ipairs = setmetatable, rawget, type, ipairs
    -- Objects' tables by handle, held weakly: a table nobody holds goes (the host lets go of the
    -- object itself after its batch), and the same object is the same table while anyone holds it.
    local Weak = { __mode = "v" }
    local Object, methods, cache = {}, {}, setmetatable({}, Weak)
    local function object(h)
      local known = cache[h]
      if known == nil then known = setmetatable({ __h = h }, Object); cache[h] = known end
      return known
    end
    local function wrap(value)
      if type(value) ~= "table" then return value end
      local h = rawget(value, "__h")
      if h ~= nil then return object(h) end
      for i, item in ipairs(value) do value[i] = wrap(item) end
      return value
    end
    -- The host is handed an object's handle (a number), not its table: nothing to copy per call.
    function methods.id(self) return stage.id(rawget(self, "__h")) end
    function methods.entity(self) return stage.entity(rawget(self, "__h")) end
    Object.__index = function(self, key)
      local method = methods[key]
      if method ~= nil then return method end
      return wrap(stage.get(rawget(self, "__h"), key))
    end
    Object.__newindex = function(self, key, value) stage.set(rawget(self, "__h"), key, value) end
    Object.__tostring = function(self) return stage.id(rawget(self, "__h")) end
    local Context = {}
    Context.__index = Context
    -- A batched list: the keys are selected at once; a batch's objects are read when an index in
    -- it is first asked for, and the batch before is let go (unless changed).
    local function batched(token, count, size)
      local current, first = nil, nil
      return setmetatable({}, {
        __len = function() return count end,
        __index = function(_, i)
          if math.type(i) ~= "integer" or i < 1 or i > count then return nil end
          local b = (i - 1) // size
          if b ~= first then
            current, first = stage.batch(token, b * size + 1, math.min(count, (b + 1) * size)), b
          end
          return object(current[i - b * size])
        end,
      })
    end
    function Context:fetch(entity, predicate, options)
      if type(options) == "table" and options.batch ~= nil then
        local token, count, size = stage.select(entity, predicate, options)
        return batched(token, count, size)
      end
      return wrap(stage.fetch(entity, predicate, options))
    end
    function Context:each(entity, predicate, fn, options)
      if type(fn) ~= "function" then error("ctx:each(entity, predicate, fn [, options]): fn is a function, not a " .. type(fn), 2) end
      local token, count, size = stage.select(entity, predicate, options)
      local save = type(options) == "table" and options.save == true
      for from = 1, count, size do
        local batch = stage.batch(token, from, math.min(count, from + size - 1))
        for _, h in ipairs(batch) do fn(object(h)) end
        if save then stage.save() end
      end
      stage.forget(token)
      return count
    end
    function Context:object(id) return wrap(stage.object(id)) end
    function Context:count(entity, predicate, options) return stage.count(entity, predicate, options) end
    function Context:insert(entity, values) return wrap(stage.insert(entity, values)) end
    function Context:delete(object)
      local h = type(object) == "table" and rawget(object, "__h")
      stage.delete(h or object)
    end
    function Context:save() stage.save() end
    function Context:reset() stage.reset() cache = setmetatable({}, Weak) end
    function Context:log(...) stage.log(...) end
    return function(handler, info)
      cache = setmetatable({}, Weak)
      handler(setmetatable({ version = info.version, from = info.from, to = info.to }, Context))
    end
    """
}

/// The host side of a stage's `ctx` and its objects: handles for the context's objects, reads,
/// writes and fetches, each checked and refused in words.
private struct StageHost {
  let state: LuaStage.State

  func context() throws -> ObjectContext {
    guard let context = state.context else { throw HostError("the context is only available while a handler runs") }
    return context
  }
  func handle(_ object: ManagedObject) throws -> LuaValue { ["__h": .integer(try handleNumber(object))] }
  /// The object's handle, given out the first time it is met.
  func handleNumber(_ object: ManagedObject) throws -> Int64 {
    let key = ObjectIdentifier(object)
    if let known = state.handles[key] { return Int64(known) }
    guard state.objects.count < state.maximumObjects else {
      throw HostError(
        "the stage holds \(state.objects.count) objects, as many as its memory limit allows: ctx:save() and "
          + "ctx:reset() in batches to let go of what is saved, or raise ScriptLimits.memoryBytes (256 bytes of it per object)"
      )
    }
    state.lastHandle += 1
    state.objects[state.lastHandle] = object
    state.handles[key] = state.lastHandle
    return Int64(state.lastHandle)
  }
  func objectOf(_ value: LuaValue?, _ what: String) throws -> ManagedObject {
    guard let number = value?["__h"].integerValue ?? value?.integerValue else {
      throw HostError("\(what): expected an object of this context, got \(value?.typeName ?? "nothing")")
    }
    guard let object = state.objects[Int(truncatingIfNeeded: number)] else {
      // A handle handed out before is one ctx:reset() let go of.
      throw HostError(
        number >= 1 && number <= state.lastHandle
          ? "\(what): an object let go of (by ctx:reset(), or after its batch of ctx:each or a batched fetch): "
            + "fetch it again, or keep its obj:id() and use ctx:object(id)"
          : "\(what): expected an object of this context, got \(value?.typeName ?? "nothing")")
    }
    return object
  }
  /// `count` objects of `entity` (a query's entity, or the object's) handed to the handler: the
  /// call's budget grows by what they earn.
  func credit(_ count: Int, of entity: String, _ vm: LuaVM) throws {
    vm.credit(objects: try state.handed.earning(count, of: entity) { try context().count(entity, matching: nil) })
  }
  func text(_ value: LuaValue?, _ what: String) throws -> String {
    guard let text = value?.stringValue else {
      throw HostError("\(what) is a string, not \(value?.typeName ?? "nothing")")
    }
    return text
  }
  /// What `key` is on `entity`'s objects, looked up once per entity and key (a walk reads the same
  /// few properties of a million objects).
  func kind(_ key: String, of entity: Entity) throws -> LuaStage.PropertyKind {
    if let known = state.kinds[entity.name]?[key] { return known }
    let model = try context().model
    let kind: LuaStage.PropertyKind
    if let relationship = model.relationships(of: entity).first(where: { $0.name == key }) {
      kind = relationship.isToMany ? .toMany : .toOne
    } else if let attribute = model.attributes(of: entity).first(where: { $0.name == key }) {
      kind = .attribute(attribute)
    } else {
      throw HostError("entity '\(entity.name)' has no property '\(key)'")
    }
    state.kinds[entity.name, default: [:]][key] = kind
    return kind
  }
  func read(_ object: ManagedObject, _ key: String) throws -> LuaValue {
    switch try kind(key, of: object.entity) {
    case .toMany: return .table(LuaTable(array: try object.members(key).map { try handle($0) }))
    case .toOne: return try object.object(key).map { try handle($0) } ?? .null
    case .attribute: return MigrationBridge.lua(try object.value(key))
    }
  }
  func write(_ object: ManagedObject, _ key: String, _ value: LuaValue) throws {
    switch try kind(key, of: object.entity) {
    case .toMany:
      guard case .table(let list) = value else {
        throw HostError("\(object.entity.name).\(key) is to-many: give a list of objects")
      }
      try object.setMembers(key, try list.array.map { try objectOf($0, "\(object.entity.name).\(key)") })
    case .toOne:
      if value == .null || value == .nil {
        try object.set(key, to: nil)
      } else {
        try object.set(key, to: try objectOf(value, "\(object.entity.name).\(key)"))
      }
    case .attribute(let attribute):
      try object.set(key, try MigrationBridge.store(value, for: attribute, entity: object.entity.name))
    }
  }
  /// A `ctx:fetch`/`ctx:count` call's entity, predicate (with its `args`), `sort` and `limit`.
  func query(_ arguments: [LuaValue]) throws -> (
    entity: String, predicate: FormatPredicate?, sort: [SortKey], limit: Int?
  ) {
    let entity = try text(arguments.first, "ctx:fetch's entity")
    let options = arguments.count > 2 ? arguments[2] : .nil
    // An option migrun does not know (a typo: `sorted`) would be passed over: it is named instead.
    let known = ["args", "sort", "limit", "batch", "properties", "ids", "save"]
    for key in (options.tableValue?.fields ?? [:]).keys where !known.contains(key.stringValue ?? "") {
      throw HostError(
        "ctx:fetch: no option '\(key.stringValue ?? key.typeName)' (\(known.joined(separator: ", ")))")
    }
    let predicate: FormatPredicate?
    if arguments.count > 1, arguments[1] != .nil, arguments[1] != .null {
      let args = try (options["args"].tableValue?.array ?? []).map(PredicateArguments.argument)
      predicate = try FormatPredicate(try text(arguments[1], "a predicate"), filling: args)
    } else {
      predicate = nil
    }
    let sort = try PredicateArguments.sortKeys(options["sort"])
    return (entity, predicate, sort, options["limit"].integerValue.map { Int($0) })
  }

  /// `ctx:fetch`'s answer: objects, or with `ids = true` their IDs (`"Trip/p3"`), or with
  /// `properties = { … }` a table per object of those properties only (Core Data's dictionary
  /// result: attributes as values, a to-one as its ID, a to-many as a list of IDs) — read a
  /// thousand objects at a time and let go.
  func fetchValue(_ arguments: [LuaValue], vm: LuaVM) throws -> LuaValue {
    let query = try query(arguments)
    let options = arguments.count > 2 ? arguments[2] : .nil
    // Options that each change what a fetch returns, or belong to ctx:each, would be passed over.
    let given = ["ids", "properties", "save"].filter { options[$0] != .nil }
    guard given.count <= 1, !given.contains("save") else {
      throw HostError(
        given.contains("save")
          ? "ctx:fetch: save is ctx:each's option (a fetch saves nothing)"
          : "ctx:fetch: give one of ids and properties, not both")
    }
    if options["ids"] == .boolean(true) {
      let ids = try context().objectIDs(
        query.entity, matching: query.predicate, sortedBy: query.sort, limit: query.limit)
      try credit(ids.count, of: query.entity, vm)
      return .table(LuaTable(array: ids.map { .text($0.description) }))
    }
    if options["properties"] != .nil {
      guard let list = options["properties"].tableValue else {
        throw HostError("ctx:fetch: properties is a list of property names, not a \(options["properties"].typeName)")
      }
      let names = try list.array.map { try text($0, "a property name") }
      let rows = try context().fetchValues(
        query.entity, matching: query.predicate, properties: names, sortedBy: query.sort, limit: query.limit)
      try credit(rows.count, of: query.entity, vm)
      return .table(LuaTable(array: rows.map { plain($0, names) }))
    }
    let objects = try fetch(arguments)
    try credit(objects.count, of: query.entity, vm)
    return .table(LuaTable(array: try objects.map { try handle($0) }))
  }

  /// A row of `fetchValues` as a plain table: attributes as values, a to-one as its ID (or NULL), a
  /// to-many as a list of IDs.
  func plain(_ row: StoredObject, _ names: [String]) -> LuaValue {
    var table = LuaTable()
    for name in names {
      if let value = row.attributes[name] {
        table.fields[.text(name)] = MigrationBridge.lua(value)
      } else if let members = row.toMany[name] {
        table.fields[.text(name)] = .table(LuaTable(array: members.map { .text($0.description) }))
      } else {
        table.fields[.text(name)] = row.toOne[name].map { .text($0.description) } ?? .null
      }
    }
    return .table(table)
  }

  /// `ctx:each` and a batched `ctx:fetch`: the keys selected, held here under a token (their bytes
  /// counted against the VM's memory limit); the token, how many, and the batch size.
  func select(_ arguments: [LuaValue], vm: LuaVM) throws -> [LuaValue] {
    let query = try query(arguments)
    let options = arguments.count > 2 ? arguments[2] : .nil
    if let other = ["ids", "properties"].first(where: { options[$0] != .nil }) {
      throw HostError("ctx:each/a batched ctx:fetch: \(other) is a fetch's option without batch, not one with it")
    }
    let size = options["batch"] == .nil ? 1000 : Int(options["batch"].integerValue ?? 0)
    guard size >= 1 else {
      throw HostError(
        "ctx:each/ctx:fetch: batch is a whole number of objects (1 or more), not \(options["batch"].displayed)")
    }
    let keys = StageKeys(
      entity: query.entity,
      ids: try context().objectIDs(query.entity, matching: query.predicate, sortedBy: query.sort, limit: query.limit))
    guard vm.hold(bytes: keys.bytes) else {
      throw HostError(
        "memory limit of \(vm.limits.memoryBytes) bytes exceeded: the \(keys.count) keys of this selection "
          + "(\(keys.bytes) bytes, held by migrun for the script) would pass it with what the "
          + "stage holds; keep fewer batched lists at once (ctx:each lets go of its own), or raise ScriptLimits.memoryBytes"
      )
    }
    state.lastList += 1
    state.lists[state.lastList] = (keys, [])
    return [.integer(Int64(state.lastList)), .integer(Int64(keys.count)), .integer(Int64(size))]
  }

  /// One batch of a selection (positions `from` through `to`, from 1): the objects' handles.
  func batch(_ arguments: [LuaValue], vm: LuaVM) throws -> LuaValue {
    guard let token = arguments.first?.integerValue, let list = state.lists[Int(token)], case let keys = list.keys,
      let from = arguments.count > 1 ? arguments[1].integerValue : nil,
      let to = arguments.count > 2 ? arguments[2].integerValue : nil, from >= 1, to <= keys.count, from <= to
    else { throw HostError("a batch of a selection that is gone (used after ctx:each or the handler ended)") }
    release(list.batch)
    let objects = try context().objects(keys.ids(Int(from - 1)..<Int(to))).filter { !$0.isDeleted }
    let handles = try objects.map { try handleNumber($0) }
    state.lists[Int(token)]?.batch = handles
    try credit(handles.count, of: keys.entity, vm)
    return .table(LuaTable(array: handles.map(LuaValue.integer)))
  }

  /// Lets go of a batch's objects that have no pending changes, or whose deletion was saved (their
  /// handles then name nothing): a walk deleting 300,000 duplicates, saved per batch, held them all.
  func release(_ handles: [Int64]) {
    for number in handles {
      guard let object = state.objects[Int(number)], !object.hasChanges || object.isGone else { continue }
      state.objects[Int(number)] = nil
      state.handles[ObjectIdentifier(object)] = nil
    }
  }

  func fetch(_ arguments: [LuaValue]) throws -> [ManagedObject] {
    let query = try query(arguments)
    return try context().fetch(query.entity, matching: query.predicate, sortedBy: query.sort, limit: query.limit)
  }

  /// `ctx:count`: counted by the store in SQL where it can be (no object made, no handle used).
  func count(_ arguments: [LuaValue]) throws -> Int {
    let query = try query(arguments)
    guard query.limit == nil else { return try fetch(arguments).count }
    return try context().count(query.entity, matching: query.predicate)
  }

  /// `ctx:fetch`, `ctx:count`, property reads, `obj:id()`, `obj:entity()` and `log`.
  func registerReads(_ vm: LuaVM) {
    vm.register("fetch", in: "__stage") { [unowned vm] arguments in [try fetchValue(arguments, vm: vm)] }
    vm.register("object", in: "__stage") { [unowned vm] arguments in
      let found = try context().object(described: try text(arguments.first, "ctx:object's ID"))
      try credit(1, of: found.entity.name, vm)
      return [try handle(found)]
    }
    vm.register("count", in: "__stage") { arguments in [.integer(Int64(try count(arguments)))] }
    vm.register("get", in: "__stage") { arguments in
      [
        try read(
          try objectOf(arguments.first, "a property read"), try text(arguments.count > 1 ? arguments[1] : nil, "a key"))
      ]
    }
    vm.register("id", in: "__stage") { arguments in
      let found = try objectOf(arguments.first, "obj:id()")
      return [.text("\(found.id.entity)/p\(found.id.primaryKey)")]
    }
    vm.register("entity", in: "__stage") { arguments in
      [.text(try objectOf(arguments.first, "obj:entity()").entity.name)]
    }
    vm.register("log", in: "__stage") { arguments in
      LuaStage.say("\(state.place): " + arguments.map(\.displayed).joined(separator: " "))
      return []
    }
  }

  /// `ctx:each` and batched fetches: selections, their batches and letting go. A handler's whole
  /// run is one call, however many walks it starts: a batch lets go of the objects before it
  /// (memory), and its objects add to the call's budget for two passes over their entity at most
  /// (``HandedObjects``), never renew it.
  func registerLists(_ vm: LuaVM) {
    vm.register("select", in: "__stage") { [unowned vm] arguments in try select(arguments, vm: vm) }
    vm.register("batch", in: "__stage") { [unowned vm] arguments in [try batch(arguments, vm: vm)] }
    vm.register("forget", in: "__stage") { [unowned vm] arguments in
      let token = Int(arguments.first?.integerValue ?? 0)
      release(state.lists[token]?.batch ?? [])
      if let keys = state.lists[token]?.keys { _ = vm.hold(bytes: -keys.bytes) }
      state.lists[token] = nil
      return []
    }
  }

  /// Property writes, `ctx:insert`, `ctx:delete`, `ctx:save` and `ctx:reset`.
  func registerWrites(_ vm: LuaVM) {
    vm.register("set", in: "__stage") { arguments in
      try write(
        try objectOf(arguments.first, "a property write"), try text(arguments.count > 1 ? arguments[1] : nil, "a key"),
        arguments.count > 2 ? arguments[2] : .nil)
      return []
    }
    vm.register("insert", in: "__stage") { arguments in
      let inserted = try context().insert(try text(arguments.first, "ctx:insert's entity"))
      for (key, value) in arguments.count > 1 ? arguments[1].tableValue?.fields ?? [:] : [:] {
        try write(inserted, try text(key, "a key"), value)
      }
      return [try handle(inserted)]
    }
    vm.register("delete", in: "__stage") { arguments in
      try context().delete(try objectOf(arguments.first, "ctx:delete"))
      return []
    }
    vm.register("save", in: "__stage") { _ in
      state.changes.add(try context().save())
      return []
    }
    vm.register("reset", in: "__stage") { _ in
      let context = try context()
      guard !context.hasChanges else {
        throw HostError("ctx:reset(): the context has changes not saved; ctx:save() them first")
      }
      // Every object handed out so far is let go: their handles no longer name anything.
      context.reset()
      state.objects = [:]
      state.handles = [:]
      return []
    }
  }
}
