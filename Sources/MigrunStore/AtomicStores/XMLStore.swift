import FileDoors
import Foundation
import MigrunModel
import PropertyList

/// A Core Data XML store (`NSXMLStoreType`: a `.storedata`/`.xml` file of macOS document apps),
/// read whole. The layout is `CoreData.dtd`'s: `<database>`, `<databaseInfo>` with `<version>`,
/// `<UUID>`, `<nextObjectID>` and the metadata (an XML property list) in `<metadata>`, then one
/// `<object type="ENTITY" id="z102">` per object with `<attribute name="…" type="…">value</attribute>`
/// and `<relationship name="…" type="min/max" destination="ENTITY" idrefs="z1 z2"/>`.
///
/// What no real file in `../shared` confirms is a guess, taken from public descriptions of files
/// Apple wrote (reimplementations' tests copying them): entity names written uppercased and
/// property names lowercased (matched here without case); a value absent for NULL; dates as
/// seconds since 2001 (`%.20f`); binary and transformable values as base64; Booleans as 0/1; an
/// unset relationship with no `idrefs`; the metadata either as `<plist>` elements or as escaped
/// text. The model's attribute type decides how a value is read, the file's `type` is not trusted.
package struct XMLStoreFile: Sendable {
  package struct Object: Sendable {
    package var id: String
    package var entity: String
    package var attributes: [(name: String, type: String, text: String)] = []
    package var relationships: [(name: String, destination: String, idrefs: [String])] = []
  }

  package var uuid: String?
  package var nextObjectID: Int64?
  package var metadata: PropertyListValue?
  package var objects: [Object] = []

  /// Whether `bytes` start as a Core Data XML store does (an XML document whose root is `<database>`).
  package static func looksLikeXMLStore(_ bytes: some Collection<UInt8>) -> Bool {
    // A byte-order mark and white space may come first.
    let head = String(decoding: bytes.prefix(512), as: UTF8.self).drop { $0 == "\u{FEFF}" || $0.isWhitespace }
    return head.contains("<database")
      && (head.hasPrefix("<?xml") || head.hasPrefix("<!DOCTYPE") || head.hasPrefix("<database"))
  }

  /// The XML store at `url` and its metadata; an error names the file and what is wrong.
  package static func open(_ url: URL) throws(StoreError) -> (file: XMLStoreFile, metadata: StoreMetadata) {
    let bytes: [UInt8]
    do {
      bytes = Array(try InputFile.data(url, origin: .named))
    } catch let error as InputFileError {
      throw StoreError(.io, file: url.path, reason: error.reason, underlying: error)
    } catch {
      throw StoreError(.io, file: url.path, reason: "cannot read the file (\(error))", underlying: error)
    }
    let file = try read(bytes, file: url.lastPathComponent)
    guard let plist = file.metadata else {
      throw StoreError(
        .badMetadata, file: url.path, reason: "the XML store has no metadata (no <metadata> property list)")
    }
    return (file, try StoreMetadata(uuid: file.uuid ?? UUID().uuidString, plist: plist))
  }

  /// Whether the file at `url` starts as an XML store does.
  package static func isXMLStore(_ url: URL) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: url.path), let head = try? handle.read(upToCount: 512) else {
      return false
    }
    try? handle.close()
    return looksLikeXMLStore(head)
  }

  /// Reads the file's structure; an error names the file, the line and what is wrong.
  package static func read(_ bytes: [UInt8], file: String) throws(StoreError) -> XMLStoreFile {
    let builder = Builder()
    var scanner = XMLScanner(bytes)
    do {
      try scanner.scan(builder)
    } catch let error as StoreError {
      throw error.inFile(file)
    } catch {
      throw StoreError(.notACoreDataStore, file: file, reason: "not a Core Data XML store: \(error)", underlying: error)
    }
    guard builder.sawDatabase else {
      throw StoreError(.notACoreDataStore, file: file, reason: "not a Core Data XML store: no <database> element")
    }
    var store = builder.store
    if let text = builder.metadataText?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
      do {
        store.metadata = try PropertyListValue(decoding: Array(text.utf8))
      } catch {
        throw StoreError(.badMetadata, file: file, reason: "<metadata> is not a property list: \(error)")
      }
    }
    return store
  }

  /// Builds the structure as the scanner reports elements; the metadata's property list is
  /// re-written as text (its elements, or its escaped text) and read once the scan is over.
  private final class Builder: XMLScanner.Delegate {
    var store = XMLStoreFile()
    var sawDatabase = false
    var path: [String] = []
    var text = ""
    var metadataText: String?
    var metadataDepth: Int?

    func startElement(_ name: String, attributes: [String: String]) throws {
      if let depth = metadataDepth, path.count >= depth {
        metadataText? +=
          "<\(name)\(attributes.sorted { $0.key < $1.key }.map { " \($0.key)=\"\(escape($0.value))\"" }.joined())>"
      }
      let parent = path.last
      path.append(name)
      text = ""
      if metadataDepth != nil { return }
      switch (parent, name) {
      case (nil, "database"): sawDatabase = true
      case (nil, _): throw StoreError(.notACoreDataStore, reason: "the root element is <\(name)>, not <database>")
      case ("database", "metadata"), ("databaseInfo", "metadata"):
        metadataDepth = path.count
        metadataText = ""
      case ("database", "object"):
        guard let type = attributes["type"], !type.isEmpty, let id = attributes["id"], !id.isEmpty else {
          throw StoreError(
            .notACoreDataStore, reason: "an <object> without its type or id (object \(store.objects.count + 1))")
        }
        store.objects.append(Object(id: id, entity: type))
      case ("object", "attribute"):
        guard let name = attributes["name"], !name.isEmpty else {
          throw StoreError(
            .notACoreDataStore, reason: "an <attribute> without a name in object \(store.objects.last?.id ?? "?")")
        }
        store.objects[store.objects.count - 1].attributes.append((name, attributes["type"] ?? "", ""))
      case ("object", "relationship"):
        guard let name = attributes["name"], !name.isEmpty, let destination = attributes["destination"] else {
          throw StoreError(
            .notACoreDataStore,
            reason: "a <relationship> without its name or destination in object \(store.objects.last?.id ?? "?")")
        }
        let idrefs = (attributes["idrefs"] ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
        store.objects[store.objects.count - 1].relationships.append((name, destination, idrefs))
      case ("database", "databaseInfo"), ("databaseInfo", _):
        // databaseInfo's own fields (version, UUID, nextObjectID) are read as they close; others
        // describe the file, not its objects.
        break
      default:
        // What holds objects and values must be understood: an element the DTD does not have there
        // is refused by name rather than its content passed over.
        throw StoreError(
          .notACoreDataStore,
          reason: "<\(name)> inside <\(parent ?? "")> is no element of a Core Data XML store"
            + (store.objects.last.map { " (object \($0.id))" } ?? ""))
      }
    }

    func characters(_ chunk: String) throws {
      if let depth = metadataDepth, path.count > depth {
        metadataText? += escape(chunk)
      } else if metadataDepth != nil {
        metadataText? += chunk
      } else {
        text += chunk
      }
    }

    func endElement(_ name: String) throws {
      defer { path.removeLast() }
      if let depth = metadataDepth {
        if path.count > depth {
          metadataText? += "</\(name)>"
          return
        }
        metadataDepth = nil
        return
      }
      let parent = path.count > 1 ? path[path.count - 2] : nil
      switch (parent, name) {
      case ("databaseInfo", "UUID"): store.uuid = text.trimmingCharacters(in: .whitespacesAndNewlines)
      case ("databaseInfo", "nextObjectID"):
        store.nextObjectID = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
      case ("object", "attribute"):
        let last = store.objects.count - 1
        store.objects[last].attributes[store.objects[last].attributes.count - 1].text = text
      default: break
      }
      text = ""
    }

    private func escape(_ text: String) -> String { XMLText.escaped(text) }
  }

  // MARK: - Objects of a model

  /// The store's objects as `model` has them: entities and properties matched without case (the
  /// file uppercases entity names and lowercases property names), keys from the ids (`z102` → 102),
  /// values read by the model's attribute types, relationships resolved. An object of an entity the
  /// model lacks, a value that does not read as its type, or an `idrefs` naming no object is an
  /// error naming the object.
  package func objects(of model: ObjectModel, file: String) throws(StoreError) -> [StoredObject] {
    let ids = try objectIDs(in: model, file: file)
    var found: [StoredObject] = []
    for object in objects {
      guard let id = ids[object.id], let entity = model.entity(named: id.entity) else { continue }
      var stored = StoredObject(id: id)
      try readAttributes(of: object, entity, model, into: &stored, file: file)
      try readRelationships(of: object, entity, model, ids: ids, into: &stored, file: file)
      found.append(stored)
    }
    return found
  }

  /// Each object's ID in `model`: its entity (matched without case) and the key its id gives.
  private func objectIDs(in model: ObjectModel, file: String) throws(StoreError) -> [String: ObjectID] {
    let entities = Dictionary(
      model.entities.map { ($0.name.uppercased(), $0) }, uniquingKeysWith: { first, _ in first })
    var ids: [String: ObjectID] = [:]
    var used: Set<Int64> = []
    for object in objects {
      guard let entity = entities[object.entity.uppercased()] else {
        throw StoreError(
          .unknownEntity, file: file, entity: object.entity,
          reason: "object \(object.id) is of entity \(object.entity), which the model does not have")
      }
      guard let key = Self.key(object.id), key > 0, ids[object.id] == nil, used.insert(key).inserted else {
        throw StoreError(
          .notACoreDataStore, file: file, entity: entity.name,
          reason: "object id '\(object.id)' is not z<number> or is used twice")
      }
      ids[object.id] = ObjectID(entity: entity.name, primaryKey: key)
    }
    return ids
  }

  private func readAttributes(
    of object: Object, _ entity: Entity, _ model: ObjectModel, into stored: inout StoredObject, file: String
  ) throws(StoreError) {
    let attributes = Dictionary(
      model.attributes(of: entity).filter { !$0.isTransient }.map { ($0.name.lowercased(), $0) },
      uniquingKeysWith: { first, _ in first })
    for attribute in attributes.values { stored.attributes[attribute.name] = .null }
    for (name, _, text) in object.attributes {
      guard let attribute = attributes[name.lowercased()] else {
        throw StoreError(
          .unknownProperty, file: file, entity: entity.name, primaryKey: stored.id.primaryKey,
          reason: "object \(object.id) has attribute '\(name)', which entity \(entity.name) does not have")
      }
      guard let value = Self.value(text, attribute.type) else {
        throw StoreError(
          .badValue, file: file, entity: entity.name, primaryKey: stored.id.primaryKey,
          reason:
            "object \(object.id): '\(text.prefix(40))' is not a \(attribute.type.xmlName) value for '\(attribute.name)'"
        )
      }
      stored.attributes[attribute.name] = value
    }
  }

  private func readRelationships(
    of object: Object, _ entity: Entity, _ model: ObjectModel, ids: [String: ObjectID],
    into stored: inout StoredObject, file: String
  ) throws(StoreError) {
    let relationships = Dictionary(
      model.relationships(of: entity).map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
    for (name, _, idrefs) in object.relationships {
      guard let relationship = relationships[name.lowercased()] else {
        throw StoreError(
          .unknownProperty, file: file, entity: entity.name, primaryKey: stored.id.primaryKey,
          reason: "object \(object.id) has relationship '\(name)', which entity \(entity.name) does not have")
      }
      var targets: [ObjectID] = []
      for ref in idrefs {
        guard let target = ids[ref], model.entity(named: target.entity, isKindOf: relationship.destinationEntity)
        else {
          if let other = ids[ref] {
            throw StoreError(
              .badValue, file: file, entity: entity.name, primaryKey: stored.id.primaryKey,
              reason:
                "object \(object.id)'s relationship '\(relationship.name)' names \(ref), a \(other.entity), not a \(relationship.destinationEntity)"
            )
          }
          throw StoreError(
            .notACoreDataStore, file: file, entity: entity.name, primaryKey: stored.id.primaryKey,
            reason:
              "object \(object.id)'s relationship '\(relationship.name)' names \(ref), which is no object of the store")
        }
        targets.append(target)
      }
      if relationship.isToMany {
        stored.toMany[relationship.name] = relationship.isOrdered ? targets : targets.sorted()
      } else if targets.count > 1 {
        throw StoreError(
          .badValue, file: file, entity: entity.name, primaryKey: stored.id.primaryKey,
          reason: "object \(object.id)'s to-one relationship '\(relationship.name)' names \(targets.count) objects")
      } else if let target = targets.first {
        stored.toOne[relationship.name] = target
      }
    }
  }

  /// `z102` → 102 (any letters before the number are taken as the prefix).
  package static func key(_ id: String) -> Int64? {
    Int64(id.drop { !$0.isNumber })
  }

  /// A value's text read as the model's attribute type; nil when it does not read.
  static func value(_ text: String, _ type: AttributeType) -> StoreValue? {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    switch type {
    case .integer16, .integer32, .integer64:
      // A real where an integer was expected is kept as such (a SQLite store can hold one there).
      return Int64(trimmed).map(StoreValue.integer)
        ?? Double(trimmed).map { StoreValueCoding.value(double: $0, type: type) }
    case .boolean:
      switch trimmed.lowercased() {
      case "1", "yes", "true": return .boolean(true)
      case "0", "no", "false": return .boolean(false)
      default: return nil
      }
    case .double, .float, .decimal: return Double(trimmed).map(StoreValue.double)
    case .date: return Double(trimmed).map(StoreValue.date)
    case .string, .uri: return .string(text)
    case .binary, .transformable, .undefined, .composite, .objectID:
      return Data(base64Encoded: trimmed, options: .ignoreUnknownCharacters).map { .data(Array($0)) }
    case .uuid:
      if let uuid = UUID(uuidString: trimmed) { return .uuid(withUnsafeBytes(of: uuid.uuid) { Array($0) }) }
      return Data(base64Encoded: trimmed, options: .ignoreUnknownCharacters).flatMap {
        $0.count == 16 ? .uuid(Array($0)) : nil
      }
    }
  }
}
