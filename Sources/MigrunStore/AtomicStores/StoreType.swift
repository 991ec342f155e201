import FileDoors
import Foundation
import MigrunModel
import PropertyList

/// Core Data's persistent store types on disk, told apart by a file's contents, never its name.
package enum StoreType: String, Sendable, CaseIterable {
  /// `NSSQLiteStoreType`.
  case sqlite = "SQLite"
  /// `NSXMLStoreType` (macOS): one XML document, read and written whole.
  case xml = "XML"
  /// `NSBinaryStoreType`: one keyed-archive file, read and written whole.
  case binary = "Binary"

  /// The type named on a command line (`sqlite`, `xml`, `binary`, any case).
  package init?(named name: String) {
    guard let type = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
      return nil
    }
    self = type
  }

  /// `SQLite`, `XML (NSXMLStoreType)`, `Binary (NSBinaryStoreType)`.
  package var label: String {
    switch self {
    case .sqlite: "SQLite"
    case .xml: "XML (NSXMLStoreType)"
    case .binary: "Binary (NSBinaryStoreType)"
    }
  }

  /// The type of the file at `url` by its first bytes; nil when it is none of them (or unreadable).
  package static func of(_ url: URL) -> StoreType? {
    // Through the door: a FIFO given as a store is never opened to wait for a writer.
    guard let head = try? InputFile.head(url, count: 512, origin: .named) else { return nil }
    return of(head: head)
  }

  /// The type told by a file's first bytes (up to 512 of them).
  package static func of(head: [UInt8]) -> StoreType? {
    if head.starts(with: Array("SQLite format 3\0".utf8)) { return .sqlite }
    if BinaryStoreFile.looksLikeBinaryStore(head) { return .binary }
    if XMLStoreFile.looksLikeXMLStore(head) { return .xml }
    return nil
  }
}

