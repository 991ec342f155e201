import Foundation
import MigrunKit
import MigrunModel
import TestSupport
import Testing

/// The judge: hashes Apple's Core Data stored in real stores and compiled models.
@Suite struct VersionHashConformanceTests {
  struct ExpectedStore: Decodable {
    let NSStoreModelVersionHashes: [String: String]
    let metadata: [String: AnyJSON]
    let model: String?

    var digest: String? { metadata["NSStoreModelVersionHashesDigest"]?.string }
    var checksum: String? { metadata["NSStoreModelVersionChecksumKey"]?.string }
  }

  /// Just enough JSON to read string values out of the metadata.
  enum AnyJSON: Decodable {
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      self = (try? container.decode(String.self)).map(AnyJSON.string) ?? .other
    }

    var string: String? {
      if case .string(let value) = self { return value }
      return nil
    }
  }

  static func expectedStores() throws -> [String: ExpectedStore] {
    let data = try Data(contentsOf: Fixtures.url("expected_store_hashes.json"))
    return try JSONDecoder().decode([String: ExpectedStore].self, from: data)
  }

  /// The model version a `…/NAME.xcdatamodel/contents` path names.
  static func model(at contentsPath: String) throws -> ObjectModel {
    let version = Fixtures.url(contentsPath).deletingLastPathComponent()
    let bundle = try ModelBundle(modelOrStoreAt: version.deletingLastPathComponent())
    return try bundle.model(named: version.deletingPathExtension().lastPathComponent)
  }

  @Test func fixturesArePresent() {
    #expect(Fixtures.areAvailable, "fixtures not found at \(Fixtures.coreData.path); set MIGRUN_FIXTURES")
  }

  @Test func everyStoreHashEqualsTheHashComputedFromItsModelXML() throws {
    var storesChecked = 0
    var entitiesChecked = 0
    var digestsChecked = 0
    var checksumsChecked = 0
    for (store, expected) in try Self.expectedStores().sorted(by: { $0.key < $1.key }) {
      guard let contents = expected.model else { continue }
      let model = try Self.model(at: contents)
      let computed = model.entityVersionHashes.mapValues(\.base64)
      #expect(computed == expected.NSStoreModelVersionHashes, "entity hashes of \(store)")
      entitiesChecked += expected.NSStoreModelVersionHashes.count
      if let digest = expected.digest {
        #expect(model.versionHashesDigest == digest, "digest of \(store)")
        digestsChecked += 1
      }
      if let checksum = expected.checksum {
        #expect(model.versionChecksum == checksum, "checksum of \(store)")
        checksumsChecked += 1
      }
      storesChecked += 1
    }
    // Every store in the corpus whose model XML is there, every entity of each; the corpus has
    // stores that record a digest and a checksum, and those are checked too.
    let stores = try Self.expectedStores().values.filter { $0.model != nil }
    #expect(storesChecked == stores.count)
    #expect(entitiesChecked == stores.map(\.NSStoreModelVersionHashes.count).reduce(0, +))
    #expect(digestsChecked == stores.filter { $0.digest != nil }.count && digestsChecked > 0)
    #expect(checksumsChecked == stores.filter { $0.checksum != nil }.count && checksumsChecked > 0)
  }

  /// The stores without model XML are the ones whose model was built in code (SampleModel2): nothing
  /// with an XML model is passed over. Their hashes come from the store's own model cache (the store
  /// issue's conformance test).
  @Test func onlyStoresWithoutAnyModelFileLackAModelPath() throws {
    for (store, expected) in try Self.expectedStores() where expected.model == nil {
      let folder = Fixtures.url(store).deletingLastPathComponent().deletingLastPathComponent()
      let contents = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      #expect(!contents.contains { $0.hasSuffix(".xcdatamodeld") }, "\(store) has a model beside it")
    }
  }

  @Test func everyCompiledModelsVersionInfoHashesMatch() throws {
    let plists = try Fixtures.versionInfoPlists()
    #expect(!plists.isEmpty)
    var versionsChecked = 0
    var versionsListed = 0
    var checksumsListed = 0
    var checksumsChecked = 0
    for plistURL in plists {
      let plist = try #require(
        try PropertyListSerialization.propertyList(from: Data(contentsOf: plistURL), format: nil)
          as? [String: Any])
      let momdName = plistURL.deletingLastPathComponent().deletingPathExtension().lastPathComponent
      let bundleURL = try #require(
        try Fixtures.sourceBundle(ofCompiled: plistURL.deletingLastPathComponent()),
        "no \(momdName).xcdatamodeld for \(plistURL.path)")
      let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
      let versions = try #require(plist["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
      versionsListed += versions.count
      checksumsListed += (plist["NSManagedObjectModel_VersionChecksums"] as? [String: String])?.count ?? 0
      #expect(Set(versions.keys) == Set(bundle.versionNames), "versions of \(momdName)")
      for (versionName, hashes) in versions {
        let model = try bundle.model(named: versionName)
        #expect(model.entityVersionHashes.mapValues(\.data) == hashes, "\(momdName) \(versionName)")
        versionsChecked += 1
      }
      for (versionName, checksum) in plist["NSManagedObjectModel_VersionChecksums"] as? [String: String] ?? [:] {
        #expect(try bundle.model(named: versionName).versionChecksum == checksum, "\(momdName) \(versionName)")
        checksumsChecked += 1
      }
      #expect(plist["NSManagedObjectModel_CurrentVersionName"] as? String == bundle.currentVersionName)
    }
    // Every version and checksum every VersionInfo.plist lists, none passed over.
    #expect(versionsChecked == versionsListed && versionsChecked > 0)
    #expect(checksumsChecked == checksumsListed && checksumsChecked > 0)
  }
}
