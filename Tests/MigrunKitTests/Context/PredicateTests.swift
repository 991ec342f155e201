import Foundation
import TestSupport
import Testing

@testable import MigrunContext
@testable import MigrunKit
@testable import MigrunModel

/// NSPredicate's format syntax, against the semantics Apple's "FormatPredicate Programming Guide"
/// documents, on the company scenario (Ada 9000 and Bob 5000 in Sales, Bob reporting to Ada; Carol
/// 6500 in Research; Acme has both departments).
@Suite struct PredicateTests {
  static func names(_ format: String, _ entity: String = "Employee", arguments: [StoreValue] = []) throws -> [String] {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    let predicate = try FormatPredicate(format, arguments: arguments)
    return try context.fetch(entity, matching: predicate, sortedBy: [.ascending("name")]).map {
      try $0.value("name").text ?? "?"
    }
  }

  @Test(arguments: [
    ("salary > 6000", ["Ada", "Carol"]),
    ("salary >= 6500 AND salary <= 9000", ["Ada", "Carol"]),
    ("salary => 6500 && salary =< 6500", ["Carol"]),
    ("salary BETWEEN {5000, 6500}", ["Bob", "Carol"]),
    ("name == 'Ada' OR name = \"Bob\"", ["Ada", "Bob"]),
    ("name != 'Ada' AND NOT (name <> 'Bob')", ["Bob"]),
    ("!(salary < 6000)", ["Ada", "Carol"]),
    ("name IN {'Ada', 'Carol', 'Zed'}", ["Ada", "Carol"]),
    ("NOT name IN {'Ada'}", ["Bob", "Carol"]),
    ("name BEGINSWITH 'C'", ["Carol"]),
    ("name BEGINSWITH 'c'", []),
    ("name BEGINSWITH[c] 'c'", ["Carol"]),
    ("email ENDSWITH '@acme.test' AND email CONTAINS 'ob'", ["Bob"]),
    ("name LIKE 'A*'", ["Ada"]),
    ("name LIKE '?o?'", ["Bob"]),
    ("name LIKE[c] '*RO*'", ["Carol"]),
    ("name MATCHES '[AB].*'", ["Ada", "Bob"]),
    ("name MATCHES 'a'", []),
    ("TRUEPREDICATE", ["Ada", "Bob", "Carol"]),
    ("FALSEPREDICATE", []),
    // Key paths through to-ones; a missing one is NULL.
    ("department.name == 'Sales'", ["Ada", "Bob"]),
    ("manager.name == 'Ada'", ["Bob"]),
    ("manager == nil", ["Ada", "Carol"]),
    ("manager != NULL", ["Bob"]),
    ("manager.salary > 1", ["Bob"]),
    // To-manys: @count, ANY / ALL / NONE, and an implicit ANY.
    ("reports.@count == 1", ["Ada"]),
    ("reports.@count > 0 OR department.employees.@count == 1", ["Ada", "Carol"]),
    ("ANY reports.name == 'Bob'", ["Ada"]),
    ("reports.name == 'Bob'", ["Ada"]),
    ("ALL reports.salary < 6000", ["Ada", "Bob", "Carol"]),
    ("NONE reports.salary < 6000", ["Bob", "Carol"]),
    ("department.employees.@sum.salary == 14000", ["Ada", "Bob"]),
    ("department.employees.@max.salary == 9000", ["Ada", "Bob"]),
    ("department.employees.@avg.salary == 6500", ["Carol"]),
    ("#name == 'Ada'", ["Ada"]),
  ])
  func predicatesSelectAsDocumented(format: String, expected: [String]) throws {
    #expect(try Self.names(format) == expected, "\(format)")
  }

  @Test func stringOptionsFoldCaseAndDiacritics() throws {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    try CompanyScenario.employee("Carol", context).set("name", .string("Zoë"))
    let plain = try context.fetch("Employee", matching: try FormatPredicate("name == 'zoe'"))
    let folded = try context.fetch("Employee", matching: try FormatPredicate("name ==[cd] 'zoe'"))
    let caseOnly = try context.fetch("Employee", matching: try FormatPredicate("name ==[c] 'ZOË'"))
    #expect(plain.isEmpty)
    #expect(folded.count == 1)
    #expect(caseOnly.count == 1)
  }

  /// Strings without options compare as Core Data's SQL does (BINARY, scalar by scalar): a
  /// precomposed "é" is not the decomposed one (Swift's `==` would say it is), and order is code-point order.
  @Test func stringsWithoutOptionsCompareScalarByScalar() throws {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    try CompanyScenario.employee("Carol", context).set("name", .string("Ren\u{E9}e"))
    try context.save()
    let composed = try context.fetch("Employee", matching: try FormatPredicate("name == 'Ren\u{E9}e'"))
    let decomposed = try context.fetch("Employee", matching: try FormatPredicate("name == 'Rene\u{301}e'"))
    let folded = try context.fetch("Employee", matching: try FormatPredicate("name ==[d] 'Renee'"))
    #expect(composed.count == 1)
    #expect(decomposed.isEmpty)
    #expect(folded.count == 1)
    // "Z" (U+005A) sorts before "a" (U+0061), as SQLite's BINARY orders them.
    #expect(try Self.names("name < 'a'").contains("Ada"))
  }

