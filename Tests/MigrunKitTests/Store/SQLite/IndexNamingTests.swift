import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Legacy indexes (indexed attributes, compound indexes) as each framework writes them, judged by the
/// real stores in `../shared/fixtures/facts/index-naming.json`: before framework 847 on the table and
/// its columns, from 847 on as fetch indexes named after their elements.
@Suite(.enabled(if: Fixtures.areAvailable)) struct IndexNamingTests {
  struct Facts: Decodable {
    struct Fact: Decodable {
      let store: String?
      let framework: Int64
      let declarations: [String: Declarations]
      let indexesOnEntityTables: [Written]
    }
    struct Declarations: Decodable {
      let indexedAttributes: [String]?
      let compoundIndexes: [[String]]?
      let toOneRelationships: [String]?
    }
    struct Written: Decodable {
      let name: String
      let table: String
      let sql: String
    }
    let facts: [Fact]
  }

  static func facts() throws -> [Facts.Fact] {
    try JSONDecoder().decode(Facts.self, from: Data(contentsOf: Fixtures.facts("index-naming.json"))).facts
  }

  /// A model with the declared entities: each indexed or compound-indexed attribute a string, each
  /// to-one to an entity of its own.
  static func model(_ declarations: [String: Facts.Declarations]) throws -> ObjectModel {
    var entities: [Entity] = [Entity(name: "Other", attributes: [Attribute(name: "name", type: .string)])]
    for (name, declared) in declarations {
      let toOnes = Set(declared.toOneRelationships ?? [])
      let indexed = Set(declared.indexedAttributes ?? [])
      let named = indexed.union((declared.compoundIndexes ?? []).flatMap { $0 }).subtracting(toOnes)
      entities.append(
        Entity(
          name: name,
          attributes: named.sorted().map { Attribute(name: $0, type: .string, isIndexed: indexed.contains($0)) },
          relationships: toOnes.sorted().map { Relationship(name: $0, destinationEntity: "Other") },
          compoundIndexes: declared.compoundIndexes ?? []))
    }
    return try ObjectModel(entities: entities)
  }

  /// The indexes of `declarations`' legacy declarations among `written` (name → SQL): the to-ones'
  /// key indexes and a hierarchy's `Z_ENT` index (named alike in every framework, and a subentity's
  /// to-ones not declared here) are left out — `<TABLE>_<COLUMN>_INDEX` of a column no indexed
  /// attribute has.
  static func legacyIndexes(
    _ written: [(name: String, table: String, sql: String)], of declarations: [String: Facts.Declarations]
  ) -> [String: String] {
    let indexed = Set(
      declarations.flatMap { entity, declared in
        (declared.indexedAttributes ?? []).map { "Z\(entity.uppercased())_Z\($0.uppercased())_INDEX" }
      })
    let tables = Set(declarations.keys.map { "Z" + $0.uppercased() })
    return Dictionary(
      written.filter { tables.contains($0.table) && !$0.sql.hasPrefix("CREATE UNIQUE") }
        .filter { !$0.name.hasSuffix("_INDEX") || $0.name.hasPrefix("Z_") || indexed.contains($0.name) }
        .map { ($0.name, $0.sql) }, uniquingKeysWith: { first, _ in first })
  }

  @Test func everyStoreOfTheFactsHasTheIndexesItsFrameworkWrites() throws {
    var compared = 0
    for fact in try Self.facts() where fact.store != nil {
      let model = try Self.model(fact.declarations)
      let schema = StoreSchema(model: model, framework: fact.framework)
      let ours = Self.legacyIndexes(
        schema.indexes.map { ($0.name, $0.table, $0.createStatement) }, of: fact.declarations)
      let theirs = Self.legacyIndexes(
        fact.indexesOnEntityTables.map { ($0.name, $0.table, $0.sql) }, of: fact.declarations)
      #expect(!ours.isEmpty)
      // Every index the framework writes is there, with Core Data's SQL …
      for (name, sql) in ours {
        #expect(theirs[name] == sql, "\(fact.store ?? ""): \(name)")
      }
      // … and what else the store holds is the older form a migration in place left on a table.
      let older = Set(schema.olderFormIndexes.map(\.name))
      for name in Set(theirs.keys).subtracting(ours.keys) {
        #expect(older.contains(name), "\(fact.store ?? ""): \(name) is neither today's form nor an older one")
      }
      compared += 1
    }
    #expect(compared == 6)
  }

  @Test func oldFrameworksNameIndexesAfterTableAndColumns() throws {
    let fact = try #require(try Self.facts().first { $0.framework == 641 })
    let schema = StoreSchema(model: try Self.model(fact.declarations), framework: 641)
    #expect(
      schema.indexes.contains {
        $0.createStatement
          == "CREATE INDEX ZCONVERSATION_ZINTERNALISARCHIVED_ZLASTMODIFIEDDATE ON ZCONVERSATION (ZINTERNALISARCHIVED, ZLASTMODIFIEDDATE)"
      })
    #expect(schema.olderFormIndexes.isEmpty)
    // Today's form, for the same model.
    let today = StoreSchema(model: try Self.model(fact.declarations))
    #expect(
      today.indexes.map(\.createStatement).contains(
        "CREATE INDEX Z_Conversation_internalIsArchived_lastModifiedDate ON ZCONVERSATION (ZINTERNALISARCHIVED COLLATE BINARY ASC, ZLASTMODIFIEDDATE COLLATE BINARY ASC)"
      ))
    #expect(!today.indexes.contains { $0.name == "ZCONVERSATION_ZNORMALIZEDUSERDEFINEDNAME_INDEX" })
  }

  /// A SwiftData store's cached model marks the attributes an `#Index` covers as indexed: Apple's
  /// store has the fetch indexes and no second index for the flag.
  @Test func anAttributeAFetchIndexCoversGetsNoSecondIndex() throws {
    let fact = try #require(try Self.facts().first { $0.store == nil })
    func element(_ name: String) -> FetchIndex.Element { FetchIndex.Element(property: name) }
    let cocktail = Entity(
      name: "Cocktail",
      attributes: [
        Attribute(name: "cocktailName", type: .string, isIndexed: true),
        Attribute(name: "collectionName", type: .string, isIndexed: true),
      ],
      uniquenessConstraints: [["cocktailName"]],
      fetchIndexes: [
        FetchIndex(name: "SwiftDataIndexOnBinarycocktailName", elements: [element("cocktailName")]),
        FetchIndex(name: "SwiftDataIndexOnBinarycollectionName", elements: [element("collectionName")]),
        FetchIndex(
          name: "SwiftDataIndexOnBinarycocktailNamecollectionName",
          elements: [element("cocktailName"), element("collectionName")]),
      ])
    let schema = StoreSchema(model: try ObjectModel(entities: [cocktail]), framework: fact.framework)
    #expect(Set(schema.indexes.map(\.createStatement)) == Set(fact.indexesOnEntityTables.map(\.sql)))
  }

  /// A one-element compound index of an indexed attribute is the same index (Core Data's
  /// `setCompoundIndexes:` skips it); a descending fetch index does not cover the attribute.
  @Test func oneElementCompoundIndexesAndDescendingIndexes() throws {
    let entity = Entity(
      name: "Item",
      attributes: [
        Attribute(name: "a", type: .string, isIndexed: true), Attribute(name: "b", type: .string, isIndexed: true),
      ],
      compoundIndexes: [["a"], ["a", "b"]],
      fetchIndexes: [FetchIndex(name: "byB", elements: [FetchIndex.Element(property: "b", isAscending: false)])])
    let names = StoreSchema(model: try ObjectModel(entities: [entity])).indexes.map(\.name).sorted()
    #expect(names == ["Z_Item_a", "Z_Item_a_b", "Z_Item_b", "Z_Item_byB"])
  }
}
