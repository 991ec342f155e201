import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// A migration that adds a uniqueness constraint on Person.email: duplicates fold into one
/// destination object by a Lua merge rule (newest name, largest visit count, union of tags and
/// notes), or the step fails naming both source objects and the original stays as it was.
@Suite struct MigrationMergeRuleTests {
  static func model(constrained: Bool) -> String {
    """
    <model>
      <entity name="Person">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="email" optional="YES" attributeType="String"/>
        <attribute name="modified" optional="YES" attributeType="Date"/>
        <attribute name="visits" attributeType="Integer 32" defaultValueString="0"/>
        <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="people" inverseEntity="Tag"/>
        <relationship name="notes" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Note" inverseName="person" inverseEntity="Note"/>
        \(constrained ? #"<uniquenessConstraints><uniquenessConstraint><constraint value="email"/></uniquenessConstraint></uniquenessConstraints>"# : "")
      </entity>
      <entity name="Tag">
        <attribute name="label" attributeType="String"/>
        <relationship name="people" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="tags" inverseEntity="Person"/>
      </entity>
      <entity name="Note">
        <attribute name="text" attributeType="String"/>
        <relationship name="person" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="notes" inverseEntity="Person"/>
      </entity>
    </model>
    """
  }

  /// People 1 → People 2 (email unique). Three people, two of them the same address.
  static func setUp(_ folder: TemporaryDirectory) throws -> (store: URL, bundle: ModelBundle, policies: URL) {
    try folder.write(model(constrained: false), to: "People.xcdatamodeld/People.xcdatamodel/contents")
    try folder.write(model(constrained: true), to: "People.xcdatamodeld/People 2.xcdatamodel/contents")
    let bundle = try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("People.xcdatamodeld"))
    let store = folder.url.appendingPathComponent("people.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "People"))
    let context = StoreCoordinator(store: created).newContext()
    let red = try context.insert("Tag", ["label": .string("red")])
    let blue = try context.insert("Tag", ["label": .string("blue")])
    let people: [(String, String, Double, Int64, [ManagedObject], String)] = [
      ("Ada", "ada@example.org", 100, 3, [red], "first note"),
      ("Grace Hopper", "grace@example.org", 50, 1, [red], "grace's note"),
      ("Ada Lovelace", "ada@example.org", 200, 2, [blue], "second note"),
    ]
    for (name, email, modified, visits, tags, note) in people {
      let person = try context.insert(
        "Person",
        ["name": .string(name), "email": .string(email), "modified": .date(modified), "visits": .integer(visits)])
      try person.setMembers("tags", tags)
      try context.insert("Note", ["text": .string(note)]).set("person", to: person)
    }
    try context.save()
    try created.close()
    return (store, bundle, try folder.folder("policies"))
  }

  static func migrate(
    _ store: URL, _ bundle: ModelBundle, policies: URL, mergeRules: URL? = nil
  ) throws -> StoreMigrator.Report {
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try SQLiteStore.metadata(at: store).versionHashes,
      order: VersionOrder(names: bundle.versionNames, origin: "test"),
      script: { from, to in
        let file = policies.appendingPathComponent("\(from)-\(to).lua")
        return FileManager.default.fileExists(atPath: file.path) ? [file] : nil
      })
    let migrator = StoreMigrator(store: store, plan: plan)
    let folders = [policies, Fixtures.repositoryRoot.appendingPathComponent("policies")]
    migrator.scripts = LuaScripts(policyFolders: folders, mergeRules: mergeRules)
    return try migrator.run()
  }

  /// Every person as "name <email> visits [tags] [notes]", by name.
  static func people(_ store: URL, _ bundle: ModelBundle) throws -> [String] {
    let context = StoreCoordinator(store: try SQLiteStore(url: store, model: try bundle.model(named: "People 2")))
      .newContext()
    return try context.fetch("Person", sortedBy: [.ascending("name")]).map { person in
      let tags = try person.members("tags").map { try $0.value("label").text ?? "?" }.sorted()
      let notes = try person.members("notes").map { try $0.value("text").text ?? "?" }.sorted()
      return "\(try person.value("name").text ?? "?") <\(try person.value("email").text ?? "?")> "
        + "\(try person.value("visits")) [\(tags.joined(separator: ", "))] [\(notes.joined(separator: ", "))]"
    }
  }

  static let expected = [
    "Ada Lovelace <ada@example.org> 3 [blue, red] [first note, second note]",
    "Grace Hopper <grace@example.org> 1 [red] [grace's note]",
  ]

  @Test func aMergeRulesFileFoldsDuplicatesInAnInferredStep() throws {
    let folder = try TemporaryDirectory()
    let (store, bundle, policies) = try Self.setUp(folder)
    let rules = try folder.write(
      """
      local dedupe = require "merge.dedupe"
      return { Person = dedupe.rule { newest = "modified", max = { "visits" } } }
      """, to: "rules.lua")
    let report = try Self.migrate(store, bundle, policies: policies, mergeRules: rules)
    #expect(report.steps.map(\.merged) == [1])
    #expect(report.steps.map(\.bulkCopy) == [false], "a new uniqueness constraint runs object by object")
    #expect(try Self.people(store, bundle) == Self.expected)
  }

  @Test func aMappingFilesMergeTableFoldsDuplicates() throws {
    let folder = try TemporaryDirectory()
    let (store, bundle, policies) = try Self.setUp(folder)
    try folder.write(
      """
      return {
        merge = {
          Person = function(existing, incoming)
            local newer = incoming.modified > existing.modified and incoming or existing
            return { name = newer.name, modified = newer.modified, visits = math.max(existing.visits, incoming.visits) }
          end,
        },
      }
      """, to: "policies/People-People 2.lua")
    let report = try Self.migrate(store, bundle, policies: policies)
    #expect(report.steps.map(\.merged) == [1])
    #expect(try Self.people(store, bundle) == Self.expected)
  }

  @Test func withoutARuleTheStepFailsNamingBothSourceObjects() throws {
    let folder = try TemporaryDirectory()
    let (store, bundle, policies) = try Self.setUp(folder)
    let before = try Data(contentsOf: store)
    let error = try #require(throws: MigrationError.self) { try Self.migrate(store, bundle, policies: policies) }
    #expect(error.code == .validation)
    #expect(
      error.description
        == "step People → People 2: entity 'Person': Person/p1 and Person/p3 both become the Person with email = \"ada@example.org\" (uniqueness constraint (email)); give a merge rule for Person (the mapping file's `merge` table, or MigrationScripts.mergeRules)"
    )
    #expect(try Data(contentsOf: store) == before, "the original store is byte-identical")
    #expect(StoreMigrator.staleFiles(beside: store).isEmpty, "no working files left")
  }

  @Test func aMergeRuleNamingAnUnknownEntityIsRefused() throws {
    let folder = try TemporaryDirectory()
    let (store, bundle, policies) = try Self.setUp(folder)
    try folder.write(
      "return { merge = { Persons = function(a, b) return a end } }", to: "policies/People-People 2.lua")
    let error = try #require(throws: MigrationError.self) { try Self.migrate(store, bundle, policies: policies) }
    #expect(error.description.contains("merge: the destination model has no entity 'Persons'"), "\(error)")
  }
}
