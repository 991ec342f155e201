import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// The bulk path's row loop runs in C; it must hand Lua exactly the values the object path does and
/// store exactly what it stores — for every attribute type and every odd thing a store column can
/// hold (a REAL in an INTEGER column, the text `NaN`, text that is not UTF-8, BLOBs in text
/// columns…), and for results of every type. Each store is migrated both ways and the exports
/// compared. (Text with a NUL inside is left out: the object path reads text through GRDB, which
/// ends it at the NUL; the row loop keeps it whole.)
@Suite struct RowLoopTests {
  static let attributes = """
    <attribute name="i" optional="YES" attributeType="Integer 64"/>
    <attribute name="b" optional="YES" attributeType="Boolean"/>
    <attribute name="r" optional="YES" attributeType="Double"/>
    <attribute name="d" optional="YES" attributeType="Date"/>
    <attribute name="s" optional="YES" attributeType="String"/>
    <attribute name="bin" optional="YES" attributeType="Binary"/>
    <attribute name="u" optional="YES" attributeType="UUID"/>
    """
  static let v1 = "<model><entity name=\"Edge\">\(attributes)</entity></model>"
  static let v2 = """
    <model><entity name="Edge">\(attributes)
    <attribute name="oi" optional="YES" attributeType="Integer 32"/>
    <attribute name="ob" optional="YES" attributeType="Boolean"/>
    <attribute name="or" optional="YES" attributeType="Double"/>
    <attribute name="os" optional="YES" attributeType="String"/>
    <attribute name="obin" optional="YES" attributeType="Binary"/>
    <attribute name="ou" optional="YES" attributeType="UUID"/>
    </entity></model>
    """

  /// Rows as SQL values (i, b, r, d, s, bin, u), stored as written: SQLite's affinities keep a
  /// non-integral REAL in an INTEGER column, text in a REAL one, BLOBs anywhere.
  static let rows = [
    "5, 1, 1.5, 600000000, 'plain', X'0001', X'000102030405060708090A0B0C0D0E0F'",
    "7.5, 2, 'NaN', 1.25, CAST(X'C328' AS TEXT), X'', X'01'",
    "'text in an integer column', 0, 3, NULL, 'a-b', 'text in a blob column', NULL",
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL",
    "NULL, 1.5, -0.0, 1e300, X'68690A', NULL, X'73697874656E2020627974657321210A'",
    "-9223372036854775808, 0.0, 1e-300, -1, X'FF', X'00', NULL",
  ]

