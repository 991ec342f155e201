import Foundation
import PropertyList
import TestSupport
import Testing

@Suite struct PropertyListTests {
  static let sample: PropertyListValue = .dictionary([
    "NSStoreType": .string("SQLite"),
    "NSPersistenceFrameworkVersion": .integer(1344),
    "negative": .integer(-5),
    "big": .integer(Int64.max),
    "ratio": .real(0.25),
    "flag": .boolean(true),
    "off": .boolean(false),
    "when": .date(700_000_000.5),
    "blob": .data([0, 1, 2, 255]),
    "unicode": .string("Crème brûlée ☕"),
    "NSStoreModelVersionHashes": .dictionary(["Mood": .data(Array(repeating: 7, count: 32))]),
    "list": .array((0..<20).map { .integer(Int64($0 * 1000)) }),
    "empty": .array([]),
  ])

  @Test func binaryRoundTripKeepsEveryType() throws {
    let bytes = Self.sample.binaryEncoded()
    #expect(bytes.starts(with: Array("bplist00".utf8)))
    #expect(try PropertyListValue(decoding: bytes) == Self.sample)
  }

  @Test func xmlRoundTripKeepsEveryType() throws {
    let bytes = Self.sample.xmlEncoded()
    #expect(try PropertyListValue(decoding: bytes) == Self.sample)
  }

  @Test func foundationReadsWhatWeWrite() throws {
    let plist = try PropertyListSerialization.propertyList(from: Data(Self.sample.binaryEncoded()), format: nil)
    let dictionary = try #require(plist as? [String: Any])
    #expect(dictionary["NSStoreType"] as? String == "SQLite")
    #expect(dictionary["NSPersistenceFrameworkVersion"] as? Int == 1344)
    #expect(dictionary["unicode"] as? String == "Crème brûlée ☕")
    #expect(dictionary["blob"] as? Data == Data([0, 1, 2, 255]))
    #expect((dictionary["list"] as? [Int])?.last == 19_000)
  }

  @Test func weReadWhatFoundationWrites() throws {
    let foundation: [String: Any] = ["name": "Ada", "age": 36, "score": 2.5, "tags": ["a", "b"], "raw": Data([9, 8])]
    let bytes = try PropertyListSerialization.data(fromPropertyList: foundation, format: .binary, options: 0)
    let value = try PropertyListValue(decoding: Array(bytes))
    #expect(value["name"] == .string("Ada"))
    #expect(value["age"] == .integer(36))
    #expect(value["score"] == .real(2.5))
    #expect(value["tags"] == .array([.string("a"), .string("b")]))
    #expect(value["raw"] == .data([9, 8]))
  }

