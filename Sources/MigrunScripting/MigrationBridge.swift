import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunStore

/// The host functions behind the prelude: object reads and writes, inserts, associations and
/// look-ups, on the migration manager of the step being run.
package final class MigrationBridge {
  let vm: LuaVM
  let file: String
  var manager: MigrationManager?
  /// Relationships a hook wrote per destination object (the default then leaves them alone).
  var writtenRelationships: [ObjectID: Set<String>] = [:]
  /// Associations made since the counter was last read (did a hook create anything?).
  var associationsMade = 0
  /// What `m:default(object [, values])` runs: the default of the hook being called (its `super`),
  /// set by the policy around a per-object hook only.
  var defaultAction: DefaultAction?
  /// The prelude's maker of bulk-copy row functions.
  var rows: LuaFunction?
  /// The prelude's `userInfo([replacement])`: the file's `m.userInfo` table.
  var userInfoTable: LuaFunction?
  /// `m.userInfo` as the job's files share it (``ManagerUserInfo``), and which of its versions this
  /// file's table holds.
  var sharedUserInfo: ManagerUserInfo?
  private var userInfoVersion = -1
  private var cachedSource: StoredObject?
  /// The objects `m:fetch` handed the hook running, by side and entity: what its budget has grown
  /// by (``HandedObjects``), when it is a hook of the whole mapping (`earns`: `begin`, `finish`, …;
  /// a per-object hook's budget is its object's). The policy starts it again for each call.
  var handed: HandedObjects?

  init(vm: LuaVM, file: String) {
    self.vm = vm
    self.file = file
    register()
  }

  func activeManager() throws -> MigrationManager {
    guard let manager else { throw HostError("the migration manager is only available while the step runs") }
    return manager
  }

  /// The view table of a source object: its attributes up front, relationships on demand.
  func sourceTable(_ object: StoredObject) -> LuaValue {
    cachedSource = object
    var table = LuaTable()
    table["__side"] = "src"
    table["__entity"] = .text(object.id.entity)
    table["__pk"] = .integer(object.id.primaryKey)
    for (name, value) in object.attributes { table[name] = Self.lua(value) }
    return .table(table)
  }

  static func destinationTable(_ id: ObjectID) -> LuaValue {
    ["__side": "dst", "__entity": .text(id.entity), "__pk": .integer(id.primaryKey)]
  }

  // MARK: - Values

  package static func lua(_ value: StoreValue) -> LuaValue {
    switch value {
    case .null: .null
    case .integer(let number): .integer(number)
    case .boolean(let flag): .integer(flag ? 1 : 0)
    case .double(let number), .date(let number): .number(number)
    case .string(let text): .text(text)
    case .data(let bytes), .uuid(let bytes): .bytes(bytes)
    }
  }

  package static func store(_ value: LuaValue, for attribute: Attribute, entity: String) throws -> StoreValue {
    func bad() -> HostError {
      HostError("\(entity).\(attribute.name) is \(attribute.type.xmlName); a \(value.typeName) cannot be stored in it")
    }
    func fitting(_ number: Int64) throws -> StoreValue { try integer(number, for: attribute, entity: entity) }
    switch (value, attribute.type) {
    case (.null, _), (.nil, _): return .null
    case (.integer(let number), .integer16), (.integer(let number), .integer32), (.integer(let number), .integer64):
      return try fitting(number)
    case (.number(let number), .integer16), (.number(let number), .integer32), (.number(let number), .integer64):
      guard number.rounded() == number, abs(number) < 9.2e18 else { throw bad() }
      return try fitting(Int64(number))
    case (.boolean(let flag), .boolean): return .boolean(flag)
    case (.integer(let number), .boolean): return .boolean(number != 0)
    case (_, .double), (_, .float), (_, .decimal):
      guard let number = value.doubleValue else { throw bad() }
      return .double(number)
    case (_, .date):
      guard let number = value.doubleValue else { throw bad() }
      guard !number.isNaN else { throw HostError(StoreValue.nanDateRefusal("\(entity).\(attribute.name)")) }
      return .date(number)
    case (.string(let bytes), .string), (.string(let bytes), .uri):
      guard let text = String(validating: bytes, as: UTF8.self) else {
        throw HostError(
          "\(entity).\(attribute.name) is \(attribute.type.xmlName): the text given is not UTF-8 (\(bytes.count) bytes); "
            + "convert it (utf8.char, or drop the bad bytes), or store bytes in a Binary attribute")
      }
      return .string(text)
    case (.string(let bytes), .uuid):
      guard bytes.count == 16 else {
        throw HostError("\(entity).\(attribute.name) is a UUID: give 16 bytes (uuid.bytes(text))")
      }
      return .uuid(bytes)
    case (.string(let bytes), .binary), (.string(let bytes), .transformable), (.string(let bytes), .undefined):
      return .data(bytes)
    default: throw bad()
    }
  }

  /// An integer attribute holds its width's numbers only, as Core Data's validation insists.
  static func integer(_ number: Int64, for attribute: Attribute, entity: String) throws -> StoreValue {
    let range = attribute.type.integerRange ?? Int64.min...Int64.max
    guard range.contains(number) else {
      throw HostError(
        "\(entity).\(attribute.name) is \(attribute.type.xmlName): \(number) is out of its range (\(range.lowerBound)…\(range.upperBound))"
      )
    }
    return .integer(number)
  }

  static func descriptor(_ id: ObjectID, side: String) -> LuaValue {
    ["__side": .text(side), "__entity": .text(id.entity), "__pk": .integer(id.primaryKey)]
  }

  static func objectID(_ value: LuaValue) throws -> ObjectID {
    try objectID(entity: value["__entity"], key: value["__pk"], in: value)
  }

  /// The object named by an entity name and a key: a descriptor's two fields (`in`, named in the
  /// error), or two arguments of a host function, read as they are (no table built per call).
  static func objectID(entity: LuaValue, key: LuaValue, in descriptor: LuaValue? = nil) throws -> ObjectID {
    guard let name = entity.stringValue, let number = key.integerValue else {
      let given = descriptor.map { "a \($0.typeName)" } ?? "a \(entity.typeName) and a \(key.typeName)"
      throw HostError("expected an object, got \(given)")
    }
    return ObjectID(entity: name, primaryKey: number)
  }

  // MARK: - Host functions

  private func register() {
    vm.register("get", in: "__migrun") { [unowned self] arguments in [try self.get(arguments)] }
    vm.register("values", in: "__migrun") { [unowned self] arguments in [try self.values(arguments)] }
    vm.register("set", in: "__migrun") { [unowned self] arguments in
      try self.set(arguments)
      return []
    }
    vm.register("insert", in: "__migrun") { [unowned self] arguments in [try self.insert(arguments)] }
    registerAssociations()
    vm.register("find", in: "__migrun") { [unowned self] arguments in [try self.find(arguments)] }
    vm.register("fetch", in: "__migrun") { [unowned self] arguments in [try self.fetch(arguments)] }
    vm.register("default", in: "__migrun") { [unowned self] arguments in
      [try self.defaultAction(taking: arguments.first ?? .nil).run(arguments.count > 1 ? arguments[1] : .nil)]
    }
    // The object checked before the prelude runs any attribute function for it: whether the
    // default makes an object (the functions' values have one to go to).
    vm.register("defaultMakes", in: "__migrun") { [unowned self] arguments in
      [.boolean(try self.defaultAction(taking: arguments.first ?? .nil).makesObject)]
    }
    vm.register("properties", in: "__migrun") { [unowned self] arguments in [try self.properties(arguments)] }
    vm.register("uri", in: "__migrun") { [unowned self] arguments in
      let id = try Self.objectID(entity: arguments.first ?? .nil, key: arguments.count > 1 ? arguments[1] : .nil)
      return [.text(id.uri(storeUUID: try self.activeManager().destination.metadata.uuid))]
    }
    vm.register("log", in: "__migrun") { [file] arguments in
      // Said where the user reads the run (was kept in a list nothing read).
      LuaStage.say("\(file): \((arguments.first ?? .nil).displayed)")
      return []
    }
  }

  /// `m:associate`, `m:destinations` and `m:sources`: the manager's associations of source and
  /// destination objects.
  private func registerAssociations() {
    vm.register("associate", in: "__migrun") { [unowned self] arguments in
      guard arguments.count == 2 else { throw HostError("m:associate(src, dst)") }
      guard arguments[0]["__side"].stringValue != "dst", arguments[1]["__side"].stringValue != "src" else {
        throw HostError("m:associate(src, dst): give a source object, then a destination object")
      }
      try self.activeManager().associate(
        source: try Self.objectID(arguments[0]), destination: try Self.objectID(arguments[1]))
      self.associationsMade += 1
      return []
    }
    vm.register("destinations", in: "__migrun") { [unowned self] arguments in
      guard arguments.count == 2 else { throw HostError("m:destinations(mappingName, objects)") }
      let found = try self.activeManager().destinations(
        of: try Self.objectID(arguments[1]), mapping: arguments[0].stringValue)
      return [.table(LuaTable(array: found.map { Self.descriptor($0, side: "dst") }))]
    }
    vm.register("sources", in: "__migrun") { [unowned self] arguments in
      guard arguments.count == 2 else { throw HostError("m:sources(mappingName, objects)") }
      let found = try self.activeManager().sources(
        of: try Self.objectID(arguments[1]), mapping: arguments[0].stringValue)
      return [.table(LuaTable(array: found.map { Self.descriptor($0, side: "src") }))]
    }
  }

  /// The hook's default when `object` is the object it was called with, on its side; else the
  /// error saying which object to give (or that no hook being run has a default).
  private func defaultAction(taking object: LuaValue) throws -> DefaultAction {
    guard let action = defaultAction else {
      throw HostError(
        "m:default(object) runs the default of createDestinationInstances (give src) or createRelationships (give dst), from those hooks only"
      )
    }
    guard (try? Self.objectID(object)) == action.object, object["__side"].stringValue == action.side else {
      throw HostError(
        "m:default(\(action.side)): give the \(action.side == "src" ? "source" : "destination") object the hook was "
          + "called with (\(action.object))")
    }
    return action
  }

  /// `values(side, entity, pk)`: an object's attribute values as a table.
  private func values(_ arguments: [LuaValue]) throws -> LuaValue {
    guard arguments.count == 3, let side = arguments[0].stringValue else { throw HostError("values(side, entity, pk)") }
    let object = try object(side: side, try Self.objectID(entity: arguments[1], key: arguments[2]))
    return .table(
      LuaTable(fields: Dictionary(uniqueKeysWithValues: object.attributes.map { (.text($0.key), Self.lua($0.value)) })))
  }

  /// `properties(side, entity)`: the names of the entity's properties (attributes, relationships,
  /// composites) as a set, so that the prelude lets none of them be shadowed by an object method.
  private func properties(_ arguments: [LuaValue]) throws -> LuaValue {
    guard arguments.count == 2, let side = arguments[0].stringValue, let name = arguments[1].stringValue else {
      throw HostError("properties(side, entity)")
    }
    let manager = try activeManager()
    let model = side == "src" ? manager.mapping.source : manager.mapping.destination
    guard let entity = model.entity(named: name) else { throw HostError("no entity '\(name)'") }
    let names =
      model.attributes(of: entity).map(\.name) + model.relationships(of: entity).map(\.name)
      + model.declaredAttributes(of: entity).filter { $0.type == .composite }.map(\.name)
    return .table(
      LuaTable(fields: Dictionary(names.map { (.text($0), .boolean(true)) }, uniquingKeysWith: { a, _ in a })))
  }

  /// `m:insert(entity, values)`: a destination object with its attributes, composites and links.
  private func insert(_ arguments: [LuaValue]) throws -> LuaValue {
    guard let entity = arguments.first?.stringValue else {
      throw HostError("m:insert(entity, values): give an entity name")
    }
    let manager = try activeManager()
    guard let found = manager.mapping.destination.entity(named: entity) else {
      throw HostError("m:insert: the destination model has no entity '\(entity)'")
    }
    var attributes: [String: StoreValue] = [:]
    var relationships: [(String, LuaValue)] = []
    for (key, value) in (arguments.count > 1 ? arguments[1].tableValue : nil)?.fields ?? [:] {
      guard let name = key.stringValue else { continue }
      if let attribute = manager.mapping.destination.attributes(of: found).first(where: { $0.name == name }) {
        attributes[name] = try Self.store(value, for: attribute, entity: entity)
      } else if let composite = Self.composite(name, of: found, in: manager.mapping.destination) {
        var object = StoredObject(id: ObjectID(entity: entity, primaryKey: 0), attributes: attributes)
        try Self.storeComposite(value, composite, path: name, entity: entity, into: &object)
        attributes = object.attributes
      } else if manager.mapping.destination.relationships(of: found).contains(where: { $0.name == name }) {
        relationships.append((name, value))
      } else {
        throw HostError("m:insert: entity '\(entity)' has no property '\(name)'")
      }
    }
    let id = try manager.insert(entity, attributes: attributes)
    for (name, value) in relationships {
      try set([.text(id.entity), .integer(id.primaryKey), .text(name), value])
    }
    return Self.descriptor(id, side: "dst")
  }

  /// `m:find(entity, values)`: the destination object with these attribute values, or nil.
  private func find(_ arguments: [LuaValue]) throws -> LuaValue {
    guard let entity = arguments.first?.stringValue else { throw HostError("m:find(entity, values)") }
    let manager = try self.activeManager()
    guard let found = manager.mapping.destination.entity(named: entity) else {
      throw HostError("m:find: the destination model has no entity '\(entity)'")
    }
    var values: [String: StoreValue] = [:]
    for (key, value) in (arguments.count > 1 ? arguments[1].tableValue : nil)?.fields ?? [:] {
      guard let name = key.stringValue,
        let attribute = manager.mapping.destination.attributes(of: found).first(where: { $0.name == name })
      else { throw HostError("m:find: entity '\(entity)' has no attribute '\(key.stringValue ?? key.typeName)'") }
      values[name] = try Self.store(value, for: attribute, entity: entity)
    }
    return try manager.find(entity, values).map { Self.descriptor($0, side: "dst") } ?? .nil
  }

  /// `m:fetch(entity [, predicate [, options]])`: Core Data's fetch in the manager's destination
  /// context (what the migration wrote so far) or, with `source = true`, its source context — a list
  /// of objects, sorted by `sort` (`{ "name", "-date" }`) then by key, at most `limit`; the predicate's
  /// `%@` filled from `args`, as a stage's `ctx:fetch`.
  private func fetch(_ arguments: [LuaValue]) throws -> LuaValue {
    guard let entity = arguments.first?.stringValue else {
      throw HostError("m:fetch(entity [, predicate [, options]])")
    }
    let options = arguments.count > 2 ? arguments[2] : .nil
    let known = ["args", "sort", "limit", "source"]
    for key in (options.tableValue?.fields ?? [:]).keys where !known.contains(key.stringValue ?? "") {
      throw HostError("m:fetch: no option '\(key.stringValue ?? key.typeName)' (\(known.joined(separator: ", ")))")
    }
    var predicate: FormatPredicate?
    if arguments.count > 1, arguments[1] != .nil, arguments[1] != .null {
      guard let text = arguments[1].stringValue else {
        throw HostError("m:fetch: the predicate is a string, not \(arguments[1].typeName)")
      }
      let args = try (options["args"].tableValue?.array ?? []).map(PredicateArguments.argument)
      predicate = try FormatPredicate(text, filling: args)
    }
    let limit =
      try options["limit"] == .nil
      ? nil
      : options["limit"].integerValue.map { Int($0) }
        ?? {
          throw HostError("m:fetch: limit is a whole number, not \(options["limit"].typeName)")
        }()
    let inSource = options["source"] == .boolean(true)
    let manager = try activeManager()
    let found = try manager.fetch(
      entity, matching: predicate, sortedBy: try PredicateArguments.sortKeys(options["sort"]), limit: limit,
      inSource: inSource)
    if handed != nil {
      vm.credit(
        objects: try handed?.earning(found.count, of: (inSource ? "src " : "dst ") + entity) {
          try manager.count(entity, inSource: inSource)
        } ?? 0)
    }
    return .table(LuaTable(array: found.map { Self.descriptor($0, side: inSource ? "src" : "dst") }))
  }

  /// The composite attribute `key` names — `author`, or an element that is itself a composite
  /// (`author.address`) — when it does.
  static func composite(_ key: String, of entity: Entity, in model: ObjectModel) -> Attribute? {
    let parts = key.split(separator: ".").map(String.init)
    guard let first = parts.first else { return nil }
    var found = model.declaredAttributes(of: entity).first { $0.name == first }
    for part in parts.dropFirst() { found = found?.elements.first { $0.name == part } }
    return found?.type == .composite ? found : nil
  }

  /// A composite as Lua sees it: a table of its elements by name (`src.author.person`), nested
  /// composites as tables too, read from the object's element values (`author.person`).
  static func compositeTable(_ composite: Attribute, path: String, of object: StoredObject) -> LuaValue {
    var fields: [LuaValue: LuaValue] = [:]
    for element in composite.elements {
      let elementPath = path + "." + element.name
      fields[.text(element.name)] =
        element.type == .composite
        ? compositeTable(element, path: elementPath, of: object) : lua(object.attributes[elementPath] ?? .null)
    }
    return .table(LuaTable(fields: fields))
  }

  /// Stores a Lua table of a composite's elements (`dst.author = { person = "…", year = 1930 }`) into
  /// its element values; an element the table leaves out is NULL, as is every element for `nil`.
  /// A key that names no element is an error naming it (a typo would otherwise be dropped).
  static func storeComposite(
    _ value: LuaValue, _ composite: Attribute, path: String, entity: String, into object: inout StoredObject
  ) throws {
    let table: LuaTable
    switch value {
    case .null, .nil: table = LuaTable()
    case .table(let given): table = given
    default:
      throw HostError(
        "\(entity).\(path) is a composite attribute: give it a table of its elements ("
          + composite.elements.map(\.name).joined(separator: ", ") + "), not a \(value.typeName)")
    }
    let names = Set(composite.elements.map(\.name))
    for key in table.fields.keys {
      guard let name = key.stringValue, names.contains(name) else {
        throw HostError(
          "\(entity).\(path) has no element '\(key.stringValue ?? key.typeName)' (its elements: "
            + composite.elements.map(\.name).joined(separator: ", ") + ")")
      }
    }
    guard table.array.isEmpty else {
      throw HostError("\(entity).\(path) is a composite attribute: give its elements by name, not as a list")
    }
    for element in composite.elements {
      let elementPath = path + "." + element.name
      let given = table[element.name] ?? .nil
      if element.type == .composite {
        try storeComposite(given, element, path: elementPath, entity: entity, into: &object)
      } else {
        var leaf = element
        leaf.name = elementPath
        object.attributes[elementPath] = try store(given, for: leaf, entity: entity)
      }
    }
  }

  private func object(side: String, _ id: ObjectID) throws -> StoredObject {
    let manager = try activeManager()
    if side == "src", let cachedSource, cachedSource.id == id { return cachedSource }
    // Source objects without their to-many members: `get` looks them up when one is read.
    let found = side == "src" ? try manager.sourceObject(id, withToMany: false) : try manager.destinationObject(id)
    guard let found else {
      throw HostError("\(id) does not exist in the \(side == "src" ? "source" : "destination") store")
    }
    if side == "src" { cachedSource = found }
    return found
  }

  private func get(_ arguments: [LuaValue]) throws -> LuaValue {
    guard arguments.count == 4, let side = arguments[0].stringValue, let key = arguments[3].stringValue else {
      throw HostError("get(side, entity, pk, key)")
    }
    let id = try Self.objectID(entity: arguments[1], key: arguments[2])
    var object = try object(side: side, id)
    if let value = object.attributes[key] { return Self.lua(value) }
    let manager = try activeManager()
    let model = side == "src" ? manager.mapping.source : manager.mapping.destination
    guard let entity = model.entity(named: id.entity) else { throw HostError("no entity '\(id.entity)'") }
    guard let relationship = model.relationships(of: entity).first(where: { $0.name == key }) else {
      // Not a stored value, not a relationship: a composite, or no property at all.
      if let composite = Self.composite(key, of: entity, in: model) {
        return Self.compositeTable(composite, path: key, of: object)
      }
      throw HostError("entity '\(id.entity)' has no property '\(key)'")
    }
    if relationship.isToMany {
      // Stage 1 hands objects out without their to-many members: look them up when a script asks.
      if object.toMany[key] == nil {
        guard let full = side == "src" ? try manager.sourceObject(id) : try manager.destinationObject(id) else {
          throw HostError("\(id) does not exist")
        }
        object = full
        if side == "src" { cachedSource = full }
      }
      return .table(LuaTable(array: (object.toMany[key] ?? []).map { Self.descriptor($0, side: side) }))
    }
    return object.toOne[key].map { Self.descriptor($0, side: side) } ?? .null
  }

  private func set(_ arguments: [LuaValue]) throws {
    guard arguments.count == 4, let key = arguments[2].stringValue else {
      throw HostError("set(entity, pk, key, value)")
    }
    let id = try Self.objectID(entity: arguments[0], key: arguments[1])
    let manager = try activeManager()
    let model = manager.mapping.destination
    guard let entity = model.entity(named: id.entity) else { throw HostError("no destination entity '\(id.entity)'") }
    if let attribute = model.attributes(of: entity).first(where: { $0.name == key }) {
      guard var object = try manager.destinationObject(id) else { throw HostError("\(id) does not exist") }
      object.attributes[key] = try Self.store(arguments[3], for: attribute, entity: id.entity)
      try manager.update(object)
      return
    }
    guard let relationship = model.relationships(of: entity).first(where: { $0.name == key }) else {
      guard let composite = Self.composite(key, of: entity, in: model) else {
        throw HostError("entity '\(id.entity)' has no property '\(key)'")
      }
      guard var object = try manager.destinationObject(id) else { throw HostError("\(id) does not exist") }
      try Self.storeComposite(arguments[3], composite, path: key, entity: id.entity, into: &object)
      try manager.update(object)
      return
    }
    writtenRelationships[id, default: []].insert(key)
    let value = arguments[3]
    let place = "\(id.entity).\(key)"
    if relationship.isToMany {
      let members = try (value.tableValue?.array ?? []).map {
        try linked($0, at: place)
      }
      try manager.setToMany(id, key, members)
    } else {
      try manager.setToOne(
        id, key, value == .null || value == .nil ? nil : try linked(value, at: place))
    }
  }

  /// The destination object a script links: never a source object (what a source object became is
  /// ``MigrationManager/destinations(of:mapping:)``'s to find). That it is of the relationship's
  /// entity and exists, the manager checks for every policy.
  private func linked(_ value: LuaValue, at place: String) throws -> ObjectID {
    let id = try Self.objectID(value)
    if value["__side"].stringValue == "src" {
      throw HostError(
        "\(place): \(id) is a source object; link destination objects (m:destinations(…) gives what a source object became)"
      )
    }
    return id
  }
}

