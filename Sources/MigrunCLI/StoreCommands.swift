import ArgumentParser
import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import MigrunTools
import PropertyList

struct InspectCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "inspect",
    abstract: "Describe a Core Data store: UUID, metadata, object counts and which model version it matches.",
    discussion: HelpText.reflow(
      """
      Reads the store without changing it (not even its -wal or -shm). With --model, names the version
      whose entity hashes match the store's, or explains entity by entity why none does; without it,
      counts objects with the store's own model (Z_MODELCACHE).

      Example:
        migrun inspect Moody.sqlite --model Moody.xcdatamodeld
      """))

  @Argument(help: "The store (.sqlite or any name).") var store: String
  @Option(help: "A .xcdatamodeld, .xcdatamodel, .momd, .mom or SwiftData sources to identify the store's version.")
  var model: String?
  @Option(help: "The model configuration the store was written for (default: found from the store).")
  var configuration: String?
  @Flag(help: "One JSON line (docs/json.md): an `inspect` event {uuid, metadata, entities, version}.") var json = false

  func execute() throws {
    let url = URL(fileURLWithPath: store)
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
      let entities = (counts ?? [:]).mapValues { ["count": $0] }
      let report: [String: Any] = [
        "uuid": metadata.uuid, "metadata": JSONBridge.object(metadata.plist), "entities": entities,
        "version": resolution.versionName.map { $0 as Any } ?? NSNull(),
      ]
      try JSONLines.emit("inspect", report)
      return
    }
    print("Store      \(url.lastPathComponent)")
    print("UUID       \(metadata.uuid)")
    print("Framework  \(metadata.frameworkVersion.map(String.init) ?? "?") (NSPersistenceFrameworkVersion)")
    if !metadata.versionIdentifiers.filter({ !$0.isEmpty }).isEmpty {
      print("Identifiers \(metadata.versionIdentifiers.joined(separator: ", "))")
    }
    if let name = resolution.versionName, resolution.model != nil {
      print("Version    \(name) (every entity hash equal)")
    } else if model != nil {
      print("Version    none")
      for line in resolution.mismatch { print("           \(line)") }
    }
    if let counts {
      print("Objects    (counted with the model from \(source))")
      let width = counts.keys.map(\.count).max() ?? 0
      for name in counts.keys.sorted() {
        print("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(counts[name] ?? 0)")
      }
    } else {
      print("Objects    not counted: the store has no model cache; give --model")
    }
    if !metadata.otherKeys.isEmpty {
      print("Other metadata keys: \(metadata.otherKeys.keys.sorted().joined(separator: ", "))")
    }
  }
}

struct CreateCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "create",
    abstract: "Create an empty store for a model version, laid out as Core Data lays it out.")

  @Argument(help: "The store to create (must not exist).") var store: String
  @Option(help: "A .xcdatamodeld, .xcdatamodel, .momd, .mom or SwiftData sources (default: model: in .migrun.yml).")
  var model: String?
  @Option(name: .customLong("model-version"), help: "The model version (default: the current version).")
  var modelVersion: String?
  @Option(
    help: "Create a store of this configuration: its entities' tables alone, as Core Data before today's wrote one.")
  var configuration: String?

  func execute() throws {
    let bundle = try ConfigurationChoice.bundle(
      loadModel(URL(fileURLWithPath: try modelPath(argument: nil, option: model))), configuration: configuration,
      store: nil)
    let name = modelVersion ?? bundle.currentVersionName
    let objectModel = try bundle.model(named: name)
    try SQLiteStore.create(at: URL(fileURLWithPath: store), model: objectModel)
    print(
      "created \(store): \(bundle.name) version \(name)\(configuration.map { ", configuration \($0)" } ?? ""), \(objectModel.entities.count) entities"
    )
  }
}

