import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Compiled models (`.momd` folders, single `.mom` files) as Xcode's model compiler wrote them into
/// the fixtures' apps, read as they are.
@Suite struct CompiledModelTests {
  static func momdFolders() throws -> [URL] {
    try Fixtures.versionInfoPlists().map { $0.deletingLastPathComponent() }
  }

  /// The `.xcdatamodeld` the fixture's `.momd` was compiled from: the one of its name nearest to it
  /// (`X/Fixtures/NAME.momd` ↔ `X/NAME.xcdatamodeld`, or side by side in `Resources/`).
  static func sourceBundle(of momd: URL) throws -> ModelBundle {
    let url = try #require(try Fixtures.sourceBundle(ofCompiled: momd), "no source model for \(momd.path)")
    return try ModelBundle(modelOrStoreAt: url)
  }

  /// The versions a `.momd` holds, counted from its files (one `.mom` per version).
  static func momFiles(in momd: URL) throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: momd.path).filter { $0.hasSuffix(".mom") }.count
  }

  @Test func everyMomdVersionHashesAsItsVersionInfoAndItsSourceModel() throws {
    let folders = try Self.momdFolders()
    #expect(folders.count >= 2)
    var versions = 0
    var expectedVersions = 0
    for momd in folders {
      let compiled = try ModelBundle(modelOrStoreAt: momd)
      let source = try Self.sourceBundle(of: momd)
      expectedVersions += try Self.momFiles(in: momd)
      #expect(
        compiled.versionNames.sorted() == compiled.recordedVersionHashes.keys.sorted(), "\(momd.lastPathComponent)")
      #expect(Set(compiled.versionNames).isSubset(of: source.versionNames), "\(momd.lastPathComponent)")
      for name in compiled.versionNames {
        let model = try compiled.model(named: name)
        #expect(model.versionName == name)
        #expect(model.entityVersionHashes == compiled.recordedVersionHashes[name], "\(momd.lastPathComponent) \(name)")
        let fromXML = try source.model(named: name)
        #expect(model.entityVersionHashes == fromXML.entityVersionHashes, "\(name)")
        #expect(model.versionHashesDigest == fromXML.versionHashesDigest, "\(name)")
        #expect(model.versionIdentifiers == fromXML.versionIdentifiers, "\(name)")
        versions += 1
      }
    }
    // Every version of every compiled model in the corpus, none passed over.
    #expect(versions == expectedVersions)
  }

  /// What a migration needs beyond hashes — defaults, indexes, uniqueness constraints, the layout
  /// of a new store — is the same read from the compiled model as from the XML.
  @Test func everyMomdVersionGivesTheSameStoreLayoutAndDefaultsAsItsXML() throws {
    for momd in try Self.momdFolders() {
      let compiled = try ModelBundle(modelOrStoreAt: momd)
      let source = try Self.sourceBundle(of: momd)
      for name in compiled.versionNames {
        let model = try compiled.model(named: name)
        let fromXML = try source.model(named: name)
        let schema = StoreSchema(model: model)
        let xmlSchema = StoreSchema(model: fromXML)
        #expect(schema.tables == xmlSchema.tables, "\(name)")
        #expect(Set(schema.indexes) == Set(xmlSchema.indexes), "\(name)")
        for entity in fromXML.entities {
          let other = try #require(model.entity(named: entity.name))
          #expect(other.parentName == entity.parentName)
          #expect(other.isAbstract == entity.isAbstract)
          #expect(other.uniquenessConstraints == entity.uniquenessConstraints, "\(name) \(entity.name)")
          #expect(other.fetchIndexes == entity.fetchIndexes, "\(name) \(entity.name)")
          for attribute in fromXML.attributes(of: entity) where !attribute.isTransient {
            let read = try #require(model.attributes(of: other).first { $0.name == attribute.name })
            #expect(read.type == attribute.type, "\(entity.name).\(attribute.name)")
            #expect(read.isOptional == attribute.isOptional, "\(entity.name).\(attribute.name)")
            #expect(read.defaultValue == attribute.defaultValue, "\(entity.name).\(attribute.name)")
          }
        }
      }
    }
  }

  @Test func theCurrentVersionIsTheOneVersionInfoNames() throws {
    let momd = Fixtures.url("coredataplus-samplemodels/SampleModel/Fixtures/SampleModel.momd")
    let bundle = try ModelBundle(modelOrStoreAt: momd)
    #expect(bundle.versionNames == ["SampleModel", "SampleModel2", "SampleModel3"])
    #expect(bundle.currentVersionName == "SampleModel")
    #expect(bundle.isOrderGuessed)
  }

  @Test func aSingleMomIsAModelOfOneVersion() throws {
    let mom = Fixtures.url("coredataplus-samplemodels/SampleModel3/Fixtures/SampleModel3.momd/SampleModel3_v2.mom")
    let bundle = try ModelBundle(modelOrStoreAt: mom)
    #expect(bundle.versionNames == ["SampleModel3_v2"])
    let xml = try Self.sourceBundle(of: mom.deletingLastPathComponent()).model(named: "SampleModel3_v2")
    #expect(bundle.currentModel.entityVersionHashes == xml.entityVersionHashes)
  }

  /// Every fixture store whose version has a compiled model is recognised by it.
  @Test func storesAreRecognisedByTheirCompiledModel() throws {
    let expected = try VersionHashConformanceTests.expectedStores()
    let scratch = try TemporaryDirectory()
    var recognised = 0
    for momd in try Self.momdFolders() {
      let bundle = try ModelBundle(modelOrStoreAt: momd)
      let folder = momd.deletingLastPathComponent()
      for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".sqlite") {
        // The version that wrote the store, as the fixtures' list says (`…/NAME.xcdatamodel/contents`).
        let key = try #require(
          expected.keys.first { Fixtures.url($0).path == folder.appendingPathComponent(file).path })
        let contents = try #require(expected[key]?.model)
        let writer = URL(fileURLWithPath: contents).deletingLastPathComponent().deletingPathExtension()
          .lastPathComponent
        // A copy: opening a WAL store adds -wal/-shm files beside it.
        let copy = scratch.url.appendingPathComponent(file)
        try FileManager.default.copyItem(at: folder.appendingPathComponent(file), to: copy)
        let metadata = try SQLiteStore.metadata(at: copy)
        let version = try #require(bundle.version(matching: metadata.versionHashes), "\(file)")
        #expect(version.versionName == writer, "\(file)")
        recognised += 1
      }
    }
    #expect(recognised == 3)
  }

  @Test func aDamagedMomIsAOneLineErrorNamingTheFile() throws {
    let folder = try TemporaryDirectory()
    let source = Fixtures.url("coredataplus-samplemodels/SampleModel3/Fixtures/SampleModel3.momd/SampleModel3.mom")
    let bytes = try Data(contentsOf: source)
    for (index, damaged) in [bytes.prefix(bytes.count / 2), Data("not a plist".utf8), Data()].enumerated() {
      let file = folder.url.appendingPathComponent("Broken\(index).mom")
      try damaged.write(to: file)
      #expect {
        try ModelBundle(modelOrStoreAt: file)
      } throws: { error in
        guard let error = error as? ModelError else { return false }
        return error.code == .notAModel && error.description.contains("Broken\(index).mom")
          && !error.description.contains("\n")
      }
    }
  }
}
