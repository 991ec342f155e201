import ArgumentParser
import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import MigrunTools

/// The options every migration command shares.
struct ChainOptions: ParsableArguments {
  @Option(
    help:
      "The model: a .xcdatamodeld (or compiled .momd) with its versions, SwiftData sources (a folder or .swift file: each VersionedSchema a version), or a store whose own model (Z_MODELCACHE) is the destination (default: model: in .migrun.yml)."
  )
  var model: String?
  @Option(
    help:
      "The model configuration the store was written for (its entities' tables, numbered among the whole model's); default: found from the store when its tables are exactly one configuration's."
  )
  var configuration: String?
  @Option(help: "The destination version (default: the current version).") var to: String?
  @Option(
    help:
      "Walk these versions one at a time, oldest first, comma-separated (default: a chain file in a policy folder, else Core Data's path: straight from the store's version to the destination)."
  )
  var chain: String?
  @Option(
    name: .customLong("policies"),
    help:
      "A folder of step scripts — Lua mapping files <From>-<To>.lua, or Xcode mapping models <From>-<To>.xcmappingmodel / .cdm — and Lua policies (repeatable)."
  )
  var policyFolders: [String] = []
  @Option(
    name: .customLong("mapping"),
    help:
      "An Xcode mapping model (.xcmappingmodel or .cdm) to run for the step between the versions it was made for (repeatable; found by its model paths or entity hashes, whatever its name; several for one step run one after another, in the order given)."
  )
  var mappingModels: [String] = []

  /// `--model`, else the project file's (`project`, as the command read it); neither is a usage error.
  func modelPath(_ project: ProjectConfig?) throws -> String {
    if let model { return model }
    if let model = project?.model { return model }
    throw ValidationError("give --model (or model: in \(ProjectConfig.fileName), found in this folder or above)")
  }

  /// What the migration jobs are given, from these options and the project file.
  func setup(_ project: ProjectConfig?, limits: LuaLimits = LuaLimits(), mergeRules: URL? = nil, readWait: Double = 0)
    throws -> MigrationSetup
  {
    // Each option given, else the project file's (read once by the command).
    var setup = MigrationSetup(
      model: try modelPath(project), flags: (model, configuration, to, chain), policyFolders: policyFolders,
      mappingModels: mappingModels, project: project)
    setup.limits = limits
    setup.mergeRules = mergeRules
    setup.readWait = readWait
    return setup
  }

  /// The jobs of these options (the model read once).
  func jobs(_ project: ProjectConfig?, limits: LuaLimits = LuaLimits(), mergeRules: URL? = nil, readWait: Double = 0)
    throws -> MigrationJobs
  {
    try MigrationJobs(setup(project, limits: limits, mergeRules: mergeRules, readWait: readWait))
  }
}

struct StatusCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Does a store need migrating? Exit 0 when it is at the destination version, 10 when it needs migrating.",
    discussion: "Reads the store's metadata only (no entity table), so it is cheap on any store.")

  @Argument(help: "The store, or several stores and folders (searched for Core Data stores).") var stores: [String]
  @OptionGroup var chain: ChainOptions
  @OptionGroup var fleet: FleetOptions
  @Flag(
    help:
      "JSON lines (docs/json.md): a `status` line per store {store, version (null when none matches), destination, needsMigration, path, reason}, and for several stores a `summary`; the exit code is the same."
  )
  var json = false

  @OptionGroup var waiting: StoreWaitOption

  var store: String { stores.first ?? "" }

  func validate() throws {
    guard !stores.isEmpty else { throw ValidationError("give a store (or several stores and folders)") }
  }

  func execute(_ project: ProjectConfig?) throws {
    if fleet.settings().isFleet(stores) {
      let status = try chain.jobs(project, readWait: waiting.wait).status(
        of: stores, fleet: fleet.settings(project), json: json)
      if status != 0 { throw ExitCode(status) }
      return
    }
    let status = try MigrationJobs.status(of: store, json: json) { try chain.jobs(project, readWait: waiting.wait) }
    if status != 0 { throw ExitCode(status) }
  }
}

struct PlanCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "plan",
    abstract: "Show the chain of steps that would migrate a store, with each step's entity mappings; runs nothing.")

  @Argument(help: "The store.") var store: String
  @OptionGroup var chain: ChainOptions
  @Flag(help: "One JSON line (docs/json.md): a `plan` event with the steps, paths, counts and drops.") var json = false

  func execute(_ project: ProjectConfig?) throws {
    let report = try chain.jobs(project).planReport(for: URL(fileURLWithPath: store))
    if json { return try JSONLines.emit("plan", encoding: report.json) }
    for line in report.lines { try StandardOutput.line(line) }
  }
}

struct DiffCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Show the mapping Core Data would infer between two model versions, or why there is none.")

  @Argument(help: "A .xcdatamodeld or .momd, or SwiftData sources (a folder or .swift file).") var modelArgument:
    String?
  @Option(help: "The model, as every other command takes it (instead of the argument).") var model: String?
  @Option(help: "The older version.") var from: String
  @Option(help: "The newer version.") var to: String
  @Flag(help: "One JSON line (docs/json.md): a `diff` event with the inferred mapping and what it drops.") var json =
    false
  @Flag(
    help:
      "Write a mapping file to start from, <From>-<To>.lua: the inferred mapping spelled out, what cannot be inferred a failing placeholder."
  )
  var lua = false
  @Option(help: ArgumentHelp("With --lua: the folder to write it in (default: the current folder).", valueName: "dir"))
  var out: String?

  func execute(_ project: ProjectConfig?) throws {
    try show(
      DiffJob(
        model: try modelPath(argument: modelArgument, option: model, project: project), from: from, to: to, json: json,
        lua: lua, out: out
      ).run())
  }
}

