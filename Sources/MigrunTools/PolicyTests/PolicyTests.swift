import FileDoors
import Foundation
import LuaHost
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import SwiftDataModel
import Synchronization

/// `migrun test`: runs the `*_test.lua` files of a policy library, each in its own sandboxed VM
/// (the limits of a migration), with the assertion API of ``TestPrelude`` and the `migrate{…}`
/// fixture, which runs a mapping file on objects given in the test.
package enum PolicyTests {
  package struct Result: Sendable {
    /// The test file as shown (relative to the folder it was found under, that folder's name first).
    package let file: String
    package let name: String
    package let passed: Bool
    /// Why it failed: `file:line: message` and the diff.
    package let message: String?
    /// Whether a `migrate{…}` of the test met a full disk: a failure that says nothing of the policies.
    package var diskFull = false
  }

  /// The `*_test.lua` files under `paths` (files or folders), each with the folder `require`
  /// searches for it (the folder given), sorted by path.
  package static func files(under paths: [URL]) throws -> [(file: URL, root: URL)] {
    var found: [(URL, URL)] = []
    for path in paths {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path.path, isDirectory: &isFolder) else {
        throw MigrationError(.badMapping, reason: "\(path.path): no such file or folder")
      }
      guard isFolder.boolValue else {
        found.append((path, path.deletingLastPathComponent()))
        continue
      }
      // A folder given through a symbolic link is searched where it is, its files named under the
      // path given (a link is not descended into by the enumerator).
      let real = path.resolvingSymlinksInPath().standardizedFileURL
      let enumerator = FileManager.default.enumerator(at: real, includingPropertiesForKeys: nil)
      while let file = enumerator?.nextObject() as? URL {
        guard file.lastPathComponent.hasSuffix("_test.lua") else { continue }
        let relative = file.standardizedFileURL.path.dropFirst(real.path.count)
        found.append((URL(fileURLWithPath: path.standardizedFileURL.path + relative).standardizedFileURL, path))
      }
    }
    return found.sorted { $0.0.path < $1.0.path }
  }

  /// Runs every test of `file`; a file that does not load is one failed test.
  /// `fixtures`: folders of stores and models `migrate{…}` may also read (``FixtureMigration/locate(_:in:)``);
  /// `policies`: more folders `require` searches (and `migrate{…}` takes step files from), after `root`.
  package static func run(
    file: URL, root: URL, limits: LuaLimits = LuaLimits(), fixtures: [URL] = [], policies: [URL] = []
  ) -> [Result] {
    let shown = displayName(file, root: root)
    do {
      let vm = try LuaVM(limits: limits, modulePaths: [root] + policies)
      let diskFull = DiskFull()
      registerMigrate(
        in: vm, places: FixtureMigration.Places(root: root, testFile: file, fixtures: fixtures, policies: policies),
        limits: limits, diskFull: diskFull)
      let text: String
      do {
        text = try InputFile.text(file)
      } catch let error as InputFileError {
        return [Result(file: shown, name: "(load)", passed: false, message: "\(shown): \(error.reason)")]
      } catch {
        return [Result(file: shown, name: "(load)", passed: false, message: "cannot read \(shown): \(error)")]
      }
      let api = try vm.run(source: TestPrelude.source, name: "migrun test prelude")
      guard let runner = api.first?.functionValue,
        let body = try vm.run(source: TestPrelude.chunk(wrapping: text), name: shown).first?.functionValue
      else {
        return [Result(file: shown, name: "(load)", passed: false, message: "\(shown) did not load")]
      }
      _ = try vm.call(body, Array(api.dropFirst()))
      // The names are asked first: a test a limit stops is still named by its own.
      let names = (try vm.call(runner).first?.tableValue?.array ?? []).map { $0.stringValue ?? "?" }
      guard !names.isEmpty else {
        return [Result(file: shown, name: "(load)", passed: false, message: "\(shown) declares no test(...)")]
      }
      return names.indices.map { index in
        runTest(index, named: names[index], of: shown, runner: runner, in: vm, diskFull: diskFull)
      }
    } catch {
      return [Result(file: shown, name: "(load)", passed: false, message: "\(error)")]
    }
  }

  /// `migrate{…}` for the tests: a fixture migrated, a full disk it meets noted in `diskFull`.
  private static func registerMigrate(
    in vm: LuaVM, places: FixtureMigration.Places, limits: LuaLimits, diskFull: DiskFull
  ) {
    vm.register("migrate") { arguments in
      do {
        return [try FixtureMigration.run(arguments.first ?? .nil, places: places, limits: limits)]
      } catch {
        if StoreFailure.isDiskFull(error) { diskFull.met.withLock { $0 = true } }
        throw error
      }
    }
  }

  /// Runs test number `index` (from 0) of the file `shown` through the test prelude's `runner`.
  private static func runTest(
    _ index: Int, named name: String, of shown: String, runner: LuaFunction, in vm: LuaVM, diskFull: DiskFull
  ) -> Result {
    var result: Result
    do {
      let outcome = try vm.call(runner, [.integer(Int64(index + 1))])
      let passed = outcome.count > 1 && outcome[1] == .boolean(true)
      result = Result(
        file: shown, name: name, passed: passed, message: passed ? nil : outcome.dropFirst(2).first?.stringValue)
    } catch {
      result = Result(file: shown, name: name, passed: false, message: "\(error.attributed(to: shown))")
    }
    // Asked after every test, so that one a test caught (pcall) is not the next one's.
    let met = diskFull.met.withLock { met in
      defer { met = false }
      return met
    }
    result.diskFull = met && !result.passed
    return result
  }

  /// JUnit XML for CI: one suite per file.
  package static func junit(_ results: [Result]) -> String {
    // XML 1.0 holds no control character but tab, newline and return, not even escaped: a test's
    // name or message with one gets U+FFFD in its place (else the report does not parse).
    func escape(_ text: String) -> String {
      let allowed = String(
        String.UnicodeScalarView(
          text.unicodeScalars.map { scalar in
            scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r"
              || (0xFFFE...0xFFFF).contains(scalar.value) ? "\u{FFFD}" : scalar
          }))
      return allowed.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
    var files: [String] = []
    var byFile: [String: [Result]] = [:]
    for result in results {
      if byFile[result.file] == nil { files.append(result.file) }
      byFile[result.file, default: []].append(result)
    }
    let failures = results.filter { !$0.passed }.count
    var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    xml += "<testsuites name=\"migrun test\" tests=\"\(results.count)\" failures=\"\(failures)\">\n"
    for file in files {
      let suite = byFile[file] ?? []
      xml +=
        "  <testsuite name=\"\(escape(file))\" tests=\"\(suite.count)\" failures=\"\(suite.filter { !$0.passed }.count)\">\n"
      for result in suite {
        xml += "    <testcase classname=\"\(escape(file))\" name=\"\(escape(result.name))\""
        if result.passed {
          xml += "/>\n"
        } else {
          let message = result.message ?? "failed"
          let first = message.split(separator: "\n").first.map(String.init) ?? message
          xml += ">\n      <failure message=\"\(escape(first))\">\(escape(message))</failure>\n    </testcase>\n"
        }
      }
      xml += "  </testsuite>\n"
    }
    return xml + "</testsuites>\n"
  }

  /// Whether a `migrate{…}` met a full disk since the last test asked.
  private final class DiskFull: Sendable {
    let met = Mutex(false)
  }

  static func displayName(_ file: URL, root: URL) -> String {
    let rootPath = root.standardizedFileURL.path
    let path = file.standardizedFileURL.path
    guard path.hasPrefix(rootPath + "/") else { return file.lastPathComponent }
    return root.lastPathComponent + "/" + path.dropFirst(rootPath.count + 1)
  }
}

