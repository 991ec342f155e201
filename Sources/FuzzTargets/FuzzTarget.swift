import Foundation
import LuaHost
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import MigrunTools
import PropertyList
import SwiftDataModel

/// One parser of outside input, fed arbitrary bytes. Each must end in a value or a thrown error —
/// never a trap, a hang or a sanitizer report. Used by the libFuzzer binary (`migrun-fuzz`, built by
/// `scripts/fuzz`) and by the regression tests, which replay every input kept in
/// `Tests/FuzzRegressions/<target>/`.
public enum FuzzTarget: String, CaseIterable, Sendable {
  /// An `.xcdatamodel` `contents` file.
  case xcdatamodel
  /// A property list, binary (`bplist00`) or XML, as `Z_METADATA.Z_PLIST` holds it.
  case plist
  /// An NSKeyedArchiver archive.
  case keyedArchive = "keyed-archive"
  /// `Z_MODELCACHE.Z_CONTENT`, compressed or (when it starts with `bplist`) inflated, read as a
  /// model; migrun's own cache of that model is then written and read again.
  case modelCache = "model-cache"
  /// A store's metadata property list, read as `StoreMetadata`.
  case storeMetadata = "store-metadata"
  /// `migrun import` JSON, into a store of ``Corpus/model``.
  case importJSON = "import-json"
  /// A Lua mapping file, loaded for a step of ``Corpus/model`` to itself.
  case luaMapping = "lua-mapping"
  /// A store file: opened, its metadata, model cache and objects read (`inspect` and `export`), read
  /// as a model (`--model store.sqlite`), its own tables listed and its DDL decision made (`plan`),
  /// checked (`check`).
  case storeFile = "store-file"
  /// An Xcode mapping model — `xcmapping.xml`, or a `.cdm` when it starts with `bplist` — read for
  /// ``Corpus/model`` → ``Corpus/model2`` and converted to Lua (`migrun convert`).
  case mappingModel = "mapping-model"
  /// A Swift source file, read as a SwiftData model (`--model Sources/`): every version it declares.
  case swiftModel = "swift-model"
  /// A Swift source file as `migrun port` reads it: policy classes and custom stages translated to
  /// Lua, every statement to Lua or a placeholder.
  case swiftPort = "swift-port"
  /// A predicate in NSPredicate's format (a stage's `ctx:fetch`, a partial index's predicate) and
  /// an index expression (`expression=` of a fetch index element): parsed, the predicate run over
  /// ``Corpus/model``'s sample objects with the store testing what it can, both written as SQL.
  case predicate
  /// A Lua script, run in the sandbox under small limits (and, when it returns a function, that
  /// called): whatever a policy could do to the host — C library calls, coroutines, patterns,
  /// values sent to the host — ends in a value or a limit's error.
  case luaScript = "lua-script"
  /// A Core Data XML store (`NSXMLStoreType`): read, its metadata taken, its objects resolved
  /// against ``Corpus/model`` (`migrun inspect store.storedata`).
  case xmlStore = "xml-store"
  /// A Core Data binary store (`NSBinaryStoreType`): its header, keyed archives, metadata and
  /// objects resolved against ``Corpus/model``.
  case binaryStore = "binary-store"
  /// A damaged SQLite file as `migrun salvage` reads it without SQLite: header, pages, b-trees,
  /// records, overflow chains, the freelist (with a `-wal` of the input's second half).
  case salvage = "salvage"
  /// A `CREATE TABLE` statement from a damaged file's schema, as salvage reads it without running it
  /// (`CreateTableStatement`): its columns, rowid and literal defaults.
  case createTable = "create-table"
  /// A SQLite file as a migration's integrity watch reads it (`StoreCheck.openForCheck`): the
  /// structure pass over the mapped file, SQLite's quick check where it is not sure — and the pass
  /// alone with made-up roots (pages 2 to 9, table and index trees), past SQLite's schema.
  case structure = "structure"
  /// Bytes handed to the host helpers a script can call: `json.decode`, `plist.decode`,
  /// `plist.unarchive`, `base64.decode`, `hex.decode`, `date.parse`, and the results encoded back.
  case luaHelpers = "lua-helpers"
  /// A project file (`.migrun.yml`) as YAML: parsed within its limits of size and alias expansion.
  case projectConfig = "project-config"
  /// An lcov tracefile as `migrun review --coverage` reads it, matched to policy files.
  case lcov
  /// A fleet report (`--report FILE.json`) as `migrun merge-reports` reads it: merged with itself,
  /// written as JSON and JUnit.
  case fleetReport = "fleet-report"
  /// A chain file (one version per line) in a policy folder, read for ``Corpus/model``'s bundle
  /// and walked.
  case chainFile = "chain-file"