  /// The comparisons a store can test are tested while it reads rows — the same answers as judging
  /// every object, pending changes included (a changed object whose row no longer matches, or now does).
  @Test func comparisonsAreTestedByTheStoreWithTheSameAnswers() throws {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    let model = context.model
    let employee = try #require(model.entity(named: "Employee"))
    // Said whole in SQL: the store's answer is the predicate's.
    for format in [
      "salary > 6000", "salary == 5000", "5000 < salary", "name != 'Bob'", "name == 'Ada' AND salary >= 9000",
      "salary == nil", "name != nil AND manager == nil", "name ==[c] 'ada'", "name BEGINSWITH 'A'",
      "salary > 1 OR salary < 0", "department.name == 'Sales'", "NOT (salary < 6000)",
    ] {
      #expect(try FormatPredicate(format).rowFilterTesting(employee, in: model).whole, "\(format)")
    }
    // Not said whole: a regular expression, two key paths, a string compared with a number; the
    // conjuncts at the top that are still narrow the rows.
    for (format, narrowed) in [
      ("name MATCHES 'A.*'", false), ("salary == salary", false), ("name == 5", false),
      ("name MATCHES 'A.*' AND salary > 10", true),
    ] {
      let tested = try FormatPredicate(format).rowFilterTesting(employee, in: model)
      #expect(!tested.whole && (tested.filter != nil) == narrowed, "\(format)")
    }
    // Bob's row says 5000; his pending change says 9500: judged by the change.
    try CompanyScenario.employee("Bob", context).set("salary", .integer(9500))
    try CompanyScenario.employee("Ada", context).set("salary", .integer(100))
    let rich = try context.fetch("Employee", matching: try FormatPredicate("salary > 9000"))
    #expect(try rich.map { try $0.value("name").text ?? "" } == ["Bob"])
    let named = try context.fetch("Employee", matching: try FormatPredicate("name != 'Carol'"))
    #expect(try named.map { try $0.value("name").text ?? "" } == ["Ada", "Bob"])
  }

  @Test func argumentsFillValuesAndKeys() throws {
    #expect(
      try Self.names("salary > %@ AND %K BEGINSWITH %@", arguments: [.integer(5000), .string("name"), .string("A")])
        == ["Ada"])
    #expect(try Self.names("salary < %d", arguments: [.integer(6000)]) == ["Bob"])
    #expect(throws: FormatPredicateError.self) { try FormatPredicate("salary > %@") }
  }

  @Test func sortedAndLimited() throws {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    let top = try context.fetch(
      "Employee", matching: try FormatPredicate("salary > 0"), sortedBy: [.descending("salary")], limit: 2)
    #expect(try top.map { try $0.value("name").text ?? "" } == ["Ada", "Carol"])
    #expect(try context.count("Employee", matching: try FormatPredicate("department.name == 'Sales'")) == 2)
  }

  /// A predicate that cannot be read is an error saying where; one naming no property says which.
  @Test func badPredicatesSayWhatAndWhere() throws {
    let cases = [
      ("name ==", "at character 8: expected a key path or a value, found the end"),
      ("name == 'Ada", "at character 9: a string that is not closed"),
      ("name ~ 'x'", "at character 6: unexpected '~'"),
      ("name == 'a' 'b'", "unexpected the string 'b' after a complete predicate"),
      ("salary BETWEEN {1}", "BETWEEN takes {lower, upper}"),
      ("name CONTAINS AND", "'AND' is a reserved word"),
    ]
    for (format, expected) in cases {
      let error = try #require(throws: FormatPredicateError.self) { try FormatPredicate(format) }
      #expect(error.description.contains(expected), "\(error.description)")
    }
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    let unknown = try #require(throws: ContextError.self) {
      try context.fetch("Employee", matching: try FormatPredicate("nickname == 'x'"))
    }
    #expect(unknown.description.contains("has no property 'nickname'"), "\(unknown.description)")
    let deep = try #require(throws: ContextError.self) {
      try context.fetch("Employee", matching: try FormatPredicate("manager.nickname == 'x'"))
    }
    #expect(deep.description.contains("has no property 'nickname'"), "\(deep.description)")
  }
}

/// Predicates a hostile script could hand a stage (issue 49): none may overflow the stack or run
/// without end.
extension PredicateTests {
  @Test func deepNestingIsAnErrorNotAStackOverflow() throws {
    for format in [
      String(repeating: "(", count: 200_000) + "TRUEPREDICATE" + String(repeating: ")", count: 200_000),
      String(repeating: "NOT ", count: 200_000) + "TRUEPREDICATE",
    ] {
      let error = try #require(throws: FormatPredicateError.self) { try FormatPredicate(format) }
      #expect(error.description.contains("nested more than 256 deep"), "\(error)")
    }
    // Nesting within the limit still parses.
    _ = try FormatPredicate(String(repeating: "(", count: 100) + "TRUEPREDICATE" + String(repeating: ")", count: 100))
  }