/// `migrate{ mapping = "…/A-B.lua", source = { Entity = { {…}, … } } [, model = "….xcdatamodeld"] }`,
/// or `migrate{ store = "device.sqlite", model = "….xcdatamodeld" [, to = "V"] }` (``runStore``).
///
/// (the mapping may also be an Xcode mapping model, `.xcmappingmodel` or `.cdm`; the model a `.momd`):
/// the mapping run (object by object, in memory) on the given source objects; returns the
/// destination objects by entity, in key order, each a table of its attributes, `_id`
/// (`"Entity/pN"`) and its relationships as ids. Source objects may carry `_id = "label"`, and
/// relationship fields name other source objects by label.
enum FixtureMigration {
  static func run(_ argument: LuaValue, places: Places, limits: LuaLimits) throws -> LuaValue {
    let root = places.root
    if case .table(let options) = argument, let storePath = options["store"]?.stringValue {
      return try runStore(storePath, options, places: places, limits: limits)
    }
    guard case .table(let options) = argument, let mappingPath = options["mapping"]?.stringValue else {
      throw HostError(
        "migrate{ mapping = \"From-To.lua\", source = { Entity = { … } } } or migrate{ store = \"device.sqlite\", model = \"….xcdatamodeld\" }: give a mapping file or a store"
      )
    }
    let mapping = try locate(mappingPath, in: places, what: .file)
    let bundleURL =
      try options["model"]?.stringValue.map { try locate($0, in: places, what: .model) }
      ?? findModel(near: mapping)
    let bundle = try SwiftDataSources.load(bundleURL)
    let stem = mapping.deletingPathExtension().lastPathComponent
    let named = bundle.versionNames.lazy.compactMap({ from -> (String, String)? in
      let prefix = from + "-"
      guard stem.hasPrefix(prefix) else { return nil }
      let to = String(stem.dropFirst(prefix.count))
      return bundle.versionNames.contains(to) ? (from, to) : nil
    }).first
    let from: String
    let to: String
    if let named {
      (from, to) = named
    } else if ScriptedStep.isMappingModel(mapping) {
      // An Xcode mapping model says which versions it was made for, whatever its name.
      let model = try AppleMappingModel.read(contentsOf: mapping, bundle: bundle)
      (from, to) = (model.sourceVersion, model.destinationVersion)
    } else {
      throw HostError(
        "migrate: \(mapping.lastPathComponent) is not named <From>-<To>.lua after versions of \(bundleURL.lastPathComponent)"
      )
    }
    let sourceModel = try bundle.model(named: from)
    let destinationModel = try bundle.model(named: to)
    let source = InMemoryStore(model: sourceModel)
    try fill(source, from: options["source"] ?? .nil)
    let destination = InMemoryStore(model: destinationModel)
    let step = MigrationStep(
      from: from, to: to, kind: .scripted([mapping]), inferredMapping: nil, source: sourceModel,
      destination: destinationModel)
    let loaded = try ScriptedStep.load(step, file: mapping, policyFolders: [root] + places.policies, limits: limits)
    let manager = try MigrationManager(
      mapping: loaded.mapping, source: source, destination: destination, policies: loaded.policies)
    manager.mergeRules = loaded.mergeRules
    try manager.migrate()
    return try objects(of: destination)
  }

