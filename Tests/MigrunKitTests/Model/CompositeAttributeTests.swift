import Foundation
import GRDB
import PropertyList
import TestSupport
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore

/// Composite attributes (`NSCompositeAttributeDescription`, type 2100: every SwiftData property whose
/// type is a `Codable` struct or enum), judged by what SwiftData wrote in two apps' stores — their
/// models, the hashes in their metadata and their tables' columns, kept in
/// `../shared/fixtures/facts/composite-attributes.json` (the stores themselves are held back).
@Suite struct CompositeAttributeTests {
  /// One store's facts: its model as the archive has it, each entity's stored hash and columns.
  struct StoreFacts {
    let name: String
    let model: ObjectModel
    let storedHashes: [String: String]
    let columns: [String: [[String]]]
  }

  static func facts() throws -> [StoreFacts] {
    let data = try Data(contentsOf: Fixtures.facts("composite-attributes.json"))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let stores = try #require(root["stores"] as? [String: [String: Any]])
    return try stores.sorted { $0.key < $1.key }.map { name, store in
      let entities = try #require(store["entities"] as? [[String: Any]])
      var hashes: [String: String] = [:]
      var columns: [String: [[String]]] = [:]
      let model = try ObjectModel(
        entities: try entities.map { facts in
          let entityName = try #require(facts["entity"] as? String)
          hashes[entityName] = facts["storedHash"] as? String
          columns[entityName] = facts["tableColumns"] as? [[String]]
          let properties = try #require(facts["propertiesInArchiveOrder"] as? [[String: Any]])
          var entity = Entity(
            name: entityName, uniquenessConstraints: facts["uniquenessConstraints"] as? [[String]] ?? [])
          for property in properties {
            let flags = property["_P"] as? Int ?? 0
            let propertyName = try #require(property["name"] as? String)
            if property["class"] as? String == "NSRelationshipDescription" {
              let maxCount = Int32(property["NSMaxCount"] as? Int ?? 0)
              entity.relationships.append(
                Relationship(
                  name: propertyName, destinationEntity: try #require(property["destination"] as? String),
                  inverseName: property["inverse"] as? String, minCount: Int32(property["NSMinCount"] as? Int ?? 0),
                  maxCount: maxCount, isOptional: flags & 2 != 0))
            } else {
              entity.attributes.append(try attribute(property, name: propertyName, optional: flags & 2 != 0))
            }
          }
          return entity
        })
      return StoreFacts(name: name, model: model, storedHashes: hashes, columns: columns)
    }
  }

  static func attribute(_ facts: [String: Any], name: String, optional: Bool) throws -> Attribute {
    let code = try #require(facts["NSAttributeType"] as? Int)
    let type = try #require(AttributeType(rawValue: UInt32(code)))
    let flags = facts["NSFlagsKey"] as? Int ?? 0
    let elements = try (facts["elements"] as? [[String: Any]] ?? []).map { element in
      try attribute(
        element, name: try #require(element["NSPropertyName"] as? String),
        optional: element["NSIsOptional"] as? Bool ?? false)
    }
    return Attribute(
      name: name, type: type, isOptional: optional, allowsExternalBinaryDataStorage: flags & 1 != 0,
      preservesValueInHistoryOnDeletion: flags & 16 != 0, elements: elements)
  }

