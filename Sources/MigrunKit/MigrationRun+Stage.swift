import Foundation
import MigrunContext
import MigrunModel
import MigrunStore

/// A step's custom stage (Core Data's `NSCustomMigrationStage`, SwiftData's `MigrationStage.custom`)
/// around the step: `willMigrate` on its source, `didMigrate` on its result.
extension MigrationRun {
  /// ``StepRun/runStep(_:_:into:associations:state:)`` inside the step's custom stage, if it has one:
  /// `willMigrate` before it (on a copy when the step would read the original), `didMigrate` on its
  /// result; what each saved goes in the step's report.
  func runStaged(
    _ index: Int, _ step: MigrationStep, into working: URL, associations: URL, state: inout State
  ) throws -> URL {
    guard let handlers = try scripts?.stage(for: step) else {
      return try StepRun(run: self).runStep(index, step, into: working, associations: associations, state: &state)
    }
    var report = StageReport()
    if handlers.hooks.contains(.willMigrate) {
      if state.current == store {
        let copy = try scratch("stage\(index + 1)")
        state.created.append(copy)
        try withSpaceReported { try StoreFiles.cloneOrCopy(store, to: copy) }
        state.current = copy
      }
      report.willMigrate = try runStage(
        handlers, .willMigrate, on: state.current, model: step.source, step: step, state: state)
    }
    let result = try StepRun(run: self).runStep(index, step, into: working, associations: associations, state: &state)
    if handlers.hooks.contains(.didMigrate) {
      report.didMigrate = try runStage(
        handlers, .didMigrate, on: result, model: step.destination, step: step, state: state)
    }
    if !state.report.steps.isEmpty { state.report.steps[state.report.steps.count - 1].stage = report }
    return result
  }

  /// Runs a stage handler on a context over `file` (migrun's own working file), which must save
  /// what it changes: changes left unsaved are an error, not dropped.
  private func runStage(
    _ handlers: any MigrationStageHandlers, _ hook: StageHook, on file: URL, model: ObjectModel, step: MigrationStep,
    state: State
  ) throws -> StageChanges {
    guard file != store else {
      throw MigrationError(.store, step: step.name, reason: "internal: a stage would write the original store")
    }
    let working = try SQLiteStore(url: file, model: model, access: .readWrite)
    working.externalData = state.externalData
    defer { try? working.close() }
    // migrun's own file, fsynced whole before the swap: the stage's saves need not wait for the disk.
    try working.deferSyncToTheEnd()
    let context = StoreCoordinator(store: working).newContext()
    // A store with persistent history records the stage's saves as Core Data's staged migration
    // does, under these names (CloudKit's mirror exports them like any other change).
    context.transactionAuthor = "migrun"
    context.name = "\(step.name) \(hook.rawValue)"
    let changes = try handlers.run(hook, on: context, step: step)
    guard !context.hasChanges else {
      throw MigrationError(
        .policy, step: step.name,
        reason: "\(hook.rawValue) left changes unsaved (\(context.insertedObjects.count) inserted, "
          + "\(context.updatedObjects.count) changed, \(context.deletedObjects.count) deleted): save them (ctx:save()) or undo them"
      )
    }
    return changes
  }

}
