import Foundation
import GRDB
import MigrunModel

/// Core Data's external binary storage (`allowsExternalBinaryDataStorage`): the column of such an
/// attribute holds a tag byte and then either the value or a reference to a file beside the store.
///
/// The format, as public write-ups of real stores describe it and Core Data's own code writes it
/// (`-[_PFExternalReferenceData initForExternalLocation:safeguardLocation:data:protectionLevel:]` in
/// the decompiled framework):
/// - `0x01` + the value's bytes: the value kept in the database;
/// - `0x02` + the file's name (an uppercase UUID, ASCII) + a NUL: the value is the file
///   `.<store name without extension>_SUPPORT/_EXTERNAL_DATA/<UUID>` in the store's folder.
/// A reference without the trailing NUL is read too.
///
/// migrun reads values through the reference everywhere (objects, export, Lua, rules). Where a
/// migration writes objects (the object path), it keeps a value as Core Data does: in a file when it
/// is longer than ``fileThreshold``, inline otherwise — the files written in ``staging`` until the
/// swap moves them beside the store. A value copied unchanged (DDL and row copy) keeps its
/// reference, and its file stays where it is. Other writers (`import`, salvage) write inline.
package struct ExternalData: Sendable, Hashable {
  /// The `_EXTERNAL_DATA` folder references are resolved in.
  package var folder: URL
  /// Files the original store refers to that were never there (a store copied without its support
  /// folder): damage Core Data carries, and so does a migration — a reference to one of them is read
  /// and written as the reference it is (``resolve(_:)``, ``stored(_:)``), never refused.
  package var carriedMissing: Set<String> = []

  /// Where a migration writes the files of values it keeps outside the store, until the swap moves
  /// the ones the result refers to into ``folder`` (nil: every value is written inline).
  package var staging: URL?

  /// Core Data's rule for a Binary attribute that allows external storage: a value longer than
  /// 131,072 bytes goes to a file, the others stay in the row. Read from the framework's save plan
  /// (`-[NSSQLSavePlan _populateRow:fromObject:timestamp:inserted:shouldAddToRowCache:]` keeps a value
  /// inline when `0x20000 >= length`, the limit set whenever `_PF_INTERNAL_DATA_SIZE_THRESHOLD` is,
  /// which the framework's initializer does) — the same in every build of the decompilation read.
  package static let fileThreshold = 0x20000

  package init(folder: URL) { self.folder = folder }

  /// The support folder Core Data keeps beside `store`: `Moody.sqlite` → `.Moody_SUPPORT`.
  package static func supportFolder(of store: URL) -> URL {
    let stem = store.deletingPathExtension().lastPathComponent
    return store.deletingLastPathComponent().appendingPathComponent(".\(stem)_SUPPORT", isDirectory: true)
  }

  /// The external data of the store at `store`.
  package init(store: URL) {
    folder = Self.supportFolder(of: store).appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
  }

  static let inlineTag: UInt8 = 0x01
  static let referenceTag: UInt8 = 0x02

  /// The file a column's bytes refer to, or nil when they hold the value (or are not in this format).
  static func reference(in bytes: [UInt8]) -> String? {
    guard bytes.first == referenceTag, bytes.count > 1 else { return nil }
    var name = bytes.dropFirst()
    if name.last == 0 { name = name.dropLast() }
    // A file name: UUID characters only, so a reference can never leave the folder.
    guard !name.isEmpty, name.count <= 64,
      name.allSatisfy({
        ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66) || $0 == 0x2D
      })
    else { return nil }
    return String(decoding: name, as: UTF8.self)
  }

  /// The value a column of an external-storage attribute holds: inline bytes unwrapped, a reference
  /// read from its file. Bytes in neither form are the value as they are (a store written without the
  /// tag). A missing or unreadable file is an error naming it — never an empty value.
  package func resolve(_ value: StoreValue) throws(StoreError) -> StoreValue {
    guard case .data(let bytes) = value, let tag = bytes.first else { return value }
    if tag == Self.inlineTag { return .data(Array(bytes.dropFirst())) }
    guard tag == Self.referenceTag, let name = Self.reference(in: bytes) else { return value }
    if let staged = staging?.appendingPathComponent(name), WorkingFiles.entry(at: staged.path) == .file {
      guard let data = StoreFiles.readPlainFile(staged.path, limit: 4 << 30) else {
        throw StoreError(.badValue, file: staged.path, reason: "a value the migration kept in a file cannot be read")
      }
      return .data(Array(data))
    }
    let file = folder.appendingPathComponent(name)
    if carriedMissing.contains(name), WorkingFiles.entry(at: file.path) == .none { return value }
    if let link = linkOnTheWay(to: name) {
      throw StoreError(
        .badValue, file: file.path,
        reason: "the value is kept outside the store (external binary storage), and \(link.path) is a symbolic "
          + "link: migrun reads such values only from plain files in the store's own support folder, never "
          + "through a link that may lead out of it")
    }
    guard let data = StoreFiles.readPlainFile(file.path, limit: 4 << 30) else {
      throw StoreError(
        .badValue, file: file.path,
        reason: "the value is kept outside the store (external binary storage) and its file is missing or unreadable")
    }
    return .data(Array(data))
  }

  /// The column bytes for a value migrun writes: inline, tagged — in a file of ``staging`` when it is
  /// longer than ``fileThreshold`` and there is one — or a carried reference to a file the original
  /// never had, as it was.
  func stored(_ value: StoreValue) throws(StoreError) -> StoreValue {
    guard case .data(let bytes) = value else { return value }
    if !carriedMissing.isEmpty, let name = Self.reference(in: bytes), carriedMissing.contains(name) { return value }
    guard let staging, bytes.count > Self.fileThreshold else { return .data([Self.inlineTag] + bytes) }
    let name = UUID().uuidString
    let file = staging.appendingPathComponent(name)
    do {
      if WorkingFiles.entry(at: staging.path) == .none {
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
      }
      // migrun's own folder, made here: anything else under its name (a link) is never written through.
      guard WorkingFiles.entry(at: staging.path) == .folder else {
        throw StoreError(
          .foreignFile, file: staging.path, reason: "is not the folder migrun made for values kept outside the store")
      }
      try Data(bytes).write(to: file, options: .withoutOverwriting)
    } catch {
      throw StoreError(
        .io, file: file.path,
        reason: "cannot write a value kept outside the store (\(error.localizedDescription))", underlying: error)
    }
    return .data([Self.referenceTag] + Array(name.utf8) + [0])
  }

  /// The plain files in the folder and in ``staging`` (empty when there is none, or when the support
  /// folder or the folder is a symbolic link: nothing is read or removed through a link).
  package func files() -> Set<String> {
    var found = Set<String>()
    if let staging {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []
      found = Set(names.filter { WorkingFiles.entry(at: staging.appendingPathComponent($0).path) == .file })
    }
    guard linkOnTheWay(to: nil) == nil else { return found }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return found.union(names.filter { WorkingFiles.entry(at: folder.appendingPathComponent($0).path) == .file })
  }

  /// Moves the files of ``staging`` that `referenced` names into ``folder`` (made if absent), each
  /// synced; returns the files placed (a failed swap removes them again).
  package func placeStagedFiles(referencedBy referenced: Set<String>) throws -> [URL] {
    guard let staging else { return [] }
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []).filter(referenced.contains)
    guard !names.isEmpty else { return [] }
    if let link = linkOnTheWay(to: nil) {
      throw StoreError(
        .foreignFile, file: link.path,
        reason:
          "is a symbolic link: migrun writes values kept outside the store only into the store's own support folder")
    }
    var placed: [URL] = []
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      for name in names.sorted() {
        let from = staging.appendingPathComponent(name)
        let to = folder.appendingPathComponent(name)
        try StoreFiles.sync(from)
        // A link, then the staged name let go: never over an entry already there (a planted file or
        // link under the new name stops the swap, named), as rename(2) would replace it.
        guard link(from.path, to.path) == 0, unlink(from.path) == 0 else {
          throw StoreError(
            .io, file: to.path,
            reason: "cannot move a value kept outside the store into place (\(String(cString: strerror(errno))))")
        }
        placed.append(to)
      }
      try StoreFiles.sync(folder)
      return placed
    } catch {
      for file in placed { unlink(file.path) }
      throw error
    }
  }

  /// The first symbolic link among the support folder, the `_EXTERNAL_DATA` folder and (given) the
  /// file `name` in it — the entries below the store's own folder that a value's path goes through.
  package func linkOnTheWay(to name: String?) -> URL? {
    let path = [folder.deletingLastPathComponent(), folder] + (name.map { [folder.appendingPathComponent($0)] } ?? [])
    return path.first { WorkingFiles.entry(at: $0.path) == .symlink }
  }
}

