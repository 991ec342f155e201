import Foundation
import TestSupport
import Testing

/// Entity mappings run in the mapping model's order, through each of Core Data's three passes
/// (issue 70): a Lua mapping file gives it as `order = { … }`, and an Xcode mapping model's
/// conversion keeps its model's order. Without one, entries run by name, as before.
@Suite struct MappingOrderTests {
  static let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let store = "objcio-core-data-moody/stores/Moody 2.moody.sqlite"

  /// A Moody 2 → 3 mapping file whose entries log the first object each mapping makes, and log the
  /// sequence at the end of the last pass.
  static func mappingFile(order: String?) -> String {
    let hook = { (entity: String) in
      """
        \(entity) = {
          createDestinationInstances = function(src, m) seen(\"create \(entity)\") end,
          createRelationships = function(dst, m) seen(\"link \(entity)\") end,
          performCustomValidation = function(m) seen(\"check \(entity)\"); m:log(table.concat(log, \", \")) end,
        },
      """
    }
    return """
      local log = {}
      local once = {}
      local function seen(what)
        if not once[what] then once[what] = true; log[#log + 1] = what end
      end
      return {
      \(hook("Mood"))
      \(hook("Country"))
      \(hook("Continent"))
      \(order.map { "  order = \($0)," } ?? "")
      }

      """
  }

  /// The last line the file logged: every pass in order, each pass through the mappings in order.
  static func run(order: String?) throws -> String {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.store, into: folder)
    let policies = try folder.folder("policies")
    try mappingFile(order: order).write(
      to: policies.appendingPathComponent("Moody 2-Moody 3.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run(
      ["migrate", store.path, "--model", Self.model, "--to", "Moody 3", "--policies", policies.path])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    return result.stderr.split(separator: "\n").last { $0.contains("create ") }.map(String.init) ?? result.stderr
  }

  @Test func theOrderListDecidesTheOrderOfEveryPass() throws {
    let ordered = try Self.run(order: #"{ "Mood", "Country", "Continent" }"#)
    #expect(
      ordered.hasSuffix(
        "create Mood, create Country, create Continent, link Mood, link Country, link Continent, "
          + "check Mood, check Country, check Continent"), "\(ordered)")
    let byName = try Self.run(order: nil)
    #expect(
      byName.hasSuffix(
        "create Continent, create Country, create Mood, link Continent, link Country, link Mood, "
          + "check Continent, check Country, check Mood"), "\(byName)")
  }

  @Test func anOrderNamingNoEntryIsRefusedByName() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.store, into: folder)
    let policies = try folder.folder("policies")
    try Self.mappingFile(order: #"{ "Mood", "Place" }"#).write(
      to: policies.appendingPathComponent("Moody 2-Moody 3.lua"), atomically: true, encoding: .utf8)
    let result = try MigrunProcess.run(
      ["plan", store.path, "--model", Self.model, "--to", "Moody 3", "--policies", policies.path])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("order names 'Place', which is no entry of the file"), "\(result.stderr)")
  }

  /// `convert` writes an Xcode mapping model's entity mappings in its order, and says so.
  @Test func aConvertedMappingModelKeepsItsOrder() throws {
    let mapping = Fixtures.url("objcio-core-data-moody/mappings/Moody 5-Moody 6.xcmappingmodel").path
    let result = try MigrunProcess.run(["convert", mapping, "--model", Self.model])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    // The entries as the conversion writes them, each after its entity mapping's comment, in the
    // model's order (Xcode's mapping numbers): the `order` list names them so.
    let entries = lines.compactMap { line -> String? in
      guard line.hasPrefix("  "), !line.hasPrefix("   "), let equals = line.range(of: " = ") else { return nil }
      let key = line.dropFirst(2)[..<equals.lowerBound]
      return key.allSatisfy { $0.isLetter } && key.first?.isUppercase == true ? String(key) : nil
    }
    let order = lines.first { $0.contains("order = {") }
    #expect(entries.count == 3, "\(result.stdout)")
    #expect(order == "  order = { \(entries.map { "\"\($0)\"" }.joined(separator: ", ")) },", "\(result.stdout)")
  }
}
