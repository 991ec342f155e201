import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// Core Data's default path is one inferred step from the store's version to the destination. When
/// that step would drop values that the user's step files carry through the versions between —
/// a mapping file computing what the direct step leaves empty — the walk through them is taken, and
/// `plan` says why (the keeping-values rule, extended to scripts).
@Suite struct KeepingValuesTests {
  /// V1: Note(title). V2: Note(heading) — `title` removed, `heading` added, no renaming identifier
  /// (inference drops title). V3: V2 plus `done`.
  static func bundle(in folder: TemporaryDirectory) throws -> URL {
    let bundle = try folder.folder("Notes.xcdatamodeld")
    let versions = [
      ("V1", #"<attribute name="title" optional="YES" attributeType="String"/>"#),
      ("V2", #"<attribute name="heading" optional="YES" attributeType="String"/>"#),
      (
        "V3",
        #"<attribute name="heading" optional="YES" attributeType="String"/><attribute name="done" attributeType="Boolean" defaultValueString="NO"/>"#
      ),
    ]
    for (name, attributes) in versions {
      try folder.write(
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
          <entity name="Note" representedClassName="Note">\(attributes)</entity>
        </model>
        """, to: "Notes.xcdatamodeld/\(name).xcdatamodel/contents")
    }
    try folder.write(
      "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>V3.xcdatamodel</string></dict></plist>",
      to: "Notes.xcdatamodeld/.xccurrentversion")
    return bundle
  }

  @Test func aMappingFileThatCarriesWhatTheDirectStepDropsIsWalkedThrough() throws {
    let folder = try TemporaryDirectory()
    let bundleURL = try Self.bundle(in: folder)
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let policies = try folder.folder("policies")
    try folder.write(
      """
      return {
        Note = { attributes = { heading = function(src) return src.title end } },
      }
      """, to: "policies/V1-V2.lua")
    let store = folder.url.appendingPathComponent("notes.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "V1"))
    try created.write { writer in
      for (key, title) in [(1, "groceries"), (2, "taxes")] {
        try writer.insert(
          StoredObject(id: ObjectID(entity: "Note", primaryKey: Int64(key)), attributes: ["title": .string(title)]))
      }
    }
    try created.close()

    let plan = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: [policies])
    #expect(plan.steps.map(\.name) == ["V1 → V2", "V2 → V3"])
    #expect(plan.rule == .keepingValues(lostDirectly: ["Note.heading"]))
    // Without the file, Core Data's one inferred step: nothing carries the titles either way.
    let inferredOnly = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: [])
    #expect(inferredOnly.steps.map(\.name) == ["V1 → V3"])

    let shown = try MigrunProcess.run(["plan", store.path, "--model", bundleURL.path, "--policies", policies.path])
    #expect(shown.stdout.contains("Core Data's one inferred step would lose Note.heading"), "\(shown.stdout)")
    #expect(!shown.stdout.contains("Unused"), "\(shown.stdout)")

    let migrator = StoreMigrator(store: store, plan: plan, options: .init(keepBackup: false))
    migrator.scripts = LuaScripts(policyFolders: [policies])
    _ = try migrator.run()
    let migrated = try SQLiteStore(url: store, model: try bundle.model(named: "V3"))
    defer { try? migrated.close() }
    let headings = try [1, 2].map {
      try migrated.object(ObjectID(entity: "Note", primaryKey: $0))?.attributes["heading"]
    }
    #expect(headings == [.string("groceries"), .string("taxes")])
  }

  /// A step file the walk needs that does not load stops the plan with its error — it is not
  /// passed over for the direct inferred step (which would drop the titles the file was written to carry).
  @Test func aStepFileThatDoesNotLoadStopsThePlanByName() throws {
    let folder = try TemporaryDirectory()
    let bundleURL = try Self.bundle(in: folder)
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let policies = try folder.folder("policies")
    try folder.write(
      "return { Note = { attributes = { heading = function(src) return src.title end } ", to: "policies/V1-V2.lua")
    let store = folder.url.appendingPathComponent("notes.sqlite")
    try SQLiteStore.create(at: store, model: try bundle.model(named: "V1")).close()

    #expect {
      _ = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: [policies])
    } throws: { error in
      let message = "\(error)"
      return message.contains("V1-V2.lua") && message.contains("V1 → V2")
    }
  }
}
