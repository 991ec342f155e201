import Foundation
import MigrunKit
import MigrunModel
import Testing

@testable import MigrunScripting
@testable import MigrunTools
@testable import TestSupport

/// The pictures name everything they draw: every entity, attribute and relationship of every
/// version of the Moody and recipe models, and what a step changes.
@Suite struct DiagramTests {
  static let bundles = [
    Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"),
    Fixtures.repositoryRoot.appendingPathComponent("policies/examples/recipes/Recipes.xcdatamodeld"),
  ]

  @Test func aModelsPictureNamesEveryEntityAttributeAndRelationship() throws {
    var checked = 0
    for url in Self.bundles {
      let bundle = try ModelBundle(modelOrStoreAt: url)
      for version in bundle.versionNames {
        let model = try bundle.model(named: version)
        let dot = Diagram.model(model, title: version)
        for entity in model.entities {
          #expect(dot.contains("\"\(entity.name)\" [label=<"), "\(version): \(entity.name)")
          if let parent = entity.parentName {
            #expect(dot.contains("<B>\(entity.name)</B> : \(parent)") || dot.contains("</I> «abstract» : \(parent)"))
            #expect(dot.contains("\"\(entity.name)\" -> \"\(parent)\" [arrowhead=\"empty\""), "\(entity.name)")
          }
          if entity.isAbstract { #expect(dot.contains("<I><B>\(entity.name)</B></I> «abstract»")) }
          for attribute in entity.attributes {
            #expect(
              dot.contains("PORT=\"\(Diagram.port(attribute.name))\">")
                && dot.contains("\(attribute.name): \(attribute.type.xmlName)"),
              "\(version): \(entity.name).\(attribute.name)")
          }
          for relationship in entity.relationships {
            let target = relationship.isToMany ? "[\(relationship.destinationEntity)]" : relationship.destinationEntity
            #expect(dot.contains("\(relationship.name) → \(target)"), "\(version): \(entity.name).\(relationship.name)")
            // Every relationship is an edge (its own or its inverse's), labelled at its end.
            #expect(
              dot.contains("headlabel=\"\(relationship.name)\"") || dot.contains("taillabel=\"\(relationship.name)\""))
          }
          checked += 1
        }
      }
    }
    #expect(checked >= 20)
  }

  /// A step's picture marks what it adds, removes and renames, and links each entity mapping.
  @Test func aStepsPictureMarksItsChanges() throws {
    let v1 = try XcdatamodelReader.parse(
      Data(
        """
        <model>
          <entity name="Note">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="body" optional="YES" attributeType="String"/>
            <attribute name="stars" optional="YES" attributeType="Integer 16"/>
          </entity>
          <entity name="Old"><attribute name="x" optional="YES" attributeType="String"/></entity>
        </model>
        """.utf8), file: "V1.xcdatamodel/contents", versionName: "V1")
    let v2 = try XcdatamodelReader.parse(
      Data(
        """
        <model>
          <entity name="Note">
            <attribute name="heading" optional="YES" attributeType="String" elementID="title"/>
            <attribute name="stars" optional="YES" attributeType="Integer 32"/>
            <attribute name="tag" optional="YES" attributeType="String"/>
          </entity>
          <entity name="Fresh"><attribute name="y" optional="YES" attributeType="String"/></entity>
        </model>
        """.utf8), file: "V2.xcdatamodel/contents", versionName: "V2")
    let dot = Diagram.step(try MappingModel.inferred(from: v1, to: v2), from: "V1", to: "V2", title: "V1 → V2")
    #expect(dot.contains("subgraph \"cluster_from\"") && dot.contains("subgraph \"cluster_to\""))
    #expect(dot.contains("heading: String? <FONT POINT-SIZE=\"9\">(renamed from title)</FONT>"))
    #expect(dot.contains("body: String? <FONT POINT-SIZE=\"9\">(removed)</FONT>"))
    #expect(dot.contains("tag: String? <FONT POINT-SIZE=\"9\">(added)</FONT>"))
    #expect(dot.contains("stars: Integer 32? <FONT POINT-SIZE=\"9\">(Integer 16 → Integer 32"))
    #expect(dot.contains("<B>Old</B></FONT><BR/><FONT POINT-SIZE=\"9\">removed</FONT>"))
    #expect(dot.contains("<B>Fresh</B></FONT><BR/><FONT POINT-SIZE=\"9\">added</FONT>"))
    #expect(dot.contains("\"from:Note\" -> \"to:Note\""))
  }

  /// A store's path: its version and the destination marked, each step labelled with its kind.
  @Test func aPlansPictureLabelsEachStepWithItsKind() throws {
    let bundle = try ModelBundle(modelOrStoreAt: Self.bundles[0])
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")
    let plan = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: [policies])
    let dot = Diagram.plan(plan, versions: bundle.versionNames, store: "device.sqlite", title: "path")
    for version in bundle.versionNames { #expect(dot.contains("\"\(version)\" [")) }
    #expect(dot.contains("label=\"Moody 2\\n(device.sqlite)\""))
    #expect(
      dot.contains(
        "\"Moody 2\" -> \"Moody 3\" [color=\"#0969da\", constraint=\"false\", label=\"Lua: Moody 2-Moody 3.lua\""))
    let direct = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: [])
    #expect(Diagram.plan(direct, versions: bundle.versionNames, store: "s", title: "t").contains("label=\"inferred\""))
  }
}
