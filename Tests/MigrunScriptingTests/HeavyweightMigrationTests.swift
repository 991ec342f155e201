import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// Heavyweight migrations built the way real apps build them: an Xcode mapping model that maps a
/// subset of the entities, whose custom policy (ported to Lua line for line: `super`, then adjust)
/// splits a measurement's ordered locations into a new Track entity and makes the locations itself,
/// turns a String into objects of another entity and millisecond integers into Dates. Each value is
/// checked.
@Suite struct HeavyweightMigrationTests {
  static let head =
    #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">"#

  /// V1: Measurement(id, context, timestampMillis, ordered locations), GeoLocation(lat, timeMillis).
  /// V2: Measurement(id, startedAt, tracks, events), Track(ordered locations), GeoLocation(lat, time,
  /// track — required), Event(type). `current`: the version `.xccurrentversion` names.
  static func bundle(in folder: TemporaryDirectory, current: String = "V2") throws -> URL {
    let v1 = """
      <entity name="Measurement" representedClassName="Measurement">
        <attribute name="id" attributeType="Integer 64" defaultValueString="0"/>
        <attribute name="context" optional="YES" attributeType="String"/>
        <attribute name="timestampMillis" attributeType="Integer 64" defaultValueString="0"/>
        <relationship name="locations" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="GeoLocation" inverseName="measurement" inverseEntity="GeoLocation"/>
      </entity>
      <entity name="GeoLocation" representedClassName="GeoLocation">
        <attribute name="lat" attributeType="Double" defaultValueString="0"/>
        <attribute name="timeMillis" attributeType="Integer 64" defaultValueString="0"/>
        <relationship name="measurement" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Measurement" inverseName="locations" inverseEntity="Measurement"/>
      </entity>
      """
    let v2 = """
      <entity name="Measurement" representedClassName="Measurement">
        <attribute name="id" attributeType="Integer 64" defaultValueString="0"/>
        <attribute name="startedAt" attributeType="Date"/>
        <relationship name="tracks" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Track" inverseName="measurement" inverseEntity="Track"/>
        <relationship name="events" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Event" inverseName="measurement" inverseEntity="Event"/>
      </entity>
      <entity name="Track" representedClassName="Track">
        <relationship name="measurement" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Measurement" inverseName="tracks" inverseEntity="Measurement"/>
        <relationship name="locations" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="GeoLocation" inverseName="track" inverseEntity="GeoLocation"/>
      </entity>
      <entity name="GeoLocation" representedClassName="GeoLocation">
        <attribute name="lat" attributeType="Double" defaultValueString="0"/>
        <attribute name="time" attributeType="Date"/>
        <relationship name="track" maxCount="1" deletionRule="Nullify" destinationEntity="Track" inverseName="locations" inverseEntity="Track"/>
      </entity>
      <entity name="Event" representedClassName="Event">
        <attribute name="type" attributeType="String"/>
        <relationship name="measurement" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Measurement" inverseName="events" inverseEntity="Measurement"/>
      </entity>
      """
    for (name, entities) in [("V1", v1), ("V2", v2)] {
      try folder.write(head + entities + "</model>", to: "Tracks.xcdatamodeld/\(name).xcdatamodel/contents")
    }
    try folder.write(
      "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>\(current).xcdatamodel</string></dict></plist>",
      to: "Tracks.xcdatamodeld/.xccurrentversion")
    return folder.url.appendingPathComponent("Tracks.xcdatamodeld")
  }