  /// `migrate{ store = "device.sqlite", model = "….xcdatamodeld" [, to = "Version"] }`: a copy of a
  /// real store (never the file itself, nor its -wal/-shm) migrated as `migrun migrate` would — Core
  /// Data's path, the library's mapping files and policies — and its objects returned as the
  /// `source` form returns them. The copy is deleted afterwards.
  static func runStore(_ storePath: String, _ options: LuaTable, places: Places, limits: LuaLimits)
    throws -> LuaValue
  {
    let (root, testFile) = (places.root, places.testFile)
    let original = try locate(storePath, in: places, what: .file)
    guard let modelPath = options["model"]?.stringValue else {
      throw HostError("migrate{ store = …, model = \"….xcdatamodeld\" }: give the model to migrate to")
    }
    let bundle = try SwiftDataSources.load(try locate(modelPath, in: places, what: .model))
    let scratch = try ScratchFolder.make("test")
    defer { ScratchFolder.remove(scratch) }
    let copy = scratch.appendingPathComponent(original.lastPathComponent)
    // Its -wal folded in, values kept outside the store with it — never a sidecar or support folder
    // that is a link (copied as links they led outside the places a test may read) or a FIFO (the
    // copy never ended).
    try StoreFiles.privateCopy(of: original, to: copy)
    let folders = [testFile.deletingLastPathComponent(), root] + places.policies
    // As migrate runs it: one session, the step files loaded once, under the test's limits, for
    // the plan and the run.
    let session = try MigrationSession(copy, options: .init(keepBackup: false))
    defer { session.close() }
    let (plan, _) = try MigrationScripts(policyFolders: folders, limits: ScriptLimits(limits)).migrate(
      in: session, bundle: bundle, destination: options["to"]?.stringValue)
    let migrated = try SQLiteStore(url: copy, model: try bundle.model(named: plan.destinationVersion))
    defer { try? migrated.close() }
    return try objects(of: migrated)
  }

