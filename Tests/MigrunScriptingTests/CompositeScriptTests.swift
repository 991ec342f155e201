import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// Composite attributes in Lua: read as a table of their elements (`src.author.person`), written
/// element by element (`["credit.who"]`) — an attribute becoming a composite, a composite
/// flattened, an element moved.
@Suite struct CompositeScriptTests {
  static let v1 = """
    <model>
      <entity name="Cocktail">
        <attribute name="author" optional="YES" attributeType="Composite" composite="Author"/>
        <attribute name="maker" optional="YES" attributeType="String"/>
      </entity>
      <composite name="Author">
        <attribute name="person" optional="YES" attributeType="String"/>
        <attribute name="year" optional="YES" attributeType="Integer 32"/>
      </composite>
    </model>
    """
  static let v2 = """
    <model>
      <entity name="Cocktail">
        <attribute name="authorName" optional="YES" attributeType="String"/>
        <attribute name="credit" optional="YES" attributeType="Composite" composite="Credit"/>
      </entity>
      <composite name="Credit">
        <attribute name="when" optional="YES" attributeType="Integer 64"/>
        <attribute name="who" optional="YES" attributeType="String"/>
      </composite>
    </model>
    """
  static let script = """
    return {
      Cocktail = {
        attributes = {
          authorName = function(src) return src.author.person end,
          ["credit.who"] = function(src) return src.maker end,
          ["credit.when"] = function(src) return src.author.year end,
        },
      },
    }
    """

  /// Migrates a store of two cocktails (one with an author and a maker, one empty) with `script`
  /// as the mapping file; the migrated store, or the error.
  static func migrate(script: String) throws -> (SQLiteStore?, (any Error)?) {
    let folder = try TemporaryDirectory()
    try folder.write(Self.v1, to: "Bar.xcdatamodeld/Bar.xcdatamodel/contents")
    try folder.write(Self.v2, to: "Bar.xcdatamodeld/Bar 2.xcdatamodel/contents")
    let policies = try folder.folder("policies")
    try folder.write(script, to: "policies/Bar-Bar 2.lua")
    let bundleURL = folder.url.appendingPathComponent("Bar.xcdatamodeld")
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let store = folder.url.appendingPathComponent("bar.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "Bar"))
    try created.write { writer in
      try writer.insert(
        StoredObject(
          id: ObjectID(entity: "Cocktail", primaryKey: 1),
          attributes: [
            "author.person": .string("Harry Craddock"), "author.year": .integer(1930), "maker": .string("Savoy"),
          ]))
      try writer.insert(StoredObject(id: ObjectID(entity: "Cocktail", primaryKey: 2), attributes: [:]))
    }
    try created.close()
    do {
      try ScriptedRun.migrate(store, bundle: bundleURL, folders: [policies])
    } catch {
      return (nil, error)
    }
    return (try SQLiteStore(url: store, model: try bundle.model(named: "Bar 2")), nil)
  }

  /// A mapping file with a hook that writes `dst.credit`.
  static func hook(_ body: String) -> String {
    """
    return {
      Cocktail = {
        createRelationships = function(dst, m)
          local src = m:sources(m.mapping.name, dst)[1]
          \(body)
        end,
      },
    }
    """
  }

  @Test func compositesAreReadAsTablesAndWrittenByElement() throws {
    let (store, error) = try Self.migrate(script: Self.script)
    #expect(error == nil)
    let after = try #require(store)
    defer { try? after.close() }
    let first = try #require(try after.object(ObjectID(entity: "Cocktail", primaryKey: 1)))
    #expect(first.attributes["authorName"] == .string("Harry Craddock"))
    #expect(first.attributes["credit.who"] == .string("Savoy"))
    #expect(first.attributes["credit.when"] == .integer(1930))
    let empty = try #require(try after.object(ObjectID(entity: "Cocktail", primaryKey: 2)))
    #expect(empty.attributes["authorName"] == .null)
    #expect(empty.attributes["credit.when"] == .null)
  }

  /// A hook writes a composite as a table of its elements.
  @Test func aHookWritesACompositeAsATable() throws {
    let (store, error) = try Self.migrate(
      script: Self.hook("dst.credit = { who = src.author.person, when = src.author.year }"))
    #expect(error == nil)
    let after = try #require(store)
    defer { try? after.close() }
    let cocktail = try #require(try after.object(ObjectID(entity: "Cocktail", primaryKey: 1)))
    #expect(cocktail.attributes["credit.who"] == .string("Harry Craddock"))
    #expect(cocktail.attributes["credit.when"] == .integer(1930))
  }

  /// An element the composite does not have is an error naming it, not a value dropped.
  @Test func anUnknownElementIsAnErrorNamingIt() throws {
    let (store, error) = try Self.migrate(script: Self.hook("dst.credit = { whom = src.author.person }"))
    #expect(store == nil)
    #expect(
      "\(error.map { "\($0)" } ?? "")".contains("Cocktail.credit has no element 'whom' (its elements: when, who)"))
  }

  /// A merge rule sees composites as tables and returns one: two cocktails of one name fold into
  /// one whose author names both.
  @Test func aMergeRuleMergesComposites() throws {
    let folder = try TemporaryDirectory()
    let unique =
      #"<uniquenessConstraints><uniquenessConstraint><constraint value="maker"/></uniquenessConstraint></uniquenessConstraints>"#
    try folder.write(Self.v1, to: "Bar.xcdatamodeld/Bar.xcdatamodel/contents")
    try folder.write(
      Self.v1.replacingOccurrences(of: "</entity>", with: unique + "</entity>"),
      to: "Bar.xcdatamodeld/Bar 2.xcdatamodel/contents")
    let policies = try folder.folder("policies")
    try folder.write(
      """
      return {
        merge = {
          Cocktail = function(existing, incoming)
            return { author = { person = existing.author.person .. " & " .. incoming.author.person, year = existing.author.year } }
          end,
        },
      }
      """, to: "policies/Bar-Bar 2.lua")
    let bundleURL = folder.url.appendingPathComponent("Bar.xcdatamodeld")
    let bundle = try ModelBundle(modelOrStoreAt: bundleURL)
    let store = folder.url.appendingPathComponent("bar.sqlite")
    let created = try SQLiteStore.create(at: store, model: try bundle.model(named: "Bar"))
    try created.write { writer in
      for (key, person) in [(1, "Harry Craddock"), (2, "Jerry Thomas")] {
        try writer.insert(
          StoredObject(
            id: ObjectID(entity: "Cocktail", primaryKey: Int64(key)),
            attributes: ["author.person": .string(person), "author.year": .integer(1930), "maker": .string("Savoy")]))
      }
    }
    try created.close()
    try ScriptedRun.migrate(store, bundle: bundleURL, folders: [policies])
    let after = try SQLiteStore(url: store, model: try bundle.model(named: "Bar 2"))
    defer { try? after.close() }
    var people: [StoreValue] = []
    try after.forEachObject(of: "Cocktail", includingSubentities: false) {
      people.append($0.attributes["author.person"] ?? .null)
    }
    #expect(people == [.string("Harry Craddock & Jerry Thomas")])
  }
}
