import Foundation
import GRDB
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// Persistent history kept true by a step that changes an entity's properties, on SampleModel2's
/// real history store (5,468 changes): each update's `ZCOLUMNS` names the same properties after
/// the step (bits re-pointed at the destination's positions), each delete's tombstone values move
/// to their attributes' new slots, and the changes of a removed entity's objects are deleted alone
/// with `--partial-history` (Core Data's `NSPersistentHistoryAllowPartialHistoryMigration`).
@Suite struct PersistentHistoryTests {
  static let store = ForeignObjectsTests.fixtures + "SampleModel2_V1.sqlite"

  /// The store's own model with attributes preserved after deletion (by default Book's `price` and
  /// `title`).
  static func source(_ url: URL, preserving: [String: Set<String>] = ["Book": ["price", "title"]]) throws
    -> ObjectModel
  {
    let cached = try #require(try SQLiteStore.cachedModel(at: url))
    return try ObjectModel(
      entities: cached.entities.map { entity in
        var entity = entity
        if let preserved = preserving[entity.name] {
          entity.attributes = entity.attributes.map { attribute in
            var attribute = attribute
            attribute.preservesValueInHistoryOnDeletion = preserved.contains(attribute.name)
            return attribute
          }
        }
        return entity
      }, versionName: "Source")
  }

  /// Book gains `abstract` (every attribute bit after it moves), loses `price`; only `title` stays
  /// preserved (its tombstone slot moves from 1 to 0).
  static func destination(from source: ObjectModel) throws -> ObjectModel {
    try ObjectModel(
      entities: source.entities.map { entity in
        var entity = entity
        if entity.name == "Book" {
          entity.attributes =
            entity.attributes.filter { $0.name != "price" }
            + [Attribute(name: "abstract", type: .string, isOptional: true)]
        }
        return entity
      }, versionName: "Destination")
  }

