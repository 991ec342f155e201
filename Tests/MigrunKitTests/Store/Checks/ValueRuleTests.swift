import Foundation
import Testing

@testable import MigrunContext
@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// The model's value rules — minimum and maximum values (numbers, dates), lengths (strings, binary
/// data) and regular expressions — checked as Core Data checks them: by every store kind, on
/// context save and in a migration's third stage, every failing object in one error.
@Suite struct ValueRuleTests {
  static let attributes = """
      <attribute name="age" optional="YES" attributeType="Integer 16" minValueString="0" maxValueString="120"/>
      <attribute name="score" optional="YES" attributeType="Double" minValueString="0.5" maxValueString="9.5"/>
      <attribute name="born" optional="YES" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="1000"/>
      <attribute name="name" optional="YES" attributeType="String" minValueString="3" maxValueString="6" regularExpressionString="[A-Z][a-zé]+"/>
      <attribute name="photo" optional="YES" attributeType="Binary" maxValueString="4"/>
    """
  static let rules = "<model><entity name=\"Person\">\(attributes)</entity></model>"

  static func model(_ xml: String = rules, _ version: String = "People") throws -> ObjectModel {
    try XcdatamodelReader.parse(Data(xml.utf8), file: "\(version).xcdatamodel/contents", versionName: version)
  }

  /// Person 1 keeps every rule; each other person breaks one.
  static let people: [[String: StoreValue]] = [
    ["age": .integer(30), "score": .double(5), "born": .date(10), "name": .string("Zoé"), "photo": .data([1, 2])],
    ["age": .integer(-1)],
    ["age": .integer(121)],
    ["score": .double(0.25)],
    ["score": .double(9.75)],
    ["born": .date(-5)],
    ["born": .date(1001)],
    ["name": .string("Ab")],
    ["name": .string("Abcdefg")],
    ["name": .string("abc")],
    ["photo": .data([1, 2, 3, 4, 5])],
  ]
  static let expected = [
    "Person/p2: 'age' -1 is below the minimum 0",
    "Person/p3: 'age' 121 is above the maximum 120",
    "Person/p4: 'score' 0.25 is below the minimum 0.5",
    "Person/p5: 'score' 9.75 is above the maximum 9.5",
    "Person/p6: 'born' date -5.0 is below the minimum 0",
    "Person/p7: 'born' date 1001.0 is above the maximum 1000",
    "Person/p8: 'name' \"Ab\" is 2 long, shorter than the minimum length 3",
    "Person/p9: 'name' \"Abcdefg\" is 7 long, longer than the maximum length 6",
    "Person/p10: 'name' \"abc\" does not match the regular expression /[A-Z][a-zé]+/",
    "Person/p11: 'photo' 5 bytes is 5 long, longer than the maximum length 4",
  ]

  static func fill(_ store: any ObjectStore) throws {
    try store.write { writer in
      for (index, values) in people.enumerated() {
        try writer.insert(
          StoredObject(id: ObjectID(entity: "Person", primaryKey: Int64(index + 1)), attributes: values))
      }
    }
  }

  @Test(arguments: StoreBehaviourTests.Kind.allCases)
  func everyStoreFindsEveryBrokenValueRule(_ kind: StoreBehaviourTests.Kind) throws {
    let folder = try TemporaryDirectory()
    let model = try Self.model()
    let store: any ObjectStore =
      kind == .sqlite
      ? try SQLiteStore.create(at: folder.url.appendingPathComponent("people.sqlite"), model: model)
      : InMemoryStore(model: model)
    try Self.fill(store)
    let found = try store.ruleViolations(limit: 50)
    #expect(found == Self.expected, "\(found)")
  }

  @Test func aSaveThatBreaksValueRulesNamesEveryObjectAndWritesNothing() throws {
    let folder = try TemporaryDirectory()
    let store = try SQLiteStore.create(
      at: folder.url.appendingPathComponent("people.sqlite"), model: try Self.model())
    let context = StoreCoordinator(store: store).newContext()
    for values in Self.people { try context.insert("Person", values) }
    let error = try #require(throws: ContextError.self) { try context.save() }
    #expect(error.code == .validation)
    #expect(error.description.contains("save failed: 10 broken rules; nothing was written"))
    for line in Self.expected {
      // Temporary IDs before the save: compare what follows the object.
      let rule = line.drop { $0 != ":" }
      #expect(error.description.contains(rule), "\(rule)")
    }
    #expect(try store.entityCounts()["Person"] ?? 0 == 0)
    // Fixing the values makes the save go through.
    let valid = StoreCoordinator(store: store).newContext()
    try valid.insert("Person", Self.people[0])
    try valid.save()
    #expect(try store.entityCounts()["Person"] == 1)
  }

  @Test func aMigrationWhoseResultBreaksValueRulesFailsInStageThreeAndKeepsTheOriginal() throws {
    let folder = try TemporaryDirectory()
    let plain = """
      <model><entity name="Person">
      <attribute name="age" optional="YES" attributeType="Integer 16"/>
      <attribute name="score" optional="YES" attributeType="Double"/>
      <attribute name="born" optional="YES" attributeType="Date"/>
      <attribute name="name" optional="YES" attributeType="String"/>
      <attribute name="photo" optional="YES" attributeType="Binary"/>
      </entity></model>
      """
    // The new version adds an attribute (so its hashes change; rules alone are not hashed) and rules.
    let withRules =
      "<model><entity name=\"Person\">\(Self.attributes)<attribute name=\"note\" optional=\"YES\" attributeType=\"String\"/></entity></model>"
    let (v1, v2) = (try Self.model(plain, "People"), try Self.model(withRules, "People 2"))
    let url = folder.url.appendingPathComponent("people.sqlite")
    let store = try SQLiteStore.create(at: url, model: v1)
    try Self.fill(store)
    try store.close()
    let before = try Data(contentsOf: url)
    let step = MigrationStep(
      from: "People", to: "People 2", kind: .inferred, inferredMapping: try MappingModel.inferred(from: v1, to: v2),
      source: v1, destination: v2)
    let plan = MigrationPlan(
      sourceVersion: "People", destinationVersion: "People 2", steps: [step], rule: .directInferred)
    for options in [StoreMigrator.Options(), StoreMigrator.Options(bulkCopy: false)] {
      let error = try #require(throws: MigrationError.self) {
        try StoreMigrator(store: url, plan: plan, options: options).run()
      }
      #expect(error.code == .validation)
      for line in Self.expected { #expect(error.description.contains(line), "\(line)") }
      #expect(try Data(contentsOf: url) == before)
    }
  }
}
