import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

extension MigrationJobs {
  /// What `plan` shows for `store`: the chain, each step's method and mappings with the objects they
  /// take, what each step drops, custom stages and unused step files. Every script and stage is loaded,
  /// so a broken file is found before anything runs.
  package func planReport(for store: URL) throws -> PlanReport {
    try withSQLite(session(of: store), for: "plan") { sqlite in try planReport(for: sqlite, named: store) }
  }

  /// The report for the SQLite store of `session` (a working copy of `url`'s objects, or `url`
  /// itself), read through the session; the step files are loaded once, for the plan and the report.
  private func planReport(for session: StoreSession, named url: URL) throws -> PlanReport {
    let lua = scripts.luaScripts
    let plan = try sqlitePlan(for: session, lua: lua)
    let source = try SQLiteStore(
      url: session.url, model: try plan.steps.first?.source ?? bundle.model(named: plan.sourceVersion),
      access: .readOnly, fastWrites: false, session: session)
    defer { try? source.close() }
    let counts = try source.entityCounts()
    // A scripted step shows its script's mapping; loading it also checks the file before anything runs.
    var loaded: [StepMapping] = []
    var methods: [(method: StepMethod, reason: String?)] = []
    var drops: [[DroppedProperty]] = []
    // Custom stages: loaded, so a broken file is found before anything runs.
    let stages = try plan.steps.map { try LuaStage.find(for: $0, in: setup.policyFolders, limits: setup.limits) }
    for (index, step) in plan.steps.enumerated() {
      let stepMapping: StepMapping
      if case .scripted(let files) = step.kind {
        stepMapping = try lua.mapping(for: step, files: files)
      } else {
        guard let inferred = step.inferredMapping else { throw ToolError(message: "\(step.name): no inferred mapping") }
        stepMapping = StepMapping(mapping: inferred)
      }
      loaded.append(stepMapping)
      // What the step leaves behind: counted in the store for the first step; later steps' sources
      // do not exist yet, so every property they drop is listed.
      let stepDrops = stepMapping.mapping.drops(scripted: Set(stepMapping.policies.keys))
      drops.append(index == 0 ? try source.counting(stepDrops).filter { ($0.values ?? 0) > 0 } : stepDrops)
      methods.append(
        try StepMethod.planned(for: step, mapping: stepMapping, store: index == 0 ? source : nil))
    }
    return PlanReport(
      store: url, plan: plan, counts: counts, stepMappings: loaded, methods: methods, drops: drops, stages: stages,
      unused: unusedStepFiles(of: plan), own: try source.ownObjectsSummary())
  }
}

/// `plan`'s report: its lines of text and its `--json` line.
package struct PlanReport {
  let store: URL
  let plan: MigrationPlan
  let counts: [String: Int]
  /// Each step's mapping and policies, as loaded for the plan (step files under the job's limits):
  /// what `review` shows of a step is read from these, never loaded again.
  let stepMappings: [StepMapping]
  let methods: [(method: StepMethod, reason: String?)]
  let drops: [[DroppedProperty]]
  let stages: [LuaStage?]
  let unused: [ScriptedStep.UnusedStepFile]
  /// The store's own tables, triggers and views (``SQLiteStore/ownObjectsSummary()``).
  let own: [String]

  var mappings: [[EntityMapping]] { stepMappings.map(\.mapping.entityMappings) }
  var objects: [[String: Int]] { Self.objectCounts(mappings, store: counts) }

  /// The `plan` event (docs/json.md), encoded.
  package var json: PlanJSON { PlanJSON(report: self) }

  /// The lines `plan` prints.
  package var lines: [String] {
    let url = store
    let objects = objects
    var out: [String] = []
    out.append(
      "Store   \(url.lastPathComponent) at \(plan.sourceVersion) (\(plural(counts.values.reduce(0, +), "object")))")
    out.append("Target  \(plan.destinationVersion)")
    out.append("Path    \(plan.rule)")
    for line in own { out.append("Own     \(line)") }
    // A store that syncs through CloudKit: what the plan changes that CloudKit does not allow.
    if own.contains(where: { $0.hasPrefix("table ANSCK") }) {
      for finding in plan.cloudKitFindings {
        out.append("CloudKit \(finding) — migrate refuses it unless --allow-cloudkit-changes")
      }
    }
    if !plan.needsMigration { out.append("Nothing to do: the store is at the destination version.") }
    for (index, step) in plan.steps.enumerated() {
      switch step.kind {
      case .inferred: out.append("Step \(index + 1)  \(step.name)  inferred")
      case .scripted(let files) where files.count > 1:
        out.append(
          "Step \(index + 1)  \(step.name)  scripted in \(files.count) passes, one mapping model after another:")
        for (pass, mapping) in zip(files, stepMappings[index].mapping.entityMappingsByPass) {
          out.append("        pass: \(pass.path) (\(mapping.map(\.name).joined(separator: ", ")))")
        }
      case .scripted(let files): out.append("Step \(index + 1)  \(step.name)  scripted (\(files.first?.path ?? ""))")
      }
      if let stage = stages[index] {
        out.append("        custom stage \(stage.url.path): \(stage.hookNames.joined(separator: ", "))")
      }
      let (method, reason) = methods[index]
      let why = reason.map { " (not DDL: \($0))" } ?? ""
      switch method {
      case .ddl: out.append("        runs as DDL on a copy of the store: no row copied")
      case .copyRows: out.append("        copies rows by SQL\(why)")
      case .objects: out.append("        runs object by object\(why)")
      case .mixed: out.append("        copies the rows it can by SQL, then the rest object by object\(why)")
      }
      for mapping in mappings[index] {
        let count = objects[index][mapping.name]
        let objects =
          mapping.sourceEntity == nil
          ? "new objects only" : count.map { "\(index == 0 ? "" : "~")\($0) object\($0 == 1 ? "" : "s")" } ?? ""
        out.append(
          "          \(padded(mapping.name, 32)) \(padded(mapping.kind.rawValue, 10)) \(objects)"
        )
        let changes = PlanReport.changes(mapping)
        if !changes.isEmpty { out.append("            \(changes.joined(separator: "; "))") }
      }
      for drop in drops[index] { out.append("        drops \(drop)") }
    }
    if plan.steps.count > 1 {
      out.append(
        "(~: what the step before hands on, one object per source object; a script's hooks may make more or fewer)")
    }
    for file in unused { out.append("Unused  \(file.file.path): \(file.reason)") }
    return out
  }

  package static func changes(_ mapping: EntityMapping) -> [String] {
    var lines: [String] = []
    for (name, source) in mapping.attributes.sorted(by: { $0.key < $1.key }) {
      switch source {
      case .property(let origin) where origin == name: continue
      default: lines.append("\(name) ← \(source)")
      }
    }
    for (name, origin) in mapping.relationships.sorted(by: { $0.key < $1.key }) where origin != name {
      lines.append("\(name) ← \(origin)")
    }
    return lines
  }

  /// Per step, the objects each entity mapping takes: the store's counts for the first step, then
  /// what the mappings of the step before hand on (one destination object per source object — what
  /// the default policy makes; hooks may differ, so these are estimates). Entities only added by
  /// scripts have no count.
  static func objectCounts(_ mappings: [[EntityMapping]], store counts: [String: Int]) -> [[String: Int]] {
    var current: [String: Int] = counts
    var known = Set(counts.keys)
    var result: [[String: Int]] = []
    for stepMappings in mappings {
      var taken: [String: Int] = [:]
      var next: [String: Int] = [:]
      var nextKnown: Set<String> = []
      for mapping in stepMappings {
        guard let source = mapping.sourceEntity, known.contains(source) || current[source] != nil else { continue }
        let count = current[source] ?? 0
        taken[mapping.name] = count
        if let destination = mapping.destinationEntity, mapping.kind != .remove {
          next[destination, default: 0] += count
          nextKnown.insert(destination)
        }
      }
      result.append(taken)
      current = next
      known = nextKnown
    }
    return result
  }

}