extension SQLiteStore {
  /// Every value of the store kept in a file (a `0x02` reference): the object, the attribute and the
  /// file's name.
  public func externalReferences() throws -> [(object: ObjectID, attribute: String, file: String)] {
    try read { db in
      var found: [(object: ObjectID, attribute: String, file: String)] = []
      for entity in model.entities {
        guard let layout = schema.layout(of: entity.name) else { continue }
        for attribute in entity.attributes.flatMap(\.leaves) where attribute.storesExternally {
          guard case .attribute(let column)? = layout.properties[attribute.name] else { continue }
          let rows = try Row.fetchCursor(
            db,
            sql: """
              SELECT Z_PK, \(column.name) FROM \(layout.table) WHERE \(schema.rowPredicate(layout))
              AND substr(\(column.name), 1, 1) = x'02' ORDER BY Z_PK
              """)
          while let row = try rows.next() {
            let bytes: [UInt8] = ((try? row.value(at: 1, as: Data.self)) ?? nil).map { Array($0) } ?? []
            guard let file = ExternalData.reference(in: bytes) else { continue }
            found.append(
              (ObjectID(entity: entity.name, primaryKey: try row.required(at: 0, as: Int64.self)), attribute.name, file)
            )
          }
        }
      }
      return found
    }
  }

