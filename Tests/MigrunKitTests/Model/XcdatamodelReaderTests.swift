import Foundation
import MigrunKit
import MigrunModel
import TestSupport
import Testing

@Suite struct XcdatamodelReaderTests {
  static func model(_ body: String, identifier: String? = "1") throws(ModelError) -> ObjectModel {
    let attribute = identifier.map { " userDefinedModelVersionIdentifier=\"\($0)\"" } ?? ""
    let xml = """
      <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0"\(attribute)>
      \(body)
      </model>
      """
    return try XcdatamodelReader.parse(Data(xml.utf8), file: "Test.xcdatamodel/contents", versionName: "Test")
  }

  static func error(_ body: String) -> ModelError? {
    do {
      _ = try model(body)
      return nil
    } catch {
      return error
    }
  }

  @Test func readsEveryIdentityAttribute() throws {
    let model = try Self.model(
      """
      <entity name="Item" representedClassName="ItemMO" parentEntity="Base" elementID="OldItem" versionHashModifier="m1">
        <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES" preserveAfterDeletion="YES" versionHashModifier="p1" elementID="oldBlob"/>
        <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
        <attribute name="count" attributeType="Integer 32" defaultValueString="7" indexed="YES" minValueString="0" maxValueString="9"/>
        <attribute name="total" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="parts.@count"/>
        <relationship name="parts" optional="YES" toMany="YES" ordered="YES" minCount="1" maxCount="5" deletionRule="Cascade" destinationEntity="Part" inverseName="item" inverseEntity="Part"/>
        <fetchedProperty name="recent" optional="YES">
          <fetchRequest name="fetchedPropertyFetchRequest" entity="Part" predicateString="size &gt; 2"/>
        </fetchedProperty>
        <uniquenessConstraints>
          <uniquenessConstraint><constraint value="count"/><constraint value="blob"/></uniquenessConstraint>
        </uniquenessConstraints>
        <compoundIndexes><compoundIndex><index value="count"/><index value="blob"/></compoundIndex></compoundIndexes>
        <fetchIndex name="byCount"><fetchIndexElement property="count" type="Binary" order="descending"/></fetchIndex>
        <userInfo><entry key="owner" value="team"/></userInfo>
      </entity>
      <entity name="Base" isAbstract="YES"/>
      <entity name="Part">
        <attribute name="size" attributeType="Double">
          <userInfo><entry key="unit" value="cm"/></userInfo>
        </attribute>
        <relationship name="item" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Item" inverseName="parts" inverseEntity="Item"/>
      </entity>
      <fetchRequest name="bigParts" entity="Part" predicateString="size &gt; 10"/>
      <configuration name="Cloud"><memberEntity name="Item"/><memberEntity name="Part"/></configuration>
      <elements><element name="Item" positionX="0" positionY="0" width="128" height="60"/></elements>
      <someFutureElement whatever="1"/>
      """)
    #expect(model.versionIdentifiers == ["1"])
    #expect(model.versionName == "Test")
    #expect(model.entities.map(\.name) == ["Base", "Item", "Part"])
    let item = try #require(model.entity(named: "Item"))
    #expect(item.parentName == "Base")
    #expect(item.className == "ItemMO")
    #expect(item.renamingIdentifier == "OldItem")
    #expect(item.versionHashModifier == "m1")
    #expect(item.uniquenessConstraints == [["count", "blob"]])
    #expect(item.compoundIndexes == [["count", "blob"]])
    #expect(
      item.fetchIndexes == [FetchIndex(name: "byCount", elements: [.init(property: "count", isAscending: false)])])
    #expect(item.userInfo == ["owner": "team"])
    #expect(try #require(model.entity(named: "Base")).isAbstract)

    let blob = try #require(item.attributes.first { $0.name == "blob" })
    #expect(blob.type == .binary && blob.isOptional && !blob.isTransient)
    #expect(blob.allowsExternalBinaryDataStorage && blob.preservesValueInHistoryOnDeletion)
    #expect(blob.versionHashModifier == "p1" && blob.renamingIdentifier == "oldBlob")
    #expect(try #require(item.attributes.first { $0.name == "scratch" }).isTransient)
    let count = try #require(item.attributes.first { $0.name == "count" })
    #expect(count.type == .integer32 && !count.isOptional && count.isIndexed)
    #expect(count.defaultValueString == "7")
    #expect(count.validation == ["minValueString": "0", "maxValueString": "9"])
    let total = try #require(item.attributes.first { $0.name == "total" })
    #expect(total.derivation == Derivation(expression: "parts.@count"))

    let parts = try #require(item.relationships.first)
    #expect(parts.isToMany && parts.isOrdered && parts.minCount == 1 && parts.maxCount == 5)
    #expect(parts.deleteRule == .cascade && parts.destinationEntity == "Part" && parts.inverseName == "item")
    #expect(item.fetchedProperties == [FetchedProperty(name: "recent", fetchEntity: "Part", predicate: "size > 2")])

    let part = try #require(model.entity(named: "Part"))
    #expect(part.attributes.first?.userInfo == ["unit": "cm"])
    let toOne = try #require(part.relationships.first)
    #expect(!toOne.isToMany && toOne.maxCount == 1 && toOne.minCount == 0)

