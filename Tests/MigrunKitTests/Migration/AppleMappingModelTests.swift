import Foundation
import MigrunKit
import MigrunModel
import TestSupport
import Testing

/// Mapping models made with Xcode, read as they are: the source form and the compiled one.
@Suite struct AppleMappingModelTests {
  static let sampleModel = "coredataplus-samplemodels/SampleModel"
  static let moodyMappings = "objcio-core-data-moody/mappings"
  static func sampleBundle() throws -> ModelBundle {
    try ModelBundle(modelOrStoreAt: Fixtures.url("\(sampleModel)/SampleModel.xcdatamodeld"))
  }
  static func moody() throws -> ModelBundle {
    try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
  }

  @Test func theSourceAndTheCompiledFormOfOneMappingModelReadTheSame() throws {
    let bundle = try Self.sampleBundle()
    let source = try AppleMappingModel.read(
      contentsOf: Fixtures.url("\(Self.sampleModel)/MappingModels/V2toV3.xcmappingmodel"), bundle: bundle)
    let compiled = try AppleMappingModel.read(
      contentsOf: Fixtures.url("\(Self.sampleModel)/Fixtures/V2toV3.cdm"), bundle: bundle)
    for model in [source, compiled] {
      #expect(model.sourceVersion == "SampleModel2")
      #expect(model.destinationVersion == "SampleModel3")
    }
    #expect(source.fileName == "V2toV3.xcmappingmodel")
    #expect(compiled.fileName == "V2toV3.cdm")
    #expect(source.entityMappings.map(\.name) == compiled.entityMappings.map(\.name))
    for (left, right) in zip(source.entityMappings, compiled.entityMappings) {
      #expect(left.kind == right.kind, "\(left.name)")
      #expect(left.sourceEntity == right.sourceEntity, "\(left.name)")
      #expect(left.destinationEntity == right.destinationEntity, "\(left.name)")
      #expect(left.sourceEntityHash == right.sourceEntityHash, "\(left.name)")
      #expect(left.destinationEntityHash == right.destinationEntityHash, "\(left.name)")
      #expect(left.policyClassName == right.policyClassName, "\(left.name)")
      #expect(left.sourceExpression == right.sourceExpression, "\(left.name)")
      #expect(left.attributes == right.attributes, "\(left.name)")
      #expect(left.relationships == right.relationships, "\(left.name)")
      #expect(left.userInfo == right.userInfo, "\(left.name)")
    }
    #expect(source.entityMappings == compiled.entityMappings)
    let car = try #require(compiled.entityMappings.first { $0.name == "CarToCar" })
    #expect(car.kind == .custom)
    #expect(car.policyClassName == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
    #expect(
      car.relationships.first { $0.name == "owner" }?.expression?.description
        == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#
    )
    #expect(compiled.entityMappings.map(\.kind) == [.custom, .custom, .copy, .custom, .add])
  }

  @Test func theMoodyMappingModelsRead() throws {
    let names = ["Moody 2-Moody 3", "Moody 3-Moody 4", "Moody 4-Moody 5", "Moody 5-Moody 6"]
    let bundle = try Self.moody()
    for name in names {
      let model = try AppleMappingModel.read(
        contentsOf: Fixtures.url("\(Self.moodyMappings)/\(name).xcmappingmodel"), bundle: bundle)
      let versions = name.split(separator: "-").map(String.init)
      #expect(
        model.mismatch(source: try bundle.model(named: versions[0]), destination: try bundle.model(named: versions[1]))
          == nil, "\(name)")
      #expect(
        model.mismatch(source: try bundle.model(named: versions[1]), destination: try bundle.model(named: versions[0]))
          != nil, "\(name)")
    }
    let fourFive = try AppleMappingModel.read(
      contentsOf: Fixtures.url("\(Self.moodyMappings)/Moody 4-Moody 5.xcmappingmodel"), bundle: bundle)
    let country = try #require(fourFive.entityMappings.first { $0.name == "CountryToCountry" })
    #expect(
      country.attributes.first { $0.name == "isoContinent" }?.expression?.description
        == "$source.continent.numericISO3166Code")
    let twoThree = try AppleMappingModel.read(
      contentsOf: Fixtures.url("\(Self.moodyMappings)/Moody 2-Moody 3.xcmappingmodel"), bundle: bundle)
    let mood = try #require(twoThree.entityMappings.first { $0.name == "MoodToMood" })
    #expect(
      mood.relationships.first { $0.name == "continent" }?.expression?.description
        == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ContinentToContinent", $source.country.continent)"#
    )
    let fiveSix = try AppleMappingModel.read(
      contentsOf: Fixtures.url("\(Self.moodyMappings)/Moody 5-Moody 6.xcmappingmodel"), bundle: bundle)
    #expect(fiveSix.entityMappings.map(\.name) == ["Continent", "CountryToCountry", "MoodToMood"])
    #expect(fiveSix.entityMappings.map(\.policyClassName) == [nil, "Migrations.Country5ToCountry6Policy", nil])
  }

  @Test func aDamagedMappingModelIsAOneLineError() throws {
    let folder = try TemporaryDirectory()
    let cdm = try Data(contentsOf: Fixtures.url("\(Self.sampleModel)/Fixtures/V2toV3.cdm"))
    let xml = try Data(contentsOf: Fixtures.url("\(Self.moodyMappings)/Moody 4-Moody 5.xcmappingmodel/xcmapping.xml"))
    let inputs: [(String, Data)] = [
      ("Half.cdm", cdm.prefix(cdm.count / 2)), ("Empty.cdm", Data()),
      ("Half.xcmappingmodel", xml.prefix(xml.count / 2)), ("Other.cdm", Data("bplist00".utf8) + cdm.suffix(500)),
      ("Text.xcmappingmodel", Data("<database></database>".utf8)),
      (
        "Elsewhere.xcmappingmodel",
        Data(
          String(decoding: xml, as: UTF8.self).replacingOccurrences(
            of: "Moody 4.xcdatamodel", with: "Moody 9.xcdatamodel"
          ).utf8)
      ),
      ("OtherModel.cdm", cdm),
      // A property mapping the entity mapping links to is not in the file: said, not skipped.
      (
        "Dangling.xcmappingmodel",
        Data(
          String(decoding: xml, as: UTF8.self).replacingOccurrences(
            of: #"idrefs="z114 "#, with: #"idrefs="z999 "#
          ).utf8)
      ),
    ]
    let moody = try Self.moody()
    for (name, bytes) in inputs {
      var url = folder.url.appendingPathComponent(name)
      if name.hasSuffix(".xcmappingmodel") {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try bytes.write(to: url.appendingPathComponent("xcmapping.xml"))
      } else {
        try bytes.write(to: url)
      }
      #expect {
        try AppleMappingModel.read(contentsOf: url, bundle: moody)
      } throws: { error in
        let text = "\(error)"
        return text.hasPrefix(name) && !text.contains("\n")
      }
      url = folder.url
    }
  }
}
