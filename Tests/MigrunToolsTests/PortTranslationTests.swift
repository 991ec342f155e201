import Foundation
import LuaHost
import TestSupport
import Testing

@testable import MigrunTools

/// `migrun port`'s translation, without the command line: the Lua each Swift form becomes, the
/// placeholders and how they are counted, the names of functions and entity mappings, and Lua that
/// loads in the sandbox for every example.
@Suite struct PortTranslationTests {
  static func policy(_ body: String, members: String = "") throws -> PortedClass {
    let source = """
      final class ItemToItemPolicy: NSEntityMigrationPolicy {
      \(members)
        override func createDestinationInstances(
          forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
        ) throws {
      \(body)
        }
      }
      """
    let found = try SwiftPort.translate(sources: [("Item.swift", source)])
    return try #require(found.classes.first)
  }

  @Test func eachStatementCarriesItsSwiftLine() throws {
    let ported = try Self.policy(
      """
          let name = sInstance.value(forKey: "name") as? String ?? ""
          let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: manager.destinationContext)
          item.setValue(name.uppercased(), forKey: "title")
          manager.associate(sourceInstance: sInstance, withDestinationInstance: item, for: mapping)
      """)
    #expect(ported.module.contains("local name = swift.coalesce(src.name, \"\")  -- Item.swift:6"), "\(ported.module)")
    #expect(ported.module.contains("local item = m:insert(\"Item\", {})  -- Item.swift:7"))
    #expect(ported.module.contains("item.title = string.upper(name)  -- Item.swift:8"))
    #expect(ported.module.contains("m:associate(src, item)  -- Item.swift:9"))
    #expect(ported.counts.statements == 4 && ported.counts.translated == 4)
    #expect(ported.hooks == ["createDestinationInstances"])
    #expect(ported.entities.map { "\($0.source)→\($0.destination)" } == ["Item→Item"])
  }

  /// Nothing is skipped: a statement the port does not know is an `error(…)` in its place, each
  /// statement inside it counted as left.
  @Test func anUntranslatableStatementIsAFailingPlaceholder() throws {
    let ported = try Self.policy(
      """
          defer { print("done") }
          if case .some(let x) = sInstance.value(forKey: "n") as? Int {
            print(x)
            print(x)
          }
          let ok = true
      """)
    #expect(ported.counts.statements == 6, "\(ported.counts)")
    #expect(ported.counts.translated == 1)
    #expect(ported.counts.placeholders.map(\.spot) == ["Item.swift:6", "Item.swift:7"])
    #expect(ported.module.contains("error(\"migrun port: Item.swift:6: not translated (a DeferStmtSyntax statement)"))
    #expect(ported.module.contains("local ok = true  -- Item.swift:11"))
  }