  /// A new store of `model` holding `fixture`'s persistent history (its tables, rows, indexes and
  /// key rows), since a real store's metadata would not fit the model with preserved attributes.
  static func makeStore(at url: URL, model: ObjectModel, historyFrom fixture: URL) throws {
    try SQLiteStore.create(at: url, model: model).close()
    let queue = try DatabaseQueue(path: url.path)
    defer { try? queue.close() }
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "ATTACH DATABASE ? AS fx", arguments: [StoreFiles.immutableURI(fixture)])
      let objects = try Row.fetchAll(
        db,
        sql:
          "SELECT type, name, sql FROM fx.sqlite_master WHERE tbl_name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING') AND sql IS NOT NULL ORDER BY type DESC"
      )
      for object in objects {
        let (type, name, sql): (String, String, String) = (object[0], object[1], object[2])
        try db.execute(sql: sql)
        if type == "table" { try db.execute(sql: "INSERT INTO main.\(name) SELECT * FROM fx.\(name)") }
      }
      try db.execute(sql: "INSERT INTO main.Z_PRIMARYKEY SELECT * FROM fx.Z_PRIMARYKEY WHERE Z_ENT > 16000")
      try db.execute(sql: "DETACH DATABASE fx")
    }
  }

  static func mask(_ keys: [HistoryRewrite.Key], setting names: Set<HistoryRewrite.Key>) -> Data {
    var bytes = [UInt8](repeating: 0, count: (keys.count + 7) / 8)
    for (bit, key) in keys.enumerated() where names.contains(key) { bytes[bit >> 3] |= 0x80 >> UInt8(bit & 7) }
    return Data(bytes)
  }

  static func names(_ mask: Data, _ keys: [HistoryRewrite.Key]) -> Set<HistoryRewrite.Key> {
    let bytes = [UInt8](mask)
    return Set(keys.enumerated().filter { bytes[$0.offset >> 3] & (0x80 >> UInt8($0.offset & 7)) != 0 }.map(\.element))
  }

  @Test func theBitsFollowCoreDatasOrder() throws {
    let url = Fixtures.url(Self.store)
    let model = try #require(try SQLiteStore.cachedModel(at: url))
    let keys = HistoryLayout.updateBits(of: "Book", in: StoreSchema(model: model))
    // To-one keys (then entity and order columns: Book has none), attributes by name, to-manys.
    #expect(
      keys.map { "\($0.kind):\($0.name)" } == [
        "key:author", "attribute:cover", "attribute:pagesCount", "attribute:price",
        "attribute:publishedAt", "attribute:title", "attribute:uniqueID", "toMany:pages",
      ])
    // A subentity's list starts with its parent's.
    let novel = HistoryLayout.updateBits(of: "GraphicNovel", in: StoreSchema(model: model))
    #expect(novel.map(\.name).suffix(2) == ["isBlackAndWhite", "pages"])
  }

  @Test func updatesAndTombstonesFollowThePropertiesOnEveryPath() throws {
    for method in [StepMethod.ddl, .copyRows, .objects] {
      let folder = try TemporaryDirectory()
      let fixture = Fixtures.url(Self.store)
      let source = try Self.source(fixture)
      let url = folder.url.appendingPathComponent("History.sqlite")
      try Self.makeStore(at: url, model: source, historyFrom: fixture)
      let destination = try Self.destination(from: source)
      let sourceKeys = HistoryLayout.updateBits(of: "Book", in: StoreSchema(model: source))
      let destinationKeys = HistoryLayout.updateBits(of: "Book", in: StoreSchema(model: destination))
      let touched: Set<HistoryRewrite.Key> = [
        .init(kind: .key, name: "author"), .init(kind: .attribute, name: "title"), .init(kind: .toMany, name: "pages"),
      ]
      let withPrice = touched.union([.init(kind: .attribute, name: "price")])
      let queue = try DatabaseQueue(path: url.path)
      try queue.write { db in
        try db.execute(sql: "ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE0 BLOB")
        try db.execute(sql: "ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE1 BLOB")
        let insert =
          "INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS, ZTOMBSTONE0, ZTOMBSTONE1) VALUES (?, 16001, 1, ?, 1, 1, 1, ?, ?, ?)"
        try db.execute(sql: insert, arguments: [90001, 1, Self.mask(sourceKeys, setting: touched), nil, nil])
        try db.execute(sql: insert, arguments: [90002, 1, Self.mask(sourceKeys, setting: withPrice), nil, nil])
        try db.execute(sql: insert, arguments: [90003, 1, Data([0x80]).prefix(0), nil, nil])  // too short to read
        try db.execute(sql: insert, arguments: [90004, 2, nil, 9.5, "Old title"])
      }
      try queue.close()
      let plan = try Migrations.plan(source, destination)
      let report = try StoreMigrator(
        store: url, plan: plan,
        options: .init(keepBackup: false, bulkCopy: method != .objects, ddl: method == .ddl)
      ).run()
      let step1 = try #require(report.steps.first)
      #expect(step1.method == method)
      #expect(step1.history.updates == 2, "\(method)")
      #expect(step1.history.updatesLosingProperties == 1, "\(method)")
      #expect(step1.history.unreadable == 1, "\(method)")
      #expect(step1.history.tombstones == 1, "\(method)")
      #expect(step1.history.tombstoneValuesCleared == 1, "\(method)")
      let rows = try DatabaseQueue(path: url.path).read { db in
        try Row.fetchAll(
          db, sql: "SELECT Z_PK, ZCOLUMNS, ZTOMBSTONE0, ZTOMBSTONE1 FROM ACHANGE WHERE Z_PK > 90000 ORDER BY Z_PK")
      }
      #expect(rows.count == 4)
      let first: Data = try #require(rows[0][1])
      let second: Data = try #require(rows[1][1])
      #expect(Self.names(first, destinationKeys) == touched, "\(method)")
      #expect(Self.names(second, destinationKeys) == touched, "\(method): price is gone")
      #expect(first.count == (destinationKeys.count + 7) / 8)
      #expect((rows[2][1] as Data?) == Data(), "an unreadable mask is kept")
      #expect((rows[3][2] as String?) == "Old title", "\(method): title's value moves to slot 0")
      #expect(rows[3][3] == DatabaseValue.null, "\(method): price is no longer preserved")
      // Everything else in the history is as it was.
      #expect(try ForeignObjectsTests.history(url).contains("changes 5472"))
    }
  }

  @Test func aRemovedEntitysChangesAreDeletedAloneWithPartialHistory() throws {
    let folder = try TemporaryDirectory()
    let url = try writableCopyOfFixture(Self.store, into: folder)
    let source = try #require(try SQLiteStore.cachedModel(at: url)).named("Source")
    let destination = try ObjectModel(
      entities: source.entities.filter { $0.name != "Feedback" }, versionName: "Destination")
    let plan = try Migrations.plan(source, destination)
    // Refused without the option, naming it.
    #expect {
      try StoreMigrator(store: url, plan: plan, options: .init(keepBackup: false)).run()
    } throws: { error in
      "\(error)".contains("set StoreMigrator.Options.partialHistory") && "\(error)".contains("444 changes")
    }
    var options = StoreMigrator.Options(keepBackup: false)
    options.partialHistory = true
    let report = try StoreMigrator(store: url, plan: plan, options: options).run()
    #expect(report.steps.first?.history.removedChanges == 444)
    let history = try ForeignObjectsTests.history(url)
    #expect(history.contains("changes \(5468 - 444)"))
    #expect(history.contains("transactions 1"))
  }
}
