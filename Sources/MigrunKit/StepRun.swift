import Foundation
import MigrunContext
import MigrunModel
import MigrunStore

/// One step as it runs: what it reads, where it writes, and what was read of the source before the
/// work (what the step's checks hold the result to).
struct StepWork {
  let step: MigrationStep
  let source: SQLiteStore
  /// The file the step reads (the store, a snapshot of it, or an earlier step's result), and
  /// whether reads of it take SQLite's locks (`MigrationRun.readsWithLocks(_:)`).
  let current: URL
  let withLocks: Bool
  /// The new file the step writes, and its association table's file.
  let working: URL
  let associations: URL
  let mapping: StepMapping
  /// What the store holds beyond its model (``ForeignObjects``).
  let foreign: ForeignObjects
  let before: Conservation.Before
  let externalData: ExternalData
  let progress: (MigrationProgress) -> Void
}

/// One step of a run (``MigrationRun``): as DDL on a copy of the store (or on migrun's own file, in
/// place), or into a new file — rows copied, objects moved with the policies' hooks, or both — then
/// every count checked.
struct StepRun {
  let run: MigrationRun
  var store: URL { run.store }
  var plan: MigrationPlan { run.plan }
  var options: StoreMigrator.Options { run.options }
  var scripts: (any StepScripts)? { run.scripts }
  typealias State = MigrationRun.State

  /// Runs one step from `state.current`: as DDL on a copy (or on migrun's own file, in place), or
  /// into the new file `working`. Returns the step's result.
  func runStep(
    _ index: Int, _ step: MigrationStep, into working: URL, associations: URL, state: inout State
  ) throws -> URL {
    let source = try openSource(of: step, first: index == 0, state: &state)
    defer { try? source.close() }
    let stepMapping = try mapping(for: step)
    let foreign = try source.inspecting { store in try ForeignObjects.read(store, schema: source.schema) }
    if index == 0, foreign.syncsWithCloudKit, !options.allowCloudKitChanges {
      try plan.refuseCloudKitChanges()
    }
    // A DDL step on the store itself starts from a copy: made while the source is counted
    // (the copy is I/O, the counts CPU — two cores do both at once).
    let decision = try StepMethod.ddlDecision(stepMapping, store: source, options: options)
    var copying: StoreCopy?
    if case .ddl = decision, state.current == store { copying = StoreCopy(store, to: working) }
    // Never leave the copy running past this step, whatever fails (its file is ours to remove).
    defer { try? copying?.wait() }
    let work = StepWork(
      step: step, source: source, current: state.current, withLocks: run.readsWithLocks(state.current),
      working: working,
      associations: associations, mapping: stepMapping, foreign: foreign,
      before: try Conservation.before(stepMapping.mapping, source: source, policies: Set(stepMapping.policies.keys)),
      externalData: state.externalData, progress: progress(of: step))
    let drops = try drops(of: stepMapping, in: source, step: step)
    var done: StoreMigrator.Report.Step
    var result = working
    if case .ddl(var edit) = decision {
      // Read here, while the copy is made, not inside the edit's transaction after it.
      edit.staleEntityTables = try Set(
        edit.soleEntityTables.filter { try source.holdsRows(in: $0.table, ofAnotherEntityThan: $0.number) }
          .map { $0.table.uppercased() })
      try source.close()
      result = try ddlTarget(copying: copying, working: working, state: &state)
      done = try runDDL(edit, on: result, work)
    } else {
      done = try writeNewFile(work)
    }
    done.drops = drops
    if case .copyRows(let why) = decision { done.reason = why }
    state.report.steps.append(done)
    return result
  }

  /// The run's progress, each report naming `step`.
  private func progress(of step: MigrationStep) -> (MigrationProgress) -> Void {
    { [progress = run.progress] in
      var reported = $0
      reported.step = step.name
      progress?(reported)
    }
  }

  /// The step's mapping: its inferred mapping (with the Swift policies given for it), or what the
  /// scripting layer loads from its files.
  private func mapping(for step: MigrationStep) throws -> StepMapping {
    switch step.kind {
    case .inferred:
      guard let mapping = step.inferredMapping else {
        throw MigrationError(.notInferable, step: step.name, reason: "no inferred mapping")
      }
      return StepMapping(mapping: mapping, policies: run.policies?(step) ?? [:])
    case .scripted(let files):
      guard let scripts else {
        let names = files.map(\.lastPathComponent).joined(separator: ", ")
        throw MigrationError(.badMapping, step: step.name, reason: "\(names) needs the Lua policy runtime")
      }
      return try scripts.mapping(for: step, files: files)
    }
  }