  /// An `.xcmappingmodel` as Xcode's editor writes one: each entity mapping's source and destination,
  /// policy class and property mappings (expressions the editor generates).
  static func xcmapping(
    from: String, to: String, _ mappings: [(source: String, destination: String, policy: String?, attributes: [String])]
  ) -> String {
    var objects: [String] = []
    var ids: [String] = []
    for (index, mapping) in mappings.enumerated() {
      let id = "z\(100 + index * 10)"
      ids.append(id)
      let attributeIDs = mapping.attributes.indices.map { "z\(100 + index * 10 + 1 + $0)" }
      for (name, attributeID) in zip(mapping.attributes, attributeIDs) {
        objects.append(
          """
          <object type="XDDEVATTRIBUTEMAPPING" id="\(attributeID)"><attribute name="name" type="string">\(name)</attribute>\
          <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="\(id)"></relationship></object>
          """)
      }
      let policy = mapping.policy.map {
        #"<attribute name="migrationpolicyclassname" type="string">\#($0)</attribute>"#
      }
      objects.append(
        """
        <object type="XDDEVENTITYMAPPING" id="\(id)">\(policy ?? "")\
        <attribute name="sourcename" type="string">\(mapping.source)</attribute>\
        <attribute name="mappingtypename" type="string">Undefined</attribute>\
        <attribute name="mappingnumber" type="int16">\(index + 1)</attribute>\
        <attribute name="destinationname" type="string">\(mapping.destination)</attribute>\
        <attribute name="autogenerateexpression" type="bool">1</attribute>\
        <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z1"></relationship>\
        <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="\(attributeIDs.joined(separator: " "))"></relationship></object>
        """)
    }
    return """
      <?xml version="1.0" standalone="no"?>
      <database>
      <object type="XDDEVMAPPINGMODEL" id="z1">\
      <attribute name="sourcemodelpath" type="string">Migrations/Tracks.xcdatamodeld/\(from).xcdatamodel</attribute>\
      <attribute name="destinationmodelpath" type="string">Migrations/Tracks.xcdatamodeld/\(to).xcdatamodel</attribute>\
      <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="\(ids.joined(separator: " "))"></relationship></object>
      \(objects.joined(separator: "\n"))
      </database>
      """
  }

  /// The app's policy, ported as a new user would from its Swift class:
  /// `super.createDestinationInstances(…)`, the object found with
  /// `manager.destinationInstances(forEntityMappingName:sourceInstances:)`, then adjusted.
  static let trackPolicy = """
    local function date(millis) return millis / 1000 - 978307200 end
    return {
      createDestinationInstances = function(src, m)
        m:default(src)                                    -- super.createDestinationInstances(…)
        local dst = m:destinations(src, "MeasurementToMeasurement")[1]
        dst.id = src.id                                   -- the attribute, not an object method
        dst.startedAt = date(src.timestampMillis)
        local points = {}
        for index, location in ipairs(src.locations) do
          points[index] = m:insert("GeoLocation", { lat = location.lat, time = date(location.timeMillis) })
        end
        m:insert("Track", { measurement = dst, locations = points })
        if src.context ~= NULL then
          for kind in string.gmatch(src.context, "[^,]+") do
            m:insert("Event", { type = kind, measurement = dst })
          end
        end
      end,
    }
    """