  /// Where `migrate{…}` may read: the library, the test's folder, the working folder and the
  /// fixture folders given (`migrun test --fixtures`). Nothing else on the machine: a test is code
  /// from the library, and a path of its choosing (`/`, `../../…`) must not copy or read what the
  /// user did not hand it.
  struct Places {
    let root: URL
    let testFile: URL
    let fixtures: [URL]
    /// More policy folders (`migrun test --policies`): searched by `require` and for step files.
    var policies: [URL] = []

    /// The folders, resolved (symbolic links followed).
    var folders: [URL] {
      ([root, testFile.deletingLastPathComponent(), URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        + policies + fixtures).map { $0.standardizedFileURL.resolvingSymlinksInPath() }
    }
  }

  enum Kind {
    /// A store or mapping file: a regular file.
    case file
    /// A model: a model file, a bundle folder (`.xcdatamodeld`, `.momd`) or a folder of Swift sources.
    case model
  }

  /// The file `path` names (relative to each place in turn, or absolute), when it is inside one of
  /// the places and of the kind asked for; else an error naming what was refused.
  static func locate(_ path: String, in places: Places, what kind: Kind) throws -> URL {
    let folders = places.folders
    let candidates =
      path.hasPrefix("/") ? [URL(fileURLWithPath: path)] : folders.map { $0.appendingPathComponent(path) }
    for candidate in candidates {
      let resolved = candidate.standardizedFileURL.resolvingSymlinksInPath()
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isFolder) else { continue }
      guard folders.contains(where: { resolved.path.hasPrefix($0.path == "/" ? "/" : $0.path + "/") }) else {
        throw HostError(
          "migrate: \(path) is outside the library, the test's folder, the working folder and the fixture folders "
            + "(give more with migrun test --fixtures DIR)")
      }
      let type = (try? FileManager.default.attributesOfItem(atPath: resolved.path)[.type] as? FileAttributeType)
      switch kind {
      case .file:
        guard type == .typeRegular else {
          throw HostError("migrate: \(path) is \(isFolder.boolValue ? "a folder" : "not a regular file"), not a file")
        }
      case .model:
        guard type == .typeRegular || type == .typeDirectory else {
          throw HostError("migrate: \(path) is not a regular file or folder")
        }
      }
      return resolved
    }
    throw HostError(
      "migrate: no \(path) in \(places.root.lastPathComponent)/, beside the test, in the working folder or a fixture folder "
        + "(name the folder that holds it with migrun test --fixtures DIR, or MIGRUN_FIXTURES=DIR)")
  }

