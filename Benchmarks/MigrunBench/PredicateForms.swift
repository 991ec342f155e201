import Foundation
import GRDB
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore

/// One predicate form measured: the fetch a stage makes (`format` on `entity`) and the same query
/// written in plain SQL (`sql`), both finding the object numbered by the key they are given.
private struct PredicateForm {
  let name: String
  let entity: String
  let format: String
  let arguments: (Int) -> [FormatPredicate.Argument]
  let sql: String
  let sqlArguments: (Int) -> StatementArguments

  /// The forms SQL says, each with the SQL a person would write for it (a NOT already turned, an
  /// `IN` list bound as `IN (?, ?)`): the store's fetch against SQLite's best.
  static var all: [PredicateForm] {
    [
      .init("==", "Item", "name == %@", { [.value(.string("item \($0)"))] }, "ZNAME = ?", { ["item \($0)"] }),
      .init(
        "OR", "Item", "name == %@ OR n == %@", { [.value(.string("item \($0)")), .value(.integer(-1))] },
        "ZNAME = ? OR ZN = ?", { ["item \($0)", -1] }),
      .init("NOT", "Item", "NOT (n != %@)", { [.value(.integer(Int64($0)))] }, "ZN = ?", { [$0] }),
      .init(
        "NOT over AND (De Morgan)", "Item", "NOT (name != %@ AND n != %@)",
        { [.value(.string("item \($0)")), .value(.integer(-1))] }, "ZNAME = ? OR ZN = ?", { ["item \($0)", -1] }),
      .init(
        "IN", "Item", "name IN %@", { [.list([.string("item \($0)"), .string("none")])] }, "ZNAME IN (?, ?)",
        { ["item \($0)", "none"] }),
      .init(
        "IN 1,000 values", "Item", "n IN %@",
        { key in [.list((0..<1000).map { .integer(Int64(key + $0 * 1_000_000)) })] },
        "ZN IN (?" + String(repeating: ", ?", count: 999) + ")",
        { key in StatementArguments((0..<1000).map { key + $0 * 1_000_000 }) }),
      .init(
        "BETWEEN", "Item", "n BETWEEN %@", { [.list([.integer(Int64($0)), .integer(Int64($0))])] },
        "ZN BETWEEN ? AND ?", { [$0, $0] }),
      .init(
        "key path through a to-one", "Item", "owner.name == %@", { [.value(.string("owner \($0)"))] },
        "ZOWNER IN (SELECT Z_PK FROM ZOWNER WHERE ZNAME = ?)", { ["owner \($0)"] }),
      .init(
        "ANY through a to-many", "Owner", "ANY items.name == %@", { [.value(.string("item \($0)"))] },
        "Z_PK IN (SELECT ZOWNER FROM ZITEM WHERE ZNAME = ?)", { ["item \($0)"] }),
      .init(
        "@count", "Owner", "name == %@ AND items.@count == 1", { [.value(.string("owner \($0)"))] },
        "ZNAME = ? AND (SELECT count(*) FROM ZITEM i WHERE i.ZOWNER = t.Z_PK) = 1", { ["owner \($0)"] }),
      .init(
        "==[c]", "Item", "name ==[c] %@ AND n == %@", { [.value(.string("ITEM \($0)")), .value(.integer(Int64($0)))] },
        "ZN = ? AND ZNAME = ? COLLATE NOCASE", { [$0, "ITEM \($0)"] }),
      .init(
        "BEGINSWITH", "Item", "name BEGINSWITH %@ AND n == %@",
        { [.value(.string("item \($0)")), .value(.integer(Int64($0)))] },
        "ZN = ?1 AND substr(ZNAME, 1, length(?2)) = ?2",
        { [$0, "item \($0)"] }),
      .init(
        "CONTAINS[cd]", "Item", "name CONTAINS[cd] %@", { [.value(.string("ITEM \($0)"))] },
        "ZNAME LIKE '%' || ? || '%'", { ["ITEM \($0)"] }),
    ]
  }

