import Foundation

/// Runs a plan on a store file: each step writes a new file beside the store; the original is
/// untouched until the last step is complete and validated, then swapped in atomically (the
/// original kept as `NAME~.EXT` unless told otherwise). Any failure removes the working files and
/// leaves the original exactly as it was.
public final class StoreMigrator {
  public struct Options: Sendable {
    public var keepBackup = true
    /// Run every step on scratch files, report, and delete them.
    public var dryRun = false
    /// Run steps as bulk SQL copies where their mappings allow it (inferred steps, and scripted
    /// ones whose policies only compute attributes); else object by object. Off only to compare
    /// the two paths.
    public var bulkCopy = true

    public init(keepBackup: Bool = true, dryRun: Bool = false, bulkCopy: Bool = true) {
      self.keepBackup = keepBackup
      self.dryRun = dryRun
      self.bulkCopy = bulkCopy
    }
  }

  public struct Report: Sendable {
    public struct Step: Sendable {
      public let name: String
      public let kind: MigrationStep.Kind
      /// Destination entity → objects after the step.
      public let counts: [String: Int]
      /// Whether the step ran as a bulk SQL copy (see ``Options/bulkCopy``).
      public let bulkCopy: Bool
      /// Destination objects folded into another by a merge rule (uniqueness collisions).
      public var merged = 0
    }

    public var steps: [Step] = []
    public var backup: URL?
  }

  public let store: URL
  public let plan: MigrationPlan
  public let options: Options
  public var progress: ((MigrationProgress) -> Void)?
  /// Supplies a scripted step: mapping, policies and merge rules (MigrunScripting's Lua runtime).
  public var scriptedStep: ((MigrationStep) throws -> StepMapping)?
  /// Merge rules for every step, after the step's own (a `--merge-rules` file).
  public var mergeRules: ((MigrationStep) throws -> [any MigrationMergeRule])?

  public init(store: URL, plan: MigrationPlan, options: Options = Options()) {
    self.store = store
    self.plan = plan
    self.options = options
  }

  /// Working files of earlier runs that were killed (removed by ``run()``).
  public static func staleFiles(beside store: URL) -> [URL] {
    let folder = store.deletingLastPathComponent()
    let prefix = ".\(store.lastPathComponent).migrun-"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { $0.hasPrefix(prefix) }.map { folder.appendingPathComponent($0) }
  }

  @discardableResult
  public func run() throws -> Report {
    for stale in Self.staleFiles(beside: store) { try? FileManager.default.removeItem(at: stale) }
    var report = Report()
    var created: [URL] = []
    defer { for file in created { StoreFiles.remove(file) } }
    var current = store
    for (index, step) in plan.steps.enumerated() {
      let working = scratch("step\(index + 1)")
      let associations = scratch("assoc\(index + 1)")
      created += [working, associations]
      do {
        let stepProgress: (MigrationProgress) -> Void = { [progress] in
          var reported = $0
          reported.step = step.name
          progress?(reported)
        }
        let source = try SQLiteStore(url: current, model: step.source, access: .readOnly)
        defer { try? source.close() }
        let destination = try SQLiteStore.create(
          at: working, model: step.destination, metadata: source.metadata.describing(step.destination),
          fastWrites: true, withIndexes: false)
        let stepMapping = try mapping(for: step)
        let (mapping, policies) = (stepMapping.mapping, stepMapping.policies)
        let manager = try MigrationManager(
          mapping: mapping, source: source, destination: destination, associationsFile: associations,
          policies: policies)
        manager.progress = stepProgress
        manager.mergeRules = try stepMapping.mergeRules + (mergeRules?(step) ?? [])
        let bulk =
          options.bulkCopy
          ? try BulkCopy(mapping: mapping, sourceSchema: source.schema, policies: policies, manager: manager) : nil
        if let bulk {
          try bulk.run(from: current, into: destination, progress: stepProgress)
          try manager.validate()
        } else {
          try destination.createIndexes()
          try manager.migrate()
        }
        var done = Report.Step(
          name: step.name, kind: step.kind, counts: try destination.entityCounts(), bulkCopy: bulk != nil)
        done.merged = manager.mergedCount
        report.steps.append(done)
        try destination.close()
      } catch let error as MigrationError {
        throw error.inStep(step.name)
      } catch let error as StoreError {
        throw MigrationError(.store, step: step.name, reason: error.description)
      } catch {
        throw MigrationError(.policy, step: step.name, reason: "\(error)")
      }
      if current != store { StoreFiles.remove(current) }
      current = working
    }
    guard current != store, !options.dryRun else { return report }
    do {
      try StoreFiles.sync(current)
      report.backup = try StoreFiles.replace(store, with: current, keepBackup: options.keepBackup)
    } catch {
      throw MigrationError(.store, reason: "the migrated store is complete but could not be put in place: \(error)")
    }
    return report
  }

  private func mapping(for step: MigrationStep) throws -> StepMapping {
    switch step.kind {
    case .inferred:
      guard let mapping = step.inferredMapping else {
        throw MigrationError(.notInferable, step: step.name, reason: "no inferred mapping")
      }
      return StepMapping(mapping: mapping)
    case .scripted(let file):
      guard let scriptedStep else {
        throw MigrationError(
          .badMapping, step: step.name, reason: "\(file.lastPathComponent) needs the Lua policy runtime")
      }
      return try scriptedStep(step)
    }
  }

  private func scratch(_ label: String) -> URL {
    store.deletingLastPathComponent().appendingPathComponent(
      ".\(store.lastPathComponent).migrun-\(ProcessInfo.processInfo.processIdentifier)-\(label)")
  }
}

/// What one step runs: its mapping model, the policies of its entity mappings and its merge rules
/// (a Lua mapping file gives all three).
public struct StepMapping {
  public var mapping: MappingModel
  public var policies: [String: any EntityMigrationPolicy]
  public var mergeRules: [any MigrationMergeRule]

  public init(
    mapping: MappingModel, policies: [String: any EntityMigrationPolicy] = [:],
    mergeRules: [any MigrationMergeRule] = []
  ) {
    self.mapping = mapping
    self.policies = policies
    self.mergeRules = mergeRules
  }
}
