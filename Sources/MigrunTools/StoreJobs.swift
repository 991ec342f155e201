import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import PropertyList

/// `inspect`'s job: what the command does, without its printing.
package struct InspectJob {
  package var store: String
  package var model: String?
  package var configuration: String?
  package var json: Bool

  package init(store: String, model: String?, configuration: String?, json: Bool) {
    self.store = store
    self.model = model
    self.configuration = configuration
    self.json = json
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let url = URL(fileURLWithPath: store)
    if XMLStoreFile.isXMLStore(url) { return try inspectXML(url) }
    let metadata = try SQLiteStore.metadata(at: url)
    let resolution = try ModelResolution.resolve(
      store: url, bundlePath: try modelOrProject(model), configuration: configuration)
    var counts: [String: Int]?
    var source = "--model"
    if let matched = resolution.model {
      counts = try SQLiteStore(url: url, model: matched).entityCounts()
    } else {
      // The store's own model, as it opens without --model: the stored hashes name the version; the
      // cache only describes the tables (its hashes may differ from the stored ones). No cache: no counts.
      do {
        counts = try SQLiteStore(url: url).entityCounts()
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

  /// An XML store (`NSXMLStoreType`): its metadata and version as a SQLite store's, and its objects
  /// per entity — read with the model when one is given (every value and link checked), else by
  /// the entity names the file writes.
  private func inspectXML(_ url: URL) throws -> JobOutput {
    var out = JobOutput()
    let input = try XMLStoreInput(url, modelPath: try modelOrProject(model))
    let (file, metadata) = (input.file, input.metadata)
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
    if resolution.model == nil {
      for object in file.objects { counts[object.entity, default: 0] += 1 }
    }
    if json {
      try out.emit(
        "inspect",
        encoding: InspectReport(
          uuid: metadata.uuid, metadata: JSONField(plist: metadata.plist),
          entities: counts.mapValues { ["count": $0] }, version: resolution.versionName))
      return out
    }
    out.lines += Self.lines(url: url, metadata: metadata, resolution: resolution, modelGiven: model != nil)
    out.lines.insert("Type       XML (NSXMLStoreType)", at: 1)
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
      lines.append("Identifiers \(metadata.versionIdentifiers.joined(separator: ", "))")
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
package struct CreateJob {
  package var store: String
  package var model: String?
  package var modelVersion: String?
  package var configuration: String?

  package init(store: String, model: String?, modelVersion: String?, configuration: String?) {
    self.store = store
    self.model = model
    self.modelVersion = modelVersion
    self.configuration = configuration
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let bundle = try ConfigurationChoice.bundle(
      loadModel(URL(fileURLWithPath: try modelPath(argument: nil, option: model))), configuration: configuration,
      store: nil)
    let name = modelVersion ?? bundle.currentVersionName
    let objectModel = try bundle.model(named: name)
    try SQLiteStore.create(at: URL(fileURLWithPath: store), model: objectModel)
    out.say(
      "created \(store): \(bundle.name) version \(name)\(configuration.map { ", configuration \($0)" } ?? ""), \(objectModel.entities.count) entities"
    )
    return out
  }
}

/// `import`'s job: what the command does, without its printing.
/// An XML store a command was given: the file, its metadata, and — with a model — the version its
/// hashes name (one home for what inspect, export and copy each need first).
struct XMLStoreInput {
  let url: URL
  let file: XMLStoreFile
  let metadata: StoreMetadata
  /// The model's name, when one was given; the version matching the store's hashes, when one does.
  let bundleName: String?
  let version: ObjectModel?

  init(_ url: URL, modelPath: String?) throws {
    self.url = url
    (file, metadata) = try XMLStoreFile.open(url)
    let bundle = try modelPath.map { try loadModel(URL(fileURLWithPath: $0)) }
    bundleName = bundle?.name
    version = bundle?.version(matching: metadata.versionHashes)
  }

  /// The version, or an error saying `command` needs one.
  func requireVersion(for command: String) throws -> ObjectModel {
    if let version { return version }
    guard let bundleName else {
      throw ToolError(message: "\(command) of an XML store needs its model: --model (or model: in .migrun.yml)")
    }
    throw StoreError(
      .incompatibleModel, file: url.path, reason: "no version of \(bundleName) matches the store's entity hashes")
  }

  /// The store's objects as the version has them (every value and link checked).
  func objects() throws -> [StoredObject] {
    try file.objects(of: try requireVersion(for: "reading"), file: url.lastPathComponent)
  }
}

/// `migrun copy STORE NEW --type sqlite`: a store of another type written as a SQLite store of the
/// same model version (Core Data's `migratePersistentStore(_:to:options:type:)`): every object,
/// value and link, the metadata carried (UUID, version hashes, other keys), checked against what
/// was read; `NEW` written through a temporary file and renamed into place, the original only read.
/// So far from an XML store; the other directions are refused by name.
package struct CopyJob {
  package var store: String
  package var out: String
  package var type: String
  package var model: String?

  package init(store: String, out: String, type: String, model: String?) {
    self.store = store
    self.out = out
    self.type = type
    self.model = model
  }

  package func run() throws -> JobOutput {
    var output = JobOutput()
    let url = URL(fileURLWithPath: store)
    guard type.lowercased() == "sqlite" else {
      throw ToolError(message: "--type \(type): migrun writes SQLite stores only so far (XML and binary: issue 47)")
    }
    guard XMLStoreFile.isXMLStore(url) else {
      throw ToolError(
        message: "\(store): copy reads Core Data XML stores so far; a SQLite store is copied as it is (cp, or migrate)")
    }
    let input = try XMLStoreInput(url, modelPath: try modelOrProject(model))
    let version = try input.requireVersion(for: "copy")
    let objects = try input.objects()
    var carried = input.metadata
    carried.storeType = "SQLite"
    let read = try write(objects, version, carried)
    output.say(
      "\(url.lastPathComponent) (XML, \(version.versionName ?? "?")) → \(URL(fileURLWithPath: out).lastPathComponent) "
        + "(SQLite): \(objects.count) objects, UUID \(carried.uuid) kept")
    for name in read.keys.sorted() { output.say("  \(name): \(read[name] ?? 0)") }
    return output
  }

  /// Each object as the copy holds it against the object read: every value (derived attributes,
  /// which the copy computes, aside) and every link; a difference names the object and property and
  /// nothing is written.
  private func verify(_ objects: [StoredObject], in file: URL, _ version: ObjectModel) throws {
    let copy = try SQLiteStore(url: file, model: version, access: .readOnly)
    defer { try? copy.close() }
    for object in objects {
      guard let written = try copy.object(object.id), let entity = version.entity(named: object.id.entity) else {
        throw ToolError(message: "\(out): the copy lacks \(object.id): nothing was written")
      }
      func differs(_ property: String) -> ToolError {
        ToolError(message: "\(out): \(object.id).\(property) differs in the copy: nothing was written")
      }
      for attribute in version.attributes(of: entity)
      where attribute.derivation == nil && !attribute.isTransient
        && written.attributes[attribute.name] ?? .null != object.attributes[attribute.name] ?? .null
      {
        throw differs(attribute.name)
      }
      for relationship in version.relationships(of: entity) where !relationship.isTransient {
        let name = relationship.name
        let same =
          relationship.isToMany
          ? relationship.isOrdered
            ? written.toMany[name] ?? [] == object.toMany[name] ?? []
            : Set(written.toMany[name] ?? []) == Set(object.toMany[name] ?? [])
          : written.toOne[name] == object.toOne[name]
        if !same { throw differs(name) }
      }
    }
  }

  /// Writes `objects` and `metadata` as a new SQLite store at `out` (through a temporary file,
  /// renamed into place once the objects per entity it holds equal those read, and each object's
  /// values and links); those counts.
  private func write(_ objects: [StoredObject], _ version: ObjectModel, _ metadata: StoreMetadata) throws
    -> [String: Int]
  {
    let target = URL(fileURLWithPath: out)
    guard !FileManager.default.fileExists(atPath: target.path) else {
      throw ToolError(message: "\(out): a file is already there; migrun does not overwrite it")
    }
    let working = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).migrun-copy")
    StoreFiles.remove(working)
    do {
      let created = try SQLiteStore.create(at: working, model: version, metadata: metadata)
      try created.insertAll(objects, metadata: nil)
      var read: [String: Int] = [:]
      for object in objects { read[object.id.entity, default: 0] += 1 }
      let written = try created.entityCounts().filter { $0.value > 0 }
      try created.close()
      guard written == read else {
        throw ToolError(message: "\(out): the copy holds \(written) objects, the store \(read): nothing was written")
      }
      try verify(objects, in: working, version)
      try StoreFiles.sync(working)
      guard rename(working.path, target.path) == 0 else {
        throw ToolError(message: "\(out): cannot move the store into place")
      }
      return read
    } catch {
      StoreFiles.remove(working)
      throw error
    }
  }
}

package struct ImportJob {
  package var file: String
  package var model: String?
  package var modelVersion: String?
  package var out: String
  package var configuration: String?

  package init(file: String, model: String?, modelVersion: String?, out: String, configuration: String?) {
    self.file = file
    self.model = model
    self.modelVersion = modelVersion
    self.out = out
    self.configuration = configuration
  }

  package func run() throws -> JobOutput {
    var output = JobOutput()
    let bundle = try ConfigurationChoice.bundle(
      loadModel(URL(fileURLWithPath: try modelPath(argument: nil, option: model))), configuration: configuration,
      store: nil)
    let objectModel = try bundle.model(named: modelVersion ?? bundle.currentVersionName)
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: file))
    } catch {
      throw ToolError(message: "\(file): cannot read (\(error.localizedDescription))", underlying: error)
    }
    let target = URL(fileURLWithPath: out)
    guard !FileManager.default.fileExists(atPath: target.path) else {
      throw ToolError(message: "\(out): a file is already there; migrun does not overwrite it")
    }
    let working = target.deletingLastPathComponent().appendingPathComponent(
      ".\(target.lastPathComponent).migrun-import")
    StoreFiles.remove(working)
    do {
      let store = try SQLiteStore.create(at: working, model: objectModel)
      try StoreJSON.importObjects(data, into: store)
      try StoreFiles.sync(working)
      guard rename(working.path, target.path) == 0 else {
        throw ToolError(message: "\(out): cannot move the store into place")
      }
    } catch let error as StoreError where error.code == .incompatibleModel {
      StoreFiles.remove(working)
      // Say which version the export does fit, when one of the model's does.
      guard let hashes = StoreJSON.versionHashes(of: data), let fitting = bundle.version(matching: hashes),
        let name = fitting.versionName
      else { throw error }
      throw ToolError(
        message: "\(error.description); it fits version \(name): give --model-version \"\(name)\"", underlying: error)
    } catch {
      StoreFiles.remove(working)
      throw error
    }
    output.say("imported \(file) into \(out)")
    return output
  }
}

/// `check`'s job: what the command does, without its printing.
package struct CheckJob {
  package var stores: [String]
  package var model: String?
  package var configuration: String?
  package var json: Bool

  package init(stores: [String], model: String?, configuration: String?, json: Bool) {
    self.stores = stores
    self.model = model
    self.configuration = configuration
    self.json = json
  }

  package func run() throws -> JobOutput {
    var out = JobOutput()
    let bundle = try modelOrProject(model).map { try loadModel(URL(fileURLWithPath: $0)) }
    var dirty = 0
    // Every store is there before any is checked (the output is written whole, at the end).
    for path in stores where !FileManager.default.fileExists(atPath: path) {
      throw ToolError(message: "\(path): no such file")
    }
    for path in stores {
      let url = URL(fileURLWithPath: path)
      let findings = try StoreCheck.findings(
        of: url, bundle: bundle.map { try ConfigurationChoice.bundle($0, configuration: configuration, store: url) })
      let damage = findings.filter { !$0.isNote }
      if !damage.isEmpty { dirty += 1 }
      if json {
        try out.emit(
          "check",
          encoding: CheckReport(
            store: path, findings: damage.map { ["kind": $0.kind, "message": $0.message] },
            notes: findings.filter(\.isNote).map { ["kind": $0.kind, "message": $0.message] }))
      } else {
        for finding in findings { out.say("\(path): \(finding)") }
        if damage.isEmpty { out.say("\(path): clean") }
      }
    }
    if json { try out.emit("summary", encoding: CheckSummary(stores: stores.count, withFindings: dirty)) }
    if dirty > 0 { out.status = 1 }
    return out
  }
}

/// `export`'s job: a store's objects as JSON.
package struct ExportJob {
  package var store: String
  package var model: String?
  package var modelVersion: String?
  package var configuration: String?
  package var out: String?
  package var dates: StoreJSON.Dates

  package init(
    store: String, model: String?, modelVersion: String?, configuration: String?, out: String?, dates: StoreJSON.Dates
  ) {
    self.store = store
    self.model = model
    self.modelVersion = modelVersion
    self.configuration = configuration
    self.out = out
    self.dates = dates
  }

  /// Writes the export to `out`, atomically, or — without `out` — hands its text to `standardOutput`.
  package func run(standardOutput: (String) -> Void) throws {
    let url = URL(fileURLWithPath: store)
    let opened: any ObjectStore
    if XMLStoreFile.isXMLStore(url) {
      opened = try xmlStore(url)
    } else {
      let resolution = try ModelResolution.resolve(
        store: url, bundlePath: try modelOrProject(model), version: modelVersion, configuration: configuration)
      if model != nil && resolution.model == nil {
        throw ToolError(message: "\(store): " + resolution.mismatch.joined(separator: "\n  "))
      }
      opened = try SQLiteStore(url: url, model: resolution.model)
    }
    guard let out else {
      try StoreJSON.export(opened, dates: dates, to: standardOutput)
      return
    }
    try writeAtomically(to: URL(fileURLWithPath: out)) { handle in
      try StoreJSON.export(opened, dates: dates) { handle.write(Data($0.utf8)) }
    }
  }

  /// An XML store's objects in memory (it is read whole, as Core Data reads it), with the version
  /// of the model its hashes name: exported as a SQLite store of that version would be.
  private func xmlStore(_ url: URL) throws -> InMemoryStore {
    let input = try XMLStoreInput(url, modelPath: try modelOrProject(model))
    let version = try input.requireVersion(for: "export")
    let metadata = input.metadata
    let memory = InMemoryStore(model: version, metadata: metadata)
    try memory.insertAll(try input.objects(), metadata: nil)
    return memory
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
}

/// `check --json`'s closing line.
struct CheckSummary: Encodable {
  let command = "check"
  let stores: Int
  let withFindings: Int
}