  /// A composite's hash is SHA-256 over its elements' hashes in name order: every entity of both
  /// stores hashes as SwiftData stored it (and without composites, those that have them do not).
  @Test func compositesHashAsSwiftDataStoredThem() throws {
    var compared = 0
    for store in try Self.facts() {
      for entity in store.model.entities {
        #expect(
          store.model.entityVersionHashes[entity.name]?.base64 == store.storedHashes[entity.name], "\(entity.name)")
        compared += 1
        guard entity.attributes.contains(where: { $0.type == .composite }) else { continue }
        var without = entity
        without.attributes.removeAll { $0.type == .composite }
        let others = store.model.entities.filter { $0.name != entity.name }
        let skipped = try ObjectModel(entities: others + [without])
        #expect(skipped.entityVersionHashes[entity.name]?.base64 != store.storedHashes[entity.name])
      }
    }
    #expect(compared == 11)
  }

  /// Each element is a column named after the element alone (ZID1 when the entity already has a ZID),
  /// of the element's type: every table has exactly Apple's columns.
  @Test func elementsAreColumnsAsAppleLaysThemOut() throws {
    for store in try Self.facts() {
      let schema = StoreSchema(model: store.model)
      for entity in store.model.entities {
        let layout = try #require(schema.layout(of: entity.name))
        let table = try #require(schema.tables.first { $0.name == layout.table })
        let ours = Set(table.columns.map { [$0.name, $0.type] })
        let apples = Set(try #require(store.columns[entity.name]))
        #expect(ours == apples, "\(store.name): \(entity.name)")
      }
    }
    // The cocktail's author {id, person, place, year} beside its own id: one of them is ZID1.
    let cocktails = try #require(try Self.facts().first { $0.model.entity(named: "Cocktail") != nil })
    let layout = try #require(StoreSchema(model: cocktails.model).layout(of: "Cocktail"))
    #expect(layout.properties["author.person"] == .attribute(StoreSchema.Column(name: "ZPERSON", type: "VARCHAR")))
    #expect(Set([layout.properties["author.id"], layout.properties["id"]]).count == 2)
  }

  /// What a store keeps of a composite is its elements, by key path; the model keeps the composite.
  @Test func aCompositeIsStoredAsItsElementsByKeyPath() throws {
    let cocktails = try #require(try Self.facts().first { $0.model.entity(named: "Cocktail") != nil })
    let cocktail = try #require(cocktails.model.entity(named: "Cocktail"))
    let stored = cocktails.model.attributes(of: cocktail).map(\.name)
    #expect(stored.contains("author.person") && stored.contains("historicSpec.gimlet"))
    #expect(!stored.contains("author"))
    let declared = cocktails.model.declaredAttributes(of: cocktail)
    #expect(declared.first { $0.name == "author" }?.elements.map(\.name) == ["id", "person", "place", "year"])
    #expect(cocktails.model.property(named: "author.place", of: cocktail)?.name == "author.place")
  }

  /// Written into a store's `Z_MODELCACHE` and read back, composites keep their elements and hashes.
  @Test func compositesRoundTripThroughTheModelCache() throws {
    for store in try Self.facts() {
      let read = try ModelCache.model(fromCompressed: try store.model.modelCache())
      #expect(read.entityVersionHashes == store.model.entityVersionHashes, "\(store.name)")
      for entity in store.model.entities {
        let back = try #require(read.entity(named: entity.name))
        // The archive keeps no order of its own: compared by name.
        let byName = { (attributes: [Attribute]) in attributes.sorted { $0.name < $1.name } }
        #expect(byName(read.declaredAttributes(of: back)) == byName(store.model.declaredAttributes(of: entity)))
      }
    }
  }

  /// Xcode 15's model files: the entity's attribute names a `<composite>` defined beside the entities.
  @Test func compositesAreReadFromModelFiles() throws {
    let model = try XcdatamodelReader.parse(
      Data(
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
          <entity name="Quake" representedClassName="Quake" syncable="YES">
            <attribute name="code" optional="YES" attributeType="String"/>
            <attribute name="magnitude" optional="YES" attributeType="Composite" composite="Magnitude"/>
          </entity>
          <composite name="Magnitude">
            <attribute name="richter" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
            <attribute name="scale" optional="YES" attributeType="String"/>
          </composite>
        </model>
        """.utf8), file: "Quakes.xcdatamodel/contents")
    let quake = try #require(model.entity(named: "Quake"))
    let magnitude = try #require(quake.attributes.first { $0.name == "magnitude" })
    #expect(magnitude.type == .composite)
    #expect(magnitude.elements.map(\.name) == ["richter", "scale"])
    #expect(magnitude.elements.map(\.type) == [.double, .string])
    let layout = try #require(StoreSchema(model: model).layout(of: "Quake"))
    #expect(layout.properties["magnitude.richter"] == .attribute(StoreSchema.Column(name: "ZRICHTER", type: "FLOAT")))
  }

  /// A composite may hold a composite (Apple's documentation allows nesting): its elements are
  /// columns too, named after the innermost element; the cache keeps the nesting; export nests.
  @Test func nestedCompositesAreLaidOutKeptAndExported() throws {
    let model = try XcdatamodelReader.parse(
      Data(
        """
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
          <entity name="Person">
            <attribute name="home" optional="YES" attributeType="Composite" composite="Address"/>
          </entity>
          <composite name="Address">
            <attribute name="city" optional="YES" attributeType="String"/>
            <attribute name="geo" optional="YES" attributeType="Composite" composite="Geo"/>
          </composite>
          <composite name="Geo">
            <attribute name="lat" optional="YES" attributeType="Double"/>
            <attribute name="lon" optional="YES" attributeType="Double"/>
          </composite>
        </model>
        """.utf8), file: "People.xcdatamodel/contents")
    let person = try #require(model.entity(named: "Person"))
    #expect(model.attributes(of: person).map(\.name) == ["home.city", "home.geo.lat", "home.geo.lon"])
    let layout = try #require(StoreSchema(model: model).layout(of: "Person"))
    #expect(layout.properties["home.geo.lon"] == .attribute(StoreSchema.Column(name: "ZLON", type: "FLOAT")))
    let read = try ModelCache.model(fromCompressed: try model.modelCache())
    #expect(read.entityVersionHashes == model.entityVersionHashes)
    #expect(read.declaredAttributes(of: person).first?.elements.last?.elements.map(\.name) == ["lat", "lon"])
    let folder = try TemporaryDirectory()
    let store = try SQLiteStore.create(at: folder.url.appendingPathComponent("p.sqlite"), model: model)
    try store.write { writer in
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Person", primaryKey: 1),
          attributes: ["home.city": .string("Lisbon"), "home.geo.lat": .double(38.7), "home.geo.lon": .double(-9.1)]))
    }
    #expect(try StoreJSON.export(store).contains(#""home": {"city": "Lisbon", "geo": {"lat": 38.7, "lon": -9.1}}"#))
  }

  /// An element of an entity migrun does not know is refused by name, never skipped (a
  /// `<composite>` inside an entity, say).
  @Test func anElementMigrunDoesNotKnowIsRefusedByName() throws {
    let xml =
      #"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0"><entity name="Quake"><composite name="Magnitude"/></entity></model>"#
    let error = try #require(throws: ModelError.self) {
      try XcdatamodelReader.parse(Data(xml.utf8), file: "Quakes.xcdatamodel/contents")
    }
    #expect("\(error)".contains("<composite> in an entity is not an element migrun knows"), "\(error)")
  }

  /// A composite that names no definition is refused by name, never read as an empty attribute.
  @Test func aCompositeWithoutItsDefinitionIsRefused() throws {
    #expect(throws: ModelError.self) {
      try XcdatamodelReader.parse(
        Data(
          """
          <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Quake"><attribute name="magnitude" attributeType="Composite" composite="Magnitude"/></entity>
          </model>
          """.utf8), file: "Quakes.xcdatamodel/contents")
    }
  }
}

/// A store with composites migrated on every path: each element's values carried, an element renamed
/// (its renaming identifier) carried to its new column.
@Suite struct CompositeMigrationTests {
  static func bundle(in folder: TemporaryDirectory) throws -> ModelBundle {
    let versions = [
      ("C1", #"<attribute name="year" optional="YES" attributeType="Integer 32"/>"#, ""),
      (
        "C2", #"<attribute name="yearMade" optional="YES" attributeType="Integer 32" elementID="year"/>"#,
        #"<attribute name="notes" optional="YES" attributeType="String"/>"#
      ),
    ]
    for (name, year, notes) in versions {
      try folder.write(
        """
        <model>
          <entity name="Cocktail">
            <attribute name="author" optional="YES" attributeType="Composite" composite="Author"/>
            <attribute name="id" optional="YES" attributeType="UUID"/>
            <attribute name="name" optional="YES" attributeType="String"/>
            \(notes)
          </entity>
          <composite name="Author">
            <attribute name="id" optional="YES" attributeType="UUID"/>
            <attribute name="person" optional="YES" attributeType="String"/>
            \(year)
          </composite>
        </model>
        """, to: "C.xcdatamodeld/\(name).xcdatamodel/contents")
    }
    try folder.write(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>C2.xcdatamodel</string></dict></plist>
      """, to: "C.xcdatamodeld/.xccurrentversion")
    return try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("C.xcdatamodeld"))
  }

  static func uuid(_ byte: UInt8) -> StoreValue { .uuid([UInt8](repeating: byte, count: 16)) }

  @Test(arguments: [StepMethod.ddl, .copyRows, .objects]) func compositesAreCarriedOnEveryPath(_ method: StepMethod)
    throws
  {
    let folder = try TemporaryDirectory()
    let bundle = try Self.bundle(in: folder)
    let url = folder.url.appendingPathComponent("cocktails.sqlite")
    let store = try SQLiteStore.create(at: url, model: try bundle.model(named: "C1"))
    try store.write { writer in
      for key in 1...3 {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Cocktail", primaryKey: Int64(key)),
            attributes: [
              "name": .string("cocktail \(key)"), "id": Self.uuid(UInt8(key)),
              "author.id": Self.uuid(UInt8(100 + key)), "author.person": .string("Harry Craddock \(key)"),
              "author.year": .integer(Int64(1930 + key)),
            ]))
      }
    }
    try store.close()
    let plan = try MigrationPlanner.plan(bundle: bundle, storeHashes: try SQLiteStore.metadata(at: url).versionHashes)
    let report = try StoreMigrator(
      store: url, plan: plan, options: .init(bulkCopy: method != .objects, ddl: method == .ddl)
    ).run()
    #expect(report.steps.map(\.method) == [method])
    let migrated = try SQLiteStore(url: url, model: try bundle.model(named: "C2"))
    var seen = 0
    try migrated.forEachObject(of: "Cocktail", includingSubentities: false) { object in
      let key = object.id.primaryKey
      #expect(object.attributes["id"] == Self.uuid(UInt8(key)))
      #expect(object.attributes["author.id"] == Self.uuid(UInt8(100 + key)))
      #expect(object.attributes["author.person"] == .string("Harry Craddock \(key)"))
      #expect(object.attributes["author.yearMade"] == .integer(1930 + key))
      #expect(object.attributes["notes"] == .null)
      seen += 1
    }
    #expect(seen == 3)
    // The columns are the elements', under their own names.
    let columns = try migrated.read { db in
      try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('ZCOCKTAIL')")
    }
    #expect(Set(columns).isSuperset(of: ["ZPERSON", "ZYEARMADE", "ZID", "ZID1"]))
    #expect(!columns.contains("ZYEAR") && !columns.contains("ZAUTHOR"))
  }

  /// Export writes a composite as an object of its elements; import reads it back.
  @Test func exportAndImportShowACompositeAsAnObject() throws {
    let folder = try TemporaryDirectory()
    let bundle = try Self.bundle(in: folder)
    let model = try bundle.model(named: "C1")
    let store = try SQLiteStore.create(at: folder.url.appendingPathComponent("a.sqlite"), model: model)
    let object = StoredObject(
      id: ObjectID(entity: "Cocktail", primaryKey: 1),
      attributes: [
        "name": .string("Bronx"), "id": Self.uuid(1), "author.id": .null, "author.person": .string("Harry Craddock"),
        "author.year": .integer(1930),
      ])
    try store.write { writer in try writer.insert(object) }
    let text = try StoreJSON.export(store)
    #expect(text.contains(#""author": {"id": null, "person": "Harry Craddock", "year": 1930}"#))
    let copy = try SQLiteStore.create(at: folder.url.appendingPathComponent("b.sqlite"), model: model)
    try StoreJSON.importObjects(Data(text.utf8), into: copy)
    #expect(try copy.object(object.id)?.attributes == object.attributes)
    // A misspelt element, or attribute, is an error naming it: its value would otherwise be dropped.
    let typos = [(#""person":"#, #""persn":"#, "'author.persn'"), (#""name":"#, #""nam":"#, "'nam'")]
    for (index, (right, wrong, named)) in typos.enumerated() {
      let other = try SQLiteStore.create(at: folder.url.appendingPathComponent("c\(index).sqlite"), model: model)
      let misspelt = Data(text.replacingOccurrences(of: right, with: wrong).utf8)
      let error = try #require(throws: StoreError.self) { try StoreJSON.importObjects(misspelt, into: other) }
      #expect("\(error)".contains(named), "\(error)")
    }
  }
}
