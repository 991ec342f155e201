import ArgumentParser
import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import MigrunTools
import PropertyList

struct InspectCommand: ProjectCommand {
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

  @OptionGroup var waiting: StoreWaitOption

  func execute(_ project: ProjectConfig?) throws {
    var job = InspectJob(store: store, model: model, configuration: configuration, json: json).reading(project)
    job.wait = waiting.wait
    try show(job.run())
  }
}

struct CreateCommand: ProjectCommand {
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
  @Option(help: "The store type: sqlite (the default), xml or binary.") var type: String = "sqlite"

  func execute(_ project: ProjectConfig?) throws {
    try show(
      CreateJob(store: store, model: model, modelVersion: modelVersion, configuration: configuration, type: type)
        .reading(project)
        .run())
  }
}

struct ExportCommand: ProjectCommand {
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
  @Flag(help: "Replace the --out file if it exists (never the store itself).") var force = false

  @OptionGroup var waiting: StoreWaitOption

  func execute(_ project: ProjectConfig?) throws {
    let output = StandardOutput.blocks()
    var job = ExportJob(
      store: store, model: model, modelVersion: modelVersion, configuration: configuration, out: out, dates: dates,
      force: force
    ).reading(project)
    job.wait = waiting.wait
    try job.run(standardOutput: output.write)
    try output.flush()
  }

}

struct ImportCommand: ProjectCommand {
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
  @Option(help: "The store type: sqlite (the default), xml or binary.") var type: String = "sqlite"

  func execute(_ project: ProjectConfig?) throws {
    try show(
      ImportJob(
        file: file, model: model, modelVersion: modelVersion, out: out, configuration: configuration, type: type
      ).reading(project).run())
  }
}

struct CopyCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "copy",
    abstract: "Write a store as a store of another type: SQLite, XML or binary.",
    discussion: HelpText.reflow(
      """
      Core Data's migratePersistentStore(_:to:options:type:): every object, value and link, the metadata
      carried, in a new store of the same model version, read back and compared before it is put in
      place; the original is only read. Example: migrun copy Doc.storedata Doc.sqlite --model Doc.xcdatamodeld
      """))

  @Argument(help: "The store to copy (SQLite, XML or binary: told by its contents).") var store: String
  @Argument(help: "The store to write (must not exist).") var out: String
  @Option(help: "The type to write: sqlite, xml or binary.") var type: String = "sqlite"
  @Option(help: "A .xcdatamodeld, .xcdatamodel, .momd, .mom or SwiftData sources (default: model: in .migrun.yml).")
  var model: String?
  @Option(
    help: ArgumentHelp(
      "Leave an attribute's values out on purpose (repeatable; a refusal names the attribute).",
      valueName: "Entity.attribute"))
  var drop: [String] = []

  @OptionGroup var waiting: StoreWaitOption

  func execute(_ project: ProjectConfig?) throws {
    var job = CopyJob(store: store, out: out, type: type, model: model, drop: drop).reading(project)
    job.wait = waiting.wait
    try show(job.run())
  }
}

struct SalvageCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "salvage",
    abstract: "Write what a damaged store still holds as a new, clean store, with a report of what was saved.",
    discussion: HelpText.reflow(
      """
      Reads the file page by page without SQLite (every table's rows its trees still reach, then the
      leaves a broken tree no longer leads to), its metadata and model cache where they survive (else
      --model), and writes a new store of the same model version that check calls clean: keys naming no
      object cleared, join rows whose ends are gone removed, Z_MAX raised, rows of no entity set aside.
      The original's files are only read. Exit 0 when nothing was lost, 1 when something was.
      """))

  @Argument(help: "The damaged store.") var store: String
  @Option(help: "The new store to write (must not exist).") var out: String
  @Option(help: "A .xcdatamodeld, .xcdatamodel, .momd, .mom or SwiftData sources (when the store's own are lost).")
  var model: String?
  @Flag(help: "Keep to-one keys naming no object as they are (default: set to NULL, counted).") var keepDanglingKeys =
    false
  @Flag(help: "One JSON line (docs/json.md): a `salvage` event with the report.") var json = false

  @OptionGroup var waiting: StoreWaitOption

  func execute(_ project: ProjectConfig?) throws {
    var job = SalvageJob(store: store, out: out, model: model, json: json, keepDanglingKeys: keepDanglingKeys)
      .reading(project)
    job.wait = waiting.wait
    try show(job.run())
  }
}

extension StoreJSON.Dates: ExpressibleByArgument {}
