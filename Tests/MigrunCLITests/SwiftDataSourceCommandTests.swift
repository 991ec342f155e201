import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

/// Every command that takes a model takes a SwiftData project's Swift sources.
@Suite struct SwiftDataSourceCommandTests {
  static let cartKit = Fixtures.url("karim-ezzedine-cartkit/Sources/CartKitStorageSwiftData").path
  static let cartStore =
    "karim-ezzedine-cartkit/Tests/CartKitStorageSwiftDataTests/LegacySwiftData/CartKitSwiftData_v1.sqlite"

  /// CartKit's store was written by an earlier state of its sources: it migrates to the model the
  /// sources declare today, keeping its cart, and is then current.
  @Test func cartKitsStoreMigratesToItsSourcesModelKeepingItsCart() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.cartStore, into: folder)
    let before = try MigrunProcess.run(["export", store.path])
    #expect(before.status == 0, "\(before.stderr)")
    let status = try MigrunProcess.run(["status", store.path, "--model", Self.cartKit])
    #expect(status.status == 10, "\(status.stdout)\(status.stderr)")
    let migrated = try MigrunProcess.run(["migrate", store.path, "--model", Self.cartKit])
    #expect(migrated.status == 0, "\(migrated.stderr)")
    #expect(migrated.stdout.contains("is at 1.0.0"), "\(migrated.stdout)")
    let after = try MigrunProcess.run(["status", store.path, "--model", Self.cartKit])
    #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
    // The cart: every value it had, and the two attributes added since empty.
    let rows = try DatabaseQueue(path: store.path).read { db in
      try Row.fetchAll(db, sql: "SELECT ZID, ZSTOREID, ZSTATUS, ZSESSIONID, ZPROMOTIONKINDSJSON FROM ZCARTMODEL")
    }
    let original = try DatabaseQueue(
      path: StoreFiles.immutableURI(Fixtures.url(Self.cartStore)), configuration: Self.readOnly
    ).read {
      db in try Row.fetchAll(db, sql: "SELECT ZID, ZSTOREID, ZSTATUS FROM ZCARTMODEL")
    }
    #expect(rows.count == 1)
    #expect(
      rows.map { [$0["ZID"], $0["ZSTOREID"], $0["ZSTATUS"]] as [String?] }
        == original.map { [$0["ZID"], $0["ZSTOREID"], $0["ZSTATUS"]] as [String?] })
    #expect(rows.first?["ZSESSIONID"] == nil as String?)
    // SwiftData's metadata: the version identifier the schema declares.
    let inspected = try MigrunProcess.run(["inspect", store.path, "--model", Self.cartKit, "--json"])
    #expect(try inspected.jsonLine("inspect")["version"] as? String == "1.0.0")
  }

  static var readOnly: Configuration {
    var configuration = Configuration()
    configuration.readonly = true
    return configuration
  }

  /// A two-version project: hash, create, status, plan, diff (and --lua), lint, verify, migrate and
  /// diagram all read the sources.
  @Test func everyModelCommandReadsTheSources() throws {
    let folder = try TemporaryDirectory()
    let sources = folder.url.appendingPathComponent("Trips")
    try SwiftDataSamples.write(SwiftDataSamples.trips, into: sources)
    let model = sources.path
    let hash = try MigrunProcess.run(["hash", model, "--model-version", "1.0.0", "--json"])
    #expect(try hash.jsonLine("hash")["version"] as? String == "1.0.0")
    let store = folder.url.appendingPathComponent("trips.sqlite").path
    let created = try MigrunProcess.run(["create", store, "--model", model, "--model-version", "1.0.0"])
    #expect(created.status == 0, "\(created.stderr)")
    let plan = try MigrunProcess.run(["plan", store, "--model", model])
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("1.0.0 → 2.0.0  inferred"), "\(plan.stdout)")
    let diff = try MigrunProcess.run(["diff", model, "--from", "1.0.0", "--to", "2.0.0"])
    #expect(diff.stdout.contains("title ← name"), "\(diff.stdout)")
    let lua = try MigrunProcess.run(
      ["diff", model, "--from", "1.0.0", "--to", "2.0.0", "--lua", "--out", folder.url.path])
    #expect(lua.status == 0, "\(lua.stderr)")
    #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("1.0.0-2.0.0.lua").path))
    // SwiftData's rules: #Unique in version 2 is a constraint existing duplicates would break.
    let lint = try MigrunProcess.run(["lint", model])
    #expect(lint.status == 1)
    #expect(lint.stdout.contains("1.0.0 → 2.0.0: Trip.title, start: gets a uniqueness constraint"), "\(lint.stdout)")
    #expect(lint.stdout.hasSuffix("Trips: 1 finding\n"), "\(lint.stdout)")
    let verify = try MigrunProcess.run(["verify", model])
    #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    #expect(verify.stdout.contains("1 of 1 versions reach 2.0.0"), "\(verify.stdout)")
    let migrate = try MigrunProcess.run(["migrate", store, "--model", model])
    #expect(migrate.status == 0, "\(migrate.stderr)")
    let diagram = try MigrunProcess.run(["diagram", model, "--format", "dot"])
    #expect(diagram.stdout.contains("\"Trip\""), "\(diagram.stdout)")
  }

  /// An error in the sources names the user's file and line.
  @Test func anUnreadableSourceNamesItsFileAndLine() throws {
    let folder = try TemporaryDirectory()
    try SwiftDataSamples.write(
      [("Models/Item.swift", "@Model class Item {\n  var when = makeDate()\n}\n")], into: folder.url)
    let result = try MigrunProcess.run(["hash", folder.url.path])
    #expect(result.status == 1)
    #expect(result.stderr.contains("Models/Item.swift:2: Item.when has no type"), "\(result.stderr)")
  }
}