struct ExportCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Write a store's objects as JSON (stable order, every value exact, relationships as Entity/pN).")

  @Argument(help: "The store.") var store: String
  @Option(help: "A .xcdatamodeld, .xcdatamodel, .momd, .mom or SwiftData sources (default: the store's own model).")
  var model: String?
  @Option(
    name: .customLong("model-version"),
    help: "The model version to read the store as (default: the one whose hashes match the store's).")
  var modelVersion: String?
  @Option(help: "The model configuration the store was written for (default: found from the store).")
  var configuration: String?
  @Option(help: "Write to this file instead of standard output.") var out: String?
  @Option(
    help: ArgumentHelp(
      "Dates as 'seconds' since 2001-01-01 (exact, the default) or 'iso8601' text in UTC, to the millisecond (import reads both).",
      valueName: "form"))
  var dates: StoreJSON.Dates = .seconds

  func execute() throws {
    let url = URL(fileURLWithPath: store)
    let resolution = try ModelResolution.resolve(
      store: url, bundlePath: try modelOrProject(model), version: modelVersion, configuration: configuration)
    if model != nil && resolution.model == nil {
      throw CLIError(message: "\(store): " + resolution.mismatch.joined(separator: "\n  "))
    }
    let opened = try SQLiteStore(url: url, model: resolution.model)
    guard let out else {
      try StoreJSON.export(opened, dates: dates) { FileHandle.standardOutput.write(Data($0.utf8)) }
      return
    }
    try writeAtomically(to: URL(fileURLWithPath: out)) { handle in
      try StoreJSON.export(opened, dates: dates) { handle.write(Data($0.utf8)) }
    }
  }
}

struct ImportCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Create a store from a JSON export.",
    discussion: "The export must have been made from a store of the same model version (its hashes are checked).")

  @Argument(help: "The JSON file (from migrun export).") var file: String
  @Option(help: "A .xcdatamodeld, .xcdatamodel, .momd, .mom or SwiftData sources (default: model: in .migrun.yml).")
  var model: String?
  @Option(name: .customLong("model-version"), help: "The model version (default: the current version).")
  var modelVersion: String?
  @Option(help: "The store to create (must not exist).") var out: String
  @Option(help: "Create a store of this configuration: its entities' tables alone.") var configuration: String?

  func execute() throws {
    let bundle = try ConfigurationChoice.bundle(
      loadModel(URL(fileURLWithPath: try modelPath(argument: nil, option: model))), configuration: configuration,
      store: nil)
    let objectModel = try bundle.model(named: modelVersion ?? bundle.currentVersionName)
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: file))
    } catch {
      throw CLIError(message: "\(file): cannot read (\(error.localizedDescription))")
    }
    let target = URL(fileURLWithPath: out)
    guard !FileManager.default.fileExists(atPath: target.path) else {
      throw CLIError(message: "\(out): a file is already there; migrun does not overwrite it")
    }
    let working = target.deletingLastPathComponent().appendingPathComponent(
      ".\(target.lastPathComponent).migrun-import")
    StoreFiles.remove(working)
    do {
      let store = try SQLiteStore.create(at: working, model: objectModel)
      try StoreJSON.importObjects(data, into: store)
      try StoreFiles.sync(working)
      guard rename(working.path, target.path) == 0 else {
        throw CLIError(message: "\(out): cannot move the store into place")
      }
    } catch let error as StoreError where error.code == .incompatibleModel {
      StoreFiles.remove(working)
      // Say which version the export does fit, when one of the model's does.
      guard let hashes = StoreJSON.versionHashes(of: data), let fitting = bundle.version(matching: hashes),
        let name = fitting.versionName
      else { throw error }
      throw CLIError(message: "\(error.description); it fits version \(name): give --model-version \"\(name)\"")
    } catch {
      StoreFiles.remove(working)
      throw error
    }
    print("imported \(file) into \(out)")
  }
}

/// Writes through a temporary file beside `url`, renamed into place when complete.
func writeAtomically(to url: URL, _ body: (FileHandle) throws -> Void) throws {
  let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).migrun-tmp")
  guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
    let handle = FileHandle(forWritingAtPath: temporary.path)
  else { throw CLIError(message: "\(url.path): cannot write") }
  do {
    try body(handle)
    try handle.close()
    guard rename(temporary.path, url.path) == 0 else { throw CLIError(message: "\(url.path): cannot move into place") }
  } catch {
    try? FileManager.default.removeItem(at: temporary)
    throw error
  }
}

/// Property list values as JSON-ready Foundation objects (data as base64).
enum JSONBridge {
  static func object(_ value: PropertyListValue) -> Any {
    switch value {
    case .string(let text): text
    case .integer(let number): number
    case .real(let number), .date(let number): number
    case .boolean(let flag): flag
    case .data(let bytes): Data(bytes).base64EncodedString()
    case .array(let elements): elements.map(object)
    case .dictionary(let entries): entries.mapValues(object)
    case .uid(let reference): ["CF$UID": reference]
    }
  }
}

extension StoreJSON.Dates: ExpressibleByArgument {}