/// The default `m:default(object [, values])` runs in the hook being called (its `super`): the one
/// object it takes — the hook's own, on its side (`src` or `dst`) — checked before anything runs.
struct DefaultAction {
  let object: ObjectID
  let side: String
  /// Whether the default makes an object (a mapping with a destination entity): only then do the
  /// attribute functions run for it.
  var makesObject = false
  /// The default: `values` are the attribute functions' results by name, computed by the prelude
  /// before the object is made (it is then written once), or nil.
  let run: (_ values: LuaValue) throws -> LuaValue
}

/// `NSMigrationManager.userInfo` across the files of a job: each file's VM has its own `m.userInfo`
/// table; the table a file leaves when an entity mapping ends is what the next file's mapping
/// starts with — across the passes of a step and the steps of a migration. Plain values only
/// (a function or an object view belongs to its file's VM and is refused by name).
package final class ManagerUserInfo {
  fileprivate var value: LuaValue = .table(LuaTable())
  fileprivate var version = 0

  package init() {}
}

extension MigrationBridge {
  /// Before an entity mapping runs: the shared table, if another file changed it since this file
  /// last saw it.
  func takeUserInfo() throws {
    guard let shared = sharedUserInfo, let userInfoTable, userInfoVersion != shared.version else { return }
    _ = try vm.call(userInfoTable, [shared.value])
    userInfoVersion = shared.version
  }

  /// After an entity mapping ran: this file's table becomes the shared one.
  func giveUserInfo() throws {
    guard let shared = sharedUserInfo, let userInfoTable else { return }
    guard let table = try vm.call(userInfoTable).first else { return }
    if let path = Self.firstUnshareable(table, at: "m.userInfo") {
      throw HostError(
        "\(path) is a function — m.userInfo carries plain values (numbers, strings, booleans, tables of them) from one file to the next"
      )
    }
    shared.value = table
    shared.version += 1
    userInfoVersion = shared.version
  }

  private static func firstUnshareable(_ value: LuaValue, at path: String) -> String? {
    switch value {
    case .function: return path
    case .table(let table):
      for (key, member) in table.fields {
        if let found = firstUnshareable(member, at: "\(path).\(key.stringValue ?? key.typeName)") { return found }
      }
      for (index, member) in table.array.enumerated() {
        if let found = firstUnshareable(member, at: "\(path)[\(index + 1)]") { return found }
      }
      return nil
    default: return nil
    }
  }
}
