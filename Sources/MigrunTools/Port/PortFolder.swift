import Foundation
import MigrunModel
import MigrunScripting

/// The policy folder `migrun port` writes: a module per policy class, a step file per step that
/// has ported classes (its entries take the classes' hooks; every other entity mapping is inferred),
/// a stage file per custom stage, `swift.lua`, `port_test.lua`, and `port.md`, the summary.
struct PortFolder {
  let translation: SwiftPort.Translation
  let bundle: ModelBundle
  /// Classes a mapping model among the inputs names: class → its step (`From-To`).
  var mappedClasses: [String: String] = [:]

  /// Where a class or stage goes: its step (`from`, `to`), or why none.
  struct Placement {
    var from: String
    var to: String
    var source: String?
    var destination: String?
  }

  /// The step and entity mapping of a class, by its name: the newest step whose source version has
  /// the entity the name starts with and whose destination has the one it ends with.
  func placement(of ported: PortedClass) -> Placement? {
    let steps = Array(zip(bundle.versionNames, bundle.versionNames.dropFirst())).reversed()
    for (from, to) in steps {
      guard let source = try? bundle.model(named: from), let destination = try? bundle.model(named: to) else {
        continue
      }
      for pair in ported.entities
      where source.entity(named: pair.source) != nil && destination.entity(named: pair.destination) != nil {
        return Placement(from: from, to: to, source: pair.source, destination: pair.destination)
      }
    }
    return nil
  }

  /// A stage's step: the versions its `fromVersion:`/`toVersion:` (or model references) name.
  func placement(of stage: PortedStage) -> Placement? {
    func version(_ names: [String]) -> String? {
      names.lazy.map { translation.schemaVersions[$0] ?? $0 }.first { bundle.versionNames.contains($0) }
    }
    guard let from = version(stage.from), let to = version(stage.to) else { return nil }
    return Placement(from: from, to: to)
  }

  /// Classes placed on an entity mapping an earlier class of the sources took: `(spot, message)`.
  /// Their step file fails, naming them, until one entry takes both (never one left out).
  var collisions: [(spot: String, message: String)] {
    var taken: Set<String> = []
    var found: [(String, String)] = []
    for ported in translation.classes where !ported.hooks.isEmpty && mappedClasses[ported.name] == nil {
      guard let place = placement(of: ported), let destination = place.destination else { continue }
      if !taken.insert("\(place.from)-\(place.to)/\(destination)").inserted {
        found.append(
          (ported.spot, "\(ported.name) is a second policy for \(destination) in \(place.from)-\(place.to).lua"))
      }
    }
    return found
  }

  /// Every file but the converted mapping models', by name.
  func files() -> [(name: String, text: String)] {
    var files: [(String, String)] = translation.classes.map { ("\($0.name).lua", $0.module) }
    var steps: [String: [(PortedClass, Placement)]] = [:]
    for ported in translation.classes where !ported.hooks.isEmpty && mappedClasses[ported.name] == nil {
      guard let place = placement(of: ported) else { continue }
      steps["\(place.from)-\(place.to)", default: []].append((ported, place))
    }
    for (step, entries) in steps.sorted(by: { $0.key < $1.key }) { files.append(("\(step).lua", stepFile(entries))) }
    for (step, stages) in Dictionary(
      grouping: translation.stages.compactMap { stage in
        placement(of: stage).map { ("\($0.from)-\($0.to)", stage) }
      }, by: \.0
    ).sorted(by: { $0.key < $1.key }) {
      files.append(("\(step).stage.lua", stageFile(stages.map(\.1))))
    }
    files.append((PortRuntime.fileName, PortRuntime.module))
    files.append(("port_test.lua", PortRuntime.test(modules: translation.classes.map { ($0.name, $0.hooks) })))
    return files
  }

  private func stepFile(_ entries: [(PortedClass, Placement)]) -> String {
    let first = entries[0].1
    var lines = [
      "-- \(first.from) → \(first.to): the entity mappings whose custom policies `migrun port` translated; every",
      "-- other entity mapping of the step is inferred, as Core Data infers it. Each entry takes the hooks of its",
      "-- class's module (ClassName.lua, beside this file).",
    ]
    for (ported, _) in entries { lines.append("local \(ported.name) = require \"\(ported.name)\" -- \(ported.spot)") }
    var keys: Set<String> = []
    var entryLines = ["", "return {"]
    for (ported, place) in entries {
      guard let source = place.source, let destination = place.destination else { continue }
      let mapping = "\(source)To\(destination)"
      guard keys.insert(destination).inserted else {
        // Never left out: the step fails, naming both, until one entry takes both classes' hooks.
        let message =
          "migrun port: \(ported.spot): \(ported.name) is a second policy for \(destination) in this step; "
          + "take its hooks into \(destination)'s entry"
        lines.append("error(\(LuaSource.string(message)))")
        continue
      }
      var entry: [String] = []
      defer { entryLines += entry }
      entry.append("  -- \(mapping): the custom policy \(ported.name)")
      entry.append("  \(LuaSource.key(destination)) = {")
      entry.append("    from = \(LuaSource.string(source)),")
      for hook in ported.hooks { entry.append("    \(hook) = \(ported.name).\(hook),") }
      entry.append("  },")
    }
    return (lines + entryLines + ["}"]).joined(separator: "\n") + "\n"
  }

