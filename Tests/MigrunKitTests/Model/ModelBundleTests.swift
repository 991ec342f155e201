import Foundation
import MigrunKit
import MigrunModel
import TestSupport
import Testing

@Suite struct ModelBundleTests {
  @Test func readsEveryVersionAndTheCurrentOne() throws {
    let bundle = try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
    #expect(bundle.name == "Moody")
    #expect(bundle.versionNames == ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5", "Moody 6"])
    #expect(bundle.currentVersionName == "Moody 6")
    #expect(bundle.currentModel.versionName == "Moody 6")
    #expect(bundle.isOrderGuessed)
    #expect(
      try bundle.model(named: "Moody 3").entities.map(\.name) == ["Continent", "Country", "GeographicRegion", "Mood"])
    #expect(try bundle.model(named: "Moody 5").versionIdentifiers == ["5"])
    #expect(bundle.models.count == 6)
  }

  @Test func currentVersionComesFromXccurrentversionNotFromOrder() throws {
    let bundle = try ModelBundle(
      contentsOf: Fixtures.url("coredataplus-samplemodels/SampleModel/SampleModel.xcdatamodeld"))
    #expect(bundle.versionNames == ["SampleModel", "SampleModel2", "SampleModel3"])
    #expect(bundle.currentVersionName == "SampleModel")
  }

  @Test func aSingleXcdatamodelIsABundleOfOneVersion() throws {
    let url = Fixtures.url(
      "bignerdranch-coredatastack/Sample Model/Deprecated/Sample.xcdatamodeld/TestModel 2.xcdatamodel")
    let bundle = try ModelBundle(modelOrStoreAt: url)
    #expect(bundle.versionNames == ["TestModel 2"])
    #expect(bundle.currentVersionName == "TestModel 2")
    #expect(!bundle.isOrderGuessed)
  }

  @Test func naturalOrderComparesNumbersAsNumbers() {
    let names = ["Moody 10", "Moody 2", "Moody", "Moody 1.5", "moody", "Moody 2b"]
    #expect(
      names.sorted(by: NaturalOrder.precedes) == ["Moody", "Moody 1.5", "Moody 2", "Moody 2b", "Moody 10", "moody"])
  }

  @Test func anUnknownVersionNameListsTheVersions() throws {
    let bundle = try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
    let error = try #require(throws: ModelError.self) { try bundle.model(named: "Moody 9") }
    #expect(error.code == .unknownVersion)
    #expect(error.description.contains("'Moody 9'") && error.description.contains("'Moody 6'"))
  }

  @Test func anEmptyBundleFolderIsRefused() throws {
    let temporary = try TemporaryDirectory()
    let empty = try temporary.folder("Empty.xcdatamodeld")
    let error = try #require(throws: ModelError.self) { try ModelBundle(modelOrStoreAt: empty) }
    #expect(error.code == .noVersions)
    #expect(error.description == "\(empty.path): the folder holds no .xcdatamodel versions")
  }

  @Test func aMissingPathIsRefused() {
    let error = try? #require(throws: ModelError.self) {
      try ModelBundle(modelOrStoreAt: URL(fileURLWithPath: "/nonexistent/Model.xcdatamodeld"))
    }
    #expect(error?.code == .unreadable)
  }

  @Test func aCurrentVersionThatDoesNotExistIsRefused() throws {
    let temporary = try TemporaryDirectory()
    try temporary.write("<model><entity name=\"A\"/></model>", to: "M.xcdatamodeld/M.xcdatamodel/contents")
    try temporary.write(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>M 2.xcdatamodel</string></dict></plist>
      """, to: "M.xcdatamodeld/.xccurrentversion")
    let error = try #require(throws: ModelError.self) {
      try ModelBundle(modelOrStoreAt: temporary.url.appendingPathComponent("M.xcdatamodeld"))
    }
    #expect(error.code == .unknownVersion)
  }
}