  /// Apple's momc wrote these VersionInfo.plist files.
  @Test func readsApplesCompiledModelVersionInfo() throws {
    for url in try Fixtures.versionInfoPlists() {
      let value = try PropertyListValue(decoding: Array(try Data(contentsOf: url)))
      let hashes = try #require(value["NSManagedObjectModel_VersionHashes"]?.dictionaryValue)
      // One entry per compiled version: a .mom file beside the plist.
      let moms = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
        .filter { $0.hasSuffix(".mom") }
      #expect(hashes.count == moms.count, "\(url.path)")
      #expect(Set(hashes.keys) == Set(moms.map { String($0.dropLast(4)) }), "\(url.path)")
      for (_, entities) in hashes {
        for (_, hash) in try #require(entities.dictionaryValue) {
          #expect(hash.dataValue?.count == 32)
        }
      }
    }
  }

  /// A compiled model (.mom) is an NSKeyedArchiver archive of NSManagedObjectModel, written by Apple.
  @Test func unarchivesApplesCompiledModel() throws {
    let url = Fixtures.url("coredataplus-samplemodels/SampleModel3/Fixtures/SampleModel3.momd/SampleModel3_v2.mom")
    let root = try KeyedArchive.unarchive(Array(try Data(contentsOf: url)))
    guard case .object(let className, let fields) = root else {
      Issue.record("root is not an object: \(root)")
      return
    }
    #expect(className == "NSManagedObjectModel")
    guard case .dictionary(let entities)? = fields["NSEntities"] else {
      Issue.record("no NSEntities")
      return
    }
    #expect(Set(entities.keys) == [.string("Pet"), .string("User")])
    guard case .object(let entityClass, let entity)? = entities[.string("Pet")] else {
      Issue.record("Pet is not an object")
      return
    }
    #expect(entityClass == "NSEntityDescription")
    #expect(entity["NSEntityName"] == .string("Pet"))
    guard case .dictionary(let properties)? = entity["NSProperties"],
      case .object(_, let owner)? = properties[.string("owner")]
    else {
      Issue.record("Pet has no owner property")
      return
    }
    // The relationship points back at its entity, which is being decoded: a reference, not a loop.
    if case .reference = owner["NSEntity"] {
    } else {
      Issue.record("NSEntity is \(String(describing: owner["NSEntity"]))")
    }
  }

  /// Plain arrays among an archive's objects, each holding the next one twice, 45 deep (issue 55's
  /// DAG, as a keyed archive): decoded once each, but 2^45 values to every reader that walks the
  /// result — refused, naming the bound.
  @Test func anArchiveWhosePlainArraysShareTheirContentsIsRefused() throws {
    var objects: [PropertyListValue] = [.string("$null")]
    for index in 1...45 { objects.append(.array([.uid(UInt64(index + 1)), .uid(UInt64(index + 1))])) }
    objects.append(.string("leaf"))
    let archive = PropertyListValue.dictionary([
      "$archiver": .string("NSKeyedArchiver"), "$top": .dictionary(["root": .uid(1)]), "$objects": .array(objects),
    ])
    #expect(
      throws: PropertyListError(
        "the archive shares objects so deeply its expanded form exceeds \(KeyedArchive.minimumExpandedNodes) nodes, "
          + "an object counted once for each field that refers to it")
    ) { try KeyedArchive.unarchive(archive) }
  }

  /// Issue 69: objects that each refer twice to the next, 50 deep — 5 KB of archive, 2^50 nodes
  /// expanded — are refused; 12 deep (8,191 nodes) is an archive like any other, each object
  /// decoded once and shared.
  @Test func anArchiveOfObjectsSharedFiftyDeepIsRefusedAndTwelveDeepIsRead() throws {
    func archive(depth: Int) -> [UInt8] {
      var archiver = KeyedArchiver()
      var next = archiver.string("leaf")
      for _ in 0..<depth {
        next = archiver.object(["Pair", "NSObject"], ["left": next, "right": archiver.array([next])])
      }
      return archiver.archive(root: next).binaryEncoded()
    }
    let hostile = archive(depth: 50)
    #expect(hostile.count < 8192)
    #expect(throws: PropertyListError.self) { try KeyedArchive.unarchive(hostile) }
    do {
      _ = try KeyedArchive.unarchive(hostile)
    } catch {
      #expect(error.description.contains("shares objects so deeply its expanded form exceeds 500000 nodes"))
    }
    var value = try KeyedArchive.unarchive(archive(depth: 12))
    var depth = 0
    while case .object("Pair", let fields) = value, case .array(let right)? = fields["right"] {
      #expect(fields["left"] == right.first)
      value = fields["left"] ?? .null
      depth += 1
    }
    #expect(depth == 12 && value == .string("leaf"))
  }

  /// A string shared by many fields counts once per field: a megabyte string in 256 places would
  /// print as 256 MB. Refused past the archive's byte bound.
  @Test func aLongStringSharedByManyFieldsIsRefused() throws {
    var archiver = KeyedArchiver()
    let long = archiver.string(String(repeating: "x", count: 1 << 20))
    let root = archiver.array(Array(repeating: long, count: 256))
    #expect(throws: PropertyListError.self) { try KeyedArchive.unarchive(archiver.archive(root: root).binaryEncoded()) }
  }

  /// A chain 150 deep, met again 100 levels down through a shared object, is 250 levels to a
  /// reader: the depth counts a shared object where it is met, not only where it was decoded.
  @Test func depthCountsASharedObjectWhereItIsMetAgain() throws {
    var archiver = KeyedArchiver()
    var chain = archiver.string("leaf")
    for _ in 0..<150 { chain = archiver.array([chain]) }
    var outer = chain
    for _ in 0..<100 { outer = archiver.array([outer]) }
    let root = archiver.array([chain, outer])
    #expect(throws: PropertyListError("archive nested more than 200 deep")) {
      try KeyedArchive.unarchive(archiver.archive(root: root).binaryEncoded())
    }
  }

  @Test func unarchivesFoundationsKeyedArchives() throws {
    let object: NSDictionary = [
      "name": "Ada", "count": 3, "ratio": 0.5, "items": ["x", "y"] as NSArray, "blob": Data([1, 2]) as NSData,
      "nothing": NSNull(), "id": NSUUID(uuidString: "E7350B5D-5058-46F7-90B9-DCA517BBAF92") ?? NSUUID(),
    ]
    let archive = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: false)
    let value = try KeyedArchive.unarchive(Array(archive))
    guard case .dictionary(let entries) = value else {
      Issue.record("not a dictionary: \(value)")
      return
    }
    #expect(entries[.string("name")] == .string("Ada"))
    #expect(entries[.string("count")] == .integer(3))
    #expect(entries[.string("ratio")] == .real(0.5))
    #expect(entries[.string("items")] == .array([.string("x"), .string("y")]))
    #expect(entries[.string("blob")] == .data([1, 2]))
    #expect(entries[.string("nothing")] == .null)
    #expect(
      entries[.string("id")]
        == .uuid([0xE7, 0x35, 0x0B, 0x5D, 0x50, 0x58, 0x46, 0xF7, 0x90, 0xB9, 0xDC, 0xA5, 0x17, 0xBB, 0xAF, 0x92]))
  }

  @Test func damagedInputFailsWithAnErrorNeverACrash() throws {
    let good = Self.sample.binaryEncoded()
    for length in 0..<good.count {
      #expect(throws: PropertyListError.self) { try PropertyListValue(decoding: Array(good.prefix(length))) }
    }
    var flipped = good
    for index in stride(from: 8, to: good.count, by: 3) {
      flipped[index] ^= 0xFF
      _ = try? PropertyListValue(decoding: flipped)  // any answer but a crash
      flipped[index] ^= 0xFF
    }
    #expect(throws: PropertyListError.self) { try PropertyListValue(decoding: Array("not a plist".utf8)) }
    #expect(throws: PropertyListError.self) { try KeyedArchive.unarchive(Self.sample) }
  }
}