/// The schema of SwiftData sources is what the app's container is made for (issue 70): the types
/// `ModelContainer(for:)` names and those their relationships reach — an old `@Model` class left in
/// the folder is no entity (it made the app's own store "not this version").
@Suite struct SwiftDataContainerSchemaTests {
  static let sources = """
    import SwiftData
    import SwiftUI

    @Model final class Cocktail {
      var name: String = ""
      @Relationship(deleteRule: .cascade) var ingredients: [Ingredient] = []
      init() {}
    }

    @Model final class Ingredient {
      var name: String = ""
      var cocktail: Cocktail?
      init() {}
    }

    @Model final class OldCocktailIngredient {
      var label: String = ""
      init() {}
    }

    @main struct CocktailsApp: App {
      var body: some Scene {
        WindowGroup { Text("Cocktails") }
          .modelContainer(for: Cocktail.self)
      }
    }

    """

  static func entities(_ source: String) throws -> MigrunProcess.Result {
    let folder = try TemporaryDirectory()
    try folder.write(source, to: "App/Model.swift")
    return try MigrunProcess.run(["hash", folder.url.appendingPathComponent("App").path])
  }

  @Test func theContainersTypesAndThoseTheyReachAreTheSchema() throws {
    let result = try Self.entities(Self.sources)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("Cocktail") && result.stdout.contains("Ingredient"), "\(result.stdout)")
    #expect(!result.stdout.contains("OldCocktailIngredient"), "\(result.stdout)")
  }

  @Test func withoutAContainerEveryModelClassIsTheSchema() throws {
    let result = try Self.entities(
      Self.sources.replacingOccurrences(of: ".modelContainer(for: Cocktail.self)", with: ""))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("OldCocktailIngredient"), "\(result.stdout)")
  }

  @Test func aContainerForATypeThatIsNoModelIsNamed() throws {
    let result = try Self.entities(
      Self.sources.replacingOccurrences(of: "for: Cocktail.self", with: "for: [Cocktail.self, Recipe.self]"))
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("the container is made for Recipe, which is no @Model class"), "\(result.stderr)")
  }
}

/// SwiftUI's `Color.Resolved` as SwiftData stores it (issue 70): a model read from Swift sources that
/// declare the properties of the entity SwiftData wrote (`../shared/fixtures/facts/
/// swiftdata-sdk-composites.json`) hashes to the version hash SwiftData stored for it.
@Suite struct SwiftDataSDKCompositeTests {
  @Test func colorResolvedPropertiesHashAsSwiftDataStoredThem() throws {
    let data = try Data(contentsOf: Fixtures.facts("swiftdata-sdk-composites.json"))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let entities = try #require(root["entities"] as? [String: [String: Any]])
    #expect(!entities.isEmpty)
    for (name, facts) in entities.sorted(by: { $0.key < $1.key }) {
      let stored = try #require(facts["storedVersionHash"] as? String)
      let properties = try #require(facts["properties"] as? [String: [String: Any]])
      var lines = ["import SwiftData", "import SwiftUI", "", "@Model final class \(name) {"]
      for (property, description) in properties.sorted(by: { $0.key < $1.key }) {
        let className = try #require(description["NSAttributeValueClassName"] as? String)
        let elements = (description["NSCompositeElements"] as? [[String: Any]] ?? []).compactMap {
          $0["NSPropertyName"] as? String
        }
        let type: String
        switch className {
        case "NSString": type = "String"
        case "Array<String>": type = "[String]"
        case "NSDictionary" where elements == ["linearRed", "linearGreen", "linearBlue", "opacity"]:
          type = "Color.Resolved"
        default:
          Issue.record("\(name).\(property): a type this test does not write (\(className))")
          continue
        }
        lines.append("  var \(property): \(type)\(description["NSIsOptional"] as? Bool == true ? "?" : "")")
      }
      lines += ["  init() {}", "}", ""]
      let folder = try TemporaryDirectory()
      try folder.write(lines.joined(separator: "\n"), to: "App/Model.swift")
      let result = try MigrunProcess.run(["hash", folder.url.appendingPathComponent("App").path])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout.contains("\(name)  \(stored)"), "\(result.stdout)")
    }
  }
}