  /// Runs the target on `data`. Errors are the expected outcome for most inputs and are ignored.
  public func run(_ data: Data) {
    let bytes = [UInt8](data)
    switch self {
    case .mappingModel: Self.runMappingModel(data, bytes)
    case .xcdatamodel: Self.runXcdatamodel(data, bytes)
    case .swiftModel: Self.runSwiftModel(data, bytes)
    case .swiftPort: _ = try? SwiftPort.translate(sources: [("fuzz.swift", String(decoding: data, as: UTF8.self))])
    case .predicate: Self.runPredicate(data, bytes)
    case .plist: Self.runPlist(data, bytes)
    case .keyedArchive: Self.runKeyedArchive(data, bytes)
    case .modelCache: Self.runModelCache(data, bytes)
    case .storeMetadata: Self.runStoreMetadata(data, bytes)
    case .importJSON: Self.runImportJSON(data, bytes)
    case .luaMapping: Self.runLuaMapping(data, bytes)
    case .luaScript: Self.runLuaScript(data, bytes)
    case .luaHelpers: Self.runLuaHelpers(data, bytes)
    case .projectConfig: _ = try? ProjectConfig.yaml(String(decoding: data, as: UTF8.self)) { ToolError(message: $0) }
    case .storeFile: Self.runStoreFile(data, bytes)
    case .xmlStore: Self.runXMLStore(data, bytes)
    case .binaryStore: Self.runBinaryStore(data, bytes)
    case .salvage: Self.runSalvage(data, bytes)
    case .createTable: Self.runCreateTable(data)
    case .structure: Self.runStructure(data, bytes)
    case .lcov: Self.runLcov(data, bytes)
    case .fleetReport: Self.runFleetReport(data, bytes)
    case .chainFile: Self.runChainFile(data, bytes)
    }
  }

  private static func runLcov(_ data: Data, _ bytes: [UInt8]) {
    guard let coverage = try? ReviewJob.coverage(lcov: String(decoding: data, as: UTF8.self), path: "fuzz.info")
    else { return }
    _ = ReviewJob.coverage(of: ["/p/Item.lua", "Fuzz-Fuzz 2.lua", "x.lua"] + coverage.keys.prefix(4), in: coverage)
  }

  private static func runFleetReport(_ data: Data, _ bytes: [UInt8]) {
    guard let report = try? Fleet.Report.read(data) else { return }
    let merged = Fleet.Report.merged([report, report])
    _ = try? merged.json()
    _ = merged.junit(suite: "fuzz")
  }

  private static func runChainFile(_ data: Data, _ bytes: [UInt8]) {
    guard let bundle = Corpus.bundle else { return }
    let folder = Scratch.folder.appendingPathComponent("chain-policies")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    Scratch.withFile(named: "chain-policies/chain", data) { _ in
      // `try?` flattens the optional order: nil when the file is refused or names no order.
      guard let order = try? MigrationPlanner.explicitOrder(bundle, policyFolders: [folder], override: nil),
        let hashes = try? bundle.model(named: "Fuzz").entityVersionHashes
      else { return }
      _ = try? MigrationPlanner.plan(bundle: bundle, storeHashes: hashes, destination: "Fuzz 2", order: order)
    }
  }

  private static func runMappingModel(_ data: Data, _ bytes: [UInt8]) {
    guard let source = Corpus.model, let destination = Corpus.model2 else { return }
    let versions = [source, destination]
    let read =
      bytes.starts(with: Array("bplist".utf8))
      ? try? AppleMappingModel.parse(cdm: bytes, fileName: "fuzz.cdm", versions: versions, modelName: "Fuzz")
      : try? AppleMappingModel.parse(
        xcmapping: bytes, fileName: "fuzz.xcmappingmodel", versions: versions, modelName: "Fuzz")
    guard let mapping = read else { return }
    _ = mapping.mismatch(source: source, destination: destination)
    _ = try? AppleMappingConverter.convert(
      mapping, source: source, destination: destination, policyFolders: [], missing: .stub)
  }

  private static func runXcdatamodel(_ data: Data, _ bytes: [UInt8]) {
    // Whatever model a file describes, its store layout (index expressions' SQL among it) is worked out.
    if let model = try? XcdatamodelReader.parse(data, file: "fuzz.xcdatamodel") { _ = StoreSchema(model: model) }
  }

