import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import MigrunTools
import PropertyList

/// The fixed model some targets read into, and the seed inputs of every target: taken from the
/// fixture stores and models (`../shared/fixtures/coredata`) and made from ``model``.
public enum Corpus {
  /// Every attribute type (a composite among them, whose element `id` collides with the entity's),
  /// inheritance, to-one, to-many, ordered to-many, many-to-many, a fetch index over expressions.
  public static let modelXML = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
      <entity name="Owner">
        <attribute name="name" attributeType="String" defaultValueString=""/>
        <relationship name="items" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/>
      </entity>
      <entity name="Item">
        <attribute name="title" optional="YES" attributeType="String"/>
        <attribute name="small" optional="YES" attributeType="Integer 16"/>
        <attribute name="count" optional="YES" attributeType="Integer 32"/>
        <attribute name="big" optional="YES" attributeType="Integer 64"/>
        <attribute name="price" optional="YES" attributeType="Decimal"/>
        <attribute name="ratio" optional="YES" attributeType="Double"/>
        <attribute name="weight" optional="YES" attributeType="Float"/>
        <attribute name="done" optional="YES" attributeType="Boolean"/>
        <attribute name="when" optional="YES" attributeType="Date"/>
        <attribute name="blob" optional="YES" attributeType="Binary"/>
        <attribute name="id" optional="YES" attributeType="UUID"/>
        <attribute name="link" optional="YES" attributeType="URI"/>
        <attribute name="extra" optional="YES" attributeType="Transformable"/>
        <attribute name="origin" optional="YES" attributeType="Composite" composite="Origin"/>
        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Owner" inverseName="items" inverseEntity="Owner"/>
        <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/>
        <fetchIndex name="byLower">
          <fetchIndexElement expression="lowercase:(title)" expressionType="String" type="Binary" order="ascending"/>
          <fetchIndexElement expression="ratio * (count + 1)" expressionType="Double" type="Binary" order="descending"/>
        </fetchIndex>
      </entity>
      <entity name="Special" parentEntity="Item">
        <attribute name="level" attributeType="Integer 16" defaultValueString="1"/>
      </entity>
      <entity name="Tag">
        <attribute name="name" attributeType="String" defaultValueString="tag"/>
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/>
      </entity>
      <composite name="Origin">
        <attribute name="place" optional="YES" attributeType="String"/>
        <attribute name="id" optional="YES" attributeType="UUID"/>
      </composite>
    </model>
    """

  public static let model: ObjectModel? = try? XcdatamodelReader.parse(
    Data(modelXML.utf8), file: "Fuzz.xcdatamodel/contents", versionName: "Fuzz")
  /// ``model`` again as the version `Fuzz 2`: the destination of the mapping-model target.
  public static let model2: ObjectModel? = try? XcdatamodelReader.parse(
    Data(modelXML.utf8), file: "Fuzz 2.xcdatamodel/contents", versionName: "Fuzz 2")

  /// ``model`` and ``model2`` as the two versions of one bundle (the chain-file target's).
  public static let bundle: ModelBundle? = {
    guard let model, let model2 else { return nil }
    return try? ModelBundle(
      name: "Fuzz", url: URL(fileURLWithPath: "Fuzz.xcdatamodeld"), versions: [("Fuzz", model), ("Fuzz 2", model2)],
      current: "Fuzz 2", isOrderGuessed: false)
  }()

  /// A few objects of ``model`` with every kind of value.
  static func sampleStore() throws -> InMemoryStore? {
    guard let model else { return nil }
    let store = InMemoryStore(model: model)
    try store.write { writer in
      let owner = ObjectID(entity: "Owner", primaryKey: 1)
      let tag = ObjectID(entity: "Tag", primaryKey: 1)
      try writer.insert(StoredObject(id: owner, attributes: ["name": .string("Ann")]))
      try writer.insert(StoredObject(id: tag, attributes: ["name": .string("red")]))
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Item", primaryKey: 1),
          attributes: [
            "title": .string("a \"quoted\" ü"), "small": .integer(-3), "count": .integer(70000),
            "big": .integer(Int64.max), "price": .string("12.50"), "ratio": .double(0.25), "weight": .double(-1.5),
            "done": .boolean(true), "when": .date(700_000_000), "blob": .data([0, 1, 2, 255]),
            "id": .uuid(Array(repeating: 7, count: 16)), "link": .string("https://example.com/x"),
            "extra": .data([98, 112, 108, 105, 115, 116]), "origin.place": .string("Oslo"),
            "origin.id": .uuid(Array(repeating: 9, count: 16)),
          ], toOne: ["owner": owner], toMany: ["tags": [tag]]))
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Special", primaryKey: 2), attributes: ["title": .null, "level": .integer(3)],
          toOne: ["owner": owner]))
    }
    return store
  }

  /// The probes of the sandbox review (issue 49), each a seed of `lua-script`.
  static let hostileSeeds = [
    "local co = coroutine.create(function() local g <close> = setmetatable({}, { __close = function() while true do end end }) while true do end end) coroutine.resume(co) coroutine.close(co)",
    "return string.rep('', math.maxinteger)",
    "table.move({}, 1, 1e15, 1)",
    "return string.match(('a'):rep(40), ('a?'):rep(40) .. ('a'):rep(40))",
    "return (('('):rep(1e5)):find('%b()')",
    "local t = {} for i = 1, 24 do t = { t, t } end return t",
    "return json.decode('\"\\ud800\\u0041\"')",
    "local _, real = pairs(string) if type(real) == 'table' then real.upper = nil end",
    "local f = coroutine.wrap(function() local g <close> = setmetatable({}, { __close = function() while true do end end }) while true do end end) pcall(f)",
    "return function(...) return select('#', ...), ... end",
  ]

  static let luaSeeds = [
    "return {}",
    """
    return {
      Item = { attributes = { title = function(src) return (src.title or "") .. "!" end } },
      Tag = { attributes = { name = function(src) return string.upper(src.name) end } },
    }
    """,
    """
    local M = {}
    M.Owner = { policy = { createDestinationInstances = function(src, manager) return manager:create(src) end } }
    M.merge = { Tag = function(a, b) return a end }
    return M
    """,
  ]

  /// SwiftData models in the shapes the reader takes: nested versions, options, composites.
  static let swiftSeeds = [
    """
    enum V1: VersionedSchema {
      static var versionIdentifier = Schema.Version(1, 0, 0)
      static var models: [any PersistentModel.Type] { [Trip.self] }
      @Model final class Trip {
        @Attribute(.unique, originalName: "n") var name: String
        @Relationship(deleteRule: .cascade, inverse: \\Stop.trip) var stops: [Stop] = []
        var budget: Money?
        var kind: Kind = .a
        #Unique<Trip>([\\.name])
      }
      @Model final class Stop { var trip: Trip?; var at: Date? }
    }
    struct Money: Codable { var amount: Decimal; var tags: [String] }
    enum Kind: String, Codable { case a, b }
    enum Plan: SchemaMigrationPlan { static var schemas: [any VersionedSchema.Type] { [V1.self] } }
    """,
    "@Model class A: A { var a: A? }\n@Model class B: C {}\n@Model class C: B { var x: [Int: String] = [:] }",
  ]

  /// XML store seeds: an empty store, escaped metadata, and the sample store as the XML store
  /// writer writes it.
  public static func xmlStoreSeeds() throws -> [(String, Data)] {
    var seeds: [(String, Data)] = [
      (
        "empty",
        Data("<?xml version=\"1.0\"?>\n<database><databaseInfo><metadata></metadata></databaseInfo></database>".utf8)
      ),
      (
        "escaped-metadata",
        Data(
          "<database><databaseInfo><UUID>U</UUID><metadata>&lt;plist version=\"1.0\"&gt;&lt;dict/&gt;&lt;/plist&gt;</metadata></databaseInfo><object type=\"A\" id=\"z1\"><attribute name=\"x\" type=\"int16\">1</attribute></object></database>"
            .utf8)
      ),
    ]
    if let sample = try sampleBytes(.xml) { seeds.append(("sample.storedata", sample)) }
    return seeds
  }

  /// Binary store seeds: a header alone, and the sample store as the binary store writer writes it.
  public static func binaryStoreSeeds() throws -> [(String, Data)] {
    var header = Array("CoreData".utf8) + [0, 0, 0, 1, 0x08, 0x04, 0x08, 0x00]
    header += Array(repeating: 0, count: 48)
    var seeds: [(String, Data)] = [("header-only", Data(header))]
    if let sample = try sampleBytes(.binary) { seeds.append(("sample.binary", sample)) }
    return seeds
  }

  /// The sample store (every value kind of the corpus model) as a store of `type`. A binary store
  /// holds a transformable's value, not its data: the sample's bytes become an archived string.
  static func sampleBytes(_ type: StoreType) throws -> Data? {
    guard let model = model, let store = try sampleStore() else { return nil }
    var objects: [StoredObject] = []
    for entity in model.entities where !entity.isAbstract {
      try store.forEachObject(of: entity.name, includingSubentities: false) { object in
        var object = object
        for attribute in model.attributes(of: entity) where attribute.type == .transformable {
          if case .data? = object.attributes[attribute.name] {
            var archiver = KeyedArchiver()
            let root = archiver.string("fuzz \(object.id.primaryKey)")
            object.attributes[attribute.name] = .data(archiver.archive(root: root).binaryEncoded())
          }
        }
        objects.append(object)
      }
    }
    let keys = AtomicStore.keys(for: objects, model: model)
    return Data(
      try AtomicStore.bytes(type, objects: objects, keys: keys, metadata: StoreMetadata(model: model), model: model))
  }

  /// Seed inputs for `target`, named; `fixtures` is `../shared/fixtures/coredata`, `repository` the
  /// project's folder (its Lua mapping files).
  public static func seeds(for target: FuzzTarget, fixtures: URL, repository: URL) throws -> [(String, Data)] {
    let stores = files(under: fixtures, where: { $0.pathExtension == "sqlite" })
    switch target {
    case .xcdatamodel:
      let models = files(under: fixtures, where: { $0.lastPathComponent == "contents" })
      return try models.map { (name(of: $0, in: fixtures), try Data(contentsOf: $0)) } + [
        ("fuzz-model", Data(modelXML.utf8))
      ]
    case .plist, .storeMetadata:
      return try metadataSeeds(fixtures: fixtures, stores: stores)
    case .keyedArchive, .modelCache:
      return try archiveSeeds(target, fixtures: fixtures, stores: stores)
    case .predicate:
      return predicateSeeds.enumerated().map { ("predicate-\($0.offset)", Data($0.element.utf8)) }
    case .xmlStore:
      return try xmlStoreSeeds()
    case .binaryStore:
      return try binaryStoreSeeds()
    case .salvage, .structure:
      // Small stores whole, larger ones cut to their first pages (the fuzzer works on small inputs).
      return try stores.map { (name(of: $0, in: fixtures), Data(try Data(contentsOf: $0).prefix(64 * 1024))) }
    case .createTable:
      return try createTableSeeds(stores: stores)
    case .importJSON:
      return try sampleStore().map { [("sample.json", Data(try StoreJSON.export($0).utf8))] } ?? []
    case .mappingModel:
      return try mappingModelSeeds(fixtures: fixtures)
    case .swiftModel:
      let sources = files(under: fixtures, where: { $0.pathExtension == "swift" })
      return try sources.map { (name(of: $0, in: fixtures), try Data(contentsOf: $0)) }
        + swiftSeeds.enumerated().map { ("seed\($0.offset).swift", Data($0.element.utf8)) }
    case .luaMapping, .luaScript:
      return try luaFileSeeds(for: target, repository: repository)
    case .luaHelpers:
      let plists = stores.prefix(4).compactMap { try? column("Z_PLIST", of: "Z_METADATA", in: $0) }
      return plists.enumerated().map { ("metadata\($0.offset).plist", $0.element) } + helperSeeds
    case .storeFile:
      return try storeFileSeeds(fixtures: fixtures, stores: stores)
    case .projectConfig:
      return configSeeds.enumerated().map { ("seed\($0.offset).yml", Data($0.element.utf8)) }
    case .lcov:
      return [("two-files.info", Data(lcovSeed.utf8))]
    case .fleetReport:
      return try fleetReportSeeds()
    case .swiftPort:
      return try portFileSeeds(repository: repository)
    case .chainFile:
      return [("chain", Data("# oldest first\nFuzz\n\nFuzz 2\n".utf8)), ("backwards", Data("Fuzz 2\nFuzz\n".utf8))]
    }
  }

  /// The `CREATE TABLE` statements of the first stores, and ones they do not show.
  static func createTableSeeds(stores: [URL]) throws -> [(String, Data)] {
    let statements = try stores.prefix(8).flatMap { store in
      let queue = try DatabaseQueue(path: StoreFiles.immutableURI(store))
      defer { try? queue.close() }
      return try queue.read { db in
        try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL")
      }
    }
    return (statements + tableSeeds).enumerated().map { ("table-\($0.offset).sql", Data($0.element.utf8)) }
  }

  /// The repository's Lua files: its example mapping files (`.luaMapping`) or every policy
  /// (`.luaScript`), with the seeds the examples do not show.
  static func luaFileSeeds(for target: FuzzTarget, repository: URL) throws -> [(String, Data)] {
    if target == .luaMapping {
      let mappings = files(
        under: repository.appendingPathComponent("policies/examples"), where: { $0.pathExtension == "lua" })
      return try mappings.map { ($0.lastPathComponent, try Data(contentsOf: $0)) }
        + luaSeeds.enumerated().map { ("seed\($0.offset).lua", Data($0.element.utf8)) }
    }
    let scripts = files(under: repository.appendingPathComponent("policies"), where: { $0.pathExtension == "lua" })
    return try scripts.map { (name(of: $0, in: repository), try Data(contentsOf: $0)) }
      + hostileSeeds.enumerated().map { ("hostile\($0.offset).lua", Data($0.element.utf8)) }
  }

  /// The Swift `migrun port` is tested with, and seeds the examples do not show.
  static func portFileSeeds(repository: URL) throws -> [(String, Data)] {
    let examples = files(
      under: repository.appendingPathComponent("Tests/PortExamples"), where: { $0.pathExtension == "swift" })
    return try examples.map { (name(of: $0, in: repository), try Data(contentsOf: $0)) }
      + portSeeds.enumerated().map { ("seed\($0.offset).swift", Data($0.element.utf8)) }
  }

  /// A fleet report of each status, with text that needs escaping.
  static func fleetReportSeeds() throws -> [(String, Data)] {
    let report = Fleet.Report([
      .init(path: "/s/a.sqlite", from: "Fuzz", to: "Fuzz 2", status: .migrated, objects: 3, seconds: 0.5),
      .init(path: "/s/b.sqlite", status: .failed, error: "a <failure> & \"quotes\""),
      .init(path: "/s/c.sqlite", from: "Fuzz 2", status: .current, objects: 0),
    ])
    return [("report.json", try report.json())]
  }

  /// An lcov tracefile of two files, one line with a checksum.
  static let lcovSeed = "TN:\nSF:/p/Item.lua\nDA:1,3\nDA:2,0,abc\nLF:2\nLH:1\nend_of_record\nSF:x.lua\nDA:4,1\n"

  /// Swift a policy or stage might hold that the examples do not: chains, closures, casts, odd forms.
  static let portSeeds = [
    "class P: NSEntityMigrationPolicy { override func createRelationships(forDestination d: NSManagedObject, "
      + "in m: NSEntityMapping, manager: NSMigrationManager) throws { d.setValue(a?.b?.c(x: { $0 ?? [1][0] }), "
      + "forKey: \"k\"); for (i, x) in l.enumerated() where i > 0 { continue }; switch q { case 1, 2: break; "
      + "default: throw E.x } } }",
    "let s = MigrationStage.custom(fromVersion: V1.self, toVersion: V2.self, willMigrate: nil) { c in "
      + "try c.fetch(FetchDescriptor<T>(predicate: #Predicate { !($0.a == 1 || $0.b?.c != nil) })).forEach { c.delete($0) } }",
    "let st = NSCustomMigrationStage(migratingFrom: r1, to: r2); st.willMigrateHandler = { m, s in "
      + "let c = m.container!.newBackgroundContext(); try c.performAndWait { guard let x = y as? [String: Any], "
      + "let z = x[\"q\"] as? Int else { return }; do { try c.save() } catch { print(error) } } }",
  ]

  static let tableSeeds = [
    "CREATE TABLE t (a INTEGER PRIMARY KEY, b CHECK (b <> ')'), c VARCHAR DEFAULT 'x, y', d DEFAULT (1 + 2))",
    "CREATE TABLE [t] (\"a b\" INT, `c` BLOB DEFAULT X'00ff', d DEFAULT -9223372036854775808, PRIMARY KEY (\"a b\"))",
    "CREATE TABLE t (a /* ) */ TEXT -- ,\n, b DEFAULT CURRENT_TIME) WITHOUT ROWID",
  ]

  static let predicateSeeds = [
    String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000),
    "title == 'a' AND count > 3", "ANY tags.name BEGINSWITH[cd] 'r' OR NOT (done == YES)",
    "owner.name IN {'Ann', 'Bo'} AND when BETWEEN {0, 800000000}", "items.@count > 1 AND name MATCHES 'A.*'",
    "lowercase:(title)", "ratio * (count + 1)", "add:to:(small, -2.5)", "SELF", "price != nil AND big < 9",
  ]

  /// Project files: every key, lists, anchors and aliases, a merge key.
  static let configSeeds = [
    "model: M.xcdatamodeld\npolicies: [p, q]\nchain: [A, B]\nto: B\njobs: 2\nlua: {time: 5, memory: 32}\n",
    "base: &b {time: 1}\nlua:\n  <<: *b\n  instructions: 1000\nchain: &c [V1, V2]\nto: *c\n",
  ]

  /// The host helpers' own inputs: a lone surrogate, deep nesting, a JSON object, base64.
  static let helperSeeds: [(String, Data)] = [
    ("surrogate.json", Data(#""\ud800\u0041""#.utf8)),
    ("nested.json", Data(String(repeating: "[", count: 5000).utf8)),
    ("object.json", Data(#"{"a": [1, 2.5, "x", null, true], "b": {"c": "\u00e9"}}"#.utf8)),
    ("base64.txt", Data("aGVsbG8=".utf8)),
  ]

  private static func metadataSeeds(fixtures: URL, stores: [URL]) throws -> [(String, Data)] {
    let plists = files(under: fixtures, where: { ["plist", "xccurrentversion"].contains($0.pathExtension) })
    var seeds = try plists.map { (name(of: $0, in: fixtures), try Data(contentsOf: $0)) }
    for store in stores {
      guard let blob = try column("Z_PLIST", of: "Z_METADATA", in: store) else { continue }
      seeds.append((name(of: store, in: fixtures) + ".metadata", blob))
      if let value = try? PropertyListValue(decoding: [UInt8](blob)) {
        seeds.append((name(of: store, in: fixtures) + ".metadata.xml", Data(value.xmlEncoded())))
      }
    }
    return seeds
  }

  /// An archive of `depth` expressions, each referring twice to the next (its operand and its one
  /// argument): a few kilobytes whose expanded form is 2^depth nodes. Issue 69's hostile archive.
  public static func sharedArchive(depth: Int) -> [UInt8] {
    var archiver = KeyedArchiver()
    var next = archiver.object(
      ["NSConstantValueExpression", "NSExpression", "NSObject"], ["NSConstantValue": archiver.string("leaf")])
    for _ in 0..<depth {
      next = archiver.object(
        ["NSFunctionExpression", "NSExpression", "NSObject"],
        ["NSSelectorName": archiver.string("add:to:"), "NSOperand": next, "NSArguments": archiver.array([next])])
    }
    return archiver.archive(root: next).binaryEncoded()
  }

  private static func archiveSeeds(_ target: FuzzTarget, fixtures: URL, stores: [URL]) throws -> [(String, Data)] {
    var seeds: [(String, Data)] = [("shared-50.archive", Data(sharedArchive(depth: 50)))]
    for store in stores {
      guard let blob = try column("Z_CONTENT", of: "Z_MODELCACHE", in: store) else { continue }
      if target == .modelCache { seeds.append((name(of: store, in: fixtures) + ".modelcache", blob)) }
      if let archive = try? ObjectModel.inflateModelCache([UInt8](blob)) {
        seeds.append((name(of: store, in: fixtures) + ".archive", Data(archive)))
      }
    }
    return seeds
  }

  private static func mappingModelSeeds(fixtures: URL) throws -> [(String, Data)] {
    // The fixtures' mapping models as they are (read up to the version look-up), and rewritten for
    // the Fuzz model's versions and entities (read and converted through).
    let models = files(
      under: fixtures, where: { $0.lastPathComponent == "xcmapping.xml" || $0.pathExtension == "cdm" })
    var seeds = try models.map { (name(of: $0, in: fixtures), try Data(contentsOf: $0)) }
    for (file, data) in seeds where !data.starts(with: Array("bplist".utf8)) {
      var text = String(decoding: data, as: UTF8.self)
      for (from, to) in [
        ("Country", "Item"), ("Continent", "Owner"), ("Mood", "Tag"), ("Person", "Owner"), ("Car", "Item"),
      ] {
        text = text.replacingOccurrences(of: ">\(from)<", with: ">\(to)<")
      }
      text = text.replacingOccurrences(
        of: #"name="sourcemodelpath" type="string">[^<]*<"#,
        with: #"name="sourcemodelpath" type="string">Fuzz.xcdatamodel<"#,
        options: .regularExpression)
      text = text.replacingOccurrences(
        of: #"name="destinationmodelpath" type="string">[^<]*<"#,
        with: #"name="destinationmodelpath" type="string">Fuzz 2.xcdatamodel<"#, options: .regularExpression)
      seeds.append((file + ".fuzz", Data(text.utf8)))
    }
    return seeds
  }

  private static func storeFileSeeds(fixtures: URL, stores: [URL]) throws -> [(String, Data)] {
    // Small stores only: libFuzzer mutates whole inputs, and a store of a few pages explores the
    // same code as a large one.
    var seeds = try stores.filter { (try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) ?? 0 <= 200_000 }
      .map { (name(of: $0, in: fixtures), try Data(contentsOf: $0)) }
    if let model {
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrun-seed-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      let file = folder.appendingPathComponent("fuzz.sqlite")
      let store = try SQLiteStore.create(at: file, model: model)
      if let sample = try sampleStore() {
        try StoreJSON.importObjects(Data(try StoreJSON.export(sample).utf8), into: store)
      }
      try store.close()
      seeds.append(("fuzz-model.sqlite", try Data(contentsOf: file)))
    }
    return seeds
  }

  static func files(under folder: URL, where keep: (URL) -> Bool) -> [URL] {
    guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
    return walker.compactMap { $0 as? URL }.filter(keep).sorted { $0.path < $1.path }
  }

  static func name(of file: URL, in folder: URL) -> String {
    String(file.path.dropFirst(folder.path.count + 1)).replacingOccurrences(of: "/", with: "__")
  }

  /// The first value of `column` in `table` of `store`; nil when the store has no such table (a
  /// store of Core Data before iOS 8 has no `Z_MODELCACHE`, for one).
  static func column(_ column: String, of table: String, in store: URL) throws -> Data? {
    let queue = try DatabaseQueue(path: StoreFiles.immutableURI(store))
    defer { try? queue.close() }
    return try queue.read { db in
      guard try db.tableExists(table) else { return nil }
      return try Data.fetchOne(db, sql: "SELECT \(column) FROM \(table)")
    }
  }
}
