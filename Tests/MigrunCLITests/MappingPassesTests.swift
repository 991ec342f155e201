import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

/// Several mapping files for one step, run one after another into one destination — Core Data's
/// migration in chunks (issue 70): named by an order file, a chain file's line or `--mapping` given
/// more than once; each runs its own three passes, the next finds what the earlier made (`m:fetch`).
/// Two for one step with no order are refused by name, never one passed over.
@Suite struct MappingPassesTests {
  static let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let store = "objcio-core-data-moody/stores/Moody 2.moody.sqlite"

  /// Countries and continents, without the moods another file maps.
  static let places = """
    return {
      Country = { relationships = { moods = false } },
      Continent = "copy",
    }

    """

  /// Moods, linked to the country the earlier file made, fetched by its code (the last one found, as
  /// the app's policy took it).
  static let moods = """
    return {
      Mood = {
        relationships = { country = false },
        createRelationships = function(dst, m)
          local src = m:sources(dst)[1]
          if src.country == NULL then return end
          local found = m:fetch("Country", "numericISO3166Code == %@", { args = { src.country.numericISO3166Code } })
          m:log("mood of " .. src.country.numericISO3166Code .. ": " .. #found .. " country")
          if #found > 0 then dst.country = found[#found] end
        end,
      },
    }

    """

  static func policies(in folder: TemporaryDirectory, order: String?, chain: String? = nil) throws -> URL {
    let policies = try folder.folder("policies")
    try places.write(to: policies.appendingPathComponent("places.lua"), atomically: true, encoding: .utf8)
    try moods.write(to: policies.appendingPathComponent("moods.lua"), atomically: true, encoding: .utf8)
    if let order {
      try order.write(to: policies.appendingPathComponent("Moody 2-Moody 3.order"), atomically: true, encoding: .utf8)
    }
    if let chain { try chain.write(to: policies.appendingPathComponent("chain"), atomically: true, encoding: .utf8) }
    return policies
  }

  /// Runs `command` on a copy of Moody 2 in `folder` with the two files.
  static func run(_ command: String, in folder: TemporaryDirectory, order: String?, chain: String? = nil) throws -> (
    MigrunProcess.Result, store: URL
  ) {
    let store = try writableCopyOfFixture(Self.store, into: folder)
    let policies = try Self.policies(in: folder, order: order, chain: chain)
    let result = try MigrunProcess.run(
      [command, store.path, "--model", Self.model, "--to", "Moody 3", "--policies", policies.path])
    return (result, store)
  }

  static func count(_ store: URL, _ sql: String) throws -> Int {
    try DatabaseQueue(path: StoreFiles.immutableURI(store)).read { try Int.fetchOne($0, sql: sql) ?? -1 }
  }

  static func linkedMoods(_ store: URL) throws -> Int {
    try count(store, "SELECT count(*) FROM ZMOOD WHERE ZCOUNTRY IS NOT NULL")
  }

