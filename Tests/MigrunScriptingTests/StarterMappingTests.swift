import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import Testing

@testable import MigrunScripting
@testable import TestSupport

/// `migrun diff --lua`: a mapping file that, run as it is written, does what the inferred step does;
/// and where nothing can be inferred, fails the step with what is to be written.
@Suite struct StarterMappingTests {
  struct Expected: Decodable { let model: String? }

  /// Migrates a copy of `store` from `from` to `to` once by the inferred step and once by the
  /// written file; returns both exports.
  static func bothWays(
    _ store: URL, bundle: ModelBundle, from: String, to: String, in folder: TemporaryDirectory
  ) throws -> (inferred: String, written: String, file: String) {
    let (source, destination) = (try bundle.model(named: from), try bundle.model(named: to))
    let inferred = try folder.folder(UUID().uuidString).appendingPathComponent(store.lastPathComponent)
    try FileManager.default.copyItem(at: store, to: inferred)
    _ = try StoreMigrator(store: inferred, plan: try Migrations.plan(source, destination, from: from, to: to))
      .run()
    let scripts = try folder.folder(UUID().uuidString)
    let text = StarterMapping.lua(source: source, destination: destination, from: from, to: to)
    let file = scripts.appendingPathComponent(StarterMapping.fileName(from: from, to: to))
    try Data(text.utf8).write(to: file)
    let written = try folder.folder(UUID().uuidString).appendingPathComponent(store.lastPathComponent)
    try FileManager.default.copyItem(at: store, to: written)
    let step = MigrationStep(
      from: from, to: to, kind: .scripted([file]), inferredMapping: nil, source: source, destination: destination)
    let migrator = StoreMigrator(
      store: written,
      plan: MigrationPlan(sourceVersion: from, destinationVersion: to, steps: [step], rule: .chain("test")))
    migrator.scripts = LuaScripts(policyFolders: [scripts])
    _ = try migrator.run()
    func export(_ url: URL) throws -> String {
      let store = try SQLiteStore(url: url, model: destination)
      defer { try? store.close() }
      return try StoreJSON.export(store)
    }
    return (try export(inferred), try export(written), text)
  }

  /// Every fixture store with its model, to every later version an inferred step reaches.
  @Test func theWrittenFileDoesWhatTheInferredStepDoes() throws {
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    let folder = try TemporaryDirectory()
    var compared: [String] = []
    for (store, expected) in try JSONDecoder().decode([String: Expected].self, from: data).sorted(by: {
      $0.key < $1.key
    }) {
      guard let contents = expected.model else { continue }
      let version = Fixtures.url(contents).deletingLastPathComponent()
      let bundle = try ModelBundle(modelOrStoreAt: version.deletingLastPathComponent())
      let from = version.deletingPathExtension().lastPathComponent
      guard let start = bundle.versionNames.firstIndex(of: from) else { continue }
      for to in bundle.versionNames[(start + 1)...] {
        guard (try? MappingModel.inferred(from: bundle.model(named: from), to: bundle.model(named: to))) != nil
        else { continue }
        let copy = try copyOfFixture(store, into: folder)
        let result = try Self.bothWays(copy, bundle: bundle, from: from, to: to, in: folder)
        #expect(result.written == result.inferred, "\(store): \(from) → \(to)\n\(result.file)")
        #expect(!result.file.contains("error("), "\(from) → \(to) is inferable: no placeholder")
        compared.append("\(from) → \(to)")
      }
    }
    #expect(compared.count >= 12, "\(compared)")
  }

  /// What cannot be inferred is a placeholder that fails the step, naming what to write; the rest of
  /// the file is spelled out as usual.
  @Test func whatCannotBeInferredFailsUntilWritten() throws {
    let v1 = try XcdatamodelReader.parse(
      Data(
        """
        <model>
          <entity name="Note">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="stars" optional="YES" attributeType="String"/>
          </entity>
        </model>
        """.utf8), file: "V1.xcdatamodel/contents", versionName: "V1")
    let v2 = try XcdatamodelReader.parse(
      Data(
        """
        <model>
          <entity name="Note">
            <attribute name="heading" optional="YES" attributeType="String" elementID="title"/>
            <attribute name="stars" optional="YES" attributeType="Integer 16"/>
            <attribute name="owner" attributeType="String"/>
          </entity>
        </model>
        """.utf8), file: "V2.xcdatamodel/contents", versionName: "V2")
    let text = StarterMapping.lua(source: v1, destination: v2, from: "V1", to: "V2")
    #expect(text.contains(#"heading = "title", -- renamed: was title"#))
    #expect(
      text.contains(
        #"stars = function(src) error("Note.stars changes type from String to Integer 16; write a mapping script") end,"#
      ))
    #expect(
      text.contains(
        #"owner = function(src) error("Note.owner is new and required without a default value; give it a default or write a mapping script") end,"#
      ))
    #expect(text.contains("-- 2 value(s) cannot be inferred"))
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("notes.sqlite")
    try SQLiteStore.create(at: store, model: v1).close()
    let writer = try SQLiteStore(url: store, model: v1, access: .readWrite)
    try writer.write { writer in
      var note = StoredObject(id: ObjectID(entity: "Note", primaryKey: try writer.newPrimaryKey(for: "Note")))
      note.attributes = ["title": .string("a"), "stars": .string("3")]
      try writer.insert(note)
    }
    try writer.close()
    let file = folder.url.appendingPathComponent("V1-V2.lua")
    try Data(text.utf8).write(to: file)
    let step = MigrationStep(
      from: "V1", to: "V2", kind: .scripted([file]), inferredMapping: nil, source: v1, destination: v2)
    let migrator = StoreMigrator(
      store: store,
      plan: MigrationPlan(sourceVersion: "V1", destinationVersion: "V2", steps: [step], rule: .chain("test")))
    migrator.scripts = LuaScripts(policyFolders: [folder.url])
    #expect {
      try migrator.run()
    } throws: { error in
      "\(error)".contains("Note.")
    }
    #expect(try SQLiteStore.metadata(at: store).versionHashes == v1.entityVersionHashes, "the original is untouched")
  }
}
