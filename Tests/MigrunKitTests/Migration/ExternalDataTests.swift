import Foundation
import GRDB
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// External binary storage: values read through the reference everywhere, the support folder
/// travelling with the store, files of removed values cleaned only after success.
@Suite struct ExternalDataTests {
  /// `rule`: images must be at least 4 bytes long (the tiny one is not).
  static func model(_ version: String, caption: Bool = false, external: Bool = true, rule: Bool = false) throws
    -> ObjectModel
  {
    try Migrations.model(
      """
      <model>
        <entity name="Photo">
          <attribute name="name" optional="YES" attributeType="String"/>
          <attribute name="image" optional="YES" attributeType="Binary" \(rule ? #"minValueString="4""# : "") \
      allowsExternalBinaryDataStorage="\(external ? "YES" : "NO")"/>
          \(caption ? #"<attribute name="caption" optional="YES" attributeType="String"/>"# : "")
        </entity>
      </model>
      """, version)
  }

  static let big = [UInt8]((0..<300).map { UInt8($0 % 251) })
  static let file = "0C7E2A59-5B8B-4E8C-9B5F-7A2D3F1E9C11"

  /// A store of `model` with three photos, as Core Data writes them: `small` inline (`0x01`), `big`
  /// in a file (`0x02` + its name), `tiny` inline and too short for the rule (2 bytes < 4).
  static func store(in folder: TemporaryDirectory, model: ObjectModel) throws -> URL {
    let url = try folder.folder(UUID().uuidString).appendingPathComponent("photos.sqlite")
    try SQLiteStore.create(at: url, model: model).close()
    let external = ExternalData(store: url).folder
    try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
    try Data(big).write(to: external.appendingPathComponent(file))
    try FileManager.default.createDirectory(
      at: ExternalData.supportFolder(of: url).appendingPathComponent("_SNAPSHOT"), withIntermediateDirectories: true)
    let queue = try DatabaseQueue(path: url.path)
    try queue.write { db in
      let number = try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Photo'") ?? 0
      let rows: [(String, [UInt8])] = [
        ("small", [1, 10, 20, 30, 40, 50]), ("big", [2] + Array(file.utf8)), ("tiny", [1, 7, 8]),
      ]
      for (key, (name, bytes)) in rows.enumerated() {
        try db.execute(
          sql: "INSERT INTO ZPHOTO (Z_PK, Z_ENT, Z_OPT, ZNAME, ZIMAGE) VALUES (?, ?, 1, ?, ?)",
          arguments: [key + 1, number, name, Data(bytes)])
      }
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = ?", arguments: [number])
    }
    try queue.close()
    return url
  }

  static func images(_ store: SQLiteStore) throws -> [String: [UInt8]] {
    var images: [String: [UInt8]] = [:]
    try store.forEachObject(of: "Photo", includingSubentities: true) { object in
      if case .string(let name)? = object.attributes["name"], case .data(let bytes)? = object.attributes["image"] {
        images[name] = bytes
      }
    }
    return images
  }

  static let expected: [String: [UInt8]] = ["small": [10, 20, 30, 40, 50], "big": big, "tiny": [7, 8]]

  @Test func valuesAreReadThroughTheReferenceEverywhere() throws {
    let folder = try TemporaryDirectory()
    let model = try Self.model("V1", rule: true)
    let url = try Self.store(in: folder, model: model)
    let store = try SQLiteStore(url: url, model: model)
    defer { try? store.close() }
    #expect(try Self.images(store) == Self.expected)
    // Export: the value, not the reference (base64 of the file's bytes).
    let json = try StoreJSON.export(store)
    #expect(json.contains(Data(Self.big).base64EncodedString()))
    #expect(!json.contains(Data([2] + Array(Self.file.utf8)).base64EncodedString()))
    // Rules: lengths of the values (the reference is longer than 4, the tiny value is not).
    let violations = try store.ruleViolations(limit: 10)
    #expect(violations.count == 1, "\(violations)")
    #expect(violations.first?.hasPrefix("Photo/p3") == true, "\(violations)")
    #expect(try store.externalReferences().map(\.file) == [Self.file])
  }

