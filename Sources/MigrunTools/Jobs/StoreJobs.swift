import FileDoors
import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import PropertyList

/// `inspect`'s job: what the command does, without its printing.
package struct InspectJob: ProjectJob {
  package var store: String
  package var model: String?
  package var configuration: String?
  package var json: Bool
  /// How long a read of the store waits for another process's write lock, in seconds (`--wait`).
  package var wait: Double = 0
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(store: String, model: String?, configuration: String?, json: Bool) {
    self.store = store
    self.model = model
    self.configuration = configuration
    self.json = json
  }

  /// The store read once (``StoreSession``): its type, its check, its metadata, its counts.
  package func run() throws -> JobOutput {
    let url = URL(fileURLWithPath: store)
    let session = StoreSession(url, readWait: wait)
    defer { session.close() }
    if AtomicStoreInput.isAtomic(session) { return try inspectAtomic(url) }
    // A damaged file is said to be so (exit 1): its counts, when it still gives them, may be short.
    guard let damage = DamagedStore.of(store, session: session) else { return try inspectSQLite(session) }
    var out: JobOutput
    do {
      out = try inspectSQLite(session)
    } catch {
      throw damage.error
    }
    if !json { out.say("Damaged    yes: the counts above may leave out what SQLite can no longer read") }
    out.notes.append("migrun: error: \(damage.message)")
    out.status = 1
    return out
  }

  private func inspectSQLite(_ session: StoreSession) throws -> JobOutput {
    let url = session.url
    var out = JobOutput()
    let metadata = try session.metadata()
    let resolution = try ModelResolution.resolve(
      session: session, bundlePath: modelOrProject(model, project), configuration: configuration)
    var counts: [String: Int]?
    var source = "--model"
    if let matched = resolution.model {
      counts = try SQLiteStore(url: url, model: matched, access: .readOnly, fastWrites: false, session: session)
        .entityCounts()
    } else {
      // The store's own model, as it opens without --model: the stored hashes name the version; the
      // cache only describes the tables (its hashes may differ from the stored ones). No cache: no counts.
      do {
        counts = try SQLiteStore(url: url, model: nil, access: .readOnly, fastWrites: false, session: session)
          .entityCounts()
        source = "Z_MODELCACHE"
      } catch let error as StoreError where error.code == .noModel {}
    }
    if json {
      try out.emit(
        "inspect",
        encoding: InspectReport(
          uuid: metadata.uuid, metadata: JSONField(plist: metadata.plist),
          entities: (counts ?? [:]).mapValues { ["count": $0] }, version: resolution.versionName))
      return out
    }
    out.lines += Self.lines(url: url, metadata: metadata, resolution: resolution, modelGiven: model != nil)
    out.lines += Self.countLines(counts, source: source)
    if !metadata.otherKeys.isEmpty {
      out.say("Other metadata keys: \(metadata.otherKeys.keys.sorted().joined(separator: ", "))")
    }
    return out
  }

  /// An XML or binary store: its metadata and version as a SQLite store's, and its objects per
  /// entity — read with the model when one is given (every value and link checked), else by the
  /// entity names the file writes.
  private func inspectAtomic(_ url: URL) throws -> JobOutput {
    var out = JobOutput()
    let input = try AtomicStoreInput(url, modelPath: modelOrProject(model, project))
    let metadata = input.metadata
    var resolution = ModelResolution(model: nil, versionName: nil, mismatch: [])
    var counts: [String: Int] = [:]
    var source = "the file's entity names"
    if let version = input.version {
      resolution = ModelResolution(model: version, versionName: version.versionName, mismatch: [])
      for object in try input.objects() { counts[object.id.entity, default: 0] += 1 }
      source = "--model"
    } else if let name = input.bundleName {
      resolution = ModelResolution(
        model: nil, versionName: nil, mismatch: ["no version of \(name) matches the store's entity hashes"])
    }
    if resolution.model == nil { counts = input.store.countsByFileEntity }
    if json {
      try out.emit(
        "inspect",
        encoding: InspectReport(
          uuid: metadata.uuid, metadata: JSONField(plist: metadata.plist),
          entities: counts.mapValues { ["count": $0] }, version: resolution.versionName))
      return out
    }
    out.lines += Self.lines(url: url, metadata: metadata, resolution: resolution, modelGiven: model != nil)
    out.lines.insert("Type       \(input.store.type.label)", at: 1)
    out.lines += Self.countLines(counts, source: source)
    return out
  }

  /// The store, its UUID and framework, and the version its hashes match (or why none does).
  static func lines(url: URL, metadata: StoreMetadata, resolution: ModelResolution, modelGiven: Bool) -> [String] {
    var lines: [String] = []
    lines.append("Store      \(url.lastPathComponent)")
    lines.append("UUID       \(metadata.uuid)")
    lines.append("Framework  \(metadata.frameworkVersion.map(String.init) ?? "?") (NSPersistenceFrameworkVersion)")
    if !metadata.versionIdentifiers.filter({ !$0.isEmpty }).isEmpty {
      lines.append(
        "Identifier \(metadata.versionIdentifiers.joined(separator: ", ")) "
          + "(NSStoreModelVersionIdentifiers: the app's label for its version; versions are matched by hashes)")
    }
    if let name = resolution.versionName, resolution.model != nil {
      lines.append("Version    \(name) (every entity hash equal)")
    } else if modelGiven {
      lines.append("Version    none")
      for line in resolution.mismatch { lines.append("           \(line)") }
    }
    return lines
  }

  /// The objects per entity, and which model counted them.
  static func countLines(_ counts: [String: Int]?, source: String) -> [String] {
    var lines: [String] = []
    if let counts {
      lines.append("Objects    (counted with the model from \(source))")
      let width = counts.keys.map(\.count).max() ?? 0
      for name in counts.keys.sorted() {
        lines.append("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(counts[name] ?? 0)")
      }
    } else {
      lines.append("Objects    not counted: the store has no model cache; give --model")
    }
    return lines
  }
}

