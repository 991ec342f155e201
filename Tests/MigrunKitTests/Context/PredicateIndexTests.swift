import Foundation
import GRDB
import Testing

@testable import MigrunContext
@testable import MigrunModel
@testable import MigrunStore
@testable import TestSupport

/// Each predicate form an index can serve is said in SQL that SQLite serves by the index (its query
/// plan searches the index, never scans the table), and finds what the object-by-object judge finds
/// (issue 60: `NOT (n != x)` read every row per fetch).
@Suite struct PredicateIndexTests {
  static let model = """
    <model><entity name="Item">
      <attribute name="n" optional="YES" attributeType="Integer 64"/>
      <attribute name="name" optional="YES" attributeType="String"/>
      <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
      <fetchIndex name="byN"><fetchIndexElement property="n" type="Binary" order="ascending"/></fetchIndex>
    </entity></model>
    """

  /// 300 items: `n` 1…300 but NULL for every tenth, `name` "item N" but NULL for every seventh.
  static func store(_ folder: TemporaryDirectory) throws -> SQLiteStore {
    let store = try SQLiteStore.create(
      at: folder.url.appendingPathComponent("Items.sqlite"), model: try Migrations.model(model, "Items"))
    let context = StoreCoordinator(store: store).newContext()
    for index in 1...300 {
      var values: [String: StoreValue] = [:]
      if index % 10 != 0 { values["n"] = .integer(Int64(index)) }
      if index % 7 != 0 { values["name"] = .string("item \(index)") }
      _ = try context.insert("Item", values)
    }
    try context.save()
    return store
  }

  /// SQLite's plan for the store's query of `format`, one line per step.
  static func plan(_ format: String, _ store: SQLiteStore) throws -> [String] {
    let entity = try #require(store.model.entity(named: "Item"))
    let tested = try FormatPredicate(format).rowFilterTesting(entity, in: store.model)
    #expect(tested.whole, "\(format) is said whole in SQL")
    let layout = try store.layout("Item")
    let (sql, values) = try #require(
      store.filteredQuery(layout, includingSubentities: true, filter: tested.filter, select: "t0.Z_PK"))
    return try store.read { db in
      try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(values)).map {
        $0["detail"] as String? ?? ""
      }
    }
  }

  static let served = [
    "NOT (n != 5)", "NOT (NOT (n == 5))", "NOT (name != 'item 5')", "name == 'item 5' OR n == -1",
    "NOT (name != 'item 5' AND n != -1)", "NOT (n == nil OR n != 5)", "name IN {'item 5', 'none'}",
    "name IN {'item 1', 'item 2', 'item 3', 'item 4', 'item 5', 'item 6', 'item 8', 'item 9', 'item 11', 'x'}",
    "n == 5 AND NOT (name == nil)",
  ]

  @Test(arguments: served) func aFormAnIndexServesSearchesTheIndex(_ format: String) throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    let plan = try Self.plan(format, store)
    #expect(plan.contains { $0.contains("USING INDEX") || $0.contains("USING COVERING INDEX") }, "\(format): \(plan)")
    #expect(!plan.contains { $0.hasPrefix("SCAN t0") }, "\(format) reads every row: \(plan)")
    let context = StoreCoordinator(store: store).newContext()
    let predicate = try FormatPredicate(format)
    let judged = try context.fetch("Item", matching: nil).filter { try predicate.evaluate($0) }
    #expect(try context.fetch("Item", matching: predicate).map(\.id) == judged.map(\.id), "\(format)")
    #expect(!judged.isEmpty, "\(format) finds something")
  }

  @Test func anOrOfTwoIndexedAttributesIsAUnionOfTheirIndexes() throws {
    let folder = try TemporaryDirectory()
    let plan = try Self.plan("name == 'item 5' OR n == -1", try Self.store(folder))
    #expect(plan.contains("MULTI-INDEX OR"), "\(plan)")
  }

  /// A NOT over an order keeps the objects whose value is nil (a comparison with nil is false, so
  /// its NOT holds), as the judge does; over `==` and `!=` too.
  @Test(arguments: [
    "NOT (n < 5)", "NOT (n >= 5)", "NOT (n <= 290 AND name != nil)", "NOT (n > 5 AND n < 290)",
    "NOT (n == 5)", "NOT (name == nil)", "NOT (n BETWEEN {3, 290})", "NOT (n IN {3, 4, 10})",
  ])
  func aNotOverNilValuesFindsWhatTheJudgeFinds(_ format: String) throws {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try Self.store(folder)).newContext()
    let predicate = try FormatPredicate(format)
    let judged = try context.fetch("Item", matching: nil).filter { try predicate.evaluate($0) }
    let fetched = try context.fetch("Item", matching: predicate)
    #expect(fetched.map(\.id) == judged.map(\.id), "\(format)")
    #expect(fetched.contains { ($0["n"] ?? .null) == .null }, "\(format) keeps the items without n")
  }
}