/// `plan --json`'s line: the path, the store's objects, each step's method, entity mappings with the
/// objects they take, drops and custom stage, and the step files the plan leaves unused — every key
/// present, null where empty.
package struct PlanJSON: Encodable {
  let report: PlanReport

  private enum Keys: String, CodingKey { case source, destination, rule, objects, steps, unusedStepFiles }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    let plan = report.plan
    try container.encode(plan.sourceVersion, forKey: .source)
    try container.encode(plan.destinationVersion, forKey: .destination)
    try container.encode(plan.rule.name, forKey: .rule)
    try container.encode(report.counts, forKey: .objects)
    let objects = report.objects
    try container.encode(
      plan.steps.indices.map { StepJSON(report: report, index: $0, objects: objects[$0]) }, forKey: .steps)
    try container.encode(report.unused.map { ["file": $0.file.path, "reason": $0.reason] }, forKey: .unusedStepFiles)
  }

  private struct StepJSON: Encodable {
    let report: PlanReport
    let index: Int
    let objects: [String: Int]

    private enum Keys: String, CodingKey {
      case from, to, mappings, method, notDDLBecause, objectsEstimated, kind, script, passes, dropped, stage
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Keys.self)
      let step = report.plan.steps[index]
      try container.encode(step.from, forKey: .from)
      try container.encode(step.to, forKey: .to)
      try container.encode(
        report.mappings[index].map { MappingJSON(mapping: $0, objects: objects[$0.name]) }, forKey: .mappings)
      try container.encode(report.methods[index].method.rawValue, forKey: .method)
      try container.encode(report.methods[index].reason, forKey: .notDDLBecause)
      try container.encode(index > 0, forKey: .objectsEstimated)
      switch step.kind {
      case .inferred: try container.encode("inferred", forKey: .kind)
      case .scripted(let files):
        try container.encode("scripted", forKey: .kind)
        try container.encode(files.first?.path, forKey: .script)
        if files.count > 1 { try container.encode(files.map(\.path), forKey: .passes) }
      }
      try container.encode(report.drops[index].map(DroppedJSON.init), forKey: .dropped)
      try container.encode(
        report.stages[index].map { StageFile(file: $0.url.path, hooks: $0.hookNames) }, forKey: .stage)
    }
  }

  private struct StageFile: Encodable {
    let file: String
    let hooks: [String]
  }
}

/// An entity mapping in `plan` and `diff` (docs/json.md), with the objects it takes in a plan.
package struct MappingJSON: Encodable {
  let mapping: EntityMapping
  /// nil in `diff` (no key); in a plan, the count or null.
  let objects: Int??

  package init(mapping: EntityMapping, objects: Int?? = nil) {
    self.mapping = mapping
    self.objects = objects
  }

  private enum Keys: String, CodingKey { case name, kind, source, destination, attributes, relationships, objects }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(mapping.name, forKey: .name)
    try container.encode(mapping.kind.rawValue, forKey: .kind)
    try container.encode(mapping.sourceEntity, forKey: .source)
    try container.encode(mapping.destinationEntity, forKey: .destination)
    try container.encode(mapping.attributes.mapValues(\.description), forKey: .attributes)
    try container.encode(mapping.relationships, forKey: .relationships)
    if let objects { try container.encode(objects, forKey: .objects) }
  }
}
