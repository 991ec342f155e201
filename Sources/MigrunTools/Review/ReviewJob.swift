import FileDoors
import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore

/// `review`'s job: one page a reviewer reads — the path and why, each step's model changes with
/// their version hashes, what it drops, what its step files do (and their test coverage), lint's
/// findings beside the step that causes them, then the migration run on a copy of the store (objects
/// per entity before and after each step, conservation, `check` before and after, time per step)
/// and `verify`'s made-up stores of every old version. Built from the other jobs' reports
/// (``PlanReport``, ``LintJob``, ``Verify``, `StoreCheck`, the migrator's report); the page itself is
/// ``ReviewPage``'s, its `--json` twin ``Review`` encoded.
package struct ReviewJob {
  /// A store (run on a copy), or a folder: a model whose oldest version is made up as the store.
  package var target: String
  package var setup: MigrationSetup
  /// An lcov tracefile `migrun test --coverage` wrote.
  package var coverage: String?
  /// Made-up objects per entity in `verify`'s stores (and a folder's store).
  package var objects = 10
  package var seed: UInt64 = 1

  /// The page (its HTML, or its `review` JSON line), written to `out` (never over the target), else
  /// to standard output.
  package func write(json: Bool, to out: String?) throws {
    let review = try run()
    let page =
      try json ? JSONLines.line("review", JSONLines.fields("review", review)) : Data(ReviewPage.html(review).utf8)
    if let out {
      try writeAtomically(to: out, inputs: [target]) { try $0.write(page) }
    } else {
      try StandardOutput.write(page)
    }
  }

  /// Whether `path` is a folder (a folder reviewed is a model, when nothing else names one).
  package static func isFolder(_ path: String) -> Bool {
    var folder: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder.boolValue
  }

  package init(target: String, setup: MigrationSetup, coverage: String?) {
    self.target = target
    self.setup = setup
    self.coverage = coverage
  }

  package func run() throws -> Review {
    let given = URL(fileURLWithPath: target)
    var isFolder: ObjCBool = false
    let exists = FileManager.default.fileExists(atPath: given.path, isDirectory: &isFolder)
    guard exists else { throw ToolError(message: "\(target): no such store or folder") }
    let jobs = try MigrationJobs(setup)
    let scratch = try ScratchFolder.make("review")
    defer { ScratchFolder.remove(scratch) }
    let madeUp = isFolder.boolValue
    let store = try reviewedStore(given, madeUp: madeUp, bundle: jobs.bundle, in: scratch)
    let report = try jobs.planReport(for: store)
    let plan = report.plan
    let coverage = try self.coverage.map { try Self.readCoverage($0) } ?? [:]
    let findings = try LintJob(
      model: setup.model.path, policyFolders: setup.policyFolders.map(\.path), cloudkit: true, json: false, ignore: [],
      baseline: nil, writeBaseline: nil, deployed: nil
    ).findings(of: jobs.bundle)
    var review = Review(
      store: target, madeUp: madeUp, model: jobs.bundle.name, source: plan.sourceVersion,
      destination: plan.destinationVersion, rule: plan.rule.name,
      why: plan.rule.description.replacingOccurrences(of: Self.here, with: ""),
      passedOver: report.unused.map { .init(file: Self.shown($0.file), reason: $0.reason) },
      objectsBefore: report.counts)
    review.checkBefore = try Self.check(store, bundle: jobs.bundle, configuration: setup.configuration)
    let objects = report.objects
    for (index, step) in plan.steps.enumerated() {
      var reviewed = Self.step(step, index: index, report: report, objects: objects[index])
      // A finding on the pair, or on the version the step arrives at: beside the change that causes it.
      reviewed.lint = findings.filter { $0.versions == [step.from, step.to] || $0.versions == [step.to] }
        .map(Review.Finding.init)
      let files = [reviewed.script].compactMap { $0 } + reviewed.policies.map(\.file)
      reviewed.coverage = Self.coverage(of: files, in: coverage)
      review.steps.append(reviewed)
      review.diagrams.append(Self.diagram(step, mapping: report.stepMappings[index].mapping))
    }
    let stepPairs = Set(plan.steps.flatMap { [[$0.from, $0.to], [$0.to]] })
    review.lint = findings.filter { !stepPairs.contains($0.versions) }.map(Review.Finding.init)
    review.coverage = coverage.keys.sorted().compactMap { file in
      coverage[file].map { Review.Coverage(file: Self.shown(URL(fileURLWithPath: file)), lines: $0) }
    }
    if plan.needsMigration { try run(jobs, store: store, into: &review) }
    review.verify = try jobs.scripts.verify(
      bundle: jobs.bundle, destination: setup.destination, objectsPerEntity: self.objects, seed: seed,
      scratch: scratch.appendingPathComponent("verify", isDirectory: true)
    ).map(Review.VerifyStore.init)
    return review
  }

  /// The store the review migrates, in `scratch`: a copy of the one given, or one made up for the
  /// model's oldest version when a folder is given (`madeUp`).
  private func reviewedStore(_ given: URL, madeUp: Bool, bundle: ModelBundle, in scratch: URL) throws -> URL {
    do {
      return madeUp
        ? try Self.madeUpStore(bundle, in: scratch, objects: objects, seed: seed)
        : try Self.copy(given, into: scratch)
    } catch {
      throw OutputFile.explainTemporary(error)
    }
  }

  /// The migration run on the copy: each step's objects, mappings' reads and writes, drops and time,
  /// then `check` of the result; a refusal is the review's `refused`.
  private func run(_ jobs: MigrationJobs, store: URL, into review: inout Review) throws {
    let clock = StepClock()
    let outcome: MigrationOutcome
    do {
      outcome = try jobs.migrate(store, options: .init(keepBackup: false), progress: { $0.step.map(clock.saw) })
      clock.finish()
    } catch {
      review.refused = Fleet.message(error)
      return
    }
    // Outside the run's catch: a run that disagrees with the plan is the review's error, not a refusal.
    for step in outcome.report?.steps ?? [] {
      guard let index = review.steps.firstIndex(where: { $0.name == step.name }) else {
        throw ToolError(message: "the run took step \(step.name), which the plan reviewed does not have")
      }
      review.steps[index].run = Review.Run(
        objectsAfter: step.counts, mappings: step.mappings.map(Review.Conserved.init),
        dropped: step.drops.map(Review.Drop.init), merged: step.merged, seconds: clock.seconds[step.name])
    }
    review.migrated = true
    // Outside the run: a check that fails is the review's error, not a refusal of the migration.
    if review.migrated {
      review.checkAfter = try Self.check(store, bundle: jobs.bundle, configuration: setup.configuration)
    }
  }

  /// The step as the plan report has it: its step file's mapping and policies as loaded for the
  /// plan, under the job's Lua limits (not loaded again).
  static func step(_ step: MigrationStep, index: Int, report: PlanReport, objects: [String: Int]) -> Review.Step {
    var script: String?
    var policies: [Review.Policy] = []
    if case .scripted(let files) = step.kind {
      script = files.map(shown).joined(separator: ", then ")
      for (mapping, policy) in report.stepMappings[index].policies.sorted(by: { $0.key < $1.key }) {
        guard let summary = PolicySummary(policy) else { continue }
        policies.append(
          .init(
            mapping: mapping, file: summary.file, hooks: summary.hooks, computed: summary.computed,
            filters: summary.filters))
      }
    }
    let (method, reason) = report.methods[index]
    let mappings = report.mappings[index]
    return Review.Step(
      name: step.name, from: step.from, to: step.to, kind: script == nil ? "inferred" : "scripted", script: script,
      method: method.rawValue, notDDLBecause: reason,
      changes: ModelChanges.of(mappings, from: step.source, to: step.destination),
      hashes: ModelChanges.hashes(from: step.source, to: step.destination),
      mappings: mappings.map {
        .init(
          name: $0.name, kind: $0.kind.rawValue, source: $0.sourceEntity, destination: $0.destinationEntity,
          objects: objects[$0.name], estimated: index > 0)
      },
      drops: report.drops[index].map(Review.Drop.init), policies: policies,
      stage: report.stages[index].map { .init(file: shown($0.url), hooks: $0.hookNames) },
      placeholders: portPlaceholders(in: step.kind, stage: report.stages[index]?.url))
  }

  /// The placeholders `migrun port` wrote (`error("migrun port: …")`, `swift.placeholder(…)`) in a step's files: its step file,
  /// the modules beside it that it requires, its stage file.
  static func portPlaceholders(in kind: MigrationStep.Kind, stage: URL?) -> [String] {
    var files: [URL] = stage.map { [$0] } ?? []
    if case .scripted(let scripts) = kind {
      for file in scripts.reversed() where file.pathExtension == "lua" {
        files.insert(file, at: 0)
        let text = (try? InputFile.text(file)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("local ") && line.contains("= require \"") {
          guard let name = line.split(separator: "\"").dropFirst().first, LuaSource.isIdentifier(String(name)) else {
            continue
          }
          files.append(file.deletingLastPathComponent().appendingPathComponent("\(name).lua"))
        }
      }
    }
    let marker = "(\"migrun port: "
    return files.flatMap { file -> [String] in
      let text = (try? InputFile.text(file)) ?? ""
      return text.split(separator: "\n").compactMap { line -> String? in
        let code = line.drop { $0 == " " }
        guard code.hasPrefix("error" + marker) || code.contains("= swift.placeholder" + marker),
          let start = line.range(of: marker), let end = line.range(of: "\")", options: .backwards)
        else { return nil }
        return String(line[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "\\\"", with: "\"")
      }
    }
  }

  /// The step's picture as `diagram` draws it, as inline SVG (nil without Graphviz: the page says so).
  static func diagram(_ step: MigrationStep, mapping: MappingModel) -> String? {
    let dot = Diagram.step(mapping, from: step.from, to: step.to, title: "\(step.name) (\(Diagram.kind(of: step)))")
    guard let data = try? Diagram.svg(dot) else { return nil }
    let svg = String(decoding: data, as: UTF8.self)
    // The <svg> element alone: Graphviz's XML declaration and doctype have no place inside HTML.
    guard let start = svg.range(of: "<svg") else { return nil }
    return String(svg[start.lowerBound...])
  }

  static func check(_ store: URL, bundle: ModelBundle, configuration: String?) throws -> [Review.Finding] {
    let chosen = try ConfigurationChoice.bundle(bundle, configuration: configuration, store: store)
    return try StoreCheck.findings(of: store, bundle: chosen).map {
      Review.Finding(rule: $0.kind, message: CommandLineWords.flags(in: $0.message), note: $0.isNote)
    }
  }

  /// The working folder, as the start of a path under it.
  static var here: String { FileManager.default.currentDirectoryPath + "/" }

  /// A file's path as a reader of the page gives it: relative to the working folder when under it.
  static func shown(_ url: URL) -> String {
    url.path.hasPrefix(here) ? String(url.path.dropFirst(here.count)) : url.path
  }

  /// A copy of the store `url` (with its `-wal` folded in, and its external data) in `folder`, under
  /// its own name: the review never writes the original (``StoreFiles/privateCopy(of:to:)``).
  static func copy(_ url: URL, into folder: URL) throws -> URL {
    let copy = folder.appendingPathComponent(url.lastPathComponent)
    if AtomicStoreInput.isAtomic(url) {
      try StoreFiles.cloneOrCopy(url, to: copy)
      try StoreFiles.copySupportFolder(of: url, as: copy)
    } else {
      try StoreFiles.privateCopy(of: url, to: copy)
    }
    return copy
  }

  /// A folder given: a store of the model's oldest version, filled with made-up objects as `verify`'s are.
  static func madeUpStore(_ bundle: ModelBundle, in folder: URL, objects: Int, seed: UInt64) throws -> URL {
    guard let oldest = bundle.versionNames.first else { throw ToolError(message: "\(bundle.name) has no version") }
    return try MigrationScripts.makeStore(
      of: oldest, in: folder.appendingPathComponent("made-up", isDirectory: true), bundle: bundle, objects: objects,
      seed: seed
    ).url
  }

  /// An lcov tracefile's executable lines per file: (lines run, lines).
  static func readCoverage(_ path: String) throws -> [String: (run: Int, lines: Int)] {
    let text: String
    do {
      text = try InputFile.text(URL(fileURLWithPath: path), origin: .named)
    } catch let error as InputFileError {
      throw ToolError(message: "--coverage: \(error)", underlying: error)
    } catch {
      throw ToolError(message: "--coverage: cannot read \(path) (\(error.localizedDescription))", underlying: error)
    }
    return try coverage(lcov: text, path: path)
  }

  /// The tracefile `text` (read from `path`, which errors name): executable lines per file.
  package static func coverage(lcov text: String, path: String) throws -> [String: (run: Int, lines: Int)] {
    var files: [String: (run: Int, lines: Int)] = [:]
    var file: String?
    for line in text.split(whereSeparator: \.isNewline) {
      if line.hasPrefix("SF:") {
        file = String(line.dropFirst(3))
        if let file { files[file] = (0, 0) }
      } else if line.hasPrefix("DA:"), let file {
        // `DA:<line>,<count>[,<checksum>]`: the count is the second field.
        let fields = line.dropFirst(3).split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count >= 2, Int(fields[0]) != nil, let count = Int(fields[1]) else {
          throw ToolError(message: "--coverage: \(path): '\(line)' is no lcov DA record (DA:LINE,COUNT)")
        }
        files[file, default: (0, 0)].lines += 1
        if count > 0 { files[file, default: (0, 0)].run += 1 }
      }
    }
    guard !files.isEmpty else {
      throw ToolError(message: "--coverage: \(path) is no lcov tracefile (migrun test --coverage FILE writes one)")
    }
    return files
  }

  /// The coverage of `files` (paths as shown), matched by the file's whole path; by its name only
  /// where one file of the tracefile has that name (two `Item.lua` of two folders: neither is taken).
  package static func coverage(of files: [String], in coverage: [String: (run: Int, lines: Int)])
    -> [Review.Coverage]
  {
    // Each tracefile path read as a URL once (a tracefile is outside input: 100,000 of them, once per file).
    var byPath: [String: [String]] = [:]
    var byName: [String: [String]] = [:]
    for key in coverage.keys {
      let url = URL(fileURLWithPath: key)
      byPath[url.standardizedFileURL.path, default: []].append(key)
      byName[url.lastPathComponent, default: []].append(key)
    }
    var seen = Set<String>()
    var result: [Review.Coverage] = []
    for file in files {
      let url = URL(fileURLWithPath: file).standardizedFileURL
      let samePath = byPath[url.path] ?? []
      let sameName = byName[url.lastPathComponent] ?? []
      let key = (samePath.count == 1 ? samePath.first : nil) ?? (sameName.count == 1 ? sameName.first : nil)
      guard let key, let lines = coverage[key], seen.insert(key).inserted else { continue }
      result.append(Review.Coverage(file: shown(URL(fileURLWithPath: key)), lines: lines))
    }
    return result
  }
}

/// When each step of a run started, from the migrator's progress (the first report naming it).
private final class StepClock {
  private var starts: [(step: String, at: Date)] = []
  private var end: Date?

  func saw(_ step: String) {
    if starts.last?.step != step { starts.append((step, Date())) }
  }

  func finish() { end = Date() }

  var seconds: [String: Double] {
    var result: [String: Double] = [:]
    for (index, start) in starts.enumerated() {
      let next = index + 1 < starts.count ? starts[index + 1].at : end ?? Date()
      result[start.step] = next.timeIntervalSince(start.at)
    }
    return result
  }
}
