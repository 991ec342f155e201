import Foundation
import MigrunModel
import PropertyList

/// A store's objects as JSON, for fixtures, diffs and reviews — and back.
///
/// ```json
/// { "format": "migrun-store/1", "uuid": "…", "versionHashes": { "Book": "…" },
///   "entities": { "Book": [ { "pk": 1, "version": 2,
///       "attributes": { "title": "Soup", "published": 737057651.5, "photo": "AAEC", "id": "E7350B5D-…" },
///       "relationships": { "author": "Author/p1", "pages": ["Page/p3", "Page/p4"] } } ] } }
/// ```
///
/// Entities and keys are sorted and objects listed by primary key, so the same store always gives
/// the same text. Values follow the attribute's type: integers, booleans, floats (shortest exact
/// form; `"NaN"`, `"Infinity"`, `"-Infinity"` as strings), strings, dates as seconds since
/// 2001-01-01 (or, with ``Dates/iso8601``, as ISO 8601 text; import reads both), Binary and Transformable as base64, UUIDs as text. Relationships name objects as
/// `Entity/pN`. A composite attribute is an object of its elements (`"author": {"person": "…"}`);
/// import takes that form or its elements by key path (`"author.person"`).
package enum StoreJSON {
  package static let format = "migrun-store/1"

  /// How an export writes dates.
  package enum Dates: String, Sendable, CaseIterable {
    /// Seconds since 2001-01-01, exact (the default).
    case seconds
    /// ISO 8601 in UTC with milliseconds (`2024-05-01T12:00:00.250Z`), for people: import reads it
    /// back to the millisecond.
    case iso8601
  }

  /// Writes every object of `store` to `output`, one object at a time (memory stays flat).
  package static func export(_ store: any ObjectStore, dates: Dates = .seconds, to output: (String) throws -> Void)
    throws
  {
    let hashes = store.metadata.versionHashes.sorted { $0.key < $1.key }
      .map { "    \(quote($0.key)): \(quote($0.value.base64))" }.joined(separator: ",\n")
    try output("{\n  \"format\": \(quote(format)),\n  \"uuid\": \(quote(store.metadata.uuid)),\n")
    try output("  \"versionHashes\": {\n\(hashes)\n  },\n  \"entities\": {")
    let entities = store.model.entities.map(\.name).sorted()
    for (index, name) in entities.enumerated() {
      try output(index == 0 ? "\n" : ",\n")
      try output("    \(quote(name)): [")
      var first = true
      try store.forEachObject(of: name, includingSubentities: false) { object in
        try output((first ? "\n" : ",\n") + "      " + encode(object, model: store.model, dates: dates))
        first = false
      }
      try output(first ? "]" : "\n    ]")
    }
    try output("\n  }\n}\n")
  }

  /// The JSON text of `store`.
  package static func export(_ store: any ObjectStore) throws -> String {
    var text = ""
    try export(store) { text += $0 }
    return text
  }

  /// The entity version hashes an export records (`versionHashes`), nil when it records none or is
  /// no export: what finds the version an export was made with.
  package static func versionHashes(of json: Data) -> [String: VersionHash]? {
    guard case .object(let root)? = try? JSONDecoder().decode(JSONValue.self, from: json),
      case .object(let stored)? = root["versionHashes"]
    else { return nil }
    return stored.compactMapValues { $0.string.flatMap(VersionHash.init(base64:)) }
  }

  /// Writes the objects of `json` into `store` (which must be empty and fit the export's hashes),
  /// in one transaction: rows first, then to-many members. Objects `check` would find fault with
  /// (``ObjectCheck``: a link to no object of the export, an integer outside its type, a required
  /// value missing) are refused by entity, key and property before anything is written.
  package static func importObjects(_ json: Data, into store: any ObjectStore) throws {
    let parsed: JSONValue
    do {
      parsed = try JSONDecoder().decode(JSONValue.self, from: json)
    } catch {
      throw StoreError(.badValue, reason: "not JSON (\(error.localizedDescription))", underlying: error)
    }
    guard case .object(let root) = parsed, root["format"]?.string == format,
      case .object(let entityLists)? = root["entities"]
    else { throw StoreError(.badValue, reason: "not a migrun store export (\"format\": \"\(format)\" missing)") }
    if case .object(let stored)? = root["versionHashes"] {
      let hashes = stored.compactMapValues(\.string)
      let mismatched = hashes.filter { store.model.entityVersionHashes[$0.key]?.base64 != $0.value }.keys.sorted()
      guard mismatched.isEmpty, hashes.count == store.model.entityVersionHashes.count else {
        throw StoreError(
          .incompatibleModel,
          reason:
            "the export was made with another model version (entities that differ: \(mismatched.joined(separator: ", ")))"
        )
      }
    }
    var objects: [StoredObject] = []
    for (name, list) in entityLists.sorted(by: { $0.key < $1.key }) {
      guard let entity = store.model.entity(named: name) else {
        throw StoreError(.unknownEntity, entity: name, reason: "the model has no such entity")
      }
      guard case .array(let entries) = list else {
        throw StoreError(.badValue, entity: name, reason: "not a list of objects")
      }
      for case .object(let entry) in entries { objects.append(try decode(entry, entity: entity, model: store.model)) }
    }
    // What `check` would find in the new store is refused before anything is written.
    let problems = ObjectCheck.problems(in: objects, model: store.model)
    if let first = problems.first { throw first.error(among: problems.count) }
    var metadata: StoreMetadata?
    if let uuid = root["uuid"]?.string {
      metadata = store.metadata
      metadata?.uuid = uuid
    }
    try store.insertAll(objects, metadata: metadata)
  }

  // MARK: - Non public

  static func encode(_ object: StoredObject, model: ObjectModel, dates: Dates = .seconds) -> String {
    guard let entity = model.entity(named: object.id.entity) else { return "{}" }
    // A composite is an object of its elements (`"author": {"person": …}`), nested ones nested.
    func encoded(_ attribute: Attribute, path: String) -> String {
      guard attribute.type == .composite else { return encode(object.attributes[path] ?? .null, dates: dates) }
      let elements = attribute.elements.sorted { $0.name < $1.name }.map { element in
        "\(quote(element.name)): \(encoded(element, path: path + "." + element.name))"
      }
      return "{\(elements.joined(separator: ", "))}"
    }
    let attributes = model.declaredAttributes(of: entity).filter { !$0.isTransient }.sorted { $0.name < $1.name }
      .map { attribute in "\(quote(attribute.name)): \(encoded(attribute, path: attribute.name))" }
    var relationships: [String] = []
    for relationship in model.relationships(of: entity).filter({ !$0.isTransient }).sorted(by: { $0.name < $1.name }) {
      if relationship.isToMany {
        let members = (object.toMany[relationship.name] ?? []).map { quote(reference($0)) }
        relationships.append("\(quote(relationship.name)): [\(members.joined(separator: ", "))]")
      } else {
        relationships.append(
          "\(quote(relationship.name)): \(object.toOne[relationship.name].map { quote(reference($0)) } ?? "null")")
      }
    }
    return
      "{\"pk\": \(object.id.primaryKey), \"version\": \(object.version), \"attributes\": {\(attributes.joined(separator: ", "))}, "
      + "\"relationships\": {\(relationships.joined(separator: ", "))}}"
  }

  static func encode(_ value: StoreValue, dates: Dates = .seconds) -> String {
    switch value {
    case .date(let seconds) where dates == .iso8601 && seconds.isFinite:
      quote(isoFormatter().string(from: Date(timeIntervalSinceReferenceDate: seconds)))
    case .null: "null"
    case .integer(let number): String(number)
    case .boolean(let flag): flag ? "true" : "false"
    case .double(let number), .date(let number):
      number.isNaN ? "\"NaN\"" : number.isInfinite ? (number > 0 ? "\"Infinity\"" : "\"-Infinity\"") : "\(number)"
    case .string(let text): quote(text)
    case .data(let bytes): quote(Data(bytes).base64EncodedString())
    case .uuid(let bytes):
      bytes.count == 16
        ? quote(bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }.uuidString)
        : quote(Data(bytes).base64EncodedString())
    }
  }

  static func reference(_ id: ObjectID) -> String { "\(id.entity)/p\(id.primaryKey)" }

  /// ISO 8601 in UTC with fractional seconds (a formatter per call: they are not Sendable).
  static func isoFormatter() -> ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }

  /// ISO 8601 without fractional seconds, which import also reads.
  static func plainISOFormatter() -> ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter
  }

  static func quote(_ text: String) -> String { JSONText.quoted(text) }

  static func decode(_ entry: [String: JSONValue], entity: Entity, model: ObjectModel) throws -> StoredObject {
    guard case .integer(let primaryKey)? = entry["pk"] else {
      throw StoreError(.badValue, entity: entity.name, reason: "an object has no \"pk\"")
    }
    // A key the format does not have is a mistake to name, not to pass over (an attribute written
    // beside "pk" instead of under "attributes" would otherwise import as NULL).
    if let unknown = entry.keys.sorted().first(where: {
      !["pk", "version", "attributes", "relationships"].contains($0)
    }) {
      let isProperty = model.declaredAttributes(of: entity).contains { $0.name == unknown }
      throw StoreError(
        .badValue, entity: entity.name, primaryKey: primaryKey,
        reason: "an object has the key '\(unknown)'"
          + (isProperty
            ? ", an attribute: put it under \"attributes\""
            : "; an object has \"pk\", \"version\", \"attributes\" and \"relationships\""))
    }
    var version: Int64 = 1
    if case .integer(let stored)? = entry["version"] { version = stored }
    var object = StoredObject(id: ObjectID(entity: entity.name, primaryKey: primaryKey), version: version)
    if case .object(let given)? = entry["attributes"] {
      let attributes = try flattened(
        given, of: model.declaredAttributes(of: entity), leaves: Set(model.attributes(of: entity).map(\.name)),
        prefix: "", entity: entity.name, primaryKey: primaryKey)
      for attribute in model.attributes(of: entity) where !attribute.isTransient {
        guard let raw = attributes[attribute.name] else { continue }
        object.attributes[attribute.name] = try value(
          raw, attribute: attribute, entity: entity.name, primaryKey: primaryKey)
      }
    }
    guard case .object(let relationships)? = entry["relationships"] else { return object }
    try decodeRelationships(relationships, of: entity, model: model, into: &object)
    return object
  }

  /// An object's `relationships`: references (`Entity/pN`), a list of them for a to-many.
  static func decodeRelationships(
    _ relationships: [String: JSONValue], of entity: Entity, model: ObjectModel, into object: inout StoredObject
  ) throws {
    let primaryKey = object.id.primaryKey
    let names = Set(model.relationships(of: entity).map(\.name))
    if let unknown = relationships.keys.sorted().first(where: { !names.contains($0) }) {
      throw StoreError(
        .badValue, entity: entity.name, primaryKey: primaryKey,
        reason: "'\(unknown)' is not a relationship of the entity")
    }
    for relationship in model.relationships(of: entity) where !relationship.isTransient {
      guard let raw = relationships[relationship.name], raw != .null else { continue }
      switch (relationship.isToMany, raw) {
      case (true, .array(let list)):
        object.toMany[relationship.name] = try list.map { item in
          guard let text = item.string else {
            throw StoreError(
              .badValue, entity: entity.name, primaryKey: primaryKey,
              reason: "'\(relationship.name)' holds a non-reference")
          }
          return try objectID(text, entity: entity.name, primaryKey: primaryKey)
        }
      case (false, .string(let text)):
        object.toOne[relationship.name] = try objectID(text, entity: entity.name, primaryKey: primaryKey)
      default:
        throw StoreError(
          .badValue, entity: entity.name, primaryKey: primaryKey,
          reason: "'\(relationship.name)' is not \(relationship.isToMany ? "a list of references" : "a reference")")
      }
    }
  }

  static func objectID(_ text: String, entity: String, primaryKey: Int64) throws -> ObjectID {
    guard let slash = text.lastIndex(of: "/"), text[text.index(after: slash)...].hasPrefix("p"),
      let key = Int64(text[text.index(slash, offsetBy: 2)...])
    else {
      throw StoreError(
        .badValue, entity: entity, primaryKey: primaryKey, reason: "'\(text)' is not an Entity/pN reference")
    }
    return ObjectID(entity: String(text[..<slash]), primaryKey: key)
  }

  /// An object's `attributes` by key path: a composite's object opened into its elements
  /// (`"author": {"person": …}` → `author.person`, nested ones too); an element may also be given by
  /// its key path. A key that names no attribute, or no element of its composite, is an error naming
  /// it (a value under a misspelt key would otherwise be dropped).
  static func flattened(
    _ fields: [String: JSONValue], of attributes: [Attribute], leaves: Set<String>, prefix: String, entity: String,
    primaryKey: Int64
  ) throws -> [String: JSONValue] {
    var found: [String: JSONValue] = [:]
    for (key, raw) in fields {
      let path = prefix + key
      guard let attribute = attributes.first(where: { $0.name == key }) else {
        guard prefix.isEmpty, leaves.contains(key) else {
          throw StoreError(
            .badValue, entity: entity, primaryKey: primaryKey,
            reason: "'\(path)' is not \(prefix.isEmpty ? "an attribute of the entity" : "an element of its composite")")
        }
        found[key] = raw
        continue
      }
      guard attribute.type == .composite else {
        found[path] = raw
        continue
      }
      switch raw {
      case .null: continue  // every element NULL
      case .object(let elements):
        found.merge(
          try flattened(
            elements, of: attribute.elements, leaves: leaves, prefix: path + ".", entity: entity, primaryKey: primaryKey
          ),
          uniquingKeysWith: { _, new in new })
      default:
        throw StoreError(
          .badValue, entity: entity, primaryKey: primaryKey,
          reason: "'\(path)' is a composite attribute: give an object of its elements")
      }
    }
    return found
  }

  static func value(_ raw: JSONValue, attribute: Attribute, entity: String, primaryKey: Int64) throws -> StoreValue {
    if raw == .null { return .null }
    func bad() -> StoreError {
      StoreError(
        .badValue, entity: entity, primaryKey: primaryKey,
        reason: "'\(attribute.name)' holds \(raw) where \(attribute.type.xmlName) was expected")
    }
    switch (attribute.type, raw) {
    case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)):
      return .integer(number)
    // What a store held against its column's type comes back as it was (a real in an INTEGER
    // column, text in a numeric one): SQLite keeps it, and so does migrun.
    case (.integer16, .number(let number)), (.integer32, .number(let number)), (.integer64, .number(let number)),
      (.boolean, .number(let number)):
      return .double(number)
    case (.boolean, .integer(let number)):
      return .integer(number)
    case (.integer16, .string(let text)), (.integer32, .string(let text)), (.integer64, .string(let text)),
      (.boolean, .string(let text)):
      return .string(text)
    case (.boolean, .boolean(let flag)):
      return .boolean(flag)
    case (.double, _), (.float, _), (.decimal, _), (.date, _):
      guard let value = realValue(raw, isDate: attribute.type == .date) else { throw bad() }
      return value
    case (.string, .string(let text)), (.uri, .string(let text)):
      return .string(text)
    case (.uuid, .string(let text)):
      if let uuid = UUID(uuidString: text) { return .uuid(withUnsafeBytes(of: uuid.uuid) { Array($0) }) }
      guard let data = Data(base64Encoded: text) else { throw bad() }
      return .uuid(Array(data))
    case (.binary, .string(let text)), (.transformable, .string(let text)), (.undefined, .string(let text)),
      (.objectID, .string(let text)), (.composite, .string(let text)):
      guard let data = Data(base64Encoded: text) else { throw bad() }
      return .data(Array(data))
    default:
      throw bad()
    }
  }

  /// A real or date attribute's value from a number, an ISO 8601 date, `NaN`/`Infinity`, or text kept
  /// as it was; nil for anything else.
  static func realValue(_ raw: JSONValue, isDate: Bool) -> StoreValue? {
    let number: Double
    switch raw {
    case .integer(let integer): number = Double(integer)
    case .number(let double): number = double
    case .string(let text):
      if isDate, let date = isoFormatter().date(from: text) ?? plainISOFormatter().date(from: text) {
        return .date(date.timeIntervalSinceReferenceDate)
      }
      guard let special = ["NaN": Double.nan, "Infinity": .infinity, "-Infinity": -.infinity][text] else {
        return .string(text)
      }
      number = special
    default: return nil
    }
    return isDate ? .date(number) : .double(number)
  }
}

/// JSON as read back: integers apart from other numbers, and doubles parsed exactly.
enum JSONValue: Decodable, Equatable, CustomStringConvertible {
  case null
  case boolean(Bool)
  case integer(Int64)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let flag = try? container.decode(Bool.self) {
      self = .boolean(flag)
    } else if let integer = try? container.decode(Int64.self) {
      self = .integer(integer)
    } else if let number = try? container.decode(Double.self) {
      self = .number(number)
    } else if let text = try? container.decode(String.self) {
      self = .string(text)
    } else if let array = try? container.decode([JSONValue].self) {
      self = .array(array)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  package var string: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  var description: String {
    switch self {
    case .null: "null"
    case .boolean(let flag): String(flag)
    case .integer(let number): String(number)
    case .number(let number): String(number)
    case .string(let text): "\"\(text)\""
    case .array: "a list"
    case .object: "an object"
    }
  }
}
