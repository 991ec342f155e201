import Foundation
import FuzzTargets
import MigrunKit
import MigrunModel
import MigrunStore
import PropertyList
import TestSupport
import Testing

/// Every input a fuzzer found (kept in `Tests/FuzzRegressions/<target>/`) and every seed of every
/// target, replayed through the same entry points `scripts/fuzz` fuzzes. A crash here takes the
/// test process down — the failure is impossible to miss.
@Suite struct FuzzRegressionTests {
  static let kept = Fixtures.repositoryRoot.appendingPathComponent("Tests/FuzzRegressions")

  static func keptInputs(_ target: FuzzTarget) -> [URL] {
    let folder = kept.appendingPathComponent(target.rawValue)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.sorted().map { folder.appendingPathComponent($0) }
  }

  @Test(arguments: FuzzTarget.allCases) func seedsAndKeptInputsEndInAValueOrAnError(target: FuzzTarget) throws {
    let seeds = try Corpus.seeds(for: target, fixtures: Fixtures.coreData, repository: Fixtures.repositoryRoot)
    #expect(!seeds.isEmpty, "\(target.rawValue) has seeds from the fixtures")
    for (_, data) in seeds { target.run(data) }
    for file in Self.keptInputs(target) { target.run(try Data(contentsOf: file)) }
  }