/// An XML or binary store — an *atomic* store, which Core Data reads whole into memory and writes
/// whole on save: its metadata, and its objects as a model has them.
package struct AtomicStore: Sendable {
  package let type: StoreType
  package let url: URL
  package let metadata: StoreMetadata
  /// The next key the store would give (`nextObjectID`, the binary header's primary key).
  package let nextKey: Int64
  private let xml: XMLStoreFile?
  private let binary: BinaryStoreFile?

  /// Opens the XML or binary store at `url`; an error names the file and what is wrong.
  package static func open(_ url: URL) throws(StoreError) -> AtomicStore {
    let bytes: [UInt8]
    do {
      bytes = Array(try InputFile.data(url, origin: .named))
    } catch let error as InputFileError {
      throw StoreError(.io, file: url.path, reason: error.reason, underlying: error)
    } catch {
      throw StoreError(.io, file: url.path, reason: "cannot read the file (\(error))", underlying: error)
    }
    let name = url.lastPathComponent
    if BinaryStoreFile.looksLikeBinaryStore(bytes) {
      let file = try BinaryStoreFile.read(bytes, file: name)
      let metadata = try Self.metadata(file.metadata, uuid: nil, url: url)
      return AtomicStore(
        type: .binary, url: url, metadata: metadata, nextKey: file.nextPrimaryKey, xml: nil, binary: file)
    }
    guard XMLStoreFile.looksLikeXMLStore(bytes) else {
      throw StoreError(.notACoreDataStore, file: url.path, reason: "neither a Core Data XML nor a binary store")
    }
    let file = try XMLStoreFile.read(bytes, file: name)
    guard let plist = file.metadata else {
      throw StoreError(
        .badMetadata, file: url.path, reason: "the XML store has no metadata (no <metadata> property list)")
    }
    let metadata = try Self.metadata(plist, uuid: file.uuid, url: url)
    return AtomicStore(
      type: .xml, url: url, metadata: metadata, nextKey: file.nextObjectID ?? 0, xml: file, binary: nil)
  }

  private static func metadata(_ plist: PropertyListValue, uuid: String?, url: URL) throws(StoreError) -> StoreMetadata
  {
    do {
      return try StoreMetadata(uuid: uuid ?? UUID().uuidString, plist: plist)
    } catch {
      throw StoreError(error.code, file: url.path, entity: error.entity, reason: error.reason)
    }
  }

  /// Objects per entity as the file names them (no model needed; XML stores write the names uppercased).
  package var countsByFileEntity: [String: Int] {
    var counts: [String: Int] = [:]
    for entity in binary?.nodes.map(\.entity) ?? xml?.objects.map(\.entity) ?? [] { counts[entity, default: 0] += 1 }
    return counts
  }

  /// The largest key an object of the file has (0 when empty).
  package var largestKey: Int64 {
    binary?.nodes.map(\.key).max() ?? xml?.objects.compactMap { XMLStoreFile.key($0.id) }.max() ?? 0
  }

  /// Every object as `model` (the version the metadata's hashes name) has it, each value and link
  /// checked; an error names the object.
  package func objects(of model: ObjectModel) throws(StoreError) -> [StoredObject] {
    if let binary { return try binary.objects(of: model, file: url.lastPathComponent) }
    if let xml { return try xml.objects(of: model, file: url.lastPathComponent) }
    return []
  }

  /// Each object's key in a store of another type than SQLite: one number per object across the
  /// store (a SQLite store numbers each entity hierarchy apart). A key already unique is kept; the
  /// objects of a later hierarchy (by root entity name) that share one get new keys above every key.
  package static func keys(for objects: [StoredObject], model: ObjectModel) -> [ObjectID: Int64] {
    func root(_ id: ObjectID) -> String { model.entity(named: id.entity).map { model.root(of: $0).name } ?? id.entity }
    let ordered = objects.map(\.id).sorted {
      (root($0), $0.primaryKey, $0.entity) < (root($1), $1.primaryKey, $1.entity)
    }
    var used = Set<Int64>()
    var keys: [ObjectID: Int64] = [:]
    var pending: [ObjectID] = []
    for id in ordered {
      if id.primaryKey > 0, used.insert(id.primaryKey).inserted { keys[id] = id.primaryKey } else { pending.append(id) }
    }
    // Above every key; past Int64's largest, the lowest free ones.
    let largest = used.max() ?? 0
    var next = largest == .max ? 1 : largest + 1
    for id in pending {
      while used.contains(next) { next = next == .max ? 1 : next + 1 }
      keys[id] = next
      used.insert(next)
    }
    return keys
  }

  /// The bytes of a store of `type` (XML or binary) holding `objects` of `model` with `metadata`
  /// (its type set to `type`'s), each object under its key from ``keys(for:model:)``.
  package static func bytes(
    _ type: StoreType, objects: [StoredObject], keys: [ObjectID: Int64], metadata: StoreMetadata, model: ObjectModel
  ) throws(StoreError) -> [UInt8] {
    var described = metadata
    described.storeType = type.rawValue
    // An atomic store keeps its UUID in the metadata dictionary (a SQLite store, in Z_METADATA.Z_UUID).
    var plist = described.plist
    if case .dictionary(var entries) = plist {
      entries["NSStoreUUID"] = .string(described.uuid)
      plist = .dictionary(entries)
    }
    let largest = keys.values.max() ?? 0
    // The store records the key after its largest (Core Data's next key).
    let next = try StoreError.key(after: largest, entity: keys.first { $0.value == largest }?.key.entity ?? "")
    switch type {
    case .binary:
      return try BinaryStoreFile.bytes(of: objects, keys: keys, metadata: plist, model: model, nextPrimaryKey: next)
    case .xml:
      return try XMLStoreFile.bytes(
        of: objects, keys: keys, uuid: described.uuid, metadata: plist, model: model, nextObjectID: next)
    case .sqlite:
      throw StoreError(.unsupportedValue, reason: "a SQLite store is written by SQLiteStore, not as bytes")
    }
  }

  /// Whether two objects hold the same values and links as a store of another type can tell:
  /// transformable values compared as the archives they are (their object graphs, not their bytes),
  /// derived attributes left aside (each store computes its own). The name of the first property
  /// that differs, or nil.
  package static func difference(_ a: StoredObject, _ b: StoredObject, model: ObjectModel) -> String? {
    guard let entity = model.entity(named: a.id.entity) else { return "entity" }
    for attribute in model.attributes(of: entity) where attribute.derivation == nil && !attribute.isTransient {
      let left = a.attributes[attribute.name] ?? .null
      let right = b.attributes[attribute.name] ?? .null
      if left == right { continue }
      if case .double(let x) = left, case .double(let y) = right, x.isNaN && y.isNaN { continue }
      if attribute.type == .transformable, case .data(let x) = left, case .data(let y) = right,
        let first = try? KeyedArchive.unarchive(x), let second = try? KeyedArchive.unarchive(y), first == second
      {
        continue
      }
      return attribute.name
    }
    for relationship in model.relationships(of: entity) where !relationship.isTransient {
      let name = relationship.name
      let same =
        relationship.isToMany
        ? relationship.isOrdered
          ? a.toMany[name] ?? [] == b.toMany[name] ?? [] : Set(a.toMany[name] ?? []) == Set(b.toMany[name] ?? [])
        : a.toOne[name] == b.toOne[name]
      if !same { return name }
    }
    return nil
  }
}
