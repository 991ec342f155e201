import Foundation
import MigrunKit

/// Small models written for tests, covering what the fixtures do not.
public enum SampleModels {
  /// Inheritance (abstract Shape → Circle, Square), an ordered to-many (Canvas.shapes), a
  /// many-to-many (Shape.tags ↔ Tag.shapes), a self-inverse to-many (Person.friends), a uniqueness
  /// constraint (Person.email) and every attribute type (Person).
  public static let gallery = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1">
      <entity name="Canvas">
        <attribute name="title" optional="YES" attributeType="String"/>
        <relationship name="shapes" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Shape" inverseName="canvas" inverseEntity="Shape"/>
      </entity>
      <entity name="Shape" isAbstract="YES">
        <attribute name="z" attributeType="Integer 16" defaultValueString="0"/>
        <relationship name="canvas" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Canvas" inverseName="shapes" inverseEntity="Canvas"/>
        <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="shapes" inverseEntity="Tag"/>
      </entity>
      <entity name="Circle" parentEntity="Shape">
        <attribute name="radius" attributeType="Double" defaultValueString="1"/>
      </entity>
      <entity name="Square" parentEntity="Shape">
        <attribute name="side" attributeType="Float" defaultValueString="1"/>
      </entity>
      <entity name="Tag">
        <attribute name="name" attributeType="String"/>
        <relationship name="shapes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Shape" inverseName="tags" inverseEntity="Shape"/>
      </entity>
      <entity name="Person">
        <attribute name="email" optional="YES" attributeType="String"/>
        <attribute name="age" optional="YES" attributeType="Integer 32"/>
        <attribute name="big" optional="YES" attributeType="Integer 64"/>
        <attribute name="active" optional="YES" attributeType="Boolean"/>
        <attribute name="salary" optional="YES" attributeType="Decimal"/>
        <attribute name="born" optional="YES" attributeType="Date"/>
        <attribute name="photo" optional="YES" attributeType="Binary"/>
        <attribute name="settings" optional="YES" attributeType="Transformable"/>
        <attribute name="id" optional="YES" attributeType="UUID"/>
        <attribute name="homepage" optional="YES" attributeType="URI"/>
        <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
        <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="friends" inverseEntity="Person"/>
        <uniquenessConstraints><uniquenessConstraint><constraint value="email"/></uniquenessConstraint></uniquenessConstraints>
      </entity>
    </model>
    """

  public static func galleryModel() throws -> ObjectModel {
    try XcdatamodelReader.parse(Data(gallery.utf8), file: "Gallery.xcdatamodel/contents", versionName: "Gallery")
  }
}
