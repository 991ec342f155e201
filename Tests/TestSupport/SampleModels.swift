import Foundation
import MigrunKit
import MigrunModel

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

  /// A company for change management: employees in departments with managers (the two-window
  /// scenario), every delete rule (Company → departments → employees cascade two levels; a project's
  /// tasks deny; an employee's desk no action; the rest nullify), a many-to-many (Employee.projects)
  /// and a uniqueness constraint (Employee.email).
  public static let company = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="1">
      <entity name="Company">
        <attribute name="name" attributeType="String"/>
        <relationship name="departments" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Department" inverseName="company" inverseEntity="Department"/>
      </entity>
      <entity name="Department">
        <attribute name="name" attributeType="String"/>
        <relationship name="company" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Company" inverseName="departments" inverseEntity="Company"/>
        <relationship name="employees" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Employee" inverseName="department" inverseEntity="Employee"/>
      </entity>
      <entity name="Employee">
        <attribute name="name" attributeType="String"/>
        <attribute name="email" optional="YES" attributeType="String"/>
        <attribute name="salary" attributeType="Double" defaultValueString="0"/>
        <attribute name="counter" attributeType="Integer 64" defaultValueString="0"/>
        <relationship name="department" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Department" inverseName="employees" inverseEntity="Department"/>
        <relationship name="manager" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Employee" inverseName="reports" inverseEntity="Employee"/>
        <relationship name="reports" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Employee" inverseName="manager" inverseEntity="Employee"/>
        <relationship name="projects" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Project" inverseName="members" inverseEntity="Project"/>
        <relationship name="desk" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Desk" inverseName="occupant" inverseEntity="Desk"/>
        <uniquenessConstraints><uniquenessConstraint><constraint value="email"/></uniquenessConstraint></uniquenessConstraints>
      </entity>
      <entity name="Project">
        <attribute name="title" attributeType="String"/>
        <relationship name="members" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Employee" inverseName="projects" inverseEntity="Employee"/>
        <relationship name="tasks" optional="YES" toMany="YES" deletionRule="Deny" destinationEntity="Task" inverseName="project" inverseEntity="Task"/>
      </entity>
      <entity name="Task">
        <attribute name="title" attributeType="String"/>
        <relationship name="project" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Project" inverseName="tasks" inverseEntity="Project"/>
      </entity>
      <entity name="Desk">
        <attribute name="number" attributeType="Integer 32" defaultValueString="0"/>
        <relationship name="occupant" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Employee" inverseName="desk" inverseEntity="Employee"/>
      </entity>
    </model>
    """

  public static func companyModel() throws -> ObjectModel {
    try XcdatamodelReader.parse(Data(company.utf8), file: "Company.xcdatamodel/contents", versionName: "Company")
  }
}