  @Test func anOrderFileRunsTheFilesInTurnAndTheLaterFindsTheEarliersObjects() throws {
    let (plan, _) = try Self.run("plan", in: TemporaryDirectory(), order: "# places first\nplaces.lua\nmoods.lua\n")
    #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
    #expect(plan.stdout.contains("scripted in 2 passes"), "\(plan.stdout)")
    #expect(plan.stdout.contains("places.lua (ContinentToContinent, CountryToCountry)"), "\(plan.stdout)")
    let folder = try TemporaryDirectory()
    let (result, store) = try Self.run("migrate", in: folder, order: "places.lua\nmoods.lua\n")
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("mood of 231: 1 country"), "\(result.stderr)")
    #expect(try Self.count(store, "SELECT count(*) FROM ZMOOD") == 4)
    #expect(try Self.linkedMoods(store) == 4)
  }

  /// The order decides: moods first find no country, and leave the links they were told to set
  /// empty — which the report names (the file said `country = false`: dropped on purpose).
  @Test func theOtherOrderFindsNothing() throws {
    let folder = try TemporaryDirectory()
    let (result, store) = try Self.run("migrate", in: folder, order: "moods.lua\nplaces.lua\n")
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("mood of 231: 0 country"), "\(result.stderr)")
    #expect(result.stdout.contains("dropped: Mood.country — 4 values"), "\(result.stdout)")
    #expect(try Self.linkedMoods(store) == 0)
  }

  @Test func aChainFileLineNamesTheStepsFiles() throws {
    let folder = try TemporaryDirectory()
    let (result, store) = try Self.run(
      "migrate", in: folder, order: nil, chain: "Moody 2\nMoody 3: places.lua, moods.lua\n")
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(try Self.linkedMoods(store) == 4)
  }

  /// `lint` takes a policy folder as `plan` does: files a chain file's line or an order file names
  /// are the steps' own, whatever they are called — not "no step of the model" (issue 71: lint read
  /// the folder without its chain file and refused them).
  static let namings: [(order: String?, chain: String?)] = [
    (nil, "Moody 2\nMoody 3: places.lua, moods.lua\n"), ("places.lua\nmoods.lua\n", nil),
  ]

  @Test(arguments: 0..<2)
  func lintTakesTheFilesAChainLineOrAnOrderFileNames(naming: Int) throws {
    let (order, chain) = Self.namings[naming]
    let folder = try TemporaryDirectory()
    let policies = try Self.policies(in: folder, order: order, chain: chain)
    let lint = try MigrunProcess.run(["lint", Self.model, "--policies", policies.path])
    #expect(!lint.stderr.contains("no step of"), "\(lint.stdout)\(lint.stderr)")
    #expect(!lint.stdout.contains("no step of"), "\(lint.stdout)\(lint.stderr)")
    #expect([0, 1].contains(lint.status), "\(lint.stdout)\(lint.stderr)")
  }

  /// A relationship one file maps from objects only the other file makes would be left empty under
  /// Core Data's per-mapping-model associations: refused up front, naming it.
  @Test func aRelationshipAcrossFilesIsRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.store, into: folder)
    let policies = try Self.policies(in: folder, order: "places.lua\nmoods.lua\n")
    try "return { Country = {}, Continent = \"copy\" }\n".write(
      to: policies.appendingPathComponent("places.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run(
      ["plan", store.path, "--model", Self.model, "--to", "Moody 3", "--policies", policies.path])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("CountryToCountry maps relationship moods"), "\(result.stderr)")
    #expect(result.stderr.contains("made in another mapping model (moods.lua)"), "\(result.stderr)")
  }

  /// An order file names files beside it, never a path out of the policy folder.
  @Test func anOrderFileNamingAPathIsRefused() throws {
    let (result, _) = try Self.run("plan", in: TemporaryDirectory(), order: "places.lua\n../moods.lua\n")
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("lists '../moods.lua': name a file beside the order file"), "\(result.stderr)")
  }

  /// What no file of the step maps would be lost: refused, naming the entity.
  @Test func anEntityNoFileMapsIsRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.store, into: folder)
    let policies = try Self.policies(in: folder, order: "places.lua\nnothing.lua\n")
    try FileManager.default.removeItem(at: policies.appendingPathComponent("moods.lua"))
    try "return {}\n".write(to: policies.appendingPathComponent("nothing.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run(
      ["plan", store.path, "--model", Self.model, "--to", "Moody 3", "--policies", policies.path])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("maps Mood"), "\(result.stderr)")
  }

  /// Two mapping models that fit one step, in one folder with no order file: refused, naming both
  /// and the order file that would run them in turn; given twice by `--mapping`, refused too.
  @Test func twoMappingModelsForOneStepWithoutAnOrderAreRefused() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder)
    let policies = try folder.folder("policies")
    let mapping = Fixtures.url("objcio-core-data-moody/mappings/Moody 3-Moody 4.xcmappingmodel")
    for name in ["a", "b"] {
      try FileManager.default.copyItem(at: mapping, to: policies.appendingPathComponent("\(name).xcmappingmodel"))
    }
    let arguments = [store.path, "--model", Self.model, "--to", "Moody 4"]
    let found = try MigrunProcess.run(["plan"] + arguments + ["--policies", policies.path])
    #expect(found.status == 1, "\(found.stdout)\(found.stderr)")
    #expect(found.stderr.contains("fit the same step"), "\(found.stderr)")
    #expect(found.stderr.contains("<From>-<To>.order"), "\(found.stderr)")
    // Listed in an order file, the two (the same mappings twice) would make every object twice.
    try "a.xcmappingmodel\nb.xcmappingmodel\n".write(
      to: policies.appendingPathComponent("Moody 3-Moody 4.order"), atomically: true, encoding: .utf8)
    let ordered = try MigrunProcess.run(["plan"] + arguments + ["--policies", policies.path])
    #expect(ordered.status == 1, "\(ordered.stdout)\(ordered.stderr)")
    #expect(ordered.stderr.contains("is in both a.xcmappingmodel and b.xcmappingmodel"), "\(ordered.stderr)")
    let twice = try MigrunProcess.run(["plan"] + arguments + ["--mapping", mapping.path, "--mapping", mapping.path])
    #expect(twice.status == 1, "\(twice.stdout)\(twice.stderr)")
    #expect(twice.stderr.contains("twice"), "\(twice.stderr)")
  }
}