  @Test func aMissingFileIsAnErrorNamingIt() throws {
    let folder = try TemporaryDirectory()
    let model = try Self.model("V1")
    let url = try Self.store(in: folder, model: model)
    try FileManager.default.removeItem(at: ExternalData(store: url).folder.appendingPathComponent(Self.file))
    let store = try SQLiteStore(url: url, model: model)
    defer { try? store.close() }
    #expect {
      try Self.images(store)
    } throws: { error in
      "\(error)".contains(Self.file) && "\(error)".contains("missing")
    }
  }

  /// Every path carries every value: DDL and row copy keep the reference (and the file), the object
  /// path writes the value inline; the backup gets the original's support folder; the file of a
  /// value no longer referenced is removed only after the swap.
  @Test func everyPathCarriesTheValuesAndTheFiles() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Self.model("V1"), try Self.model("V2", caption: true))
    let url = try Self.store(in: folder, model: v1)
    let results = try Migrations.migrateEveryWay(
      url, plan: try Migrations.plan(v1, v2), destination: v2, in: folder, expectDDL: true)
    #expect(results.count == 3)
    for (method, migrated) in results {
      let store = try SQLiteStore(url: migrated, model: v2)
      #expect(try Self.images(store) == Self.expected, "\(method)")
      let references = try store.externalReferences().map(\.file)
      try store.close()
      let files = ExternalData(store: migrated).files()
      // The columns as Core Data reads them: every value tagged, inline or by reference.
      let raw = try DatabaseQueue(path: migrated.path).read { db in
        try Row.fetchAll(db, sql: "SELECT ZNAME, ZIMAGE FROM ZPHOTO ORDER BY Z_PK").map {
          (try $0.required(at: 0, as: String.self), Array(try $0.required(at: 1, as: Data.self)))
        }
      }
      #expect(raw.first?.1 == [1, 10, 20, 30, 40, 50], "\(method)")
      #expect(
        raw.dropFirst().first?.1 == (method == .objects ? [1] + Self.big : [2] + Array(Self.file.utf8)), "\(method)")
      if method == .objects {
        // Written inline; the file no value refers to is gone.
        #expect(references.isEmpty)
        #expect(files.isEmpty, "\(method): \(files)")
      } else {
        #expect(references == [Self.file], "\(method)")
        #expect(files == [Self.file], "\(method)")
      }
    }
  }

  /// The object path keeps a value as Core Data's save does: longer than 131,072 bytes in a file
  /// (`0x02`, the file's name, a NUL), 131,072 or fewer inline. The files are placed beside the store
  /// at the swap: the backup has none of them, and no working file is left.
  @Test func theObjectPathKeepsLongValuesInFilesAsCoreDataDoes() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Self.model("V1"), try Self.model("V2", caption: true))
    let url = try Self.store(in: folder, model: v1)
    let long = [UInt8]((0...ExternalData.fileThreshold).map { UInt8($0 % 253) })
    let edge = [UInt8](repeating: 7, count: ExternalData.fileThreshold)
    let queue = try DatabaseQueue(path: url.path)
    try queue.write { db in
      let number = try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Photo'") ?? 0
      for (key, (name, bytes)) in [("long", long), ("edge", edge)].enumerated() {
        try db.execute(
          sql: "INSERT INTO ZPHOTO (Z_PK, Z_ENT, Z_OPT, ZNAME, ZIMAGE) VALUES (?, ?, 1, ?, ?)",
          arguments: [key + 4, number, name, Data([1] + bytes)])
      }
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 5 WHERE Z_ENT = ?", arguments: [number])
    }
    try queue.close()
    let report = try StoreMigrator(
      store: url, plan: try Migrations.plan(v1, v2), options: .init(keepBackup: true, bulkCopy: false, ddl: false)
    ).run()
    #expect(report.steps.first?.method == .objects)
    let raw = try DatabaseQueue(path: StoreFiles.immutableURI(url)).read { db in
      try Dictionary(
        uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT ZNAME, ZIMAGE FROM ZPHOTO").map {
          (try $0.required(at: 0, as: String.self), Array(try $0.required(at: 1, as: Data.self)))
        })
    }
    let reference = try #require(raw["long"])
    #expect(reference.first == 2 && reference.last == 0 && reference.count == 38, "\(reference.prefix(40))")
    let name = String(decoding: reference.dropFirst().dropLast(), as: UTF8.self)
    #expect(UUID(uuidString: name)?.uuidString == name, "an uppercase UUID: \(name)")
    #expect(try Data(contentsOf: ExternalData(store: url).folder.appendingPathComponent(name)) == Data(long))
    #expect(raw["edge"] == [1] + edge)
    #expect(raw["big"] == [1] + Self.big, "300 bytes: inline, as Core Data would keep it")
    let store = try SQLiteStore(url: url, model: v2)
    #expect(try Self.images(store)["long"] == long)
    try store.close()
    let backup = try #require(report.backup)
    #expect(ExternalData(store: backup).files() == [Self.file])
    #expect(ExternalData(store: url).files() == [name])
    let left = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
    #expect(!left.contains { $0.contains("migrun") }, "\(left)")
  }

  /// A file the store never referred to (through an attribute its model keeps externally) is not the
  /// migration's to clean up: it stays.
  @Test func aFileNoValueReferredToBeforeStays() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Self.model("V1"), try Self.model("V2", caption: true))
    let url = try Self.store(in: folder, model: v1)
    let stranger = ExternalData(store: url).folder.appendingPathComponent("11111111-2222-3333-4444-555555555555")
    try Data([9, 9, 9]).write(to: stranger)
    let report = try StoreMigrator(
      store: url, plan: try Migrations.plan(v1, v2), options: .init(keepBackup: false, bulkCopy: false, ddl: false)
    ).run()
    #expect(report.externalFilesRemoved == 1, "only the file the old value referred to")
    #expect(FileManager.default.fileExists(atPath: stranger.path))
  }

  @Test func theBackupKeepsTheOriginalsSupportFolder() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Self.model("V1"), try Self.model("V2", caption: true))
    let url = try Self.store(in: folder, model: v1)
    let report = try StoreMigrator(
      store: url, plan: try Migrations.plan(v1, v2), options: .init(keepBackup: true, bulkCopy: false, ddl: false)
    ).run()
    let backup = try #require(report.backup)
    #expect(report.externalFilesRemoved == 1)
    let kept = ExternalData(store: backup)
    #expect(kept.files() == [Self.file])
    #expect(
      FileManager.default.fileExists(
        atPath: ExternalData.supportFolder(of: backup).appendingPathComponent("_SNAPSHOT").path))
    let old = try SQLiteStore(url: backup, model: v1)
    defer { try? old.close() }
    #expect(try Self.images(old) == Self.expected)
  }

  /// An attribute that gains or loses external storage is rewritten object by object (its values
  /// change form); DDL and row copy would copy tagged bytes into an untagged column.
  @Test func aChangeOfStorageRewritesTheValues() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Self.model("V1"), try Self.model("V2", external: false))
    let url = try Self.store(in: folder, model: v1)
    let mapping = try MappingModel.inferred(from: v1, to: v2)
    if case .copyRows(let why) = DDLStep.decide(mapping: mapping) {
      #expect(why.contains("Photo.image"))
    } else {
      Issue.record("a DDL edit would keep the tagged bytes")
    }
    if case .objects(let why) = try BulkCopy.decide(mapping: mapping, sourceSchema: StoreSchema(model: v1)) {
      #expect(why == "Photo.image changes how its values are kept (external binary storage)")
    } else {
      Issue.record("a row copy would keep the tagged bytes")
    }
    // What plan says, before anything runs: object by object, and why.
    let plan = try Migrations.plan(v1, v2)
    let step = try #require(plan.steps.first)
    let predicted = try StepMethod.planned(for: step, mapping: StepMapping(mapping: mapping), store: nil)
    #expect(predicted.method == .objects)
    #expect(predicted.reason == "Photo.image changes how its values are kept (external binary storage)")
    let report = try StoreMigrator(store: url, plan: plan, options: .init(keepBackup: false)).run()
    #expect(report.steps.first?.method == .objects)
    let store = try SQLiteStore(url: url, model: v2)
    defer { try? store.close() }
    #expect(try Self.images(store) == Self.expected)
    let raw = try DatabaseQueue(path: url.path).read { db in
      try Data.fetchOne(db, sql: "SELECT ZIMAGE FROM ZPHOTO WHERE ZNAME = 'small'")
    }
    #expect(raw.map { Array($0) } == [10, 20, 30, 40, 50])
  }
}