/// Binary property lists that lie about their sizes: each gives an error, none traps.
@Suite struct DamagedBinaryPropertyListTests {
  /// `bplist00`, the objects, an offset table of `offsetSize`-byte entries, the 32-byte trailer.
  static func bplist(objects: [[UInt8]], referenceSize: UInt8, top: UInt64 = 0) -> [UInt8] {
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(bytes.count)
      bytes += object
    }
    let table = bytes.count
    for offset in offsets { bytes += [UInt8(offset >> 16 & 0xFF), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF)] }
    bytes += [0, 0, 0, 0, 0, 0, 3, referenceSize]
    for value in [UInt64(objects.count), top, UInt64(table)] {
      bytes += (0..<8).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) }
    }
    return bytes
  }

  @Test func aUTF16StringLongerThanMemoryIsAnError() {
    // Found by the fuzzer: length * 2 overflowed.
    let string: [UInt8] = [0x6F, 0x13, 0x7F] + [UInt8](repeating: 0xFF, count: 7)
    #expect(throws: PropertyListError.self) {
      try PropertyListValue(decoding: Self.bplist(objects: [string], referenceSize: 1))
    }
  }

  @Test func countsAndOffsetsNearIntMaxAreErrors() {
    let array: [UInt8] = [0xAF, 0x13, 0x7F] + [UInt8](repeating: 0xFF, count: 6) + [0xF0, 0x00]
    #expect(throws: PropertyListError.self) {
      try PropertyListValue(decoding: Self.bplist(objects: [array], referenceSize: 1))
    }
    var trailer = Self.bplist(objects: [[0x08]], referenceSize: 1)
    for index in (trailer.count - 8)..<trailer.count { trailer[index] = 0xFF }
    trailer[trailer.count - 8] = 0x7F
    #expect(throws: PropertyListError.self) { try PropertyListValue(decoding: trailer) }
  }

  /// An array holding one reference (2 bytes): the object after `index`.
  static func arrayOfOne(pointingAfter index: Int) -> [UInt8] {
    let next = index + 1
    return [0xA1, UInt8(truncatingIfNeeded: next >> 8), UInt8(truncatingIfNeeded: next)]
  }

  @Test func nestingDeeperThanTheLimitIsAnErrorNotAStackOverflow() throws {
    let depth = 5000
    var objects = (0..<depth).map(Self.arrayOfOne(pointingAfter:))
    objects.append([0x08])
    let error = try #require(throws: PropertyListError.self) {
      try PropertyListValue(decoding: Self.bplist(objects: objects, referenceSize: 2))
    }
    #expect(error.description.contains("nested deeper than 512"))
    let fits = Array(objects.suffix(400))
    let rebased = fits.indices.map { index in
      fits[index].count == 3 ? Self.arrayOfOne(pointingAfter: index) : fits[index]
    }
    #expect(throws: Never.self) { try PropertyListValue(decoding: Self.bplist(objects: rebased, referenceSize: 2)) }
  }

  /// An XML property list is held to the binary one's depth: 4,000 nested arrays (within the XML
  /// scanner's limit) overflowed the stack of the writers that walk the value next.
  @Test func xmlNestingDeeperThanTheLimitIsAnError() throws {
    func nested(_ depth: Int) -> [UInt8] {
      Array(
        ("<plist>" + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
          + "</plist>").utf8)
    }
    let error = try #require(throws: PropertyListError.self) {
      try PropertyListValue(decoding: nested(PropertyListValue.maximumDepth + 1))
    }
    #expect(error.description.contains("<array> nested deeper than 512"))
    let fits = try PropertyListValue(decoding: nested(PropertyListValue.maximumDepth))
    #expect(try PropertyListValue(decoding: fits.xmlEncoded()) == fits)
    #expect(try PropertyListValue(decoding: fits.binaryEncoded()) == fits)
  }
}
