import Foundation
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import TestSupport

/// Each lint rule: a pair of versions that trips it, and one that does not.
@Suite struct ModelLintTests {
  static func model(_ version: String, _ entities: String) throws -> ObjectModel {
    try XcdatamodelReader.parse(
      Data("<model>\(entities)</model>".utf8), file: "\(version).xcdatamodel/contents", versionName: version)
  }

  static func rules(_ versions: [ObjectModel], cloudKit: Bool = false) -> [String] {
    ModelLint.findings(versions, cloudKit: cloudKit).map(\.rule)
  }

  static let base = """
    <entity name="Note">
      <attribute name="title" optional="YES" attributeType="String"/>
      <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
    </entity>
    <entity name="Folder">
      <attribute name="name" optional="YES" attributeType="String"/>
      <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
    </entity>
    """

  @Test func aNewUniquenessConstraintIsFoundUnlessAStageOrScriptCoversIt() throws {
    let v1 = try Self.model("V1", Self.base)
    let constrained = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: #"<entity name="Folder">"#,
        with:
          #"<entity name="Folder"><uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>"#
      ))
    let findings = ModelLint.findings([v1, constrained])
    #expect(findings.map(\.rule) == ["uniqueness-added"])
    #expect(findings.first?.entity == "Folder")
    #expect(findings.first?.properties == ["name"])
    #expect(ModelLint.findings([v1, constrained], staged: ["V1\u{0}V2"]).isEmpty)
    #expect(ModelLint.findings([v1, constrained], scripted: ["V1\u{0}V2"]).isEmpty)
    // Kept, it is not new.
    #expect(
      Self.rules([constrained, try Self.model("V3", constrained.entities.isEmpty ? "" : Self.constrainedBase)]).isEmpty)
  }

  static let constrainedBase = base.replacingOccurrences(
    of: #"<entity name="Folder">"#,
    with:
      #"<entity name="Folder"><uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>"#
  )

  @Test func aCompositeWhoseElementsChangedIsFound() throws {
    func version(_ name: String, _ elements: [Attribute]) throws -> ObjectModel {
      try ObjectModel(
        entities: [
          Entity(
            name: "Trip",
            attributes: [Attribute(name: "budget", type: .composite, isOptional: true, elements: elements)])
        ], versionName: name)
    }
    let amount = Attribute(name: "amount", type: .decimal, isOptional: true)
    let currency = Attribute(name: "currency", type: .string, isOptional: true)
    let code = Attribute(name: "code", type: .string, isOptional: true)
    let v1 = try version("V1", [amount, currency])
    let findings = ModelLint.findings([v1, try version("V2", [amount, code])])
    #expect(findings.map(\.rule) == ["composite-changed"])
    #expect(findings.first?.message.contains("currency removed (their values are lost); code added") == true)
    #expect(ModelLint.findings([v1, try version("V2", [amount, currency])]).isEmpty)
  }

  @Test func aRemovedAndAnAddedPropertyOfOneTypeIsAProbableRename() throws {
    let v1 = try Self.model("V1", Self.base)
    let renamedWithoutID = try Self.model(
      "V2", Self.base.replacingOccurrences(of: #"name="title""#, with: #"name="heading""#))
    let findings = ModelLint.findings([v1, renamedWithoutID])
    #expect(findings.map(\.rule) == ["probable-rename"])
    #expect(findings.first?.properties == ["title", "heading"])
    #expect(findings.first?.versions == ["V1", "V2"])
    #expect(
      findings.first?.description.hasPrefix(
        "V1 → V2: Note.title, heading: 'title' removed and 'heading' (String) added") == true)
    let renamedWithID = try Self.model(
      "V2", Self.base.replacingOccurrences(of: #"name="title""#, with: #"name="heading" elementID="title""#))
    #expect(Self.rules([v1, renamedWithID]).isEmpty)
    // Another type is not a rename.
    let otherType = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: #"<attribute name="title" optional="YES" attributeType="String"/>"#,
        with: #"<attribute name="count" optional="YES" attributeType="Integer 32"/>"#))
    #expect(Self.rules([v1, otherType]).isEmpty)
    // Relationships too: the same destination and cardinality under a new name.
    let relationshipRenamed = try Self.model(
      "V2",
      Self.base.replacingOccurrences(of: #"name="folder""#, with: #"name="parent""#).replacingOccurrences(
        of: #"inverseName="folder""#, with: #"inverseName="parent""#))
    #expect(Self.rules([v1, relationshipRenamed]) == ["probable-rename"])
    // An unrelated name with another optionality is another attribute (DuckDuckGo's isFavorite →
    // isPendingDeletion); a related name is a rename whatever its optionality.
    let unrelated = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: #"<attribute name="title" optional="YES" attributeType="String"/>"#,
        with: #"<attribute name="summary" attributeType="String" defaultValueString="-"/>"#))
    #expect(Self.rules([v1, unrelated]).isEmpty)
    let related = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: #"<attribute name="title" optional="YES" attributeType="String"/>"#,
        with: #"<attribute name="fullTitle" attributeType="String" defaultValueString="-"/>"#))
    #expect(Self.rules([v1, related]) == ["probable-rename"])
  }

  @Test func equalHashesOverAChangedModelAreFound() throws {
    let v1 = try Self.model("V1", Self.base)
    let newDefault = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: #"name="title" optional="YES""#, with: #"name="title" optional="YES" defaultValueString="Untitled""#))
    let findings = ModelLint.findings([v1, newDefault])
    #expect(findings.map(\.rule) == ["unchanged-hashes"])
    #expect(findings.first?.message.contains("its default value changed") == true)
    // The same change with a hash modifier makes a real version.
    let modified = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: #"name="title" optional="YES""#,
        with: #"name="title" optional="YES" defaultValueString="Untitled" versionHashModifier="2""#))
    #expect(Self.rules([v1, modified]).isEmpty)
    // A copy of a version is not a change.
    #expect(Self.rules([v1, try Self.model("V2", Self.base)]).isEmpty)
  }

  @Test func aNewRequiredAttributeWithoutADefaultIsFound() throws {
    let v1 = try Self.model("V1", Self.base)
    let required = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: "<entity name=\"Note\">", with: "<entity name=\"Note\"><attribute name=\"owner\" attributeType=\"String\"/>"
      ))
    #expect(Self.rules([v1, required]) == ["required-without-default"])
    let defaulted = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: "<entity name=\"Note\">",
        with: "<entity name=\"Note\"><attribute name=\"owner\" attributeType=\"String\" defaultValueString=\"me\"/>"))
    #expect(Self.rules([v1, defaulted]).isEmpty)
    // In a new entity there are no existing objects.
    let newEntity = try Self.model(
      "V2", Self.base + #"<entity name="Tag"><attribute name="label" attributeType="String"/></entity>"#)
    #expect(Self.rules([v1, newEntity]).isEmpty)
  }

  @Test func aToOneTurnedToManyIsFound() throws {
    let v1 = try Self.model("V1", Self.base)
    let toMany = try Self.model(
      "V2",
      Self.base.replacingOccurrences(
        of: #"<relationship name="folder" optional="YES" maxCount="1""#,
        with: #"<relationship name="folder" optional="YES" toMany="YES""#))
    let findings = ModelLint.findings([v1, toMany])
    #expect(findings.map(\.rule) == ["cardinality-change"])
    #expect(findings.first?.properties == ["folder"])
    #expect(Self.rules([v1, v1]).isEmpty)
  }

  @Test func cloudKitsRulesAreFoundOnlyWhenAsked() throws {
    let fine = try Self.model("V1", Self.base)
    #expect(Self.rules([fine], cloudKit: true).isEmpty)
    let cases: [(String, String, String)] = [
      ("cloudkit-required", #"name="title" optional="YES""#, #"name="title""#),
      (
        "cloudkit-unique", "<entity name=\"Folder\">",
        "<entity name=\"Folder\"><uniquenessConstraints><uniquenessConstraint><constraint value=\"name\"/></uniquenessConstraint></uniquenessConstraints>"
      ),
      ("cloudkit-inverse", #" inverseName="notes" inverseEntity="Folder""#, ""),
      ("cloudkit-optional", #"<relationship name="notes" optional="YES""#, #"<relationship name="notes""#),
      ("cloudkit-deny", #"toMany="YES" deletionRule="Nullify""#, #"toMany="YES" deletionRule="Deny""#),
      (
        "cloudkit-ordered", #"toMany="YES" deletionRule="Nullify""#,
        #"toMany="YES" ordered="YES" deletionRule="Nullify""#
      ),
    ]
    for (rule, from, to) in cases {
      let text = Self.base.replacingOccurrences(of: from, with: to)
      #expect(text != Self.base, "\(rule)")
      let model = try Self.model("V1", text)
      #expect(Self.rules([model], cloudKit: true).contains(rule), "\(rule): \(Self.rules([model], cloudKit: true))")
      #expect(!Self.rules([model]).contains(rule), "\(rule) only with --cloudkit")
    }
    // Removals and renames between versions: fine locally with a renaming identifier, not in CloudKit.
    let renamed = try Self.model(
      "V2", Self.base.replacingOccurrences(of: #"name="title""#, with: #"name="heading" elementID="title""#))
    #expect(Self.rules([fine, renamed]).isEmpty)
    // A rename is tagged as one, not as a removal (issue 61).
    #expect(Self.rules([fine, renamed], cloudKit: true) == ["cloudkit-renamed"])
    let removed = try Self.model(
      "V2",
      Self.base.replacingOccurrences(of: #"<attribute name="title" optional="YES" attributeType="String"/>"#, with: ""))
    #expect(Self.rules([fine, removed], cloudKit: true) == ["cloudkit-removed"])
  }
}