/// `create`'s job: what the command does, without its printing.
package struct CreateJob: ProjectJob {
  package var store: String
  package var model: String?
  package var modelVersion: String?
  package var configuration: String?
  package var type: String
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(store: String, model: String?, modelVersion: String?, configuration: String?, type: String = "sqlite") {
    self.store = store
    self.model = model
    self.modelVersion = modelVersion
    self.configuration = configuration
    self.type = type
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let storeType = try storeType(named: type)
    try OutputFile.check(store)
    let bundle = try ConfigurationChoice.bundle(
      loadModel(URL(fileURLWithPath: try modelPath(argument: nil, option: model, project: project))),
      configuration: configuration,
      store: nil)
    let name = modelVersion ?? bundle.currentVersionName
    let objectModel = try bundle.model(named: name)
    // Through a hidden working file, as every new store: a kill leaves nothing under the name.
    try writeNewStore(at: store, label: "create") { working in
      if storeType == .sqlite {
        try SQLiteStore.create(at: working, model: objectModel).close()
      } else {
        _ = try StoreConversion.write(
          [], metadata: StoreMetadata(model: objectModel), model: objectModel, as: storeType, to: working)
      }
    }
    out.say(
      "created \(store): \(storeType == .sqlite ? "" : "\(storeType.rawValue) store, ")\(bundle.name) version \(name)\(configuration.map { ", configuration \($0)" } ?? ""), \(objectModel.entities.count) entities"
    )
    return out
  }
}