  init(
    _ name: String, _ entity: String, _ format: String, _ arguments: @escaping (Int) -> [FormatPredicate.Argument],
    _ sql: String, _ sqlArguments: @escaping (Int) -> StatementArguments
  ) {
    (self.name, self.entity, self.format, self.arguments) = (name, entity, format, arguments)
    let table = entity == "Item" ? "ZITEM" : "ZOWNER"
    (self.sql, self.sqlArguments) = ("SELECT * FROM \(table) t WHERE \(sql)", sqlArguments)
  }
}

/// `predicate-forms COUNT FOLDER FETCHES`: fetches per second, each finding one object among
/// COUNT, for each predicate form SQL can say, on a store of COUNT items (name and n fetch-indexed)
/// each with an owner (name indexed) owning it alone; beside each, the same query in plain SQL
/// through GRDB on the same file (rows read, no objects made), and the ratio.
func predicateForms(count: Int, folder: String, fetches: Int) throws {
  let (url, model) = try ownedItemStore(count: count, folder: folder)
  let store = try SQLiteStore(url: url, model: model, access: .readOnly)
  let context = StoreCoordinator(store: store).newContext()
  let queue = try DatabaseQueue(
    path: url.path,
    configuration: {
      var c = Configuration(); c.readonly = true; return c
    }())
  var rates: [String: [String: Double]] = [:]
  for form in PredicateForm.all {
    // The string search no index serves reads every row (as Core Data's does): a hundredth of the
    // fetches, rated the same way.
    let wanted = form.name == "CONTAINS[cd]" ? max(3, fetches / 100) : fetches
    let key = { (fetch: Int) in 1 + (fetch * 7919) % count }
    let migrun = try rate(wanted) { fetch in
      let found = try context.fetch(
        form.entity, matching: FormatPredicate(form.format, filling: form.arguments(key(fetch))))
      precondition(found.count >= 1, "\(form.name): \(found.count)")
    }
    let sqlite = try rate(wanted) { fetch in
      let found = try queue.read { try Row.fetchAll($0, sql: form.sql, arguments: form.sqlArguments(key(fetch))) }
      precondition(found.count >= 1, "\(form.name) in SQL: \(found.count)")
    }
    rates[form.name] = ["migrun": migrun, "sqlite": sqlite, "x_sqlite": (migrun / sqlite * 100).rounded() / 100]
  }
  try report(["objects": count, "fetches_per_second": rates])
}

/// Fetches a second of `body` run `times` times (two decimals).
private func rate(_ times: Int, _ body: (Int) throws -> Void) throws -> Double {
  let started = now()
  for fetch in 0..<times { try body(fetch) }
  return (Double(times) / (now() - started) * 100).rounded() / 100
}

/// The store of COUNT items, each owned by its own owner, kept between runs in `folder`.
private func ownedItemStore(count: Int, folder: String) throws -> (URL, ObjectModel) {
  let url = URL(fileURLWithPath: folder).appendingPathComponent("owned-\(count).sqlite")
  let model = try XcdatamodelReader.parse(
    Data(
      """
      <model><entity name="Item">
        <attribute name="n" attributeType="Integer 64" defaultValueString="0"/>
        <attribute name="name" optional="YES" attributeType="String"/>
        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Owner" inverseName="items" inverseEntity="Owner"/>
        <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
        <fetchIndex name="byN"><fetchIndexElement property="n" type="Binary" order="ascending"/></fetchIndex>
      </entity><entity name="Owner">
        <attribute name="name" optional="YES" attributeType="String"/>
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/>
        <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
      </entity></model>
      """.utf8), file: "Owned.xcdatamodel/contents")
  guard !FileManager.default.fileExists(atPath: url.path) else { return (url, model) }
  let store = try SQLiteStore.create(at: url, model: model)
  try store.write { writer in
    for index in 1...count {
      let owner = ObjectID(entity: "Owner", primaryKey: Int64(index))
      try writer.insert(StoredObject(id: owner, attributes: ["name": .string("owner \(index)")]))
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Item", primaryKey: Int64(index)),
          attributes: ["n": .integer(Int64(index)), "name": .string("item \(index)")], toOne: ["owner": owner]))
    }
    try writer.reservePrimaryKeys(for: "Item", through: Int64(count))
    try writer.reservePrimaryKeys(for: "Owner", through: Int64(count))
  }
  try store.close()
  return (url, model)
}