  /// Two measurements: 7 with three locations and a context of two events, 8 with none.
  static func store(in folder: TemporaryDirectory, bundle: ModelBundle) throws -> URL {
    let store = folder.url.appendingPathComponent("tracks.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "V1"))
    try created.write { writer in
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Measurement", primaryKey: 1),
          attributes: [
            "id": .integer(7), "context": .string("walk,bike"), "timestampMillis": .integer(978_307_260_000),
          ]))
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Measurement", primaryKey: 2),
          attributes: ["id": .integer(8), "context": .null, "timestampMillis": .integer(978_307_200_000)]))
      var locations: [ObjectID] = []
      for (key, lat) in [(3, 52.5), (1, 52.6), (2, 52.7)] {
        let id = ObjectID(entity: "GeoLocation", primaryKey: Int64(key))
        try writer.insert(
          StoredObject(
            id: id, attributes: ["lat": .double(lat), "timeMillis": .integer(978_307_200_000 + Int64(key) * 1000)],
            toOne: ["measurement": ObjectID(entity: "Measurement", primaryKey: 1)]))
        locations.append(id)
      }
      try writer.setToMany(ObjectID(entity: "Measurement", primaryKey: 1), "locations", locations)
    }
    try created.close()
    return store
  }

  static func migrate(_ store: URL, bundle: ModelBundle, folders: [URL], refuseDrops: Bool = false) throws
    -> StoreMigrator.Report
  {
    let plan = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: folders)
    var options = StoreMigrator.Options(keepBackup: false)
    options.refuseDrops = refuseDrops
    let migrator = StoreMigrator(store: store, plan: plan, options: options)
    migrator.scripts = LuaScripts(policyFolders: folders)
    return try migrator.run()
  }

  /// The mapping model maps Measurement only; the policy makes Tracks, GeoLocations and Events.
  static func policies(in folder: TemporaryDirectory, subfolder: String = "") throws -> URL {
    let policies = try folder.folder("policies")
    try folder.write(
      xcmapping(
        from: "V1", to: "V2",
        [(source: "Measurement", destination: "Measurement", policy: "App.MeasurementToTrackPolicy", ["id"])]),
      to: "policies/\(subfolder)V1-V2.xcmappingmodel/xcmapping.xml")
    try folder.write(trackPolicy, to: "policies/\(subfolder)MeasurementToTrackPolicy.lua")
    return policies
  }

  @Test func aMappingModelRunsExactlyItsEntityMappingsAndThePolicyMakesTheRest() throws {
    let folder = try TemporaryDirectory()
    let bundle = try ModelBundle(modelOrStoreAt: try Self.bundle(in: folder))
    let store = try Self.store(in: folder, bundle: bundle)
    // Kept in an Xcode group, as projects keep them: found below the policy folder.
    let policies = try Self.policies(in: folder, subfolder: "Migrations/V1toV2/")

    // GeoLocation is not in the mapping model: not inferred (no copies without a track), but
    // dropped by name and count — so refuseDrops (--no-drops) refuses, and the store is unchanged.
    let before = try Data(contentsOf: store)
    #expect {
      try Self.migrate(store, bundle: bundle, folders: [policies], refuseDrops: true)
    } throws: { error in
      "\(error)".contains("GeoLocation (the entity) — 3 objects")
        && "\(error)".contains("StoreMigrator.Options.refuseDrops")
    }
    #expect(try Data(contentsOf: store) == before)

    _ = try Self.migrate(store, bundle: bundle, folders: [policies])
    let after = try SQLiteStore(url: store, model: try bundle.model(named: "V2"))
    defer { try? after.close() }
    var measurements: [Int64: StoredObject] = [:]
    try after.forEachObject(of: "Measurement", includingSubentities: false) { object in
      if case .integer(let id)? = object.attributes["id"] { measurements[id] = object }
    }
    #expect(measurements.keys.sorted() == [7, 8])
    #expect(measurements[7]?.attributes["startedAt"] == .date(60))
    #expect(measurements[8]?.attributes["startedAt"] == .date(0))
    var events: [String] = []
    try after.forEachObject(of: "Event", includingSubentities: false) { event in
      #expect(event.toOne["measurement"] == measurements[7]?.id)
      if case .string(let type)? = event.attributes["type"] { events.append(type) }
    }
    #expect(events.sorted() == ["bike", "walk"])
    let tracks = measurements[7]?.toMany["tracks"] ?? []
    #expect(tracks.count == 1)
    let track = try tracks.first.flatMap { try after.object($0) }
    let points = try (track?.toMany["locations"] ?? []).compactMap { try after.object($0) }
    // In the source's order (3, 1, 2), each time from its milliseconds.
    #expect(points.map { $0.attributes["lat"] } == [.double(52.5), .double(52.6), .double(52.7)])
    #expect(points.map { $0.attributes["time"] } == [.date(3), .date(1), .date(2)])
    #expect(try after.count(of: "GeoLocation", includingSubentities: false) == 3, "no inferred copies")
    #expect(measurements[8]?.toMany["tracks"]?.count == 1)
  }

  @Test func twoStepFilesOfOneNameBelowAPolicyFolderAreRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let bundle = try ModelBundle(modelOrStoreAt: try Self.bundle(in: folder))
    let store = try Self.store(in: folder, bundle: bundle)
    let policies = try Self.policies(in: folder, subfolder: "A/")
    try FileManager.default.createDirectory(
      at: policies.appendingPathComponent("B"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      at: policies.appendingPathComponent("A/V1-V2.xcmappingmodel"),
      to: policies.appendingPathComponent("B/V1-V2.xcmappingmodel"))
    #expect {
      try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: [policies])
    } throws: { error in
      "\(error)".contains("A/V1-V2.xcmappingmodel") && "\(error)".contains("B/V1-V2.xcmappingmodel")
    }
  }

  @Test func aStoreNewerThanTheModelIsRefusedUnlessTheDestinationIsGiven() throws {
    let folder = try TemporaryDirectory()
    let bundleURL = try Self.bundle(in: folder, current: "V1")
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let store = folder.url.appendingPathComponent("new.sqlite")
    try SQLiteStore.create(at: store, model: try bundle.model(named: "V2")).close()
    let before = try Data(contentsOf: store)
    let migrated = try MigrunProcess.run(["migrate", store.path, "--model", bundleURL.path])
    #expect(migrated.status == 1)
    #expect(migrated.stderr.contains("'V2', newer than Tracks's current version 'V1'"), "\(migrated.stderr)")
    #expect(migrated.stderr.contains("or --to V1 to migrate the store back on purpose"), "\(migrated.stderr)")
    #expect(try Data(contentsOf: store) == before)
    let status = try MigrunProcess.run(["status", store.path, "--model", bundleURL.path])
    #expect(status.status == 1)
    #expect(status.stdout.contains("newer than the model"), "\(status.stdout)")
    let planned = try ScriptedStep.plan(store: store, bundle: bundle, policyFolders: [], destination: "V1")
    #expect(planned.steps.map(\.name) == ["V2 → V1"])
  }

  /// Attributes named after every object method: each reads the attribute, on the object path
  /// (hooks) and the rows path (attribute functions only); the methods stay reachable through `m`.
  @Test(arguments: [true, false]) func objectMethodsNeverShadowAttributes(hooks: Bool) throws {
    let folder = try TemporaryDirectory()
    let names = ["id", "entity", "values", "valueForKeyPath"]
    let attributes = names.map { #"<attribute name="\#($0)" optional="YES" attributeType="String"/>"# }.joined()
    for version in ["V1", "V2"] {
      try folder.write(
        Self.head
          + #"<entity name="Note" representedClassName="Note">\#(attributes)<attribute name="copy\#(version)" optional="YES" attributeType="String"/></entity></model>"#,
        to: "Notes.xcdatamodeld/\(version).xcdatamodel/contents")
    }
    let bundle = try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("Notes.xcdatamodeld"))
    let store = folder.url.appendingPathComponent("notes.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "V1"))
    try created.write { writer in
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Note", primaryKey: 1),
          attributes: Dictionary(uniqueKeysWithValues: names.map { ($0, StoreValue.string("my \($0)")) })))
    }
    try created.close()
    let hook = """
      createRelationships = function(dst, m)
        local src = m:sources(dst)[1]
        assert(src.entity == "my entity" and dst.entity == "my entity", "an attribute named entity")
        assert(m:entity(dst) == "Note" and m:id(dst):find("x-coredata://", 1, true) == 1, "the methods through m")
      end,
      """
    try folder.write(
      """
      return {
        Note = {
          attributes = {
            id = function(src) return src.id .. "!" end,
            values = function(src) return src.values .. "!" end,
            valueForKeyPath = function(src) return src.valueForKeyPath .. "!" end,
          },
          \(hooks ? hook : "")
        },
      }
      """, to: "policies/V1-V2.lua")
    _ = try Self.migrate(store, bundle: bundle, folders: [folder.url.appendingPathComponent("policies")])
    let after = try SQLiteStore(url: store, model: try bundle.model(named: "V2"))
    defer { try? after.close() }
    let note = try after.object(ObjectID(entity: "Note", primaryKey: 1))
    #expect(note?.attributes["id"] == .string("my id!"))
    #expect(note?.attributes["values"] == .string("my values!"))
    #expect(note?.attributes["valueForKeyPath"] == .string("my valueForKeyPath!"))
    #expect(note?.attributes["entity"] == .string("my entity"))
  }

  /// A Note store at V1 (`name`, `size`) with `notes` (key → name), in a bundle whose V2 adds
  /// `title` (String) and `rank` (Integer 16); the policy `policy` as the V1 → V2 step file.
  static func noteStore(in folder: TemporaryDirectory, notes: [Int64: String], policy: String) throws -> (
    store: URL, bundle: ModelBundle
  ) {
    let v1 =
      #"<attribute name="name" optional="YES" attributeType="String"/>"#
      + #"<attribute name="size" optional="YES" attributeType="Integer 64"/>"#
    let v2 =
      v1 + #"<attribute name="title" optional="YES" attributeType="String"/>"#
      + #"<attribute name="rank" optional="YES" attributeType="Integer 16"/>"#
    for (version, attributes) in [("V1", v1), ("V2", v2)] {
      try folder.write(
        Self.head + #"<entity name="Note" representedClassName="Note">\#(attributes)</entity></model>"#,
        to: "Notes.xcdatamodeld/\(version).xcdatamodel/contents")
    }
    let bundle = try ModelBundle(modelOrStoreAt: folder.url.appendingPathComponent("Notes.xcdatamodeld"))
    let store = folder.url.appendingPathComponent("notes.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "V1"))
    try created.write { writer in
      for (key, name) in notes {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Note", primaryKey: key),
            attributes: ["name": .string(name), "size": .integer(key * 10)]
          ))
      }
    }
    try created.close()
    try folder.write(policy, to: "policies/V1-V2.lua")
    return (store, bundle)
  }

  /// `m:default(src)` makes the object with the attribute functions' values in it (computed before
  /// it is made, handed over with it): the hook reads them on the object it gets back, a function
  /// that gives nil writes NULL over the mapping's value, and what the hook sets after stays.
  @Test func defaultMakesTheObjectWithItsComputedValues() throws {
    let folder = try TemporaryDirectory()
    let (store, bundle) = try Self.noteStore(
      in: folder, notes: [1: "soup", 2: "bread"],
      policy: """
        return {
          Note = {
            attributes = {
              title = function(src) return src.name:upper() end,
              name = function(src) return nil end,
              rank = function(src) return src.size // 10 end,
            },
            createDestinationInstances = function(src, m)
              local dst = m:default(src)
              assert(dst.title == src.name:upper() and dst.rank == src.size // 10, "computed values on the object")
              assert(dst.name == NULL, "nil written as NULL over the copied name")
              dst.size = src.size + 1
            end,
          },
        }
        """)
    _ = try Self.migrate(store, bundle: bundle, folders: [folder.url.appendingPathComponent("policies")])
    let after = try SQLiteStore(url: store, model: try bundle.model(named: "V2"))
    defer { try? after.close() }
    let notes = try [1, 2].compactMap { try after.object(ObjectID(entity: "Note", primaryKey: $0)) }
    #expect(notes.map { $0.attributes["title"] } == [.string("SOUP"), .string("BREAD")])
    #expect(notes.map { $0.attributes["name"] } == [.null, .null])
    #expect(notes.map { $0.attributes["rank"] } == [.integer(1), .integer(2)])
    #expect(notes.map { $0.attributes["size"] } == [.integer(11), .integer(21)])
  }

  /// A computed value the attribute cannot hold fails the step naming the attribute (as setting it
  /// on the object did), and the store is left as it was.
  @Test func defaultRefusesAComputedValueItsAttributeCannotHold() throws {
    let folder = try TemporaryDirectory()
    let (store, bundle) = try Self.noteStore(
      in: folder, notes: [1: "soup"],
      policy: """
        return {
          Note = {
            attributes = { rank = function(src) return 70000 end },
            createDestinationInstances = function(src, m) m:default(src) end,
          },
        }
        """)
    #expect {
      try Self.migrate(store, bundle: bundle, folders: [folder.url.appendingPathComponent("policies")])
    } throws: { error in
      "\(error)".contains("Note.rank") && "\(error)".contains("70000")
    }
    let kept = try SQLiteStore(url: store, model: try bundle.model(named: "V1"), access: .readOnly)
    defer { try? kept.close() }
    #expect(try kept.object(ObjectID(entity: "Note", primaryKey: 1))?.attributes["name"] == .string("soup"))
  }

  /// `m:default(other)` — an object that is not the hook's own, or from a hook without a default —
  /// is refused before any attribute function runs for it: the function, which fails for any
  /// object but the hook's own, never runs, and the store is left as it was.
  @Test(arguments: [
    (
      "createDestinationInstances = function(src, m) current = src; if first == nil then first = src; m:default(src) else m:default(first) end end",
      "m:default(src): give the source object the hook was called with"
    ),
    (
      "createDestinationInstances = function(src, m) current = src; first = first or src end, "
        + "endInstanceCreation = function(m) current = nil; m:default(first) end",
      "m:default(object) runs the default of createDestinationInstances"
    ),
  ])
  func defaultOfAnotherObjectIsRefusedBeforeItsAttributeFunctionsRun(hooks: String, refusal: String) throws {
    let folder = try TemporaryDirectory()
    let (store, bundle) = try Self.noteStore(
      in: folder, notes: [1: "soup", 2: "bread"],
      policy: """
        local first, current
        return {
          Note = {
            attributes = {
              title = function(src)
                if src ~= current then error("an attribute function ran for " .. tostring(src)) end
                return src.name
              end,
            },
            \(hooks),
          },
        }
        """)
    #expect {
      try Self.migrate(store, bundle: bundle, folders: [folder.url.appendingPathComponent("policies")])
    } throws: { error in
      "\(error)".contains(refusal) && !"\(error)".contains("an attribute function ran")
    }
    let kept = try SQLiteStore(url: store, model: try bundle.model(named: "V1"), access: .readOnly)
    defer { try? kept.close() }
    #expect(try kept.object(ObjectID(entity: "Note", primaryKey: 2))?.attributes["name"] == .string("bread"))
  }

  /// The entity mapping's and the mapping file's user info reach the policy.
  @Test func userInfoReachesThePolicy() throws {
    let folder = try TemporaryDirectory()
    let bundle = try ModelBundle(modelOrStoreAt: try Self.bundle(in: folder))
    let store = try Self.store(in: folder, bundle: bundle)
    try folder.write(
      Self.trackPolicy.replacingOccurrences(
        of: "m:default(src)",
        with:
          #"assert(m.mapping.userInfo.splits == "tracks" and m.model.userInfo.modelVersion == "V2", "user info"); m:default(src)"#
      ), to: "policies/MeasurementToTrackPolicy.lua")
    try folder.write(
      """
      local policy = require "MeasurementToTrackPolicy"
      return {
        userInfo = { modelVersion = "V2" },
        Measurement = { userInfo = { splits = "tracks" }, createDestinationInstances = policy.createDestinationInstances },
        Track = "add", GeoLocation = "add", Event = "add",
      }
      """, to: "policies/V1-V2.lua")
    _ = try Self.migrate(store, bundle: bundle, folders: [folder.url.appendingPathComponent("policies")])
    let after = try SQLiteStore(url: store, model: try bundle.model(named: "V2"))
    defer { try? after.close() }
    #expect(try after.count(of: "Track", includingSubentities: false) == 2)
  }
}