  /// The nearest `.xcdatamodeld` (or compiled `.momd`): in the mapping's folder or a folder above it
  /// — the library's own folders first, then above the library (a policy folder kept beside the app's
  /// model, as the README describes).
  static func findModel(near mapping: URL) throws -> URL {
    var folder = mapping.deletingLastPathComponent().standardizedFileURL
    while true {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
      let models = names.filter { $0.hasSuffix(".xcdatamodeld") || $0.hasSuffix(".momd") }.sorted()
      if let model = models.first { return folder.appendingPathComponent(model) }
      guard folder.path != "/", !folder.path.isEmpty else { break }
      folder = folder.deletingLastPathComponent()
    }
    throw HostError("migrate: no .xcdatamodeld near \(mapping.lastPathComponent); give model = \"….xcdatamodeld\"")
  }

  /// Inserts the fixture's objects: attributes by the model's types, relationships by label.
  static func fill(_ store: InMemoryStore, from value: LuaValue) throws {
    guard case .table(let byEntity) = value else { throw HostError("migrate: source = { Entity = { {…}, … } }") }
    let model = store.model
    var labels: [String: ObjectID] = [:]
    var pending: [(ObjectID, Entity, LuaTable)] = []
    try store.write { writer in
      for (key, list) in byEntity.fields.sorted(by: { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }) {
        guard let name = key.stringValue, let entity = model.entity(named: name) else {
          throw HostError("migrate: the source model has no entity '\(key.stringValue ?? "?")'")
        }
        for item in list.tableValue?.array ?? [] {
          guard case .table(let fields) = item else { throw HostError("migrate: \(name) objects are tables") }
          let id = ObjectID(entity: name, primaryKey: try writer.newPrimaryKey(for: name))
          var attributes: [String: StoreValue] = [:]
          for attribute in model.attributes(of: entity) where !attribute.isTransient {
            let given = fields[attribute.name] ?? .nil
            attributes[attribute.name] =
              given == .nil ? attribute.defaultValue : try MigrationBridge.store(given, for: attribute, entity: name)
          }
          for field in fields.fields.keys.compactMap(\.stringValue) where field != "_id" {
            guard
              model.attributes(of: entity).contains(where: { $0.name == field })
                || model.relationships(of: entity).contains(where: { $0.name == field })
            else { throw HostError("migrate: entity '\(name)' has no property '\(field)'") }
          }
          try writer.insert(StoredObject(id: id, attributes: attributes))
          if let label = fields["_id"]?.stringValue { labels[label] = id }
          pending.append((id, entity, fields))
        }
      }
      for (id, entity, fields) in pending {
        for relationship in model.relationships(of: entity) {
          guard let given = fields[relationship.name], given != .nil, given != .null else { continue }
          let names =
            given.tableValue.map { $0.array.compactMap(\.stringValue) } ?? given.stringValue.map { [$0] } ?? []
          let targets = try names.map { label -> ObjectID in
            guard let target = labels[label] else { throw HostError("migrate: no source object labelled '\(label)'") }
            return target
          }
          if relationship.isToMany {
            try writer.setToMany(id, relationship.name, targets)
          } else {
            try writer.setToOne(id, relationship.name, targets.first)
          }
        }
      }
    }
  }

  static func objects(of store: any ObjectStore) throws -> LuaValue {
    var byEntity = LuaTable()
    for entity in store.model.entities where !entity.isAbstract {
      var list: [LuaValue] = []
      try store.forEachObject(of: entity.name, includingSubentities: false) { object in
        var fields = LuaTable()
        fields["_id"] = .text(object.id.description)
        for (name, value) in object.attributes { fields[name] = MigrationBridge.lua(value) }
        for (name, target) in object.toOne { fields[name] = .text(target.description) }
        for (name, members) in object.toMany {
          fields[name] = .table(LuaTable(array: members.map { .text($0.description) }))
        }
        list.append(.table(fields))
      }
      byEntity[entity.name] = .table(LuaTable(array: list))
    }
    return .table(byEntity)
  }
}
