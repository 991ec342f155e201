import Foundation
import MigrunModel
import MigrunStore

/// The store type named by `--type`, or an error saying which there are.
func storeType(named name: String) throws -> StoreType {
  guard let type = StoreType(named: name) else {
    throw ToolError(message: "--type \(name): a store type is sqlite, xml or binary")
  }
  return type
}

/// An XML or binary store a command was given: the store, and — with a model — the version its
/// hashes name (one home for what inspect, export, copy, check and the migration jobs each need first).
struct AtomicStoreInput {
  let url: URL
  let store: AtomicStore
  /// The model's name, when one was given; the version matching the store's hashes, when one does.
  let bundleName: String?
  let version: ObjectModel?

  init(_ url: URL, modelPath: String?) throws {
    try self.init(url, bundle: modelPath.map { try loadModel(URL(fileURLWithPath: $0)) })
  }

  init(_ url: URL, bundle: ModelBundle?) throws {
    self.url = url
    store = try AtomicStore.open(url)
    bundleName = bundle?.name
    version = bundle?.version(matching: store.metadata.versionHashes)
  }

  var metadata: StoreMetadata { store.metadata }

  /// Whether the file at `url` is an XML or a binary store (by its contents).
  static func isAtomic(_ url: URL) -> Bool {
    guard let type = StoreType.of(url) else { return false }
    return type != .sqlite
  }

  /// ``isAtomic(_:)`` of the session's store, from its one look at the file.
  static func isAtomic(_ session: StoreSession) -> Bool {
    guard let type = session.type else { return false }
    return type != .sqlite
  }

  /// The version, or an error saying `command` needs one.
  func requireVersion(for command: String) throws -> ObjectModel {
    if let version { return version }
    guard let bundleName else {
      throw ToolError(
        message: "\(command) of \(store.type == .xml ? "an XML" : "a binary") store needs its model: "
          + "--model (or model: in .migrun.yml)")
    }
    throw StoreError(
      .incompatibleModel, file: url.path, reason: "no version of \(bundleName) matches the store's entity hashes")
  }

  /// The store's objects as the version has them (every value and link checked).
  func objects() throws -> [StoredObject] {
    try store.objects(of: try requireVersion(for: "reading"))
  }

  /// The objects in memory with the version: what export, check and inspect read.
  func inMemory(for command: String) throws -> InMemoryStore {
    let memory = InMemoryStore(model: try requireVersion(for: command), metadata: metadata)
    try memory.insertAll(try objects(), metadata: nil)
    return memory
  }
}

/// An XML or binary store worked on as a SQLite store: Core Data reads such a store whole and
/// migrates it in memory; migrun writes its objects to a SQLite working store in a scratch folder
/// beside it (`.NAME.migrun-atomic-PID`: one per process, so that a `status` never touches a
/// migration's), so that plans, steps, Lua policies, stages, counts and checks
/// are the ones every SQLite store gets. ``writeBack(_:keepBackup:)`` writes the result in the
/// store's own type, reads it back, compares every object and swaps it in with the `~` backup; the
/// original is only read. Memory stays proportional to the store (its objects, read once).
final class AtomicStoreWork {
  let original: URL
  let type: StoreType
  let folder: URL
  /// The SQLite working store.
  let sqlite: URL
  /// The original's state when it was read: a swap is refused if another process wrote it since.
  private let state: StoreFiles.State

  init(_ url: URL, bundle: ModelBundle, for command: String) throws {
    let input = try AtomicStoreInput(url, bundle: bundle)
    let version = try input.requireVersion(for: command)
    original = url
    type = input.store.type
    state = StoreFiles.State(of: url)
    folder = WorkingFiles.atomicFolder(of: url)
    try WorkingFiles.requireAbsentOr(.folder, at: folder, beside: url, as: "working folder")
    // A killed run's folder (its working store's files only) is replaced; any other folder under
    // the name is refused, never removed with what it holds.
    if WorkingFiles.entry(at: folder.path) == .folder {
      guard WorkingFiles.isLeftover(folder, of: url) else {
        throw WorkingFiles.refuse(
          folder, beside: url, as: "working folder", because: "holds files migrun did not write")
      }
      try? FileManager.default.removeItem(at: folder)
    }
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
      throw ToolError(message: "\(folder.path): cannot make the working folder (\(error.localizedDescription))")
    }
    sqlite = folder.appendingPathComponent(url.deletingPathExtension().lastPathComponent + ".sqlite")
    do {
      _ = try StoreConversion.write(
        try input.objects(), metadata: input.metadata, model: version, as: .sqlite, to: sqlite)
    } catch {
      discard()
      throw error
    }
  }

  deinit { discard() }

  /// Removes the scratch folder.
  func discard() { try? FileManager.default.removeItem(at: folder) }

  /// The working store's objects (of `model`, the version it now has) written in the original's
  /// type beside it, read back and compared, and swapped in — the original kept as `NAME~.EXT` with
  /// `keepBackup`. Returns the backup.
  func writeBack(_ model: ObjectModel, keepBackup: Bool) throws -> URL? {
    let (metadata, objects) = try StoreConversion.read(sqlite, model: model)
    let replacement = WorkingFiles.atomicReplacement(of: original)
    try WorkingFiles.requireAbsentOr(.file, at: replacement, beside: original, as: "replacement")
    StoreFiles.remove(replacement)
    _ = try StoreConversion.write(objects, metadata: metadata, model: model, as: type, to: replacement)
    do {
      return try StoreFiles.replace(original, with: replacement, keepBackup: keepBackup, expecting: state)
    } catch {
      StoreFiles.remove(replacement)
      throw error
    }
  }
}