struct MigrateCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "migrate",
    abstract: "Migrate a store to the destination version, step by step, with progress.",
    discussion: HelpText.reflow(
      """
      Each step writes a new file beside the store; the original's files (with its -wal and -shm) are
      only read — a store whose -wal holds transactions is read through a snapshot — until the last
      step is complete and validated. Then the new store (in the original's journal mode) takes its
      place and the original's files are kept as NAME~.EXT (+ -wal/-shm and the support folder of
      external binary data, .NAME~_SUPPORT; unless --no-backup).
      Before any work: a store another process has open is refused (exit 11; --wait waits for it),
      and so is a file system with less free space than the working copies need (exit 12).
      Any failure leaves the original exactly as it was.
      Several stores and folders (searched for Core Data stores) run --jobs at a time, each with the
      same guarantees, one's failure never stopping the others; see docs/fleet.md.
      """))

  @Argument(help: "The store, or several stores and folders (searched for Core Data stores).") var stores: [String]
  @OptionGroup var chain: ChainOptions
  @OptionGroup var fleet: FleetOptions
  @OptionGroup(title: "Lua limits") var lua: LuaLimitOptions
  @Flag(help: "Run every step on scratch files, report, and delete them.") var dryRun = false
  @Flag(help: "Do not keep the original as NAME~.EXT.") var noBackup = false
  @Flag(
    help:
      "Refuse a step whose mapping leaves values behind (a removed attribute or entity that holds values), before it runs."
  )
  var noDrops = false
  @Flag(
    help:
      "Migrate a store that syncs through CloudKit even where the plan changes what CloudKit's schema does not allow (removed or renamed fields, new uniqueness constraints…); refused otherwise."
  )
  var allowCloudkitChanges = false
  @Flag(
    help:
      "Run every step object by object, as Core Data does: no DDL, no rows copied by SQL (to compare, or to rule the fast paths out)."
  )
  var objectsOnly = false
  @OptionGroup var storeWait: StoreWaitOption
  /// Seconds to wait for the store (none unless given).
  var wait: Double { storeWait.seconds ?? 0 }
  @Flag(
    help:
      "JSON lines on standard output (docs/json.md): `start`, `progress` and a `result` per store; for several stores a `summary`."
  ) var json = false
  @Option(
    help: ArgumentHelp(
      "Lua merge rules for uniqueness collisions in every step (a mapping file's own `merge` table comes first).",
      valueName: "file"))
  var mergeRules: String?
  @Option(
    name: .customLong("drop"),
    help: ArgumentHelp(
      "Drop on purpose a table, trigger or view of the store's own that a step cannot carry faithfully (repeatable; the refusal names them).",
      valueName: "name"))
  var drop: [String] = []
  @Flag(
    help:
      "Where a step removes an entity, delete persistent history's changes of its objects (Core Data's NSPersistentHistoryAllowPartialHistoryMigration) instead of refusing the step."
  )
  var partialHistory = false

  var store: String { stores.first ?? "" }

  func validate() throws {
    guard !stores.isEmpty else { throw ValidationError("give a store (or several stores and folders)") }
  }

  /// The migration options of this command.
  var options: StoreMigrator.Options {
    var options = StoreMigrator.Options(
      keepBackup: !noBackup, dryRun: dryRun, bulkCopy: !objectsOnly, ddl: !objectsOnly, wait: wait)
    options.drop = Set(drop)
    options.refuseDrops = noDrops
    options.allowCloudKitChanges = allowCloudkitChanges
    options.partialHistory = partialHistory
    return options
  }

  /// The jobs of this command: its model, scripts, limits and merge rules.
  func jobs(_ project: ProjectConfig?) throws -> MigrationJobs {
    try chain.jobs(
      project, limits: lua.limits(project), mergeRules: mergeRules.map { URL(fileURLWithPath: $0) }, readWait: wait)
  }

  func execute(_ project: ProjectConfig?) throws {
    if let mergeRules, !FileManager.default.fileExists(atPath: mergeRules) {
      throw CLIError(message: "--merge-rules: no such file \(URL(fileURLWithPath: mergeRules).path)")
    }
    if fleet.settings().isFleet(stores) {
      let status = try jobs(project).migrate(
        stores, fleet: fleet.settings(project), options: options, json: json, progress: TerminalLine.unless(json))
      if status != 0 { throw ExitCode(status) }
      return
    }
    try MigrationJobs.migrate(store, options: options, json: json, progress: TerminalLine.unless(json)) {
      try jobs(project)
    }
  }
}

/// A job's progress line on standard error, redrawn in place — on a terminal, never under --json;
/// shown from one thread at a time (a fleet's tally holds its lock while it shows).
final class TerminalLine: ProgressLine, @unchecked Sendable {
  private var drawn = false

  static func unless(_ json: Bool) -> TerminalLine? { !json && isatty(STDERR_FILENO) != 0 ? TerminalLine() : nil }

  func show(_ line: String) {
    StandardError.redraw(line)
    drawn = true
  }

  func finish() {
    if drawn { StandardError.redraw("") }
  }
}