/// Xcode mapping models given by `--mapping` more than once for one step: Moody 3 → 4's mapping
/// model split in two, as an app splits its model to migrate in chunks.
@Suite struct MappingModelPassesTests {
  static let mapping = Fixtures.url("objcio-core-data-moody/mappings/Moody 3-Moody 4.xcmappingmodel")

  /// A copy of the mapping model with only the entity mappings of `sources` (and their property
  /// mappings).
  static func split(keeping sources: Set<String>, to url: URL) throws {
    var xml = try String(contentsOf: mapping.appendingPathComponent("xcmapping.xml"), encoding: .utf8)
    let objects = try Regex(#"    <object type="(XDDEV[A-Z]+)" id="(z\d+)">\n(?:        .*\n)*?    </object>\n"#)
    let all = xml.matches(of: objects).map {
      (
        type: String($0.output[1].substring ?? ""), id: String($0.output[2].substring ?? ""),
        text: String($0.output[0].substring ?? "")
      )
    }
    func field(_ name: String, _ text: String) -> String? {
      guard let start = text.range(of: "name=\"\(name)\"") else { return nil }
      let rest = text[start.upperBound...]
      guard let close = rest.firstIndex(of: ">"), let end = rest[close...].firstIndex(of: "<") else { return nil }
      return String(rest[rest.index(after: close)..<end])
    }
    func refs(_ name: String, _ text: String) -> String? {
      guard let start = text.range(of: "name=\"\(name)\""), let refs = text[start.upperBound...].range(of: "idrefs=\"")
      else { return nil }
      return String(text[refs.upperBound...].prefix { $0 != "\"" })
    }
    let dropped = Set(
      all.filter { $0.type == "XDDEVENTITYMAPPING" && !sources.contains(field("sourcename", $0.text) ?? "") }.map(\.id))
    for object in all where dropped.contains(object.id) || dropped.contains(refs("entitymapping", object.text) ?? "") {
      // The object, and its id from every list of references.
      xml = xml.replacingOccurrences(of: object.text, with: "")
      for (old, new) in [
        (" \(object.id)\"", "\""), ("\"\(object.id) ", "\""), (" \(object.id) ", " "), ("\"\(object.id)\"", "\"\""),
      ] {
        xml = xml.replacingOccurrences(of: old, with: new)
      }
    }
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    try xml.write(to: url.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
  }

  /// Each runs in turn; the relationships Xcode would generate through the other model's entity
  /// mappings have no mapping to go through (Core Data leaves them empty): named as dropped, in the
  /// plan and the migration's report.
  @Test func twoMappingModelsGivenInTurnRunAsPasses() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture("objcio-core-data-moody/stores/Moody 3.moody.sqlite", into: folder)
    let places = folder.url.appendingPathComponent("places.xcmappingmodel")
    let moods = folder.url.appendingPathComponent("moods.xcmappingmodel")
    try Self.split(keeping: ["Country", "Continent"], to: places)
    try Self.split(keeping: ["Mood"], to: moods)
    let arguments = [
      store.path, "--model", MappingPassesTests.model, "--to", "Moody 4", "--mapping", places.path, "--mapping",
      moods.path,
    ]
    let plan = try MigrunProcess.run(["plan"] + arguments)
    #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
    #expect(plan.stdout.contains("places.xcmappingmodel (ContinentToContinent, CountryToCountry)"), "\(plan.stdout)")
    #expect(plan.stdout.contains("moods.xcmappingmodel (MoodToMood)"), "\(plan.stdout)")
    #expect(plan.stdout.contains("drops Mood.country — 4 values"), "\(plan.stdout)")
    let migrated = try MigrunProcess.run(["migrate"] + arguments)
    #expect(migrated.status == 0, "\(migrated.stdout)\(migrated.stderr)")
    #expect(migrated.stdout.contains("Continent 2, Country 3"), "\(migrated.stdout)")
    #expect(migrated.stdout.contains("Mood 4"), "\(migrated.stdout)")
    #expect(migrated.stdout.contains("dropped: Mood.country — 4 values"), "\(migrated.stdout)")
  }
}

/// `m.userInfo`, Core Data's `NSMigrationManager.userInfo`: one table for every entity mapping, carried
/// from one file to the next — across a step's passes and a migration's steps.
@Suite struct ManagerUserInfoTests {
  @Test func whatOneFileKeepsTheNextFinds() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(MappingPassesTests.store, into: folder)
    let policies = try MappingPassesTests.policies(in: folder, order: "places.lua\nmoods.lua\n")
    try """
    return {
      order = { "Continent", "Country" },
      Country = {
        relationships = { moods = false },
        begin = function(m) m:log("countries see " .. tostring(m.userInfo.continents)) end,
        createDestinationInstances = function(src, m)
          local dst = m:default(src)
          m.userInfo.codes[#m.userInfo.codes + 1] = src.numericISO3166Code
        end,
      },
      Continent = {
        begin = function(m) m.userInfo.continents = 0; m.userInfo.codes = {} end,
        createDestinationInstances = function(src, m) m:default(src); m.userInfo.continents = m.userInfo.continents + 1 end,
      },
    }

    """.write(to: policies.appendingPathComponent("places.lua"), atomically: true, encoding: .utf8)
    try
      (MappingPassesTests.moods.replacingOccurrences(
        of: "createRelationships = function(dst, m)",
        with: """
          begin = function(m)
                table.sort(m.userInfo.codes)
                m:log("moods see " .. m.userInfo.continents .. " continents, countries " .. table.concat(m.userInfo.codes, ","))
              end,
              createRelationships = function(dst, m)
          """)).write(to: policies.appendingPathComponent("moods.lua"), atomically: true, encoding: .utf8)
    try "return { Mood = { begin = function(m) m:log('next step sees ' .. #m.userInfo.codes .. ' codes') end } }\n"
      .write(to: policies.appendingPathComponent("Moody 3-Moody 4.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run([
      "migrate", store.path, "--model", MappingPassesTests.model, "--to", "Moody 4", "--policies", policies.path,
    ])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("countries see 2"), "\(result.stderr)")
    #expect(result.stderr.contains("moods see 2 continents, countries 231,704,710"), "\(result.stderr)")
    #expect(result.stderr.contains("next step sees 3 codes"), "\(result.stderr)")
  }

  /// A function cannot leave its file's VM: refused, naming where it is kept.
  @Test func aFunctionInUserInfoIsRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(MappingPassesTests.store, into: folder)
    let policies = try folder.folder("policies")
    try "return { Mood = { begin = function(m) m.userInfo.f = { g = print } end } }\n".write(
      to: policies.appendingPathComponent("Moody 2-Moody 3.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run([
      "migrate", store.path, "--model", MappingPassesTests.model, "--to", "Moody 3", "--policies", policies.path,
    ])
    #expect(result.status != 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("m.userInfo.f.g is a function"), "\(result.stderr)")
  }
}
