import Foundation
import MigrunStore

/// How a step ran (``MigrationReport/Step/method``).
public enum StepMethod: String, Sendable, Hashable, CaseIterable {
  /// DDL on a copy of the store: no row copied (`DDLStep`).
  case ddl = "DDL"
  /// Rows copied by `INSERT … SELECT` (or a row loop through a Lua transform) (`BulkCopy`).
  case copyRows = "copy rows"
  /// Object by object, with the policies' hooks.
  case objects = "object by object"
  /// The entity mappings that can be copied as rows are, the others run object by object after them.
  case mixed = "rows, then objects"
}

extension StepMethod {
  /// How `step` runs with `stepMapping` (ahead of running it, as `migrun plan` shows): DDL where the
  /// step's edits allow it, else rows copied, else object by object — with the reason it is not
  /// DDL. `store` is the step's source store when it is the store itself (the first step); later
  /// steps read a store migrun wrote, laid out as a new store of their source version.
  package static func planned(
    for step: MigrationStep, mapping stepMapping: StepMapping, store: SQLiteStore?,
    options: StoreMigrator.Options = StoreMigrator.Options()
  ) throws -> (method: StepMethod, reason: String?) {
    let reason: String
    switch try ddlDecision(stepMapping, store: store, options: options) {
    case .ddl: return (.ddl, nil)
    case .copyRows(let why): reason = why
    }
    // (Policies that only compute attributes run as a row loop: that is known once their script runs.)
    let schema = store?.schema ?? StoreSchema(model: step.source)
    guard options.bulkCopy else { return (.objects, reason) }
    switch try BulkCopy.decide(
      mapping: stepMapping.mapping, sourceSchema: schema, policies: stepMapping.policies,
      // Rows first, objects after would run a later pass's copies before an earlier pass's hooks.
      mixed: options.mixed && stepMapping.mapping.passes.isEmpty)
    {
    case .rows(let bulk): return (bulk.objectMappings.isEmpty ? .copyRows : .mixed, reason)
    case .objects(let why): return (.objects, why == reason ? reason : "\(reason); not rows: \(why)")
    }
  }

  /// Whether a step runs as DDL, or why not — the one decision a run and ``planned(for:mapping:store:options:)`` share.
  /// `store` nil: a store migrun wrote (see ``DDLStep/decide(mapping:)``).
  static func ddlDecision(_ stepMapping: StepMapping, store: SQLiteStore?, options: StoreMigrator.Options) throws
    -> DDLStep.Decision
  {
    guard options.ddl else { return .copyRows("DDL is turned off") }
    guard stepMapping.policies.isEmpty else {
      return .copyRows("Lua policies run per object, or per row where they only compute attributes")
    }
    guard let store else { return DDLStep.decide(mapping: stepMapping.mapping) }
    return try DDLStep.decide(mapping: stepMapping.mapping, store: store)
  }
}