  /// The step's source, read-only, with the store's external files; for the first step, the files
  /// the original refers to are counted (those it never had are carried as references, reported).
  private func openSource(of step: MigrationStep, first: Bool, state: inout State) throws -> SQLiteStore {
    let source = try SQLiteStore(
      url: state.current, model: step.source, access: .readOnly, fastWrites: false, session: run.session)
    source.externalData = state.externalData
    if first {
      state.referencedBefore = Set(try source.externalReferences().map(\.file))
      // Behind a link no file is read, and none would be found: refused by name, never carried as
      // "files the original never had".
      if !state.referencedBefore.isEmpty, let link = state.externalData.linkOnTheWay(to: nil) {
        throw StoreError(
          .badValue, file: store.path,
          reason: "\(link.path) is a symbolic link: values kept outside the store are read only from plain files in "
            + "the store's own support folder, never through a link; the store is unchanged")
      }
      state.externalData.carriedMissing = state.referencedBefore.subtracting(state.externalData.files())
      source.externalData = state.externalData
    }
    return source
  }

  /// The file a DDL step edits in place (its own tables stay; what was dropped on purpose goes):
  /// the copy of the store, once made — its pages go to the disk now, beside the edit, so the
  /// swap's fsync has only the edited pages left to write — or migrun's own file (a snapshot or an
  /// earlier step's result), where it is.
  private func ddlTarget(copying: StoreCopy?, working: URL, state: inout State) throws -> URL {
    guard let copying else { return state.current }
    try copying.wait()
    if let flush = copying.flush { state.flushing.append(flush) }
    return working
  }

  /// What the step's mapping leaves behind that holds values in `source`; refused here with
  /// `StoreMigrator.Options.refuseDrops`.
  private func drops(of stepMapping: StepMapping, in source: SQLiteStore, step: MigrationStep) throws
    -> [DroppedProperty]
  {
    let drops = try source.counting(stepMapping.mapping.drops(scripted: Set(stepMapping.policies.keys)))
      .filter { ($0.values ?? 0) > 0 }
    if options.refuseDrops, case let certain = drops.filter(\.isCertain), !certain.isEmpty {
      throw MigrationError(
        .wouldDrop, step: step.name,
        reason:
          "the step's mapping leaves values behind: \(certain.map(\.description).joined(separator: "; ")). StoreMigrator.Options.refuseDrops refuses it: map them in a mapping file, or migrate without StoreMigrator.Options.refuseDrops to drop them on purpose; the store is unchanged"
      )
    }
    return drops
  }

  /// A step that writes a new file: what the store holds beyond its model carried (or refused
  /// now, by name), the objects moved as rows, as objects or both, then every count checked.
  private func writeNewFile(_ work: StepWork) throws -> StoreMigrator.Report.Step {
    let (step, source, foreign) = (work.step, work.source, work.foreign)
    let numbers = work.mapping.mapping.entityNumbers(from: source.schema)
    if let refusal = try source.inspecting({ store in
      try foreign.refusal(store, numbers: numbers, dropped: options.drop, partialHistory: options.partialHistory)
    }) {
      throw MigrationError(.wouldDrop, step: step.name, reason: refusal)
    }
    // CloudKit's objects renumbered: the store is marked as Core Data marks it (see ForeignObjects).
    let cloudKit = try source.inspecting { store in
      try foreign.cloudKitRenumbering(store, numbers: numbers, dropped: options.drop)
    }
    let destination = try createDestination(work, zoneFetch: !cloudKit.isEmpty)
    let (mapping, policies) = (work.mapping.mapping, work.mapping.policies)
    let manager = try MigrationManager(
      mapping: mapping, source: source, destination: destination, associationsFile: work.associations,
      policies: policies)
    manager.progress = work.progress
    manager.mergeRules = try work.mapping.mergeRules + (scripts?.mergeRules(for: step) ?? [])
    let method = try moveObjects(work, into: destination, manager: manager)
    let history =
      foreign.isEmpty ? HistoryRewritten() : try carryForeign(work, into: destination, numbers: numbers)
    try destination.installDerivedAttributes()
    try options.probe?.stepWritten(destination, by: method)
    let carriedFiles = try destination.checkExternalReferences()
    let conserved = try Conservation.check(
      mapping, before: work.before, destination: destination, policies: Set(policies.keys),
      merged: manager.mergedCount)
    var done = StoreMigrator.Report.Step(
      name: step.name, kind: step.kind, counts: try destination.entityCounts(known: conserved.objects), method: method)
    done.mappings = conserved.mappings
    done.merged = manager.mergedCount
    done.cloudKit = cloudKit
    done.history = history
    done.damage = try Conservation.damage(
      mapping, before: work.before, destination: destination, carriedFiles: carriedFiles)
    try destination.close()
    return done
  }