    #expect(model.fetchRequests == [FetchRequestTemplate(name: "bigParts", entity: "Part", predicate: "size > 10")])
    #expect(model.configurations == ["Cloud": ["Item", "Part"]])
  }

  @Test func missingBooleansMeanNoAndMissingCountsFollowToMany() throws {
    let model = try Self.model(
      """
      <entity name="A">
        <attribute name="x" attributeType="String"/>
        <relationship name="bs" toMany="YES" deletionRule="Nullify" destinationEntity="B"/>
        <relationship name="b" deletionRule="Nullify" destinationEntity="B"/>
      </entity>
      <entity name="B"/>
      """, identifier: nil)
    let a = try #require(model.entity(named: "A"))
    let x = try #require(a.attributes.first)
    #expect(!x.isOptional && !x.isTransient && !x.allowsExternalBinaryDataStorage && !a.isAbstract)
    #expect(a.relationships.map(\.maxCount) == [0, 1])
    #expect(a.relationships.map(\.minCount) == [0, 0])
    #expect(a.relationships.map(\.isOptional) == [false, false])
    #expect(model.versionIdentifiers.isEmpty)
  }

  @Test func inheritedPropertiesResolveThroughTheHierarchy() throws {
    let model = try Self.model(
      """
      <entity name="Car"><attribute name="plate" attributeType="String"/></entity>
      <entity name="SportCar" parentEntity="Car"><attribute name="topSpeed" attributeType="Double"/></entity>
      <entity name="LuxuryCar" parentEntity="SportCar"><attribute name="plate" attributeType="String" optional="YES"/></entity>
      """)
    let luxury = try #require(model.entity(named: "LuxuryCar"))
    #expect(model.ancestors(of: luxury).map(\.name) == ["SportCar", "Car"])
    #expect(model.root(of: luxury).name == "Car")
    #expect(model.attributes(of: luxury).map(\.name) == ["plate", "topSpeed"])
    #expect(model.attributes(of: luxury).first?.isOptional == true)
    #expect(model.subentities(of: try #require(model.entity(named: "Car"))).map(\.name) == ["SportCar"])
  }

  // MARK: - Bad models

  @Test func truncatedXMLIsMalformed() throws {
    let xml = "<?xml version=\"1.0\"?><model><entity name=\"A\"><attribute name=\"x\" attributeT"
    let error = try #require(throws: ModelError.self) {
      try XcdatamodelReader.parse(Data(xml.utf8), file: "cut/contents")
    }
    #expect(error.code == .malformedXML)
    #expect(error.description.hasPrefix("cut/contents: not well-formed XML at line 1"))
  }

  @Test func aDocumentThatIsNotAModelIsRefused() {
    let error = try? #require(throws: ModelError.self) {
      try XcdatamodelReader.parse(Data("<plist><dict/></plist>".utf8), file: "f")
    }
    #expect(error?.code == .notAModel)
  }

  @Test func relationshipToMissingEntityNamesFileEntityAndProperty() {
    let error = Self.error(
      """
      <entity name="Mood"><relationship name="country" optional="YES" maxCount="1" destinationEntity="Place"/></entity>
      """)
    #expect(error?.code == .missingDestinationEntity)
    #expect(
      error?.description
        == "Test.xcdatamodel/contents: entity 'Mood', property 'country': destination entity 'Place' does not exist")
  }

  @Test func inheritanceCycleIsRefused() {
    let error = Self.error(
      """
      <entity name="A" parentEntity="C"/><entity name="B" parentEntity="A"/><entity name="C" parentEntity="B"/>
      """)
    #expect(error?.code == .inheritanceCycle)
    #expect(error?.description.contains("A → C → B → A") == true)
  }

  @Test func unknownAttributeTypeIsRefused() {
    let error = Self.error(#"<entity name="A"><attribute name="x" attributeType="Integer 128"/></entity>"#)
    #expect(error?.code == .unknownAttributeType)
    #expect(error?.entity == "A" && error?.property == "x")
    #expect(error?.description.contains("unknown attribute type 'Integer 128'") == true)
  }

  /// Letters of any script are names Xcode accepts and SQLite holds unquoted.
  @Test func lettersOfAnyScriptAreNames() throws {
    #expect(Self.error(#"<entity name="Café_2"><attribute name="größe" attributeType="String"/></entity>"#) == nil)
  }

  @Test func otherModelsCoreDataCouldNotLoadAreRefused() {
    let cases: [(String, ModelError.Code)] = [
      (
        #"<entity name="A"><attribute name="x" attributeType="String"/><attribute name="x" attributeType="Date"/></entity>"#,
        .duplicateProperty
      ),
      (#"<entity name="A"/><entity name="A"/>"#, .duplicateEntity),
      (#"<entity name="A" parentEntity="Nowhere"/>"#, .missingParentEntity),
      (
        #"<entity name="A"><relationship name="b" destinationEntity="A" inverseName="nope"/></entity>"#,
        .missingInverseRelationship
      ),
      (
        #"<entity name="A"><uniquenessConstraints><uniquenessConstraint><constraint value="ghost"/></uniquenessConstraint></uniquenessConstraints></entity>"#,
        .unknownConstraintProperty
      ),
      (#"<entity name="A"><relationship name="b" maxCount="many" destinationEntity="A"/></entity>"#, .invalidValue),
      // Names Core Data's store writes unquoted into its SQL: letters, digits and `_` only.
      (#"<entity name="A (x INTEGER); DROP TABLE Z_METADATA; --"/>"#, .invalidName),
      (#"<entity name="A"><attribute name="x&quot;y" attributeType="String"/></entity>"#, .invalidName),
      (#"<entity name="A"><relationship name="to b" destinationEntity="A"/></entity>"#, .invalidName),
      (
        #"<entity name="A"><relationship name="b" destinationEntity="A" deletionRule="Explode"/></entity>"#,
        .invalidValue
      ),
    ]
    for (body, code) in cases {
      let error = Self.error(body)
      #expect(error?.code == code, "\(body)")
      #expect(error?.file == "Test.xcdatamodel/contents")
    }
  }
}