  private static func runSwiftModel(_ data: Data, _ bytes: [UInt8]) {
    if let bundle = try? SwiftDataSources.bundle(
      sources: [("fuzz.swift", String(decoding: data, as: UTF8.self))], name: "Fuzz")
    {
      for model in bundle.models { _ = model.versionHashesDigest }
    }
  }

  private static func runPredicate(_ data: Data, _ bytes: [UInt8]) {
    let text = String(decoding: data, as: UTF8.self)
    if let expression = try? IndexExpression.parse(text), let model = Corpus.model {
      var entity = model.entity(named: "Item")
      entity?.fetchIndexes = [
        FetchIndex(name: "fuzz", elements: [.init(property: "", expression: expression)], partialPredicate: text)
      ]
      if let entity, let indexed = try? ObjectModel(entities: model.entities.map { $0.name == "Item" ? entity : $0 }) {
        _ = StoreSchema(model: indexed)
      }
    }
    guard let predicate = try? FormatPredicate(text), let store = try? Corpus.sampleStore() else { return }
    let context = StoreCoordinator(store: store).newContext()
    for entity in ["Item", "Owner", "Tag"] { _ = try? context.fetch(entity, matching: predicate) }
  }

  private static func runPlist(_ data: Data, _ bytes: [UInt8]) {
    if let value = try? PropertyListValue(decoding: bytes) {
      _ = try? PropertyListValue(decoding: value.binaryEncoded())
      _ = try? PropertyListValue(decoding: value.xmlEncoded())
    }
  }

  /// Decoded, then walked whole as its readers walk it: compared, hashed, read as a mapping
  /// model's expression and as a model (an archive that shares objects over and over is refused
  /// before any of these).
  private static func runKeyedArchive(_ data: Data, _ bytes: [UInt8]) {
    guard let value = try? KeyedArchive.unarchive(bytes) else { return }
    _ = value == value
    _ = value.hashValue
    _ = MappingExpression(archived: value).description
    _ = try? ModelCache.model(from: value)
  }

  private static func runModelCache(_ data: Data, _ bytes: [UInt8]) {
    let model =
      bytes.starts(with: Array("bplist".utf8))
      ? try? ObjectModel.decodingModelCache(archive: bytes) : try? ObjectModel.decodingModelCache(compressed: bytes)
    // Whatever model a cache describes, migrun's own cache of it is written and read back.
    if let model { _ = StoreSchema(model: model) }
    if let model, let written = try? model.modelCache() {
      _ = try? ObjectModel.decodingModelCache(compressed: written)
    }
  }

  private static func runStoreMetadata(_ data: Data, _ bytes: [UInt8]) {
    if let plist = try? PropertyListValue(decoding: bytes),
      let metadata = try? StoreMetadata(uuid: "FUZZ", plist: plist), let model = Corpus.model
    {
      _ = metadata.differences(from: model)
      _ = metadata.describing(model).plist.binaryEncoded()
    }
  }

  private static func runXMLStore(_ data: Data, _ bytes: [UInt8]) {
    _ = XMLStoreFile.looksLikeXMLStore(bytes)
    guard let file = try? XMLStoreFile.read(bytes, file: "fuzz.storedata") else { return }
    if let plist = file.metadata { _ = try? StoreMetadata(uuid: file.uuid ?? "", plist: plist) }
    if let model = Corpus.model { _ = try? file.objects(of: model, file: "fuzz.storedata") }
  }

  private static func runBinaryStore(_ data: Data, _ bytes: [UInt8]) {
    guard let file = try? BinaryStoreFile.read(bytes, file: "fuzz.binary") else { return }
    _ = try? StoreMetadata(uuid: "", plist: file.metadata)
    if let model = Corpus.model { _ = try? file.objects(of: model, file: "fuzz.binary") }
  }

  private static func runSalvage(_ data: Data, _ bytes: [UInt8]) {
    let image = SQLiteFileImage(bytes: bytes, wal: Array(bytes.suffix(bytes.count / 2)))
    let read = SalvageRead(image: image, model: Corpus.model)
    _ = read.rowCount + read.tables.values.reduce(0) { $0 + $1.losses.keys.count }
  }

  private static func runCreateTable(_ data: Data) {
    let sql = String(decoding: data, as: UTF8.self)
    guard let table = CreateTableStatement(sql: sql) else { return }
    _ = (table.rowidColumn, table.columns.map(\.definition), SalvageRead.defaults(of: sql, columns: ["a", "Z_PK"]))
  }

  private static func runStructure(_ data: Data, _ bytes: [UInt8]) {
    let trees = (2...9).map { BTreeStructure.Tree(root: $0, hasIntegerKeys: $0 % 2 == 0) }
    _ = bytes.withUnsafeBytes { BTreeStructure.check($0, trees: trees) }
    Scratch.withFile(named: "structure.sqlite", data) { file in
      _ = try? StoreCheck.openForCheck(file).problems()
    }
  }