/// `import`'s job: what the command does, without its printing.
/// `migrun copy STORE NEW --type sqlite|xml|binary`: a store written as a store of another type
/// of the same model version (Core Data's `migratePersistentStore(_:to:options:type:)`): every
/// object, value and link, the metadata carried (UUID, version hashes, other keys), the new file
/// read back and compared object by object, written through a temporary file and renamed into
/// place; the original only read. Keys change where the types number objects otherwise (said).
package struct CopyJob: ProjectJob {
  package var store: String
  package var out: String
  package var type: String
  package var model: String?
  /// Attributes (`Entity.attribute`) whose values are left out on purpose.
  package var drop: [String]
  /// How long a read of the store waits for another process's write lock, in seconds (`--wait`).
  package var wait: Double = 0
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(store: String, out: String, type: String, model: String?, drop: [String] = []) {
    self.store = store
    self.out = out
    self.type = type
    self.model = model
    self.drop = drop
  }

  package func run() throws -> JobOutput {
    var output = JobOutput()
    let url = URL(fileURLWithPath: store)
    let target = try storeType(named: type)
    guard FileManager.default.fileExists(atPath: url.path) else { throw ToolError(message: "\(store): no such file") }
    try OutputFile.check(out, inputs: [store])
    // The store read once (``StoreSession``): its type, its version, its objects.
    let session = StoreSession(url, readWait: wait)
    defer { session.close() }
    guard let source = session.type else {
      // Not a regular file (a FIFO, a device): the door's words; else the file is none of the three.
      do { try InputFile.check(url) } catch { throw ToolError(message: "\(error)", underlying: error) }
      throw ToolError(message: "\(store): not a Core Data store (neither SQLite, XML nor binary)")
    }
    guard source != target else {
      throw ToolError(
        message: "\(store) is already a \(source.label) store: copy it as it is (cp), or migrate it")
    }
    let version = try self.version(of: session, source)
    let foreign = try foreignObjects(of: session, source, version: version, to: target)
    var (metadata, objects) = try StoreConversion.read(url, model: version, session: session)
    let dropped = try StoreConversion.dropValues(
      of: drop.filter { !foreign.contains($0) }, from: &objects, model: version)
    let archivedForCustom = try Self.transformables(objects, version, from: source, to: target)
    let destination = URL(fileURLWithPath: out)
    var written: StoreConversion.Outcome?
    try writeNewStore(at: out, label: "copy", inputs: [store]) { working in
      written = try StoreConversion.write(objects, metadata: metadata, model: version, as: target, to: working)
    }
    guard let outcome = written else { return output }
    output.lines += Self.summary(
      of: outcome, from: url, source, version: version, to: destination, target, uuid: metadata.uuid)
    for (attribute, count) in dropped.sorted(by: { $0.key < $1.key }) {
      output.say("  dropped on purpose (--drop): \(attribute) — \(count) value\(count == 1 ? "" : "s")")
    }
    for name in foreign { output.say("  dropped on purpose (--drop): \(name)") }
    for (attribute, transformer, count) in archivedForCustom {
      output.say(
        "  \(attribute): \(count) values written as keyed archives of the objects the binary store holds; if "
          + "\(transformer ?? "its transformer") writes another form, the app will not read them (--drop \(attribute) "
          + "leaves them out)")
    }
    return output
  }

  /// What a SQLite store holds beyond its model (history, CloudKit's tables, an app's, triggers),
  /// which an XML or binary store has no place for: refused by name unless dropped on purpose.
  private func foreignObjects(
    of session: StoreSession, _ source: StoreType, version: ObjectModel, to target: StoreType
  ) throws -> [String] {
    let foreign =
      source == .sqlite
      ? try SQLiteStore(url: session.url, model: version, access: .readOnly, fastWrites: false, session: session)
        .foreignObjectNames() : []
    let notDropped = foreign.filter { !drop.contains($0) }
    guard notDropped.isEmpty else {
      throw ToolError(
        message: "\(store) holds what \(target == .xml ? "an XML" : "a binary") store has no place for: "
          + "\(notDropped.joined(separator: ", ")); "
          + notDropped.map { "--drop \($0)" }.joined(separator: " ") + " leaves it out on purpose")
    }
    return foreign
  }

  /// A binary store keeps a transformable's value itself, the other types the transformer's data:
  /// data that is no keyed archive (a custom transformer's own form) only the app can turn into the
  /// value — refused by name, with the option that leaves it out; the other way, the attributes of
  /// a custom transformer whose values will be written as keyed archives (said by the caller).
  static func transformables(
    _ objects: [StoredObject], _ version: ObjectModel, from source: StoreType, to target: StoreType
  ) throws -> [(attribute: String, transformer: String?, count: Int)] {
    if target == .binary,
      let (attribute, transformer, count) = StoreConversion.transformableValues(
        in: objects, model: version, where: { _, bytes in !StoreConversion.isKeyedArchive(bytes) }
      ).first
    {
      throw ToolError(
        message:
          "\(attribute): \(count) values are data of the custom value transformer \(transformer ?? "?"), no keyed "
          + "archive: a binary store keeps the value itself, which only the app can make from that data; "
          + "--drop \(attribute) leaves them out on purpose")
    }
    guard source == .binary else { return [] }
    return StoreConversion.transformableValues(in: objects, model: version) { attribute, _ in
      !StoreConversion.isUnarchiving(attribute.valueTransformerName)
    }
  }

  /// What a copy wrote: objects per entity, the UUID kept, and what changed on the way (keys,
  /// versions, numbers held as text).
  static func summary(
    of outcome: StoreConversion.Outcome, from url: URL, _ source: StoreType, version: ObjectModel, to destination: URL,
    _ target: StoreType, uuid: String
  ) -> [String] {
    let total = outcome.counts.values.reduce(0, +)
    var lines = [
      "\(url.lastPathComponent) (\(source.rawValue), \(version.versionName ?? "?")) → \(destination.lastPathComponent) "
        + "(\(target.rawValue)): \(total) objects, UUID \(uuid) kept"
    ]
    for name in outcome.counts.keys.sorted() { lines.append("  \(name): \(outcome.counts[name] ?? 0)") }
    if outcome.renumbered > 0 {
      lines.append(
        "  \(outcome.renumbered) object\(outcome.renumbered == 1 ? "" : "s") got a new key: "
          + "\(target == .xml ? "an XML" : "a binary") store numbers objects across the store, SQLite per entity hierarchy"
      )
    }
    if outcome.numbersFromText > 0 {
      lines.append(
        "  \(outcome.numbersFromText) number\(outcome.numbersFromText == 1 ? "" : "s") the store held as text "
          + "written as numbers (an XML store reads every value by its attribute's type)")
    }
    if source == .sqlite {
      lines.append(
        "  optimistic-locking versions (Z_OPT) are not kept by \(target.rawValue) stores: each object starts at 1")
    }
    return lines
  }

  /// The model version the store's hashes name: from `--model` (or the project), else — for a
  /// SQLite store — its own cached model.
  private func version(of session: StoreSession, _ type: StoreType) throws -> ObjectModel {
    let path = modelOrProject(model, project)
    if type != .sqlite { return try AtomicStoreInput(session.url, modelPath: path).requireVersion(for: "copy") }
    let resolution = try ModelResolution.resolve(session: session, bundlePath: path)
    if let matched = resolution.model { return matched }
    if path != nil { throw ToolError(message: "\(store): " + resolution.mismatch.joined(separator: "\n  ")) }
    guard let cached = try session.cachedModel() else {
      throw ToolError(message: "\(store): the store has no model cache: give --model")
    }
    return cached
  }
}