  @Test func fetchRequestsBecomeOneFetchWithTheSameFormat() throws {
    let ported = try Self.policy(
      """
          let request = NSFetchRequest<NSManagedObject>(entityName: "Tag")
          request.predicate = NSPredicate(format: "name BEGINSWITH[c] %@ AND weight > %d", "a", 3)
          request.sortDescriptors = [NSSortDescriptor(key: "weight", ascending: false)]
          let tags = try manager.sourceContext.fetch(request)
      """)
    #expect(
      ported.module.contains(
        "local tags = m:fetch(\"Tag\", \"name BEGINSWITH[c] %@ AND weight > %@\", { args = { \"a\", 3 }, sort = { \"-weight\" }, source = true })"
      ), "\(ported.module)")
    #expect(ported.counts.translated == 4)
  }

  /// Compound predicates, an entity description's object, a set's `allObjects`.
  @Test func theOlderSpellingsOfCoreDataTranslateToo() throws {
    let ported = try Self.policy(
      """
          let request = NSFetchRequest<NSManagedObject>(entityName: "Tag")
          request.predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "name == %@", "a"), NSPredicate(format: "weight > %f", 0.5),
          ])
          let count = try manager.destinationContext.count(for: request)
          let entity = NSEntityDescription.entity(forEntityName: "Tag", in: manager.destinationContext)!
          let tag = NSManagedObject(entity: entity, insertInto: manager.destinationContext)
          let items = (sInstance.value(forKey: "items") as? NSSet)?.allObjects ?? []
          tag.setValue(Int64(count + items.count), forKey: "weight")
      """)
    #expect(ported.counts.placeholders.isEmpty, "\(ported.counts.placeholders)")
    #expect(
      ported.module.contains(
        "local count = #m:fetch(\"Tag\", \"(name == %@) AND (weight > %@)\", { args = { \"a\", 0.5 } })"),
      "\(ported.module)")
    #expect(ported.module.contains("local tag = m:insert(\"Tag\", {})"))
    #expect(ported.module.contains("swift.opt((src.items), function(_v1_) return _v1_ end)"))
  }

  /// A Core Data stage's batch delete: the objects deleted through the stage's context, and saved.
  @Test func aBatchDeleteInAStageDeletesThroughTheContext() throws {
    let source = """
      let stage = NSCustomMigrationStage(migratingFrom: v1, to: v2)
      stage.willMigrateHandler = { manager, _ in
        let context = manager.container!.newBackgroundContext()
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Trip")
        request.predicate = NSPredicate(format: "start < %@", Date() as NSDate)
        try context.execute(NSBatchDeleteRequest(fetchRequest: request))
      }
      """
    let found = try SwiftPort.translate(sources: [("Stages.swift", source)])
    let stage = try #require(found.stages.first)
    #expect(stage.counts.placeholders.isEmpty, "\(stage.counts.placeholders)")
    let handler = try #require(stage.handlers.first?.lua)
    #expect(
      handler.contains(
        "for _, object in ipairs(ctx:fetch(\"Trip\", \"start < %@\", { args = { date.now() } })) do ctx:delete(object) end ctx:save()"
      ), "\(handler)")
    #expect(stage.from == ["v1"] && stage.to == ["v2"])
  }

  @Test func methodsAreNamedByTheirSelectorsAndPropertiesKeptInTheModule() throws {
    let ported = try Self.policy(
      "    _ = convert(1, withAlpha: 2)",
      members: """
          var seen: Set<String> = []
          @objc func convert(_ value: NSNumber, withAlpha alpha: NSNumber) -> NSNumber { value }
          @objc(scaled:) func scale(by factor: Double) -> Double { factor * 2 }
          func normalize(value: String) -> String { value.lowercased() }
        """)
    #expect(ported.functions.map(\.lua) == ["convert_withAlpha", "scaled", "normalizeWithValue"])
    #expect(ported.module.contains("ItemToItemPolicy.seen = {}"))
    #expect(ported.module.contains("local _ = ItemToItemPolicy.convert_withAlpha(1, 2)"), "\(ported.module)")
    #expect(ported.module.contains("  return value  -- Item.swift:3"))
  }

  /// An optional chain is nil as soon as a link is nil or NULL, each link translated once.
  @Test func optionalChainsStopAtTheFirstAbsentLink() throws {
    let ported = try Self.policy(
      """
          let owner = sInstance.value(forKey: "owner") as? NSManagedObject
          let city = owner?.address?.city
      """)
    #expect(
      ported.module.contains(
        "local city = swift.opt(owner, function(_v1_) return swift.opt(_v1_.address, function(_v2_) return _v2_.city end) end)"
      ), "\(ported.module)")
  }

  @Test func classNamesGiveTheirEntityMappings() {
    let names = { (name: String) in PolicyClassWriter.entities(named: name).map { "\($0.source)→\($0.destination)" } }
    #expect(names("Country5ToCountry6Policy") == ["Country→Country"])
    #expect(names("ItemV1ToItemV2MigrationPolicy") == ["Item→Item"])
    #expect(names("PostToPostWithColorEntityMigrationPolicy") == ["Post→PostWithColor"])
    #expect(names("TodoPolicy").isEmpty)
  }

  /// Every module and stage the examples become runs in the migration sandbox (its functions
  /// defined, its fields set): what the port writes is Lua that loads.
  @Test func everyExamplesLuaLoadsInTheSandbox() throws {
    let examples = Fixtures.repositoryRoot.appendingPathComponent("Tests/PortExamples")
    let folder = try TemporaryDirectory()
    try PortRuntime.module.write(to: folder.url.appendingPathComponent("swift.lua"), atomically: true, encoding: .utf8)
    var loaded = 0
    for name in try FileManager.default.contentsOfDirectory(atPath: examples.path).sorted() where !name.contains(".") {
      let files = try FileManager.default.contentsOfDirectory(atPath: examples.appendingPathComponent(name).path)
        .filter { $0.hasSuffix(".swift") }
      let sources = try files.map { file in
        (file, try String(contentsOf: examples.appendingPathComponent("\(name)/\(file)"), encoding: .utf8))
      }
      let found = try SwiftPort.translate(sources: sources)
      let chunks =
        found.classes.map { ($0.name, $0.module) }
        + found.stages.map {
          ("stage", "local swift = require \"swift\"\nreturn {\n\($0.handlers.map(\.lua).joined(separator: "\n"))\n}")
        }
      for (chunk, text) in chunks {
        let vm = try LuaVM(modulePaths: [folder.url])
        #expect(throws: Never.self, "\(name): \(chunk)\n\(text)") { _ = try vm.run(source: text, name: chunk) }
        loaded += 1
      }
    }
    #expect(loaded == 11)
  }
}
