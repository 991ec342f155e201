import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Property-based: random models with every relationship shape (see ``GeneratedModel``) are laid
/// out, filled, read back, exported, imported, and migrated through an inferred change.
@Suite struct GeneratedModelTests {
  static let seeds: [UInt64] = Array(1...40)

  /// Writes a two-version `.xcdatamodeld` for the generated model: V1 as generated, V2 with one
  /// attribute added and one renamed (renaming identifier).
  static func bundle(_ generated: GeneratedModel, in folder: TemporaryDirectory) throws -> (
    URL, renamed: (entity: String, from: String, to: String)?
  ) {
    let bundle = try folder.folder(UUID().uuidString).appendingPathComponent("Gen.xcdatamodeld")
    let entity = generated.entities[Int(generated.seed % UInt64(generated.entities.count))]
    let renamed = entity.attributes.first.map { (entity: entity.name, from: $0.name, to: $0.name + "Renamed") }
    for (version, text) in [
      ("V1", generated.xml()), ("V2", generated.xml(added: (entity.name, "addedLater"), renamed: renamed)),
    ] {
      let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      try Data(text.utf8).write(to: folder.appendingPathComponent("contents"))
    }
    return (bundle, renamed)
  }

  static func fill(_ store: SQLiteStore, with objects: [StoredObject]) throws {
    try store.write { writer in
      for object in objects { try writer.insert(object) }
      for object in objects {
        for (name, members) in object.toMany.sorted(by: { $0.key < $1.key }) {
          try writer.setToMany(object.id, name, members)
        }
      }
    }
  }

  static func readAll(_ store: SQLiteStore) throws -> [ObjectID: StoredObject] {
    var read: [ObjectID: StoredObject] = [:]
    for entity in store.model.entities {
      try store.forEachObject(of: entity.name, includingSubentities: false) { read[$0.id] = $0 }
    }
    return read
  }

  @Test(arguments: seeds) func aGeneratedModelIsLaidOutFilledReadExportedAndImported(seed: UInt64) throws {
    let generated = GeneratedModel(seed: seed)
    let folder = try TemporaryDirectory()
    let model = try XcdatamodelReader.parse(Data(generated.xml().utf8), file: "Gen", versionName: "V1")
    let objects = generated.objects(for: model, seed: seed)
    let url = folder.url.appendingPathComponent("gen.sqlite")
    let store = try SQLiteStore.create(at: url, model: model)
    try Self.fill(store, with: objects)

    // What was written is what is read, every relationship shape included.
    let read = try Self.readAll(try SQLiteStore(url: url, model: model))
    #expect(read.count == objects.count, "\(generated)")
    for object in objects {
      var expected = object
      expected.version = read[object.id]?.version ?? 0
      #expect(read[object.id] == expected, "\(generated): \(object.id)\n\(generated.xml())")
    }

    // Export → import → export is the identity.
    let first = try StoreJSON.export(store)
    let copy = try SQLiteStore.create(at: folder.url.appendingPathComponent("copy.sqlite"), model: model)
    try StoreJSON.importObjects(Data(first.utf8), into: copy)
    #expect(try StoreJSON.export(copy) == first, "\(generated)")

    // No join table with a REFLEXIVE column for a to-many without an inverse; every join table
    // and hidden column the layout names is in the file.
    let snapshot = try SchemaSnapshot(of: url)
    for entity in model.entities {
      for relationship in entity.relationships where relationship.isToMany && relationship.inverseName == nil {
        let table = "Z_\(store.schema.layout(of: entity.name)?.number ?? 0)\(relationship.name.uppercased())"
        #expect(snapshot.tables[table] == nil, "\(generated): \(table)")
      }
    }
  }

  @Test(arguments: seeds) func aGeneratedStoreMigratesThroughAnInferredChange(seed: UInt64) throws {
    let generated = GeneratedModel(seed: seed)
    let folder = try TemporaryDirectory()
    let (bundleURL, renamed) = try Self.bundle(generated, in: folder)
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let v1 = try bundle.model(named: "V1")
    let v2 = try bundle.model(named: "V2")
    let objects = generated.objects(for: v1, seed: seed)
    var exports: [String] = []
    var methods: [StepMethod] = []
    for method in [StepMethod.ddl, .copyRows, .objects] {
      let url = try folder.folder(UUID().uuidString).appendingPathComponent("gen.sqlite")
      try Self.fill(try SQLiteStore.create(at: url, model: v1), with: objects)
      let plan = try MigrationPlanner.plan(
        bundle: bundle, storeHashes: try SQLiteStore.metadata(at: url).versionHashes, destination: "V2",
        order: VersionOrder(names: ["V1", "V2"], origin: "test"))
      let report = try StoreMigrator(
        store: url, plan: plan, options: .init(bulkCopy: method != .objects, ddl: method == .ddl)
      ).run()
      methods += report.steps.map(\.method)
      let migrated = try SQLiteStore(url: url, model: v2)
      let read = try Self.readAll(migrated)
      for object in objects {
        var expected = object
        if let renamed,
          expected.id.entity == renamed.entity
            || (v1.entity(named: expected.id.entity).map { v1.entity($0, isKindOf: renamed.entity) } ?? false)
        {
          expected.attributes[renamed.to] = expected.attributes.removeValue(forKey: renamed.from)
        }
        if let entity = v2.entity(named: expected.id.entity),
          v2.attributes(of: entity).contains(where: { $0.name == "addedLater" })
        {
          expected.attributes["addedLater"] = .null
        }
        expected.version = read[object.id]?.version ?? 0
        #expect(read[object.id] == expected, "\(generated) \(method): \(object.id)")
      }
      // Laid out as a new store of the later version.
      let fresh = folder.url.appendingPathComponent("fresh-\(method).sqlite")
      try SQLiteStore.create(at: fresh, model: v2)
      let ours = try SchemaSnapshot(of: url)
      let expected = try SchemaSnapshot(of: fresh)
      #expect(ours == expected, "\(generated) \(method)\nmigrated:\n\(ours)\nnew:\n\(expected)")
      // The two stores were made apart: all but their UUIDs must be equal.
      exports.append(try StoreJSON.export(migrated).split(separator: "\n").filter { !$0.contains("\"uuid\"") }.joined())
    }
    #expect(Set(exports).count == 1, "\(generated): DDL, rows copied and object by object give the same store")
    // An attribute added and one renamed: DDL, whatever the relationships' shapes (the copy path
    // falls back to objects for some of them).
    #expect(methods.first == .ddl && methods.last == .objects, "\(generated): \(methods)")
  }
}