package struct ImportJob: ProjectJob {
  package var file: String
  package var model: String?
  package var modelVersion: String?
  package var out: String
  package var configuration: String?
  package var type: String
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(
    file: String, model: String?, modelVersion: String?, out: String, configuration: String?, type: String = "sqlite"
  ) {
    self.file = file
    self.model = model
    self.modelVersion = modelVersion
    self.out = out
    self.configuration = configuration
    self.type = type
  }

  package func run() throws -> JobOutput {
    var output = JobOutput()
    let storeType = try storeType(named: type)
    try OutputFile.check(out, option: "--out", inputs: [file])
    let bundle = try ConfigurationChoice.bundle(
      loadModel(URL(fileURLWithPath: try modelPath(argument: nil, option: model, project: project))),
      configuration: configuration,
      store: nil)
    let objectModel = try bundle.model(named: modelVersion ?? bundle.currentVersionName)
    let data: Data
    do {
      // An export of a big store is large: read up to 2 GiB, said by name past it.
      data = try InputFile.data(URL(fileURLWithPath: file), origin: .named, limit: 2 << 30)
    } catch let error as InputFileError {
      throw ToolError(message: "\(error)", underlying: error)
    } catch {
      throw ToolError(message: "\(file): cannot read (\(error.localizedDescription))", underlying: error)
    }
    do {
      try writeNewStore(at: out, label: "import", inputs: [file]) { working in
        try write(data, as: storeType, objectModel, to: working)
      }
    } catch let error as StoreError where error.code == .incompatibleModel {
      // Say which version the export does fit, when one of the model's does.
      guard let hashes = StoreJSON.versionHashes(of: data), let fitting = bundle.version(matching: hashes),
        let name = fitting.versionName
      else { throw error }
      throw ToolError(
        message: "\(error.description); it fits version \(name): give --model-version \"\(name)\"", underlying: error)
    }
    output.say("imported \(file) into \(out)")
    return output
  }

  /// The export's objects as a new store of `type` at `working`: imported as SQLite (every value
  /// checked there), then, for another type, written in it.
  private func write(_ data: Data, as type: StoreType, _ model: ObjectModel, to working: URL) throws {
    let store = try SQLiteStore.create(at: working, model: model)
    try StoreJSON.importObjects(data, into: store)
    try store.close()
    guard type != .sqlite else { return }
    let (metadata, objects) = try StoreConversion.read(working, model: model)
    StoreFiles.remove(working)
    _ = try StoreConversion.write(objects, metadata: metadata, model: model, as: type, to: working)
  }
}