  private func stageFile(_ stages: [PortedStage]) -> String {
    var lines = [
      "-- The custom stage of \(stages.map(\.spot).joined(separator: ", ")), ported to Lua by `migrun port`: willMigrate",
      "-- runs on the store before the step (the source version's model), didMigrate after it. Each statement",
      "-- ends with its Swift line; an error(\"migrun port: …\") is a statement still to write.",
      "local swift = require \"swift\"",
      "",
      "return {",
    ]
    var defined: Set<String> = []
    for stage in stages {
      for function in stage.functions where defined.insert(function.name).inserted {
        lines.insert(contentsOf: [function.lua, ""], at: lines.count - 1)
      }
    }
    var seen: Set<String> = []
    for stage in stages {
      for handler in stage.handlers {
        guard seen.insert(handler.name).inserted else {
          // Two stages of one step: the file fails, naming the second, until their handlers are one.
          let message = "migrun port: \(stage.spot): a second \(handler.name) for this step; make the two one handler"
          lines.insert("error(\(LuaSource.string(message)))", at: 4)
          continue
        }
        lines.append(handler.lua)
      }
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }

  // MARK: port.md

  func summary(inputs: [String], model: String, files: [String], mappingModels: [String: String]) -> String {
    let counts = translation.counts
    var lines = [
      "# Ported by `migrun port`", "",
      "From \(inputs.joined(separator: ", ")); model \(model) (\(bundle.versionNames.joined(separator: ", "))).", "",
      "**Statements translated: \(counts.translated) of \(counts.statements)\(Self.percent(counts))**; "
        + "\(plural(counts.placeholders.count, "placeholder")) left: each is an `error(\"migrun port: …\")` that "
        + "fails the migration where the Swift statement was, until it is written in Lua.", "",
      "Files: \(files.joined(separator: ", ")).", "",
      "Check and run: `migrun test <this folder>` (the modules load), `migrun plan STORE --model MODEL --policies <this folder>`,",
      "then `migrate`. See docs/porting.md.", "",
      "## Classes", "",
    ]
    if translation.classes.isEmpty { lines.append("None: no `NSEntityMigrationPolicy` subclass in the sources.") }
    for ported in translation.classes { lines += classSummary(ported, mappingModels: mappingModels) }
    lines += ["", "## Stages", ""]
    if translation.stages.isEmpty { lines.append("None: no `MigrationStage.custom` or `NSCustomMigrationStage`.") }
    for stage in translation.stages {
      let place = placement(of: stage)
      lines.append(
        "- \(stage.spot): "
          + (place.map { "`\($0.from)-\($0.to).stage.lua`" }
            ?? "**not written**: its versions (\((stage.from + stage.to).joined(separator: ", "))) are none of the model's; "
            + "give the sources that declare them, or write `<From>-<To>.stage.lua` from what port.md lists")
          + "; \(stage.handlers.map(\.name).joined(separator: ", ")); statements \(stage.counts.translated) of "
          + "\(stage.counts.statements)")
    }
    lines += ["", "## Left to write", ""]
    if counts.placeholders.isEmpty && collisions.isEmpty { lines.append("Nothing: every statement was translated.") }
    for placeholder in counts.placeholders { lines.append("- \(placeholder.spot): \(placeholder.reason)") }
    for collision in collisions {
      lines.append(
        "- \(collision.spot): \(collision.message): take its hooks into that entry (the step fails until then)")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  private func classSummary(_ ported: PortedClass, mappingModels: [String: String]) -> [String] {
    var lines = ["### \(ported.name) (\(ported.spot)) → `\(ported.name).lua`", ""]
    if let mappingModel = mappingModels[ported.name] {
      lines.append(
        "- entity mapping: named in \(mappingModel), converted to `\(mappedClasses[ported.name] ?? "?").lua`")
    } else if ported.hooks.isEmpty {
      lines.append(
        "- no hook of Core Data's: its functions are for a mapping model's `FUNCTION($entityPolicy, …)`; keep the "
          + "mapping model in a policy folder with this one (migrun converts it and requires the module)")
    } else if let place = placement(of: ported), let source = place.source, let destination = place.destination {
      lines.append(
        "- entity mapping \(source)To\(destination) (read off the class's name) in `\(place.from)-\(place.to).lua`")
    } else {
      lines.append(
        "- **no step**: its name names no entity mapping of the model (`<Source>To<Destination>Policy`); add an entry "
          + "`Destination = { from = \"Source\", createDestinationInstances = \(ported.name).createDestinationInstances }` "
          + "to the step's file, or give the mapping model that names the class")
    }
    if ported.propertyCounts.statements > 0 {
      lines.append(
        "- stored properties: \(ported.propertyCounts.translated) of \(ported.propertyCounts.statements) statements")
    }
    for method in ported.methods {
      lines.append(
        "- `\(method.swift)` (\(method.spot)) → \(method.isHook ? "hook " : "")`\(ported.name).\(method.lua)`: "
          + "\(method.counts.translated) of \(method.counts.statements) statements")
    }
    lines.append(
      "- statements: \(ported.counts.translated) of \(ported.counts.statements) translated\(Self.percent(ported.counts))"
    )
    lines.append("")
    return lines
  }

  static func percent(_ counts: PortCounts) -> String {
    guard counts.statements > 0 else { return "" }
    return " (\(counts.translated * 100 / counts.statements)%)"
  }
}
