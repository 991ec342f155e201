import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import SwiftDataModel
import TestSupport
import Testing

/// What a SwiftData project's sources declare, read as SwiftData builds its model.
@Suite struct SourceModelTests {
  static let trips = SwiftDataSamples.trips

  @Test func eachVersionedSchemaIsAVersionInThePlansOrder() throws {
    let bundle = try SwiftDataSources.bundle(sources: Self.trips, name: "Trips")
    #expect(bundle.versionNames == ["1.0.0", "2.0.0"])
    #expect(bundle.currentVersionName == "2.0.0")
    let v1 = try bundle.model(named: "1.0.0")
    #expect(v1.entities.map(\.name) == ["Stop", "Trip"])
    #expect(v1.versionIdentifiers == ["1.0.0"])
  }

  @Test func attributesTakeSwiftDataTypesAndOptions() throws {
    let v2 = try SwiftDataSources.bundle(sources: Self.trips, name: "Trips").model(named: "2.0.0")
    // Stop is not listed in V2's models: a relationship reaches it, and Schema takes it in.
    #expect(v2.entities.map(\.name) == ["Stop", "Trip"])
    let trip = try #require(v2.entities.first { $0.name == "Trip" })
    func attribute(_ name: String) throws -> Attribute { try #require(trip.attributes.first { $0.name == name }) }
    #expect(try attribute("title").renamingIdentifier == "name")
    #expect(try attribute("start").type == .date)
    #expect(try attribute("start").isOptional == false)
    #expect(try attribute("rating").type == .integer64)
    #expect(try attribute("rating").defaultValueString == "3")
    #expect(try attribute("photo").isOptional)
    #expect(try attribute("photo").allowsExternalBinaryDataStorage)
    #expect(try attribute("tags").type == .transformable)
    #expect(try attribute("tags").customClassName == "Array<String>")
    #expect(try attribute("budget").type == .composite)
    #expect(try attribute("budget").elements.map(\.name) == ["amount", "currency", "history"])
    #expect(try attribute("budget").elements.map(\.type) == [.decimal, .string, .binary])
    #expect(try attribute("kind").elements.map(\.name) == ["kind"])
    #expect(try attribute("kind").elements.map(\.type) == [.string])
    #expect(try attribute("status").isOptional)
    #expect(try attribute("status").elements.map(\.name) == ["planned", "done", "cancelled"])
    // @Transient and computed properties are no part of the model.
    #expect(!trip.attributes.contains { $0.name == "cache" || $0.name == "isLong" })
    #expect(trip.uniquenessConstraints == [["title", "start"]])
  }

  @Test func relationshipsTakeTheirInverseGivenOrInferred() throws {
    let bundle = try SwiftDataSources.bundle(sources: Self.trips, name: "Trips")
    // Inferred in V1: each side has one relationship to the other.
    let v1 = try bundle.model(named: "1.0.0")
    let stops = try #require(v1.entities.first { $0.name == "Trip" }?.relationships.first)
    #expect(stops.inverseName == "trip")
    #expect(stops.maxCount == 0)
    #expect(stops.isOptional == false)
    #expect(stops.deleteRule == .nullify)
    let trip = try #require(v1.entities.first { $0.name == "Stop" }?.relationships.first)
    #expect(trip.inverseName == "stops")
    #expect(trip.maxCount == 1)
    #expect(trip.isOptional)
    // Given in V2, with its delete rule.
    let v2 = try bundle.model(named: "2.0.0")
    let given = try #require(v2.entities.first { $0.name == "Trip" }?.relationships.first)
    #expect(given.inverseName == "trip")
    #expect(given.deleteRule == .cascade)
    #expect(v2.entities.first { $0.name == "Stop" }?.relationships.first?.inverseName == "stops")
  }

  /// A relationship whose destination has none back keeps no inverse (the facts' Cocktail.spec).
  @Test func aOneWayRelationshipHasNoInverse() throws {
    let bundle = try SwiftDataSources.bundle(
      sources: [
        (
          "M.swift",
          """
          @Model class Cocktail { var spec: [Ingredient] = []; var name: String = "" }
          @Model class Ingredient { var amount: Double = 0 }
          """
        )
      ], name: "Bar")
    #expect(bundle.versionNames == ["Bar"])
    let spec = try #require(bundle.currentModel.entities.first { $0.name == "Cocktail" }?.relationships.first)
    #expect(spec.inverseName == nil)
    #expect(spec.destinationEntity == "Ingredient")
  }

  /// Apple's Codable value types are composites of the elements SwiftData stores for them (see
  /// SDKValueTypes): SwiftUI's `Color.Resolved` as four Floats (the columns of a real store),
  /// CoreGraphics' rect as its origin and size, CoreLocation's coordinate; in a struct too.
  @Test func applesValueTypesAreCompositesOfTheirStoredElements() throws {
    let bundle = try SwiftDataSources.bundle(
      sources: [
        (
          "M.swift",
          """
          import SwiftUI
          @Model class Swatch {
            var colour: Color.Resolved
            var frame: CGRect?
            var pin: CoreLocation.CLLocationCoordinate2D
            var label: Label
          }
          struct Label: Codable { var at: CGPoint; var text: String }
          """
        )
      ], name: "Swatches")
    let swatch = try #require(bundle.currentModel.entities.first { $0.name == "Swatch" })
    func elements(_ name: String) -> [String: AttributeType] {
      let attribute = swatch.attributes.first { $0.name == name }
      #expect(attribute?.type == .composite, "\(name)")
      return Dictionary(uniqueKeysWithValues: (attribute?.elements ?? []).map { ($0.name, $0.type) })
    }
    #expect(
      elements("colour") == ["linearRed": .float, "linearGreen": .float, "linearBlue": .float, "opacity": .float])
    #expect(elements("frame") == ["origin": .composite, "size": .composite])
    #expect(elements("pin") == ["latitude": .double, "longitude": .double])
    #expect(elements("label") == ["at": .composite, "text": .string])
    let columns = try #require(
      StoreSchema(model: bundle.currentModel).tables.first { $0.name == "ZSWATCH" }?.columns.map(\.name))
    for column in ["ZLINEARRED", "ZLINEARGREEN", "ZLINEARBLUE", "ZOPACITY", "ZLATITUDE", "ZLONGITUDE", "ZWIDTH"] {
      #expect(columns.contains(column), "\(columns)")
    }
  }

  /// What the text does not say is an error naming the file and line, never a guess.
  @Test func whatCannotBeReadIsAnErrorNamingFileAndLine() throws {
    let cases: [(String, String)] = [
      ("@Model class A {\n  var when = makeDate()\n}", "M.swift:2: A.when has no type"),
      (
        "@Model class A {\n  var place: CLLocation\n}",
        "M.swift:2: A.place: CLLocation is not a type SwiftData stores and is not defined in the sources given"
      ),
      (
        "@Model class A {\n  var tag: Tag\n}\nstruct Tag: Codable {\n  var shade: Shade\n}",
        "M.swift:5: Tag.shade: Shade is not a value SwiftData stores and is not defined in the sources given"
      ),
      ("@Model class A {\n  @Attribute(.fancy) var name: String\n}", "M.swift:2: A.name: @Attribute option .fancy"),
      ("@Model class A {\n  @Published var name: String\n}", "M.swift:2: A.name: @Published is not one"),
      (
        "enum S: VersionedSchema {\n  static var versionIdentifier = Schema.Version(1, 0, 0)\n  static var models: [any PersistentModel.Type] { [Missing.self] }\n}",
        "M.swift:3: S.models names Missing"
      ),
      (
        "enum S: VersionedSchema {\n  static var versionIdentifier = Schema.Version(major, 0, 0)\n  static var models: [any PersistentModel.Type] { [] }\n}",
        "M.swift:2: versionIdentifier Schema.Version(major, 0, 0)"
      ),
      ("struct Nothing {}", "no @Model class"),
      (
        "@Model class A {\n  var name: String = \"\"\n  #Fancy<A>([\\.name])\n}",
        "M.swift:3: A: #Fancy is not one migrun reads"
      ),
      // swift-syntax's time doubles with each level of '[': refused before parsing.
      (
        "@Model class A {\n  var x: " + String(repeating: "[", count: 13) + "Int",
        "M.swift:2: '[' nested more than 12 deep"
      ),
      ("@Model class A {\n  #Unique<A>([\\.nope])\n  var name: String\n}", "M.swift:1: entity 'A', property 'nope'"),
      // Int32(…) of the literal trapped.
      (
        "@Model class A {\n  @Relationship(maximumModelCount: 99999999999) var b: [B] = []\n}\n@Model class B { var a: A? }",
        "M.swift:2: A.b: maximumModelCount 99999999999 is no count Core Data holds (0 to 2147483647)"
      ),
      (
        "@Model class A {\n  @Relationship(minimumModelCount: -1) var b: [B] = []\n}\n@Model class B { var a: A? }",
        "M.swift:2: A.b: minimumModelCount -1 is no count"
      ),
      // Generic arguments: swift-syntax's time is quadratic in their depth and its stack overflowed at
      // a few thousand; string interpolations: its memory quadratic.
      (
        "@Model class A {\n  var x: " + String(repeating: "Optional<", count: 65) + "Int",
        "M.swift:2: '<' nested more than 64 deep"
      ),
      (
        "let s = \"" + String(repeating: "\\(\"", count: 300),
        "M.swift:1: '(' nested more than 256 deep"
      ),
      (String(repeating: "// a comment\n", count: 50_000), "M.swift:0: 650000 bytes, more than the 512 KiB"),
    ]
    for (text, expected) in cases {
      #expect(throws: ModelError.self) { try SwiftDataSources.bundle(sources: [("M.swift", text)], name: "M") }
      do {
        _ = try SwiftDataSources.bundle(sources: [("M.swift", text)], name: "M")
      } catch {
        #expect(error.description.contains(expected), "\(error.description)")
      }
    }
  }

  /// SwiftData migrates stage by stage: a store two versions behind walks the plan's order one
  /// version at a time (Core Data's default would go straight to the destination).
  @Test func thePlanOrderIsWalkedOneVersionAtATime() throws {
    func schema(_ number: Int, _ properties: String) -> String {
      """
      enum V\(number): VersionedSchema {
        static var versionIdentifier = Schema.Version(\(number), 0, 0)
        static var models: [any PersistentModel.Type] { [Note.self] }
        @Model final class Note { \(properties) }
      }
      """
    }
    let sources = [
      ("Notes.swift", schema(1, "var text: String = \"\"")),
      ("Notes2.swift", schema(2, "var text: String = \"\"; var pinned: Bool = false")),
      ("Notes3.swift", schema(3, "var text: String = \"\"; var pinned: Bool = false; var color: Int = 0")),
      (
        "Plan.swift",
        "enum Plan: SchemaMigrationPlan {\n  static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self, V3.self] }\n}"
      ),
    ]
    let bundle = try SwiftDataSources.bundle(sources: sources, name: "Notes")
    #expect(bundle.declaredOrder?.names == ["1.0.0", "2.0.0", "3.0.0"])
    #expect(bundle.declaredOrder?.origin == "Plan.swift:1: Plan.schemas")
    let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: [], override: nil)
    let plan = try MigrationPlanner.plan(
      bundle: bundle, storeHashes: try bundle.model(named: "1.0.0").entityVersionHashes, order: order)
    #expect(plan.steps.map(\.name) == ["1.0.0 → 2.0.0", "2.0.0 → 3.0.0"])
  }

  /// Properties without a written type take the one Swift infers from their initial value where the
  /// text says it; the value, computed when the app runs, is no default.
  @Test func typesAreInferredFromInitializersTheTextSpells() throws {
    let bundle = try SwiftDataSources.bundle(
      sources: [
        (
          "M.swift",
          """
          @Model class Note {
            var id = UUID()
            var created = Date.now
            var edited = Date()
            var count = 0
            var tags = [Tag]()
            var budget = Budget(amount: 1)
          }
          @Model class Tag { var name = "" }
          struct Budget: Codable { var amount: Decimal }
          """
        )
      ], name: "Notes")
    let note = try #require(bundle.currentModel.entities.first { $0.name == "Note" })
    let types = Dictionary(uniqueKeysWithValues: note.attributes.map { ($0.name, $0.type) })
    #expect(types == ["id": .uuid, "created": .date, "edited": .date, "count": .integer64, "budget": .composite])
    #expect(note.attributes.first { $0.name == "created" }?.defaultValueString == nil)
    #expect(note.attributes.first { $0.name == "count" }?.defaultValueString == "0")
    #expect(note.relationships.map(\.name) == ["tags"])
    #expect(note.relationships.first?.isToMany == true)
  }

  /// A struct stored as a composite takes the same declarations as an @Model class: a member's type
  /// spelled by its initial value, optionals, nested value types (a real app's `Author`).
  @Test func compositeMembersTakeTheSameDeclarationsAsModelProperties() throws {
    let bundle = try SwiftDataSources.bundle(
      sources: [
        (
          "M.swift",
          """
          @Model class Book {
            var author: Author?
            init() {}
          }
          struct Author: Codable, Equatable, Identifiable {
            var id = UUID()
            var person: String?
            var born = Date.now
            var rank = 0
            var place = Place(city: "")
            struct Place: Codable, Equatable { var city: String }
          }
          """
        )
      ], name: "Books")
    let book = try #require(bundle.currentModel.entities.first { $0.name == "Book" })
    let author = try #require(book.attributes.first { $0.name == "author" })
    #expect(author.type == .composite)
    let types = Dictionary(uniqueKeysWithValues: author.elements.map { ($0.name, $0.type) })
    #expect(types == ["id": .uuid, "person": .string, "born": .date, "rank": .integer64, "place": .composite])
    #expect(author.elements.first { $0.name == "place" }?.elements.map(\.name) == ["city"])
  }

  /// Subclasses of a model (SwiftData's inheritance) are subentities.
  @Test func aModelSubclassIsASubentity() throws {
    let bundle = try SwiftDataSources.bundle(
      sources: [
        (
          "M.swift",
          """
          @Model class Vehicle { var wheels: Int = 4 }
          @Model class Truck: Vehicle { var load: Double = 0 }
          """
        )
      ], name: "Fleet")
    let truck = try #require(bundle.currentModel.entities.first { $0.name == "Truck" })
    #expect(truck.parentName == "Vehicle")
    #expect(truck.attributes.map(\.name) == ["load"])
  }
}