/// `check`'s job: what the command does, without its printing.
package struct CheckJob: ProjectJob {
  package var stores: [String]
  package var model: String?
  package var configuration: String?
  package var json: Bool
  /// How long a read of a store waits for another process's write lock, in seconds (`--wait`).
  package var wait: Double = 0
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(stores: [String], model: String?, configuration: String?, json: Bool) {
    self.stores = stores
    self.model = model
    self.configuration = configuration
    self.json = json
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let bundle = try modelOrProject(model, project).map { try loadModel(URL(fileURLWithPath: $0)) }
    var dirty = 0
    for path in stores {
      let url = URL(fileURLWithPath: path)
      // A store not there (or a folder) is an error on standard error (and its line in JSON), and
      // the others are still checked.
      let missing = Self.notAStore(url)
      if let missing { out.notes.append("migrun: error: \(path): \(missing.message)") }
      // Each store read once (``StoreSession``): its configuration, its check and its findings.
      let session = StoreSession(url, readWait: wait)
      defer { session.close() }
      let findings =
        try missing.map { [$0] }
        ?? StoreCheck.findings(
          of: session,
          bundle: bundle.map { try ConfigurationChoice.bundle($0, configuration: configuration, session: session) }
        )
        .map {
          StoreCheck.Finding(
            kind: $0.kind, message: CommandLineWords.flags(in: $0.message), isNote: $0.isNote, salvage: $0.salvage)
        }
      let damage = findings.filter { !$0.isNote }
      if !damage.isEmpty { dirty += 1 }
      if missing != nil && !json { continue }
      if json {
        try out.emit(
          "check",
          encoding: CheckReport(
            store: path, findings: damage.map { ["kind": $0.kind, "message": $0.message] },
            notes: findings.filter(\.isNote).map { ["kind": $0.kind, "message": $0.message] },
            salvage: findings.compactMap(\.salvage).first))
      } else {
        for finding in findings { out.say("\(path): \(finding)") }
        if damage.isEmpty { out.say("\(path): clean") }
      }
    }
    if json { try out.emit("summary", encoding: CheckSummary(stores: stores.count, withFindings: dirty)) }
    if dirty > 0 { out.status = 1 }
    return out
  }

  /// The finding for a path that names no store file — nothing there, or a folder — else nil.
  private static func notAStore(_ url: URL) -> StoreCheck.Finding? {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
      return StoreCheck.Finding(kind: "no-such-store", message: "no such file")
    }
    guard !isFolder.boolValue else {
      return StoreCheck.Finding(kind: "no-such-store", message: StoreFiles.folderGivenAsStore(url))
    }
    return nil
  }
}

