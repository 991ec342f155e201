import Foundation
import GRDB
import PropertyList
import TestSupport
import Testing

@testable import MigrunModel
@testable import MigrunStore

/// Keyed archives whose objects each refer twice to the next, 50 deep (issue 69): a few kilobytes
/// that a tree walk visits 2^50 times. In a mapping model's value expression, a compiled mapping
/// model, a store's model cache or a compiled model, every command that reads them ends at once,
/// exit 1, naming the file and the bound — never a hang, never a crash.
@Suite struct HostileArchiveTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let samples = "coredataplus-samplemodels/SampleModel/"
  static let refusal = "shares objects so deeply its expanded form exceeds 500000 nodes"

  /// `NSFunctionExpression`s, each the next one's operand and only argument, 50 deep.
  static func sharedExpression(_ archiver: inout KeyedArchiver) -> PropertyListValue {
    var next = archiver.object(
      ["NSConstantValueExpression", "NSExpression", "NSObject"], ["NSConstantValue": archiver.string("x")])
    for _ in 0..<50 {
      next = archiver.object(
        ["NSFunctionExpression", "NSExpression", "NSObject"],
        ["NSSelectorName": archiver.string("add:to:"), "NSOperand": next, "NSArguments": archiver.array([next])])
    }
    return next
  }

  /// `NSCompoundPredicate`s (AND), each holding the next one twice, 50 deep.
  static func sharedPredicate(_ archiver: inout KeyedArchiver) -> PropertyListValue {
    var next = archiver.object(["NSTruePredicate", "NSPredicate", "NSObject"], [:])
    for _ in 0..<50 {
      next = archiver.object(
        ["NSCompoundPredicate", "NSPredicate", "NSObject"],
        ["NSCompoundPredicateType": archiver.value(.integer(1)), "NSSubpredicates": archiver.array([next, next])])
    }
    return next
  }

  /// Moody 2's model, as its store caches it, with a fetch request template whose predicate is
  /// ``sharedPredicate(_:)``: the keyed archive (a compiled model's content), not deflated.
  static func hostileModelArchive() throws -> [UInt8] {
    // Read from a copy: a WAL store opened where it is gets a -shm and -wal beside it.
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let queue = try DatabaseQueue(path: store.path)
    let blob = try #require(try queue.read { try Data.fetchOne($0, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE") })
    try queue.close()
    let original = try PropertyListValue(decoding: ObjectModel.inflateModelCache([UInt8](blob)))
    let objects = try #require(original["$objects"]?.arrayValue)
    let rootReference = try #require(original["$top"]?["root"]?.uidValue)
    var archiver = KeyedArchiver()
    let root = try #require(archiver.embed(rootReference, from: objects).uidValue)
    var fields = try #require(archiver.objects[Int(root)].dictionaryValue)
    fields["$class"] = nil
    let predicate = sharedPredicate(&archiver)
    let request = archiver.object(["NSFetchRequest", "NSObject"], ["NSPredicate": predicate])
    fields["NSFetchRequestTemplates"] = archiver.dictionary(keys: [archiver.string("hostile")], values: [request])
    archiver.fill(root, classes: ["NSManagedObjectModel", "NSObject"], fields: fields)
    return archiver.archive(root: .uid(root)).binaryEncoded()
  }

  static func expectRefused(_ result: MigrunProcess.Result, _ what: String, naming file: String) {
    #expect(result.status == 1, "\(what): \(result.status) \(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains(Self.refusal), "\(what): \(result.stderr)")
    #expect(result.stderr.contains(file), "\(what): \(result.stderr)")
  }

  /// An `.xcmappingmodel` whose value expression is ``sharedExpression(_:)``: `convert`, `plan`
  /// and `migrate` refuse it naming the mapping model, and the store is untouched.
  @Test func aMappingModelsSharedValueExpressionIsRefused() throws {
    let folder = try TemporaryDirectory()
    let name = "Moody 4-Moody 5.xcmappingmodel"
    var xml = try String(
      contentsOf: Fixtures.url("objcio-core-data-moody/mappings").appendingPathComponent(name)
        .appendingPathComponent("xcmapping.xml"), encoding: .utf8)
    let open = #"<attribute name="valueexpressiondata" type="binary">"#
    let start = try #require(xml.range(of: open)).upperBound
    let end = try #require(xml.range(of: "</attribute>", range: start..<xml.endIndex)).lowerBound
    var archiver = KeyedArchiver()
    let root = Self.sharedExpression(&archiver)
    xml.replaceSubrange(start..<end, with: Data(archiver.archive(root: root).binaryEncoded()).base64EncodedString())
    let mapping = folder.url.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
    try xml.write(to: mapping.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 4.moody.sqlite", into: folder)
    let before = try Data(contentsOf: store)
    Self.expectRefused(
      try MigrunProcess.run(["convert", mapping.path, "--model", Self.moody]), "convert", naming: name)
    for command in ["plan", "migrate"] {
      let result = try MigrunProcess.run([
        command, store.path, "--model", Self.moody, "--to", "Moody 5", "--mapping", mapping.path,
      ])
      Self.expectRefused(result, command, naming: name)
    }
    #expect(try Data(contentsOf: store) == before)
  }

  /// A compiled mapping model (`.cdm`) holding ``sharedExpression(_:)``: `plan` refuses it by name.
  @Test func aCompiledMappingModelThatSharesObjectsIsRefused() throws {
    let folder = try TemporaryDirectory()
    var archiver = KeyedArchiver()
    let expression = Self.sharedExpression(&archiver)
    let mapping = archiver.object(["NSEntityMapping", "NSObject"], ["NSSourceExpression": expression])
    let root = archiver.object(["NSMappingModel", "NSObject"], ["NSEntityMappings": archiver.array([mapping])])
    let cdm = folder.url.appendingPathComponent("V2toV3.cdm")
    try Data(archiver.archive(root: root).binaryEncoded()).write(to: cdm)
    let store = try copyOfFixture(Self.samples + "Fixtures/SampleModel_V2.sqlite", into: folder)
    let result = try MigrunProcess.run([
      "plan", store.path, "--model", Fixtures.url(Self.samples + "SampleModel.xcdatamodeld").path,
      "--mapping", cdm.path, "--to", "SampleModel3",
    ])
    Self.expectRefused(result, "plan", naming: "V2toV3.cdm")
  }

  /// A store whose model cache has a fetch request template of ``sharedPredicate(_:)``: every
  /// command that reads the store's own model refuses it, naming Z_MODELCACHE; `salvage`, which
  /// trusts nothing of a damaged file, takes the cache for lost and asks for the model.
  @Test func aModelCacheThatSharesObjectsIsRefusedByEveryReader() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let cache = try ModelCacheArchive.deflate(try Self.hostileModelArchive())
    let queue = try DatabaseQueue(path: store.path)
    try queue.write { try $0.execute(sql: "UPDATE Z_MODELCACHE SET Z_CONTENT = ?", arguments: [Data(cache)]) }
    try queue.close()
    let out = folder.url.appendingPathComponent("out")
    for arguments in [
      ["inspect", store.path], ["export", store.path], ["hash", store.path], ["check", store.path],
      ["copy", store.path, out.path + ".xml", "--type", "xml"],
      ["diagram", store.path],
    ] {
      let result = try MigrunProcess.run(arguments)
      #expect(result.status == 1, "\(arguments): \(result.status) \(result.stdout)\(result.stderr)")
      #expect(
        (result.stderr + result.stdout).contains(Self.refusal)
          && (result.stderr + result.stdout).contains("Z_MODELCACHE"),
        "\(arguments): \(result.stdout)\(result.stderr)")
    }
    let salvage = try MigrunProcess.run(["salvage", store.path, "--out", out.path + ".sqlite"])
    #expect(salvage.status == 1, "\(salvage.stdout)\(salvage.stderr)")
    #expect(salvage.stderr.contains("give the model (--model)"), "\(salvage.stderr)")
  }

  /// A compiled model (`.mom`) holding the same archive: `hash` and `inspect --model` refuse it by name.
  @Test func aCompiledModelThatSharesObjectsIsRefused() throws {
    let folder = try TemporaryDirectory()
    let mom = folder.url.appendingPathComponent("Hostile.mom")
    try Data(try Self.hostileModelArchive()).write(to: mom)
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    Self.expectRefused(try MigrunProcess.run(["hash", mom.path]), "hash", naming: "Hostile.mom")
    Self.expectRefused(
      try MigrunProcess.run(["inspect", store.path, "--model", mom.path]), "inspect", naming: "Hostile.mom")
  }

  /// A fetch index element's expression of 100,000 `(` (the index expression parser recursed once
  /// per parenthesis, without the predicate parser's bound): the model reads, and `create` refuses
  /// the index by name — no stack overflow.
  @Test func aDeeplyNestedIndexExpressionIsRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let source = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld/Moody 6.xcdatamodel/contents")
    var contents = try String(contentsOf: source, encoding: .utf8)
    let nested = String(repeating: "(", count: 100_000) + "rating" + String(repeating: ")", count: 100_000)
    let index =
      #"<fetchIndex name="byDeep"><fetchIndexElement expression="\#(nested)" expressionType="Integer 64" "#
      + #"type="Binary" order="ascending"/></fetchIndex>"#
    let anchor = try #require(contents.range(of: #"<entity name="Mood" syncable="YES">"#))
    contents.insert(contentsOf: index, at: anchor.upperBound)
    let model = folder.url.appendingPathComponent("Moody.xcdatamodel")
    try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
    try contents.write(to: model.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    let store = folder.url.appendingPathComponent("New.sqlite")
    let result = try MigrunProcess.run(["create", store.path, "--model", model.path])
    #expect(result.status == 1, "\(result.status) \(result.stderr)")
    #expect(result.stderr.contains("nested more than 256 deep"), "\(result.stderr.prefix(2000))")
    #expect(!FileManager.default.fileExists(atPath: store.path))
  }

  /// A binary store (`NSBinaryStoreType`) whose metadata archive holds arrays that each hold the
  /// next one twice, 50 deep: the store's own archive reader walked it 2^50 times. `inspect`,
  /// `export` and `check` refuse it by name.
  @Test func aBinaryStoresSharedMetadataIsRefused() throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("Moody.binary")
    let created = try MigrunProcess.run(["create", store.path, "--type", "binary", "--model", Self.moody])
    #expect(created.status == 0, "\(created.stderr)")
    let bytes = [UInt8](try Data(contentsOf: store))
    func long(_ at: Int) -> Int { Int(bytes[at..<at + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
    let map = Array(bytes[long(32)..<long(32) + long(40)])
    var archiver = KeyedArchiver()
    var next = archiver.string("leaf")
    for _ in 0..<50 { next = archiver.array([next, next]) }
    let root = archiver.dictionary(
      keys: [archiver.string("NSStoreType"), archiver.string("hostile")], values: [archiver.string("Binary"), next])
    let metadata = archiver.archive(top: ["metadata": root]).binaryEncoded()
    let file =
      BinaryStoreFile.header(mapLength: map.count, metadataLength: metadata.count, next: Int64(long(48))) + map
      + metadata
    try Data(file).write(to: store)
    for command in ["inspect", "export", "check"] {
      let result = try MigrunProcess.run([command, store.path, "--model", Self.moody])
      #expect(result.status == 1, "\(command): \(result.status) \(result.stdout)\(result.stderr)")
      #expect(
        (result.stdout + result.stderr).contains(
          "its metadata archive shares objects so deeply its expanded form exceeds 500000 nodes"),
        "\(command): \(result.stdout)\(result.stderr)")
      #expect((result.stdout + result.stderr).contains("Moody.binary"), "\(command): \(result.stderr)")
    }
  }
}