  private static func runImportJSON(_ data: Data, _ bytes: [UInt8]) {
    guard let model = Corpus.model else { return }
    let store = InMemoryStore(model: model)
    if (try? StoreJSON.importObjects(data, into: store)) != nil {
      _ = try? StoreJSON.export(store)
    }
  }

  private static func runLuaMapping(_ data: Data, _ bytes: [UInt8]) {
    Scratch.withFile(named: "Fuzz-Fuzz 2.lua", data) { file in
      guard let model = Corpus.model else { return }
      let step = MigrationStep(
        from: "Fuzz", to: "Fuzz 2", kind: .scripted([file]), inferredMapping: nil, source: model, destination: model)
      var limits = LuaLimits()
      limits.instructions = 2_000_000
      limits.memoryBytes = 16 << 20
      limits.seconds = 2
      guard let loaded = try? ScriptedStep.load(step, file: file, policyFolders: [], limits: limits),
        let source = try? Corpus.sampleStore()
      else { return }
      // The step run on the sample objects, as a policy test runs it: every hook, row function
      // and merge rule the file declares gets real objects.
      let destination = InMemoryStore(model: model)
      guard
        let manager = try? MigrationManager(
          mapping: loaded.mapping, source: source, destination: destination, policies: loaded.policies)
      else { return }
      manager.mergeRules = loaded.mergeRules
      try? manager.migrate()
    }
  }

  private static func runLuaScript(_ data: Data, _ bytes: [UInt8]) {
    guard let vm = try? LuaVM(limits: Self.smallLimits) else { return }
    let source = String(decoding: data, as: UTF8.self)
    if case .function(let function)? = (try? vm.run(source: source, name: "fuzz.lua"))?.first {
      _ = try? vm.call(function, [.text("fuzz"), .integer(1), .null])
    }
  }

  private static func runLuaHelpers(_ data: Data, _ bytes: [UInt8]) {
    guard let vm = try? LuaVM(limits: Self.smallLimits),
      let decode = try? vm.run(
        source: """
          return function(bytes)
            for _, f in ipairs({ json.decode, plist.decode, plist.unarchive, base64.decode, hex.decode, date.parse }) do
              local ok, value = pcall(f, bytes)
              if ok then pcall(json.encode, value) pcall(plist.encode, value) end
            end
          end
          """, name: "helpers.lua"
      ).first?.functionValue
    else { return }
    _ = try? vm.call(decode, [.bytes(bytes)])
  }

  private static func runStoreFile(_ data: Data, _ bytes: [UInt8]) {
    Scratch.withFile(named: "fuzz.sqlite", data) { file in
      _ = try? SQLiteStore.metadata(at: file)
      // As a model (`--model store.sqlite`): the file is sniffed, its cache read.
      _ = try? ModelBundle(modelOrStoreAt: file)
      if let store = try? SQLiteStore(url: file) {
        _ = try? store.entityCounts()
        _ = try? StoreJSON.export(store)
        // What `plan` reads: the store's own tables and triggers, and the DDL decision, which
        // parses the table constraints of its CREATE TABLE statements.
        _ = try? store.ownObjectsSummary()
        if let mapping = try? MappingModel.inferred(from: store.model, to: store.model) {
          let step = MigrationStep(
            from: "Fuzz", to: "Fuzz", kind: .inferred, inferredMapping: mapping, source: store.model,
            destination: store.model)
          _ = try? StepMethod.planned(for: step, mapping: StepMapping(mapping: mapping), store: store)
        }
        try? store.close()
      }
      // `migrun check`: every row value read as what it is, whatever its type.
      _ = try? StoreCheck.findings(of: file)
    }
  }
}

extension FuzzTarget {
  /// Limits small enough that libFuzzer's 10 s per input is never reached by a script that obeys them.
  static var smallLimits: LuaLimits {
    var limits = LuaLimits()
    limits.instructions = 2_000_000
    limits.memoryBytes = 16 << 20
    limits.seconds = 2
    return limits
  }
}

/// A private folder per process for targets that read files.
enum Scratch {
  static let folder: URL = {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "migrun-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }()

  static func withFile(named name: String, _ data: Data, _ body: (URL) -> Void) {
    let file = folder.appendingPathComponent(name)
    StoreFiles.remove(file)
    guard (try? data.write(to: file)) != nil else { return }
    body(file)
    StoreFiles.remove(file)
  }
}