  /// The step's new file, of the destination version, with the source's metadata (marked for
  /// CloudKit's zone fetch when the step renumbered its objects); indexes and triggers come later.
  private func createDestination(_ work: StepWork, zoneFetch: Bool) throws -> SQLiteStore {
    var metadata = work.source.metadata.describing(work.step.destination)
    if zoneFetch { metadata.otherKeys[ForeignObjects.zoneFetchKey] = .boolean(true) }
    let destination = try SQLiteStore.create(
      at: work.working, model: work.step.destination, metadata: metadata, fastWrites: true, withIndexes: false,
      withTriggers: false)
    destination.externalData = work.externalData
    return destination
  }

  /// What the store holds beyond its model (CloudKit's tables, persistent history, its own tables),
  /// carried into the destination, renumbered where the step renumbers entities.
  private func carryForeign(_ work: StepWork, into destination: SQLiteStore, numbers: [Int: Int]) throws
    -> HistoryRewritten
  {
    var history = HistoryRewritten()
    let path = SQLiteStore.readOnlyPath(work.current, isHeld: work.withLocks) ?? work.current.path
    let rewrite = HistoryRewrite(
      mapping: work.mapping.mapping, source: work.source.schema, destination: destination.schema)
    try destination.editing(attaching: work.current, at: path, readWait: options.wait) { store in
      try store.inTransaction {
        history = try work.foreign.carry(
          store, numbers: numbers, dropped: options.drop, history: rewrite, partialHistory: options.partialHistory)
      }
    }
    return history
  }

  /// Rows copied where the mappings allow it — all of them, or (mixed) some, the object path doing
  /// the rest after them — else object by object. Returns how the step ran.
  private func moveObjects(_ work: StepWork, into destination: SQLiteStore, manager: MigrationManager) throws
    -> StepMethod
  {
    let mapping = manager.mapping
    let bulk =
      options.bulkCopy
      ? try BulkCopy.decide(
        mapping: mapping, sourceSchema: work.source.schema, policies: manager.policies, manager: manager,
        mixed: options.mixed && mapping.passes.isEmpty
      ).copy
      : nil
    guard let bulk else {
      try destination.createIndexes()
      try manager.migrate()
      return .objects
    }
    try bulk.run(
      from: work.current, isHeld: work.withLocks, readWait: options.wait, into: destination, progress: work.progress)
    guard !bulk.objectMappings.isEmpty else {
      try manager.validate()
      return .copyRows
    }
    manager.copiedMappings = mapping.entityMappings.filter { mapping in
      bulk.copies.contains { $0.mapping.name == mapping.name }
    }
    try manager.migrate()
    return .mixed
  }

  /// A DDL step on `working` (migrun's own copy): the edit, then the destination's rules checked as
  /// after any other step.
  private func runDDL(_ edit: DDLStep, on working: URL, _ work: StepWork) throws -> StoreMigrator.Report.Step {
    let step = work.step
    let history = try edit.run(
      on: working, metadata: work.source.metadata.describing(step.destination), progress: work.progress,
      whileEditing: options.probe?.stepEditing)
    let destination = try SQLiteStore(url: working, model: step.destination, access: .readWrite, fastWrites: true)
    destination.externalData = work.externalData
    defer { try? destination.close() }
    if !options.drop.isEmpty {
      try destination.editing { store in try work.foreign.drop(store, options.drop) }
    }
    try MigrationManager.checkRules(of: destination)
    work.progress(
      MigrationProgress(step: step.name, stage: .validation, mapping: "model rules", done: 1, total: 1))
    try options.probe?.stepWritten(destination, by: .ddl)
    let carriedFiles = try destination.checkExternalReferences()
    // The objects conservation established (the tables the edit did not touch hold what their
    // source counted) are the report's: not counted again.
    let mapping = work.mapping.mapping
    let conserved = try Conservation.check(
      mapping, before: work.before, destination: destination, policies: [], merged: 0, inPlace: true,
      untouched: edit.untouchedTables)
    var done = StoreMigrator.Report.Step(
      name: step.name, kind: step.kind, counts: try destination.entityCounts(known: conserved.objects), method: .ddl)
    done.history = history
    done.mappings = conserved.mappings
    done.damage = try Conservation.damage(
      mapping, before: work.before, destination: destination, carriedFiles: carriedFiles, inPlace: true)
    return done
  }
}