  /// Fails naming the first value whose file is missing: what a migration step wrote must be
  /// readable, files included.
  /// Returns the references carried to files the original never had (``ExternalData/carriedMissing``).
  @discardableResult
  package func checkExternalReferences() throws -> [(object: ObjectID, attribute: String, file: String)] {
    let files = externalData.files()
    var carried: [(object: ObjectID, attribute: String, file: String)] = []
    for reference in try externalReferences() where !files.contains(reference.file) {
      if externalData.carriedMissing.contains(reference.file) {
        carried.append(reference)
        continue
      }
      throw StoreError(
        .badValue, file: externalData.folder.appendingPathComponent(reference.file).path,
        entity: reference.object.entity, primaryKey: reference.object.primaryKey,
        reason: "'\(reference.attribute)' is kept outside the store (external binary storage) and its file is missing")
    }
    return carried
  }

  /// Removes the files of `candidates` (the files the store referred to before a migration) that
  /// none of its values refers to any more — values a step removed or rewrote inline; the backup
  /// keeps its own links to them. A file the store never referred to through an attribute its model
  /// marks for external storage is not ours to judge, and stays. Returns how many went.
  @discardableResult
  public func removeExternalFiles(noLongerReferencedOf candidates: Set<String>) throws -> Int {
    let referenced = Set(try externalReferences().map(\.file))
    var removed = 0
    for file in candidates.intersection(externalData.files()).subtracting(referenced) {
      // files() holds only plain files reached through no link; a link planted since is left alone.
      let path = externalData.folder.appendingPathComponent(file)
      guard externalData.linkOnTheWay(to: file) == nil, WorkingFiles.entry(at: path.path) == .file else { continue }
      try FileManager.default.removeItem(at: path)
      removed += 1
    }
    return removed
  }
}