  /// The inputs that killed `migrun hash` with SIGILL inside FoundationXML's XMLParser: each is now
  /// a one-line "not well-formed" error with its place.
  @Test func modelsThatTrappedFoundationsParserAreRefusedWithLineAndColumn() throws {
    let inputs = Self.keptInputs(.xcdatamodel).filter { $0.lastPathComponent.hasPrefix("foundationxml-sigill") }
    #expect(inputs.count == 4)
    for file in inputs {
      let error = try #require(throws: ModelError.self) {
        try XcdatamodelReader.parse(try Data(contentsOf: file), file: file.lastPathComponent)
      }
      #expect(error.code == .malformedXML, "\(file.lastPathComponent)")
      #expect(error.description.contains("not well-formed XML at line 1, column"), "\(error.description)")
      #expect(error.description.contains("not UTF-8"), "\(error.description)")
    }
  }

  /// The campaign, repeatable: a thousand copies of the fixtures' models with a few random
  /// bytes changed, inserted or cut. Each reads as a model or fails with a ModelError.
  @Test func aThousandMutatedModelsEachGiveAModelOrAnError() throws {
    let models = try Self.fixtureModels()
    #expect(!models.isEmpty)
    var random = SeededRandom(seed: 20_261_122)
    var (read, refused) = (0, 0)
    for round in 0..<1000 {
      var bytes = [UInt8](models[round % models.count])
      for _ in 0...(random.next() % 4) {
        let at = Int(random.next() % UInt64(max(bytes.count, 1)))
        let byte = UInt8(truncatingIfNeeded: random.next())
        switch random.next() % 3 {
        case 0 where !bytes.isEmpty: bytes[at] = byte
        case 1: bytes.insert(byte, at: min(at, bytes.count))
        default: if !bytes.isEmpty { bytes.removeSubrange(at..<min(bytes.count, at + Int(random.next() % 8) + 1)) }
        }
      }
      do {
        _ = try XcdatamodelReader.parse(Data(bytes), file: "mutated-\(round)")
        read += 1
      } catch {
        refused += 1
      }
    }
    #expect(read + refused == 1000)
    #expect(refused > 100, "most mutations break the document: \(refused) refused")
    #expect(read > 0, "some mutations leave a readable model: \(read) read")
  }

  /// A thousand mutations of `seed` — four bytes changed, cut short, a span removed, and with
  /// `headerBytes` a byte of the header changed — each handed to `read`: how many it read and how
  /// many it refused (a trap ends the test run).
  static func mutations(
    of seed: [UInt8], seed number: UInt64, headerBytes: Int = 0, _ read: ([UInt8]) throws -> Void
  ) -> (read: Int, refused: Int) {
    var generator = SeededRandom(seed: number)
    var counts = (read: 0, refused: 0)
    for _ in 0..<1000 {
      var bytes = seed
      switch generator.next() % (headerBytes > 0 ? 4 : 3) {
      case 0:
        for _ in 0..<4 {
          bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
        }
      case 1: bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count))))
      case 2:
        let start = Int(generator.next() % UInt64(bytes.count))
        bytes.removeSubrange(start..<min(bytes.count, start + Int(generator.next() % 40)))
      default: bytes[Int(generator.next() % UInt64(headerBytes))] = UInt8(truncatingIfNeeded: generator.next())
      }
      do {
        try read(bytes)
        counts.read += 1
      } catch {
        counts.refused += 1
      }
    }
    return counts
  }

  /// The XML store seed is a whole store of the corpus model (every object resolved), and a
  /// thousand mutations of it — bytes changed, cut short, spans removed — each give a store or an
  /// error, never a trap.
  @Test func mutatedXMLStoresEachGiveObjectsOrAnError() throws {
    let seed = try #require(try Corpus.xmlStoreSeeds().first { $0.0 == "sample.storedata" }?.1)
    let model = try #require(Corpus.model)
    let whole = try XMLStoreFile.read(Array(seed), file: "sample.storedata")
    #expect(try whole.objects(of: model, file: "sample.storedata").count == whole.objects.count)
    #expect(whole.objects.count > 3)
    let (read, refused) = Self.mutations(of: Array(seed), seed: 47) { bytes in
      _ = try XMLStoreFile.read(bytes, file: "mutated").objects(of: model, file: "mutated")
    }
    #expect(read + refused == 1000 && refused > 100 && read > 0, "\(read) read, \(refused) refused")
  }

  /// The binary store seed is a whole store of the corpus model written by migrun, and a thousand
  /// mutations of it — bytes changed in the header and the archives, cut short, spans removed —
  /// each give a store or an error, never a trap.
  @Test func mutatedBinaryStoresEachGiveObjectsOrAnError() throws {
    let seed = try #require(try Corpus.binaryStoreSeeds().first { $0.0 == "sample.binary" }?.1)
    let model = try #require(Corpus.model)
    let whole = try BinaryStoreFile.read(Array(seed), file: "sample.binary")
    #expect(try whole.objects(of: model, file: "sample.binary").count == whole.nodes.count)
    #expect(whole.nodes.count > 3)
    let (read, refused) = Self.mutations(of: Array(seed), seed: 4747, headerBytes: 64) { bytes in
      _ = try BinaryStoreFile.read(bytes, file: "mutated").objects(of: model, file: "mutated")
    }
    #expect(read + refused == 1000 && refused > 100 && read > 0, "\(read) read, \(refused) refused")
  }

  /// The corpus sample — every kind of value (decimals, URIs, UUIDs, a composite, a transformable's
  /// archive), inheritance, an ordered to-many and a many-to-many — written as an XML and as a
  /// binary store and read back object by object (``StoreConversion`` compares every value and
  /// link before it returns).
  @Test(arguments: [StoreType.xml, .binary])
  func everyKindOfValueComesBackFromAStoreOfAnotherType(_ type: StoreType) throws {
    let seed = try #require(try Corpus.binaryStoreSeeds().first { $0.0 == "sample.binary" }?.1)
    let model = try #require(Corpus.model)
    let objects = try BinaryStoreFile.read(Array(seed), file: "sample.binary").objects(of: model, file: "sample")
    let kinds = Set(objects.flatMap { $0.attributes.values.map { "\($0)".prefix(4) } })
    #expect(kinds.count >= 6, "\(kinds)")
    #expect(objects.contains { $0.attributes["origin.place"] != nil && $0.attributes["origin.place"] != .null })
    let folder = try TemporaryDirectory()
    let target = folder.url.appendingPathComponent("sample.\(type.rawValue)")
    let outcome = try StoreConversion.write(
      objects, metadata: StoreMetadata(model: model), model: model, as: type, to: target)
    #expect(outcome.counts.values.reduce(0, +) == objects.count)
    #expect(try AtomicStore.open(target).objects(of: model).count == objects.count)
  }

  /// What a binary store's node holds that this reader does not know — a field, or a value in a
  /// slot past the attributes' — is an error naming the object, never passed over.
  @Test func aBinaryStoreNodeThisReaderDoesNotKnowIsAnError() throws {
    let seed = Array(try #require(try Corpus.binaryStoreSeeds().first { $0.0 == "sample.binary" }?.1))
    let model = try #require(Corpus.model)
    func edited(_ edit: (inout [PropertyListValue], Int) -> Void) throws -> [UInt8] {
      let mapLength = Int(seed[40..<48].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
      var archive = try PropertyListValue(decoding: Array(seed[64..<64 + mapLength]))
      guard case .dictionary(var top) = archive, var objects = top["$objects"]?.arrayValue,
        let node = objects.firstIndex(where: { $0["NSEntityName"] != nil })
      else { return [] }
      edit(&objects, node)
      top["$objects"] = .array(objects)
      archive = .dictionary(top)
      let map = archive.binaryEncoded()
      let metadata = Array(seed[(64 + mapLength)...])
      var header = Array(seed[0..<16])
      for value in [UInt64(64 + map.count), UInt64(metadata.count), 64, UInt64(map.count)] {
        withUnsafeBytes(of: value.bigEndian) { header += $0 }
      }
      header += seed[48..<64]
      return header + map + metadata
    }
    let field = try edited { objects, node in
      if case .dictionary(var fields) = objects[node] {
        fields["NSFutureField"] = .integer(1)
        objects[node] = .dictionary(fields)
      }
    }
    let unknown = try #require(throws: StoreError.self) { try BinaryStoreFile.read(field, file: "f.binary") }
    #expect(unknown.reason.contains("'NSFutureField'"), "\(unknown)")
    let slot = try edited { objects, node in
      guard let values = objects[node]["NSAttributeValues"]?.uidValue,
        case .dictionary(var list) = objects[Int(values)], var slots = list["NS.objects"]?.arrayValue
      else { return }
      slots.append(.uid(UInt64(objects.count)))
      list["NS.objects"] = .array(slots)
      objects[Int(values)] = .dictionary(list)
      objects.append(.string("a value past the attributes"))
    }
    let misplaced = try #require(throws: StoreError.self) {
      try BinaryStoreFile.read(slot, file: "s.binary").objects(of: model, file: "s.binary")
    }
    #expect(misplaced.reason.contains("value slots"), "\(misplaced)")
  }

  /// An archive whose objects share one list many times over is refused before it is walked (a
  /// binary property list can point at one array from many places: walked whole, a small file
  /// would take hours), and so is one whose objects nest deeper than an archive's do.
  @Test func aBinaryStoreWhoseArchiveSharesOrNestsBeyondAnArchiveIsRefused() throws {
    let wide = PropertyListValue.array(Array(repeating: .integer(1), count: 100_000))
    let shared = PropertyListValue.dictionary(["x": .array(Array(repeating: wide, count: 100_000))])
    #expect(shared.size(upTo: 1_000_000, depth: 4) == nil)
    #expect(wide.size(upTo: 1_000_000, depth: 4) == 100_001)
    var nested = PropertyListValue.integer(1)
    for _ in 0..<6 { nested = .array([nested]) }
    let archive = PropertyListValue.dictionary([
      "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
      "$objects": .array([.string("$null"), .dictionary(["x": nested])]), "$top": .dictionary(["mapData": .uid(1)]),
    ]).binaryEncoded()
    var header = Array("CoreData".utf8) + [0, 0, 0, 1, 0x08, 0x04, 0x08, 0x00]
    func append(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { header += $0 } }
    append(UInt64(64 + archive.count))
    append(UInt64(archive.count))
    append(64)
    append(UInt64(archive.count))
    append(1)
    append(0)
    let error = try #require(throws: StoreError.self) {
      try BinaryStoreFile.read(header + archive + archive, file: "nested.binary")
    }
    #expect(error.reason.contains("nests deeper or holds more"), "\(error)")
  }

  static func fixtureModels() throws -> [Data] {
    guard let walker = FileManager.default.enumerator(at: Fixtures.coreData, includingPropertiesForKeys: nil) else {
      return []
    }
    return try walker.compactMap { $0 as? URL }.filter { $0.lastPathComponent == "contents" }
      .sorted { $0.path < $1.path }.map { try Data(contentsOf: $0) }
  }
}