  /// Every input shown with its Lua type, and results of every type by row.
  static let script = #"""
    local function show(v)
      if v == NULL then return "NULL" end
      if type(v) == "number" then return math.type(v) .. ":" .. tostring(v) end
      if type(v) == "string" then
        local bytes = {}
        for k = 1, #v do bytes[#bytes + 1] = tostring(v:byte(k)) end
        return "string[" .. table.concat(bytes, ",") .. "]"
      end
      return type(v) .. ":" .. tostring(v)
    end
    local function pick(src, ...) return (select(src.__pk, ...)) end
    return { Edge = { attributes = {
      os = function(src)
        local text = table.concat({ show(src.i), show(src.b), show(src.r), show(src.d), show(src.s), show(src.bin), show(src.u) }, "|")
        return text
      end,
      oi = function(src) return pick(src, 3.0, -7, 42, nil, NULL, 2147483647) end,
      ob = function(src) return pick(src, true, 0, 7, false, 1, nil) end,
      ["or"] = function(src) return pick(src, 1, 0 / 0, 2.5, -1.0 / 0, NULL, math.pi) end,
      obin = function(src) return pick(src, "", "\0\1", nil, "x", NULL, src.s) end,
      ou = function(src) return pick(src, "0123456789abcdef", nil, NULL, nil, src.u, nil) end,
    } } }
    """#

  static func makeStore(_ folder: TemporaryDirectory, script: String) throws -> (URL, URL, URL) {
    try folder.write(v1, to: "Edge.xcdatamodeld/Edge.xcdatamodel/contents")
    try folder.write(v2, to: "Edge.xcdatamodeld/Edge 2.xcdatamodel/contents")
    let policies = try folder.folder("policies")
    try folder.write(script, to: "policies/Edge-Edge 2.lua")
    let bundle = folder.url.appendingPathComponent("Edge.xcdatamodeld")
    let store = try folder.folder(UUID().uuidString).appendingPathComponent("edge.sqlite")
    try SQLiteStore.create(at: store, model: try ModelBundle(modelOrStoreAt: bundle).model(named: "Edge")).close()
    try makeDatabase(
      store,
      rows.enumerated().map { index, values in
        "INSERT INTO ZEDGE (Z_PK, Z_ENT, Z_OPT, ZI, ZB, ZR, ZD, ZS, ZBIN, ZU) VALUES (\(index + 1), 1, 1, \(values))"
      } + ["UPDATE Z_PRIMARYKEY SET Z_MAX = \(rows.count)"])
    return (store, bundle, policies)
  }

  /// Migrates a copy of the store each way; returns the exports (or the errors' texts).
  static func bothWays(script: String) throws -> [Bool: String] {
    var results: [Bool: String] = [:]
    for bulkCopy in [true, false] {
      let folder = try TemporaryDirectory()
      let (store, bundle, policies) = try makeStore(folder, script: script)
      do {
        let report = try ScriptedMigrationTests.migrate(store, bundle: bundle, policies: policies, bulkCopy: bulkCopy)
        #expect(report.steps.map(\.method) == [bulkCopy ? .copyRows : .objects])
        let migrated = try SQLiteStore(
          url: store, model: try ModelBundle(modelOrStoreAt: bundle).model(named: "Edge 2"))
        // Each run's store was made apart: all but its UUID must be equal.
        results[bulkCopy] = try StoreJSON.export(migrated).split(separator: "\n").filter { !$0.contains("\"uuid\"") }
          .joined(separator: "\n")
        try migrated.close()
      } catch {
        results[bulkCopy] = "error: \(error)"
      }
    }
    return results
  }

  @Test func everyValueReachesLuaAndTheStoreAsTheObjectPathGivesIt() throws {
    let results = try Self.bothWays(script: Self.script)
    #expect(
      results[true] == results[false], "C row loop:\n\(results[true] ?? "")\nobject path:\n\(results[false] ?? "")")
    let export = try #require(results[true])
    #expect(!export.hasPrefix("error"), "\(export)")
    // What the inputs were, as Lua saw them (the object path agrees, above).
    #expect(export.contains("integer:5|integer:1|float:1.5|float:600000000.0|string[112,108,97,105,110]"), "\(export)")
    #expect(export.contains("float:7.5|integer:1|float:nan") || export.contains("float:7.5|integer:1|float:-nan"))
  }

  @Test(arguments: [
    ("oi = function(src) return 1 / 0 end", "is Integer 32; a number cannot be stored in it"),
    ("oi = function(src) return true end", "is Integer 32; a boolean cannot be stored in it"),
    ("oi = function(src) return 'abc' end", "is Integer 32; a string cannot be stored in it"),
    ("oi = function(src) return 2.0 ^ 53 end", "is Integer 32: 9007199254740992 is out of its range"),
    ("oi = function(src) return 2147483648 end", "is Integer 32: 2147483648 is out of its range"),
    ("ob = function(src) return 'yes' end", "is Boolean; a string cannot be stored in it"),
    ("ou = function(src) return 'short' end", "is a UUID: give 16 bytes"),
    ("os = function(src) return 12 end", "is String; a number cannot be stored in it"),
    // Not UTF-8: the C loop hands it to the host, which refuses it (it became U+FFFD; issue 55).
    (#"os = function(src) return "ok\xC3(" end"#, "is String: the text given is not UTF-8"),
    (#"["or"] = function(src) return {} end"#, "is Double; a table cannot be stored in it"),
    ("os = function(src) error('no ' .. src.__pk) end", "no 1"),
  ])
  func aResultThatDoesNotFitFailsAlikeBothWays(function: String, message: String) throws {
    let script = "return { Edge = { attributes = { \(function) } } }"
    let results = try Self.bothWays(script: script)
    let bulk = try #require(results[true])
    #expect(bulk.hasPrefix("error") && bulk.contains(message), "\(bulk)")
    #expect(bulk.contains("Edge/p1"), "names the object: \(bulk)")
    #expect(results[false]?.contains(message) == true, "\(results[false] ?? "")")
  }
}
