import Foundation
import MigrunModel
import MigrunStore
import PropertyList
import TestSupport
import Testing

/// Every real store converted to an XML and to a binary store and back to SQLite gives the same
/// export (objects matched through the keys the conversion gave them; optimistic-locking versions,
/// which XML and binary stores do not keep, set aside).
@Suite struct StoreTypeRoundTripTests {
  /// The export of `objects` (IDs renamed by `ids`, versions 1) as a store of `model` with `metadata`.
  static func export(
    _ objects: [StoredObject], ids: [ObjectID: ObjectID] = [:], model: ObjectModel, metadata: StoreMetadata
  ) throws -> String {
    func renamed(_ id: ObjectID) -> ObjectID { ids[id] ?? id }
    let memory = InMemoryStore(model: model, metadata: metadata)
    try memory.insertAll(
      objects.map { object in
        var copy = object
        copy.id = renamed(object.id)
        copy.version = 1
        // A transformable's archive comes back as the same objects, not the same bytes (Core Data
        // re-runs the transformer too): both sides are compared as the archive they hold.
        for (name, value) in copy.attributes {
          if case .data(let bytes) = value, bytes.starts(with: Array("bplist00".utf8)),
            let archive = try? PropertyListValue(decoding: bytes), archive["$archiver"] != nil
          {
            copy.attributes[name] = .data(archive.binaryEncoded())
          }
        }
        copy.toOne = object.toOne.mapValues(renamed)
        copy.toMany = object.toMany.mapValues { $0.map(renamed) }
        return copy
      }, metadata: nil)
    return try StoreJSON.export(memory)
  }

  /// A binary store holds a transformable's value itself, not its data: a value made by a custom
  /// transformer (Moody's `colors`, `ColorsTransformer`) cannot be put there by anyone but the app,
  /// and is refused by name; every other store comes back the same.
  @Test(arguments: [StoreType.xml, .binary])
  func everyFixtureStoreComesBackTheSame(_ type: StoreType) throws {
    let folder = try TemporaryDirectory()
    var objects = 0
    var refused: [String] = []
    try StoreRoundTripTests.forEachFixtureStore(in: folder) { store, url, source in
      let model = source.model
      let (metadata, read) = try StoreConversion.read(url, model: model)
      let atomic = try folder.folder(UUID().uuidString).appendingPathComponent("store.\(type.rawValue.lowercased())")
      let there: StoreConversion.Outcome
      do {
        there = try StoreConversion.write(read, metadata: metadata, model: model, as: type, to: atomic)
      } catch let error as StoreError where type == .binary && error.code == .unsupportedValue {
        let entity = try #require(model.entity(named: error.entity ?? ""))
        let custom = model.attributes(of: entity).filter {
          $0.type == .transformable && $0.valueTransformerName != nil && error.reason.hasPrefix("'\($0.name)'")
        }
        #expect(custom.count == 1, "\(store): \(error)")
        #expect(!FileManager.default.fileExists(atPath: atomic.path), "nothing is left behind")
        refused.append(store)
        return
      }
      #expect(StoreType.of(atomic) == type)
      let opened = try AtomicStore.open(atomic)
      #expect(opened.metadata.uuid == metadata.uuid && opened.metadata.versionHashes == metadata.versionHashes)
      #expect(opened.metadata.storeType == type.rawValue)
      let (backMetadata, back) = try StoreConversion.read(atomic, model: model)
      let sqlite = atomic.deletingLastPathComponent().appendingPathComponent("back.sqlite")
      _ = try StoreConversion.write(back, metadata: backMetadata, model: model, as: .sqlite, to: sqlite)
      let (_, final) = try StoreConversion.read(sqlite, model: model)
      let expected = try Self.export(read, ids: there.ids, model: model, metadata: metadata)
      let got = try Self.export(final, model: model, metadata: metadata)
      let differing = zip(expected.split(separator: "\n"), got.split(separator: "\n")).filter { $0 != $1 }.prefix(2)
      #expect(got == expected, "\(store) via \(type): \(differing)")
      objects += read.count
    }
    #expect(objects > 200, "the fixtures hold real objects: \(objects)")
    #expect(
      type == .xml ? refused.isEmpty : refused.allSatisfy { $0.contains("moody") } && !refused.isEmpty, "\(refused)")
  }

  /// Text with what XML 1.0 has no place for (control characters, a carriage return, markup
  /// characters, a decomposed accent) comes back from an XML store as it went in.
  @Test func textOfEveryKindComesBackFromAnXMLStore() throws {
    let model = try XcdatamodelReader.parse(
      Data(
        """
        <model><entity name="Note"><attribute name="text" optional="YES" attributeType="String"/></entity></model>
        """.utf8), file: "Notes.xcdatamodel/contents", versionName: "Notes")
    let texts = ["a\u{1}b\u{1F}c", "line\r\nnext\rlast", "<tag attr=\"x\">&amp;</tag>", "e\u{301} ü  ", "", " \t "]
    let objects = texts.enumerated().map { index, text in
      StoredObject(id: ObjectID(entity: "Note", primaryKey: Int64(index + 1)), attributes: ["text": .string(text)])
    }
    let folder = try TemporaryDirectory()
    let target = folder.url.appendingPathComponent("notes.storedata")
    _ = try StoreConversion.write(objects, metadata: StoreMetadata(model: model), model: model, as: .xml, to: target)
    let back = try AtomicStore.open(target).objects(of: model).sorted { $0.id < $1.id }
    #expect(back.map { $0.attributes["text"] } == texts.map { .string($0) })
  }
}
