import Crypto
import Foundation
import MigrunKit
import MigrunModel
import Testing

/// Branches the real fixtures do not reach. Each expected hash is assembled here, byte by byte, from
/// the layout in SPEC §1.2 — never by calling the code under test.
@Suite struct VersionHashTests {
  // MARK: - Independent byte layout

  static func sha(_ parts: [UInt8]...) -> [UInt8] { Array(SHA256.hash(data: parts.flatMap { $0 })) }
  static func text(_ string: String) -> [UInt8] { Array(string.utf8) }
  static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
  static func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
  static func i32(_ value: Int32) -> [UInt8] { u32(UInt32(bitPattern: value)) }

  /// `P = SHA256(name ‖ u16(flags) ‖ modifier?)`
  static func prefix(
    _ name: String, optional: Bool, transient: Bool = false, readOnly: Bool = false, modifier: String? = nil
  ) -> [UInt8] {
    let flags = UInt16(optional ? 1 : 0) | UInt16(transient ? 2 : 0) | UInt16(readOnly ? 4 : 0)
    return sha(text(name), u16(flags), modifier.map(text) ?? [])
  }

  static func hash(_ model: ObjectModel, _ entity: String) throws -> [UInt8] {
    Array(try #require(model.entityVersionHashes[entity]).data)
  }

  // MARK: - Tests

  @Test func attributeWithExternalBinaryStorageAndPreservedValueAddsOneByteEach() throws {
    let model = try ObjectModel(entities: [
      Entity(
        name: "Photo",
        attributes: [
          Attribute(name: "data", type: .binary, isOptional: true, allowsExternalBinaryDataStorage: true),
          Attribute(name: "tag", type: .string, preservesValueInHistoryOnDeletion: true),
          Attribute(
            name: "both", type: .binary, allowsExternalBinaryDataStorage: true, preservesValueInHistoryOnDeletion: true),
        ])
    ])
    // 1000 = 0x03E8 (Binary), 700 = 0x02BC (String); properties in name order: both, data, tag.
    let both = Self.sha(Self.prefix("both", optional: false), [0xE8, 0x03, 0, 0], [0x01], [0x01])
    let data = Self.sha(Self.prefix("data", optional: true), [0xE8, 0x03, 0, 0], [0x01])
    let tag = Self.sha(Self.prefix("tag", optional: false), [0xBC, 0x02, 0, 0], [0x01])
    let expected = Self.sha(Self.text("Photo"), [0x00], both, data, tag)
    #expect(try Self.hash(model, "Photo") == expected)
  }

  @Test func orderedToManyEndsWithOneZero() throws {
    let model = try ObjectModel(entities: [
      Entity(
        name: "Playlist",
        relationships: [
          Relationship(name: "songs", destinationEntity: "Song", inverseName: "playlists", maxCount: 0, isOrdered: true)
        ]),
      Entity(
        name: "Song",
        relationships: [
          Relationship(name: "playlists", destinationEntity: "Playlist", inverseName: "songs", maxCount: 0)
        ]),
    ])
    let songs = Self.sha(
      Self.prefix("songs", optional: true), Self.text("Song"), Self.text("playlists"), Self.i32(0), Self.i32(0),
      [0x01, 0x00])
    #expect(try Self.hash(model, "Playlist") == Self.sha(Self.text("Playlist"), [0x00], songs))
    let playlists = Self.sha(
      Self.prefix("playlists", optional: true), Self.text("Playlist"), Self.text("songs"), Self.i32(0), Self.i32(0))
    #expect(try Self.hash(model, "Song") == Self.sha(Self.text("Song"), [0x00], playlists))
  }

  @Test func countsAreLittleEndianSigned32Bit() throws {
    let model = try ObjectModel(entities: [
      Entity(
        name: "Book",
        relationships: [
          Relationship(
            name: "pages", destinationEntity: "Page", inverseName: "book", minCount: 1, maxCount: 10_000,
            isOptional: false)
        ]),
      Entity(
        name: "Page", relationships: [Relationship(name: "book", destinationEntity: "Book", inverseName: "pages")]),
    ])
    // 10000 = 0x2710
    let pages = Self.sha(
      Self.prefix("pages", optional: false), Self.text("Page"), Self.text("book"), [0x10, 0x27, 0, 0], [1, 0, 0, 0])
    #expect(try Self.hash(model, "Book") == Self.sha(Self.text("Book"), [0x00], pages))
  }

  @Test func entityAndPropertyHashModifiersAreAppended() throws {
    let model = try ObjectModel(entities: [
      Entity(
        name: "Recipe",
        attributes: [Attribute(name: "photo", type: .binary, isOptional: true, versionHashModifier: "jpeg2")],
        versionHashModifier: "v2")
    ])
    let photo = Self.sha(Self.prefix("photo", optional: true, modifier: "jpeg2"), [0xE8, 0x03, 0, 0])
    #expect(try Self.hash(model, "Recipe") == Self.sha(Self.text("Recipe"), [0x00], photo, Self.text("v2")))
    // And a modifier alone changes the hash.
    let plain = try ObjectModel(entities: [
      Entity(name: "Recipe", attributes: [Attribute(name: "photo", type: .binary, isOptional: true)])
    ])
    #expect(plain.entityVersionHashes["Recipe"] != model.entityVersionHashes["Recipe"])
  }

  @Test func selfInverseRelationshipLeavesOutTheInverseName() throws {
    let model = try ObjectModel(entities: [
      Entity(
        name: "Person",
        relationships: [
          Relationship(name: "friends", destinationEntity: "Person", inverseName: "friends", maxCount: 0),
          Relationship(name: "spouse", destinationEntity: "Person", inverseName: "spouse"),
        ])
    ])
    let friends = Self.sha(Self.prefix("friends", optional: true), Self.text("Person"), Self.i32(0), Self.i32(0))
    let spouse = Self.sha(Self.prefix("spouse", optional: true), Self.text("Person"), Self.i32(1), Self.i32(0))
    #expect(try Self.hash(model, "Person") == Self.sha(Self.text("Person"), [0x00], friends, spouse))
  }

  @Test func relationshipRedeclaredInSubentityFollowsTheTopmostDeclaration() throws {
    let friendsDeclaration = Relationship(
      name: "friends", destinationEntity: "Person", inverseName: "friends", maxCount: 0)
    let model = try ObjectModel(entities: [
      Entity(name: "Person", relationships: [friendsDeclaration]),
      Entity(name: "Employee", parentName: "Person", relationships: [friendsDeclaration]),
    ])
    let friends = Self.sha(Self.prefix("friends", optional: true), Self.text("Person"), Self.i32(0), Self.i32(0))
    let person = Self.sha(Self.text("Person"), [0x00], friends)
    #expect(try Self.hash(model, "Person") == person)
    #expect(try Self.hash(model, "Employee") == Self.sha(Self.text("Employee"), [0x00], person, friends))
  }

  @Test func subentityHashesParentHashThenInheritedAndOwnPropertiesByName() throws {
    let model = try ObjectModel(entities: [
      Entity(name: "Shape", isAbstract: true, attributes: [Attribute(name: "z", type: .integer16)]),
      Entity(
        name: "Circle", parentName: "Shape",
        attributes: [
          Attribute(name: "radius", type: .double),
          Attribute(name: "cache", type: .binary, isOptional: true, isTransient: true),
        ]),
    ])
    // 100 = 0x64 (Integer 16), 500 = 0x01F4 (Double); transient `cache` is left out.
    let z = Self.sha(Self.prefix("z", optional: false), [0x64, 0, 0, 0])
    let shape = Self.sha(Self.text("Shape"), [0x01], z)
    #expect(try Self.hash(model, "Shape") == shape)
    let radius = Self.sha(Self.prefix("radius", optional: false), [0xF4, 0x01, 0, 0])
    #expect(try Self.hash(model, "Circle") == Self.sha(Self.text("Circle"), [0x00], shape, radius, z))
  }

  @Test func uniquenessConstraintsAreJoinedWithDotsSortedAndConcatenated() throws {
    let model = try ObjectModel(entities: [
      Entity(
        name: "Car",
        attributes: [
          Attribute(name: "vin", type: .string), Attribute(name: "plate", type: .string),
          Attribute(name: "state", type: .string),
        ],
        versionHashModifier: "m",
        uniquenessConstraints: [["vin"], ["state", "plate"]])
    ])
    let plate = Self.sha(Self.prefix("plate", optional: false), [0xBC, 0x02, 0, 0])
    let state = Self.sha(Self.prefix("state", optional: false), [0xBC, 0x02, 0, 0])
    let vin = Self.sha(Self.prefix("vin", optional: false), [0xBC, 0x02, 0, 0])
    let expected = Self.sha(
      Self.text("Car"), [0x00], plate, state, vin, Self.text("m"), Self.text("state.plate"), Self.text("vin"))
    #expect(try Self.hash(model, "Car") == expected)
  }

  @Test func propertiesSortInUTF16CodeUnitOrder() throws {
    // "Zeta" (0x5A) sorts before "alpha" (0x61); "é" (U+00E9) sorts after "z".
    let model = try ObjectModel(entities: [
      Entity(
        name: "E",
        attributes: [
          Attribute(name: "alpha", type: .string), Attribute(name: "Zeta", type: .string),
          Attribute(name: "é", type: .string),
        ])
    ])
    let attribute = { (name: String) in Self.sha(Self.prefix(name, optional: false), [0xBC, 0x02, 0, 0]) }
    let expected = Self.sha(Self.text("E"), [0x00], attribute("Zeta"), attribute("alpha"), attribute("é"))
    #expect(try Self.hash(model, "E") == expected)
  }

  @Test func derivedAttributeHashesTheExpressionInNSExpressionFormatWithoutPrefix() throws {
    let model = try ObjectModel(entities: [
      Entity(
        name: "Book",
        attributes: [
          Attribute(
            name: "pagesCount", type: .integer64, isOptional: true, isReadOnly: true,
            derivation: Derivation(expression: "pages.@count")),
          Attribute(
            name: "total", type: .double, isOptional: true, isReadOnly: true,
            derivation: Derivation(expression: "pages.@sum.words")),
        ],
        relationships: [Relationship(name: "pages", destinationEntity: "Page", maxCount: 0)]),
      Entity(name: "Page", attributes: [Attribute(name: "words", type: .integer32)]),
    ])
    let pages = Self.sha(Self.prefix("pages", optional: true), Self.text("Page"), Self.i32(0), Self.i32(0))
    let count = Self.sha(Self.text("count:(pages)"))
    let total = Self.sha(Self.text("sum:(pages.words)"))
    #expect(try Self.hash(model, "Book") == Self.sha(Self.text("Book"), [0x00], pages, count, total))
  }

  @Test func readOnlyFlagIsBitTwo() throws {
    let model = try ObjectModel(entities: [
      Entity(name: "E", attributes: [Attribute(name: "a", type: .uuid, isOptional: true, isReadOnly: true)])
    ])
    // flags 0b101 = 5; 1100 = 0x044C (UUID)
    let a = Self.sha(Self.sha(Self.text("a"), [0x05, 0x00]), [0x4C, 0x04, 0, 0])
    #expect(try Self.hash(model, "E") == Self.sha(Self.text("E"), [0x00], a))
  }

  @Test func digestAndChecksumCoverEntitiesInNameOrder() throws {
    let model = try ObjectModel(entities: [Entity(name: "B"), Entity(name: "A")])
    let a = Self.sha(Self.text("A"), [0x00])
    let b = Self.sha(Self.text("B"), [0x00])
    let digest = Data(SHA512.hash(data: Self.text("A") + a + Self.text("B") + b)).base64EncodedString()
    let checksum = Data(SHA256.hash(data: a + b)).base64EncodedString()
    #expect(model.versionHashesDigest == digest)
    #expect(model.versionChecksum == checksum)
  }

  @Test func identityFreeDetailsDoNotChangeTheHash() throws {
    let plain = try ObjectModel(entities: [
      Entity(
        name: "E", attributes: [Attribute(name: "a", type: .string)],
        relationships: [
          Relationship(name: "r", destinationEntity: "E")
        ])
    ])
    let decorated = try ObjectModel(
      entities: [
        Entity(
          name: "E",
          attributes: [
            Attribute(
              name: "a", type: .string, renamingIdentifier: "old", userInfo: ["k": "v"],
              defaultValueString: "x", isIndexed: true, validation: ["maxValueString": "3"])
          ],
          relationships: [Relationship(name: "r", destinationEntity: "E", deleteRule: .cascade)],
          className: "MyE", userInfo: ["key": "value"], compoundIndexes: [["a"]])
      ], versionIdentifiers: ["2.0"])
    #expect(plain.entityVersionHashes == decorated.entityVersionHashes)
  }

  /// A composite nesting a composite hashes its leaves as one list in name order, transient ones left
  /// out (`-[NSCompositeAttributeDescription _versionHash:inStyle:]` over `_flattenElements:`): the
  /// nested composite's own hash never enters, so `colour{b, inner{a, c}, t}` hashes a, b, c.
  @Test func aNestedCompositeHashesItsLeavesFlattenedInNameOrder() throws {
    let inner = Attribute(
      name: "inner", type: .composite,
      elements: [Attribute(name: "c", type: .date), Attribute(name: "a", type: .integer32)])
    let colour = Attribute(
      name: "colour", type: .composite,
      elements: [
        Attribute(name: "b", type: .string), inner, Attribute(name: "t", type: .string, isTransient: true),
      ])
    let model = try ObjectModel(entities: [Entity(name: "Swatch", attributes: [colour])])
    // 200 = 0xC8 (Integer 32), 700 = 0x02BC (String), 900 = 0x0384 (Date).
    let a = Self.sha(Self.prefix("a", optional: false), [0xC8, 0, 0, 0])
    let b = Self.sha(Self.prefix("b", optional: false), [0xBC, 0x02, 0, 0])
    let c = Self.sha(Self.prefix("c", optional: false), [0x84, 0x03, 0, 0])
    #expect(try Self.hash(model, "Swatch") == Self.sha(Self.text("Swatch"), [0x00], Self.sha(a, b, c)))
  }
}