  /// `-99999999999999999999` trapped converting to Int64 (SIGILL, issue 55): a literal beyond Int64
  /// of either sign is a double, as NSPredicate reads it; hexadecimal beyond 64 bits is an error.
  @Test func integersBeyondInt64AreDoublesNotATrap() throws {
    for (format, expected) in [
      ("salary > -99999999999999999999", StoreValue.double(-1e20)),
      ("salary > 99999999999999999999", .double(1e20)),
      ("salary > -42", .integer(-42)),
    ] {
      guard case .comparison(_, _, .value(let value), _, _) = try FormatPredicate(format).root else {
        Issue.record("\(format) is not a comparison with a value")
        continue
      }
      #expect(value == expected, "\(format)")
    }
    let hex = try #require(throws: FormatPredicateError.self) { try FormatPredicate("salary > 0x1FFFFFFFFFFFFFFFFF") }
    #expect(hex.description.contains("beyond 64 bits"), "\(hex)")
  }

  @Test func likeOnLongStringsNeedsNoStack() throws {
    let long = String(repeating: "a", count: 1_000_000)
    #expect(try PredicateStrings.like(long, long))
    #expect(try PredicateStrings.like(long + "b", "a*b"))
    #expect(try !PredicateStrings.like(long, "*b"))
    #expect(try PredicateStrings.like("report-2024.txt", "report-????.*"))
    #expect(try !PredicateStrings.like("report.txt", "*.csv"))
    let costly = try #require(throws: FormatPredicateError.self) {
      try PredicateStrings.like(long, "*a" + long)
    }
    #expect(costly.description.contains("could take"), "\(costly)")
  }

  @Test func aBacktrackingRegularExpressionGivesUp() throws {
    let error = try #require(throws: FormatPredicateError.self) {
      try PredicateStrings.matches(String(repeating: "a", count: 40), "(a|a)*b", [])
    }
    #expect(error.description.contains("MATCHES gave up after"), "\(error)")
    #expect(try PredicateStrings.matches("abc123", "[a-z]+[0-9]+", []))
  }
}

/// `count` counts in SQL — no object read, none registered — where the store tests the whole
/// predicate and the context holds none of the entity's objects; else it fetches and judges. Either
/// way it is the number a fetch returns.
@Suite struct CountInSQLTests {
  static let predicates = [
    "", "salary > 6000", "salary >= 6500 AND salary <= 9000", "name == 'Ada'", "name != 'Ada'", "email == nil",
    "email != nil", "salary BETWEEN {5000, 6500}", "name BEGINSWITH 'C'", "name == 'Ada' OR name == 'Bob'",
    "TRUEPREDICATE", "FALSEPREDICATE",
  ]

  @Test func countsEqualTheFetchesAndReadNoObjectWhereSQLSaysItAll() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let coordinator = StoreCoordinator(store: store)
    for format in Self.predicates {
      let predicate = format.isEmpty ? nil : try FormatPredicate(format)
      let counting = coordinator.newContext()
      let counted = try counting.count("Employee", matching: predicate)
      let fetched = try coordinator.newContext().fetch("Employee", matching: predicate).count
      #expect(counted == fetched, "\(format)")
      let employee = try #require(store.model.entity(named: "Employee"))
      let whole = predicate.map { $0.rowFilterTesting(employee, in: store.model).whole } ?? true
      // In SQL exactly where the store tests the whole predicate: no object was made.
      #expect((counting.objectsMade == 0) == whole, "\(format): \(counting.objectsMade) objects made")
    }
  }

  /// An `IN` list longer than SQLite's OR chain allows (1,000 deep) holding a value a bound JSON list
  /// cannot carry (an infinity): the translator and the store share one test of what binds as one
  /// list, so the long list is left to the judge — answered, not "Expression tree is too large".
  @Test func aLongInListHoldingAnInfinityIsAnswered() throws {
    let values = (1...1_500).map { String(Double($0) / 4) } + ["1e999", "9000"]
    let list = "{" + values.joined(separator: ", ") + "}"
    #expect(try PredicateTests.names("salary IN \(list)") == ["Ada"])
    #expect(try PredicateTests.names("NOT (salary IN \(list))") == ["Bob", "Carol"])
    #expect(try PredicateTests.names("salary IN {5000, 6500, 1e999}") == ["Bob", "Carol"])
  }

  @Test func pendingChangesCountAsAFetchSeesThem() throws {
    let folder = try TemporaryDirectory()
    let context = StoreCoordinator(store: try CompanyScenario.seededStore(folder)).newContext()
    let rich = try FormatPredicate("salary > 6000")
    let before = try context.count("Employee", matching: rich)
    _ = try context.insert("Employee", ["name": .string("Dee"), "salary": .double(7000)])
    #expect(try context.count("Employee", matching: rich) == before + 1)
    #expect(try context.count("Employee", matching: rich) == context.fetch("Employee", matching: rich).count)
  }
}
