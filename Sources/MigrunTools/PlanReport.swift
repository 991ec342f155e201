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
    let url = store
    let plan = try plan(for: store)
    let source = try SQLiteStore(
      url: url, model: try plan.steps.first?.source ?? bundle.model(named: plan.sourceVersion))
    defer { try? source.close() }
    let counts = try source.entityCounts()
    // A scripted step shows its script's mapping; loading it also checks the file before anything runs.
    var mappings: [[EntityMapping]] = []
    var methods: [(method: StepMethod, reason: String?)] = []
    var drops: [[DroppedProperty]] = []
    // Custom stages: loaded, so a broken file is found before anything runs.
    let stages = try plan.steps.map { try LuaStage.find(for: $0, in: setup.policyFolders) }
    for (index, step) in plan.steps.enumerated() {
      let stepMapping: StepMapping
      if case .scripted(let file) = step.kind {
        stepMapping = try ScriptedStep.load(step, file: file, policyFolders: setup.policyFolders)
      } else {
        guard let inferred = step.inferredMapping else { throw ToolError(message: "\(step.name): no inferred mapping") }
        stepMapping = StepMapping(mapping: inferred)
      }
      mappings.append(stepMapping.mapping.entityMappings)
      // What the step leaves behind: counted in the store for the first step; later steps' sources
      // do not exist yet, so every property they drop is listed.
      let stepDrops = stepMapping.mapping.drops(scripted: Set(stepMapping.policies.keys))
      drops.append(index == 0 ? try source.counting(stepDrops).filter { ($0.values ?? 0) > 0 } : stepDrops)
      methods.append(
        try StoreMigrator.method(of: step, mapping: stepMapping, store: index == 0 ? source : nil))
    }
    return PlanReport(
      store: url, plan: plan, counts: counts, mappings: mappings, methods: methods, drops: drops, stages: stages,
      unused: unusedStepFiles(of: plan), own: try source.ownObjectsSummary())
  }
}

/// `plan`'s report: its lines of text and its `--json` line.
package struct PlanReport {
  let store: URL
  let plan: MigrationPlan
  let counts: [String: Int]
  let mappings: [[EntityMapping]]
  let methods: [(method: StepMethod, reason: String?)]
  let drops: [[DroppedProperty]]
  let stages: [LuaStage?]
  let unused: [ScriptedStep.UnusedStepFile]
  /// The store's own tables, triggers and views (``SQLiteStore/ownObjectsSummary()``).
  let own: [String]

  var objects: [[String: Int]] { Self.objectCounts(mappings, store: counts) }

  /// The `plan` event's fields (docs/json.md).
  package var json: [String: Any] {
    let objects = objects
    var report = Self.json(plan, mappings: mappings, methods: methods, counts: counts, objects: objects)
    report["unusedStepFiles"] = unused.map { ["file": $0.file.path, "reason": $0.reason] }
    if var steps = report["steps"] as? [[String: Any]] {
      for index in steps.indices where index < drops.count {
        steps[index]["dropped"] = drops[index].map(Self.json)
        steps[index]["stage"] =
          stages[index].map { ["file": $0.url.path, "hooks": $0.hookNames] as [String: Any] } ?? NSNull()
      }
      report["steps"] = steps
    }
    return report
  }

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
      for finding in StoreMigrator.cloudKitFindings(plan) {
        out.append("CloudKit \(finding) — migrate refuses it unless --allow-cloudkit-changes")
      }
    }
    if !plan.needsMigration { out.append("Nothing to do: the store is at the destination version.") }
    for (index, step) in plan.steps.enumerated() {
      switch step.kind {
      case .inferred: out.append("Step \(index + 1)  \(step.name)  inferred")
      case .scripted(let file): out.append("Step \(index + 1)  \(step.name)  scripted (\(file.path))")
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

  package static func json(_ drop: DroppedProperty) -> [String: Any] {
    [
      "entity": drop.entity, "property": drop.property.map { $0 as Any } ?? NSNull(),
      "values": drop.values.map { $0 as Any } ?? NSNull(), "certain": drop.isCertain,
    ]
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

  package static func mappingJSON(_ mapping: EntityMapping) -> [String: Any] {
    [
      "name": mapping.name, "kind": mapping.kind.rawValue, "source": mapping.sourceEntity ?? NSNull(),
      "destination": mapping.destinationEntity ?? NSNull(), "attributes": mapping.attributes.mapValues(\.description),
      "relationships": mapping.relationships,
    ]
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

  static func json(
    _ plan: MigrationPlan, mappings: [[EntityMapping]], methods: [(method: StepMethod, reason: String?)],
    counts: [String: Int], objects: [[String: Int]]
  ) -> [String: Any] {
    [
      "source": plan.sourceVersion, "destination": plan.destinationVersion, "rule": plan.rule.name,
      "objects": counts,
      "steps": zip(plan.steps.indices, zip(mappings, methods)).map { index, planned -> [String: Any] in
        let step = plan.steps[index]
        var entry: [String: Any] = [
          "from": step.from, "to": step.to,
          "mappings": planned.0.map { mapping in
            var described = mappingJSON(mapping)
            described["objects"] = objects[index][mapping.name] ?? NSNull()
            return described
          },
          "method": planned.1.method.rawValue, "notDDLBecause": planned.1.reason ?? NSNull(),
          "objectsEstimated": index > 0,
        ]
        switch step.kind {
        case .inferred: entry["kind"] = "inferred"
        case .scripted(let file):
          entry["kind"] = "scripted"
          entry["script"] = file.path
        }
        return entry
      },
    ]
  }
}
