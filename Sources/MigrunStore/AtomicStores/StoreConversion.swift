import Foundation
import MigrunModel
import PropertyList

/// A store's objects carried into a store of another type — Core Data's
/// `migratePersistentStore(_:to:options:type:)`: every object, value and link, the metadata carried
/// (UUID, version hashes, every other key), the new file read back and each object compared with the
/// one read before anything is put in place.
///
/// ```swift
/// let (metadata, objects) = try StoreConversion.read(xmlStore, model: version)
/// let outcome = try StoreConversion.write(objects, metadata: metadata, model: version, as: .binary, to: working)
/// ```
package enum StoreConversion {
  /// What a conversion wrote.
  package struct Outcome: Sendable {
    /// Entity → objects written.
    package var counts: [String: Int]
    /// Each object's ID in the new store (keys change where a store of another type numbers its
    /// objects otherwise: XML and binary stores across the store, SQLite per entity hierarchy).
    package var ids: [ObjectID: ObjectID]
    /// How many objects got another key.
    package var renumbered: Int { ids.filter { $0.key != $0.value }.count }
    /// Numbers the original held as text, written as numbers (an XML store reads values by type).
    package var numbersFromText = 0
  }

  /// Leaves out on purpose the values of `attributes` (`Entity.attribute`, the entity's subentities
  /// included); returns the values left out per attribute. A name the model does not have is an error.
  package static func dropValues(of attributes: [String], from objects: inout [StoredObject], model: ObjectModel)
    throws(StoreError) -> [String: Int]
  {
    var dropped: [String: Int] = [:]
    for name in attributes {
      let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
      guard parts.count == 2, let entity = model.entity(named: parts[0]),
        model.attributes(of: entity).contains(where: { $0.name == parts[1] })
      else {
        throw StoreError(
          .unknownProperty, reason: "--drop \(name): the model has no attribute of that name (give Entity.attribute)")
      }
      for index in objects.indices where model.entity(named: objects[index].id.entity, isKindOf: parts[0]) {
        if let value = objects[index].attributes[parts[1]], value != .null { dropped[name, default: 0] += 1 }
        objects[index].attributes[parts[1]] = .null
      }
    }
    return dropped
  }

  /// Transformable attributes holding values `test` picks (given the attribute and the value's
  /// data), named at the entity that declares them, with their transformer and how many values.
  package static func transformableValues(
    in objects: [StoredObject], model: ObjectModel, where test: (Attribute, [UInt8]) -> Bool
  ) -> [(attribute: String, transformer: String?, count: Int)] {
    var found: [String: (String?, Int)] = [:]
    for object in objects {
      guard let entity = model.entity(named: object.id.entity) else { continue }
      for attribute in model.attributes(of: entity) where attribute.type == .transformable {
        guard case .data(let bytes)? = object.attributes[attribute.name], test(attribute, bytes) else { continue }
        // Named at the entity that declares it (the one --drop takes for all its subentities).
        let owner = ([entity] + model.ancestors(of: entity)).last {
          $0.attributes.contains { $0.name == attribute.name }
        }
        found["\((owner ?? entity).name).\(attribute.name)", default: (attribute.valueTransformerName, 0)].1 += 1
      }
    }
    return found.sorted { $0.key < $1.key }.map { ($0.key, $0.value.0, $0.value.1) }
  }

  /// Whether a transformable's data is a keyed archive (what Foundation's unarchiving transformers,
  /// and those built on them, make).
  package static func isKeyedArchive(_ bytes: [UInt8]) -> Bool {
    (try? PropertyListValue(decoding: bytes))?["$archiver"]?.stringValue == "NSKeyedArchiver"
  }

  /// Whether a transformer is one of Foundation's unarchiving ones (or none: the default).
  package static func isUnarchiving(_ transformer: String?) -> Bool {
    transformer.map { $0.contains("UnarchiveFromData") } ?? true
  }

  /// The metadata and every object of the store at `url` (any type), as `model` has them;
  /// `session`: the job's look at the store, when it has one.
  package static func read(_ url: URL, model: ObjectModel, session given: StoreSession? = nil) throws -> (
    metadata: StoreMetadata, objects: [StoredObject]
  ) {
    let session = given ?? StoreSession(url)
    guard let type = session.type else {
      throw StoreError(.notACoreDataStore, file: url.path, reason: "not a Core Data store (SQLite, XML or binary)")
    }
    if type != .sqlite {
      let store = try AtomicStore.open(url)
      return (store.metadata, try store.objects(of: model))
    }
    let store = try SQLiteStore(url: url, model: model, access: .readOnly, fastWrites: false, session: session)
    defer { try? store.close() }
    var objects: [StoredObject] = []
    for entity in model.entities {
      try store.forEachObject(of: entity.name, includingSubentities: false, withToMany: true, filter: nil) {
        objects.append($0)
      }
    }
    return (store.metadata, objects)
  }

  /// Writes `objects` of `model` with `metadata` as a new store of `type` at `target` (which must
  /// not exist), then reads it back and compares every object: a difference is an error naming the
  /// object and property, and the file is removed. The caller puts the file in place.
  package static func write(
    _ objects: [StoredObject], metadata: StoreMetadata, model: ObjectModel, as type: StoreType, to target: URL
  ) throws -> Outcome {
    var objects = objects
    var numbersFromText = 0
    if type == .xml { (objects, numbersFromText) = try XMLStoreFile.prepared(objects, model: model) }
    var counts: [String: Int] = [:]
    for object in objects { counts[object.id.entity, default: 0] += 1 }
    var ids: [ObjectID: ObjectID] = [:]
    do {
      if type == .sqlite {
        for object in objects { ids[object.id] = object.id }
        var described = metadata
        described.storeType = type.rawValue
        let created = try SQLiteStore.create(at: target, model: model, metadata: described)
        do {
          try created.insertAll(objects, metadata: nil)
          try created.close()
        } catch {
          try? created.close()
          throw error
        }
      } else {
        let keys = AtomicStore.keys(for: objects, model: model)
        for (id, key) in keys { ids[id] = ObjectID(entity: id.entity, primaryKey: key) }
        let bytes = try AtomicStore.bytes(type, objects: objects, keys: keys, metadata: metadata, model: model)
        do {
          try Data(bytes).write(to: target)
        } catch {
          throw StoreError(.io, file: target.path, reason: "cannot write the store (\(error))", underlying: error)
        }
      }
      try verify(objects, ids: ids, in: target, model: model)
      try StoreFiles.sync(target)
    } catch {
      StoreFiles.remove(target)
      throw error
    }
    return Outcome(counts: counts, ids: ids, numbersFromText: numbersFromText)
  }

  /// Each object read back from `file` against the object written (under its new ID): objects per
  /// entity, then every value and link.
  private static func verify(_ objects: [StoredObject], ids: [ObjectID: ObjectID], in file: URL, model: ObjectModel)
    throws
  {
    let written = try read(file, model: model).objects
    let byID = Dictionary(written.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    guard written.count == objects.count else {
      throw StoreError(
        .badValue, file: file.path,
        reason: "the new store holds \(written.count) objects, the original \(objects.count): nothing was put in place")
    }
    func renamed(_ id: ObjectID) -> ObjectID { ids[id] ?? id }
    for object in objects {
      var expected = object
      expected.id = renamed(object.id)
      expected.toOne = object.toOne.mapValues(renamed)
      expected.toMany = object.toMany.mapValues { members in members.map(renamed) }
      guard let copy = byID[expected.id] else {
        throw StoreError(
          .badValue, file: file.path, entity: object.id.entity, primaryKey: object.id.primaryKey,
          reason: "the new store lacks this object: nothing was put in place")
      }
      if let property = AtomicStore.difference(expected, copy, model: model) {
        throw StoreError(
          .badValue, file: file.path, entity: object.id.entity, primaryKey: object.id.primaryKey,
          reason: "'\(property)' reads back otherwise from the new store (\(describe(expected, property))"
            + " became \(describe(copy, property))): nothing was put in place")
      }
    }
  }

  private static func describe(_ object: StoredObject, _ property: String) -> String {
    if let value = object.attributes[property] { return value.description }
    if let target = object.toOne[property] { return "\(target)" }
    return object.toMany[property].map { "\($0.count) objects" } ?? "nothing"
  }
}