/// `export`'s job: a store's objects as JSON.
package struct ExportJob: ProjectJob {
  package var store: String
  package var model: String?
  package var modelVersion: String?
  package var configuration: String?
  package var out: String?
  package var dates: StoreJSON.Dates
  /// Whether a file already at `out` may be replaced (never the store itself).
  package var force: Bool
  /// How long a read of the store waits for another process's write lock, in seconds (`--wait`).
  package var wait: Double = 0
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?

  package init(
    store: String, model: String?, modelVersion: String?, configuration: String?, out: String?, dates: StoreJSON.Dates,
    force: Bool = false
  ) {
    self.store = store
    self.model = model
    self.modelVersion = modelVersion
    self.configuration = configuration
    self.out = out
    self.dates = dates
    self.force = force
  }

  /// Writes the export to `out`, atomically, or — without `out` — hands its text to `standardOutput`.
  package func run(standardOutput: (String) throws -> Void) throws {
    if let out { try OutputFile.check(out, option: "--out", force: force, inputs: [store]) }
    // Not an export of what a damaged file happens to give, nor SQLite's error with its SQL.
    let url = URL(fileURLWithPath: store)
    let session = StoreSession(url, readWait: wait)
    defer { session.close() }
    if let damage = DamagedStore.of(store, session: session) { throw damage.error }
    let opened: any ObjectStore
    if AtomicStoreInput.isAtomic(session) {
      opened = try AtomicStoreInput(url, modelPath: modelOrProject(model, project)).inMemory(for: "export")
    } else {
      let resolution = try ModelResolution.resolve(
        session: session, bundlePath: modelOrProject(model, project), version: modelVersion,
        configuration: configuration)
      if model != nil && resolution.model == nil {
        throw ToolError(message: "\(store): " + resolution.mismatch.joined(separator: "\n  "))
      }
      opened = try SQLiteStore(
        url: url, model: resolution.model, access: .readOnly, fastWrites: false, session: session)
    }
    guard let out else {
      try StoreJSON.export(opened, dates: dates, to: standardOutput)
      return
    }
    try writeAtomically(to: out) { file in try StoreJSON.export(opened, dates: dates, to: file.write) }
  }
}

/// `inspect --json`'s line: the store's UUID and metadata, objects per entity, the version it matches.
struct InspectReport: Encodable {
  let uuid: String
  let metadata: JSONField
  let entities: [String: [String: Int]]
  let version: String?

  private enum Keys: String, CodingKey { case uuid, metadata, entities, version }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(uuid, forKey: .uuid)
    try container.encode(metadata, forKey: .metadata)
    try container.encode(entities, forKey: .entities)
    try container.encode(version, forKey: .version)
  }
}

/// `check --json`'s line per store: its damage and its notes, each a kind and a message.
struct CheckReport: Encodable {
  let store: String
  let findings: [[String: String]]
  let notes: [[String: String]]
  /// A damaged store's: the figures salvage's dry run gives (those `salvage --json` then writes).
  let salvage: SalvageFigures?
}

/// `check --json`'s closing line.
struct CheckSummary: Encodable {
  let command = "check"
  let stores: Int
  let withFindings: Int
}
