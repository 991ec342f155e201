import Foundation
import GRDB
import Testing

@testable import MigrunKit
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// Damage a real store already has — an external-data file never copied with it, a to-one key naming
/// no object — is carried as Core Data carries it and reported on every path, never refused.
@Suite struct CarriedDamageTests {
  static let methods: [StepMethod] = [.ddl, .copyRows, .objects]

  static func run(_ store: URL, plan: MigrationPlan, _ method: StepMethod, in folder: TemporaryDirectory) throws
    -> (URL, StoreMigrator.Report)
  {
    let url = try folder.folder(UUID().uuidString).appendingPathComponent(store.lastPathComponent)
    try FileManager.default.copyItem(at: store, to: url)
    let report = try StoreMigrator(
      store: url, plan: plan, options: .init(keepBackup: false, bulkCopy: method != .objects, ddl: method == .ddl)
    ).run()
    return (url, report)
  }

  static func column(_ url: URL, _ sql: String) throws -> [UInt8]? {
    try DatabaseQueue(path: url.path).read { db in try Data.fetchOne(db, sql: sql).map { Array($0) } }
  }

  /// The 38 messaging-app stores' case: references whose support folder is absent.
  @Test func aReferenceWhoseFileWasNeverThereIsCarried() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try ExternalDataTests.model("V1"), try ExternalDataTests.model("V2", caption: true))
    let store = try ExternalDataTests.store(in: folder, model: v1)
    try FileManager.default.removeItem(at: ExternalData.supportFolder(of: store))
    let reference = [2] + Array(ExternalDataTests.file.utf8)
    for method in Self.methods {
      let (url, report) = try Self.run(store, plan: try Migrations.plan(v1, v2), method, in: folder)
      #expect(try Self.column(url, "SELECT ZIMAGE FROM ZPHOTO WHERE ZNAME = 'big'") == reference, "\(method)")
      #expect(try Self.column(url, "SELECT ZIMAGE FROM ZPHOTO WHERE ZNAME = 'small'") == [1, 10, 20, 30, 40, 50])
      #expect(
        report.steps.flatMap(\.damage)
          == [CarriedDamage(kind: .externalFileMissing, entity: "Photo", property: "image", read: 1, written: 1)],
        "\(method)")
    }
  }

  static func artworks(_ version: String, extra: Bool) throws -> ObjectModel {
    try Migrations.model(
      """
      <model>
        <entity name="Artist">
          <attribute name="name" optional="YES" attributeType="String"/>
          <relationship name="artworks" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Artwork" inverseName="artist" inverseEntity="Artwork"/>
        </entity>
        <entity name="Artwork">
          <attribute name="title" optional="YES" attributeType="String"/>
          \(extra ? #"<attribute name="slug" optional="YES" attributeType="String"/>"# : "")
          <relationship name="artist" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Artist" inverseName="artworks" inverseEntity="Artist"/>
        </entity>
      </model>
      """, version)
  }

  /// The 2012 store's case: `Artwork.artist` holds key 1, the Artist table is empty. Nothing is lost
  /// (the link never named an object): the check no longer counts it as a link, and the report
  /// says what was carried — the key itself on the SQL paths; the object path has no object to name.
  @Test func aKeyNamingNoObjectIsCarriedAndReported() throws {
    let folder = try TemporaryDirectory()
    let (v1, v2) = (try Self.artworks("V1", extra: false), try Self.artworks("V2", extra: true))
    let store = folder.url.appendingPathComponent("art.sqlite")
    try SQLiteStore.create(at: store, model: v1).close()
    try makeDatabase(
      store,
      [
        "INSERT INTO ZARTWORK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZARTIST) VALUES (1, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Artwork'), 1, 'Untitled', 1)",
        "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Artwork'",
      ])
    for method in Self.methods {
      let (url, report) = try Self.run(store, plan: try Migrations.plan(v1, v2), method, in: folder)
      let key = try DatabaseQueue(path: url.path).read { db in try Int.fetchOne(db, sql: "SELECT ZARTIST FROM ZARTWORK")
      }
      #expect(key == (method == .objects ? nil : 1), "\(method)")
      #expect(
        report.steps.flatMap(\.damage)
          == [
            CarriedDamage(
              kind: .linkToNoObject, entity: "Artwork", property: "artist", read: 1, written: method == .objects ? 0 : 1
            )
          ], "\(method)")
    }
  }
}
