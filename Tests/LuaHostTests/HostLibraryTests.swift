import Foundation
import LuaHost
import TestSupport
import Testing

@Suite struct HostLibraryTests {
  static func run(_ source: String, _ arguments: [LuaValue] = []) throws -> [LuaValue] {
    let vm = try LuaVM()
    let function = try #require(
      try vm.run(source: "return function(...)\n\(source)\nend", name: "helpers.lua").first?.functionValue)
    return try vm.call(function, arguments)
  }

  @Test func jsonRoundTripsKeepIntegersFloatsAndNULL() throws {
    let results = try Self.run(
      """
      local text = '{"id": 7, "price": 2.50, "big": 1e3, "name": "Crème", "tags": ["a", null, "c"], "none": null, "ok": true, "esc": "a\\\\"b\\\\n\\\\u00e9\\\\ud83d\\\\ude00"}'
      local v = json.decode(text)
      return math.type(v.id), math.type(v.price), math.type(v.big), v.name, v.tags[2] == NULL, #v.tags, v.none == NULL,
        v.ok, v.esc, json.encode(v)
      """)
    #expect(
      Array(results.prefix(9)) == ["integer", "float", "float", .text("Crème"), true, 3, true, true, .text("a\"b\né😀")])
    #expect(
      results[9]
        == .text(
          #"{"big":1000.0,"esc":"a\"b\né😀","id":7,"name":"Crème","none":null,"ok":true,"price":2.5,"tags":["a",null,"c"]}"#
        ))
  }

  @Test func jsonRefusesWhatItCannotRepresent() throws {
    for (source, phrase) in [
      ("return json.encode({ f = print })", "a function has no JSON form"),
      ("return json.encode('\\xff')", "not valid UTF-8"),
      ("return json.decode('{\"a\": }')", "json.decode: unexpected character at byte 7"),
      ("return json.decode('[1, 2')", "unexpected end of text"),
      ("return json.decode('1 2')", "unexpected text after the value"),
      ("local t = {} t.t = t return json.encode(t)", "nested more than 64 deep (a cycle?)"),
    ] {
      let error = try #require(throws: LuaError.self, "\(source)") { try Self.run(source) }
      #expect(error.description.contains(phrase), "\(source): \(error)")
      #expect(error.script == "helpers.lua")
    }
  }

  @Test func base64AndHexConvertBinaryBothWays() throws {
    let results = try Self.run(
      "local blob = ... return base64.encode(blob), hex.encode(blob), base64.decode(base64.encode(blob)) == blob, hex.decode('00FFa0')",
      [.bytes([0, 255, 16, 32])])
    #expect(results == ["AP8QIA==", "00ff1020", true, .bytes([0, 255, 0xA0])])
    let bad = try #require(throws: LuaError.self) { try Self.run("return hex.decode('0g')") }
    #expect(bad.message.contains("hex.decode: not a hex digit at position 1"))
  }

  @Test func uuidsConvertBetweenTextAndSixteenBytes() throws {
    let bytes: [UInt8] = [
      0xE7, 0x35, 0x0B, 0x5D, 0x50, 0x58, 0x46, 0xF7, 0x90, 0xB9, 0xDC, 0xA5, 0x17, 0xBB, 0xAF, 0x92,
    ]
    let results = try Self.run(
      "local u = ... return uuid.string(u), uuid.bytes('e7350b5d-5058-46f7-90b9-dca517bbaf92') == u", [.bytes(bytes)])
    #expect(results == ["E7350B5D-5058-46F7-90B9-DCA517BBAF92", true])
    let bad = try #require(throws: LuaError.self) { try Self.run("return uuid.string('short')") }
    #expect(bad.message == "uuid.string: expected 16 bytes, got 5")
  }

  @Test func datesUseCoreDatasReferenceDate() throws {
    let results = try Self.run(
      """
      return date.fromUnix(978307200), date.toUnix(0), date.iso(0), date.iso(86400.5),
        date.parse('2001-01-02T00:00:00Z'), date.parse('2001-01-01'), date.parse('2001-01-01T02:00:00+02:00')
      """)
    #expect(results == [0.0, 978_307_200.0, "2001-01-01T00:00:00Z", "2001-01-02T00:00:00.500Z", 86400.0, 0.0, 0.0])
    // date.now(): the current time, as Swift's Date() in a ported policy, in reference seconds.
    let before = Date().timeIntervalSinceReferenceDate
    let now = try Self.run("return date.now()")
    let after = Date().timeIntervalSinceReferenceDate
    guard case .number(let seconds)? = now.first else {
      Issue.record("date.now() returned \(now)")
      return
    }
    #expect(seconds >= before && seconds <= after)
    let bad = try #require(throws: LuaError.self) { try Self.run("return date.parse('yesterday')") }
    #expect(bad.message == "date.parse: 'yesterday' is not an ISO-8601 date")
  }

  /// NaN, the infinities and a year past 9999 are no date: an error naming the value, never "" (issue 55).
  @Test func isoOfNoDateIsAnErrorNamingTheValue() throws {
    for (argument, shown) in [("0/0", "nan"), ("1/0", "inf"), ("-1/0", "-inf"), ("1e300", "1e+300")] {
      let error = try #require(throws: LuaError.self) { try Self.run("return date.iso(\(argument))") }
      #expect(error.message.hasPrefix("date.iso: \(shown) is no date"), "\(error)")
    }
    #expect(try Self.run("return date.iso(-3600)") == ["2000-12-31T23:00:00Z"])
  }

  @Test func plistsDecodeEncodeAndUnarchive() throws {
    let archive = try NSKeyedArchiver.archivedData(
      withRootObject: ["red": 0.5, "names": ["a", "b"], "nothing": NSNull()] as NSDictionary,
      requiringSecureCoding: false)
    let versionInfo = try Data(
      contentsOf: Fixtures.url("coredataplus-samplemodels/SampleModel3/Fixtures/SampleModel3.momd/VersionInfo.plist"))
    let results = try Self.run(
      """
      local archive, info = ...
      local colors = plist.unarchive(archive)
      local decoded = plist.decode(info)
      local again = plist.decode(plist.encode({ n = 1, f = 1.5, s = 'x', list = { 1, 2 }, blob = '\\xff\\x00' }, 'xml'))
      return colors.red, colors.names[2], colors.nothing == NULL, decoded.NSManagedObjectModel_CurrentVersionName,
        #decoded.NSManagedObjectModel_VersionHashes.SampleModel3.User, math.type(again.n), again.f, again.list[2], again.blob
      """, [.bytes(Array(archive)), .bytes(Array(versionInfo))])
    #expect(results == [0.5, "b", true, "SampleModel3", 32, "integer", 1.5, 2, .bytes([0xFF, 0])])
    let bad = try #require(throws: LuaError.self) { try Self.run("return plist.decode('nope')") }
    #expect(bad.message.hasPrefix("plist.decode: not a property list"))
  }

  /// plist.archive writes what the decoder of Apple's archives reads back, and what Foundation's own
  /// secure unarchiving (the classes NSSecureUnarchiveFromData allows) accepts.
  @Test func plistsArchiveForSecureUnarchiving() throws {
    let results = try Self.run(
      """
      local bytes = plist.archive({
        title = 'Soup', servings = 4, rating = 4.5, vegan = true, tags = { 'hot', 'thai' }, note = NULL,
        made = plist.date(86400), photo = plist.data('\\xff\\x00'), id = plist.uuid(string.rep('\\x01', 16)),
        link = plist.url('https://example.com/soup'), nested = { { a = 1 }, {} },
      })
      local back = plist.unarchive(bytes)
      return bytes, back.title, back.servings, math.type(back.servings), back.rating, back.vegan, back.tags[2],
        back.note == NULL, back.made, back.photo, #back.id, back.link, back.nested[1].a, #back.nested[2]
      """)
    #expect(
      Array(results.dropFirst()) == [
        "Soup", 4, "integer", 4.5, true, "thai", true, 86400.0, .bytes([0xFF, 0]), 16, "https://example.com/soup", 1, 0,
      ])
    guard case .string(let bytes) = results[0] else { Issue.record("no bytes"); return }
    let decoded = try NSKeyedUnarchiver.unarchivedObject(
      ofClasses: [
        NSDictionary.self, NSArray.self, NSString.self, NSNumber.self, NSDate.self, NSData.self, NSUUID.self,
        NSURL.self, NSNull.self,
      ], from: Data(bytes))
    let dictionary = try #require(decoded as? NSDictionary)
    #expect(dictionary["title"] as? String == "Soup")
    #expect((dictionary["servings"] as? NSNumber)?.intValue == 4)
    #expect(dictionary["tags"] as? [String] == ["hot", "thai"])
    #expect((dictionary["made"] as? Date)?.timeIntervalSinceReferenceDate == 86400)
    #expect(dictionary["note"] is NSNull)
    #expect((dictionary["id"] as? UUID)?.uuidString == "01010101-0101-0101-0101-010101010101")
    #expect((dictionary["link"] as? URL)?.absoluteString == "https://example.com/soup")
    for (script, message) in [
      ("return plist.archive({ 1, x = 2 })", "a list or has keys, not both"),
      ("return plist.archive(print)", "a function has no archived form"),
      ("return plist.uuid('short')", "a UUID is 16 bytes, not 5"),
      ("return plist.archive({ ['$class'] = 'NSWindow' })", "NSWindow is not a class migrun archives"),
    ] {
      let error = try #require(throws: LuaError.self) { try Self.run(script) }
      #expect(error.message.contains(message), "\(error.message)")
    }
  }

  @Test func helpersAreReadOnlyAndRequirable() throws {
    #expect(try Self.run("return require('json') == require('json'), require('hex').encode('A')") == [true, "41"])
    let error = try #require(throws: LuaError.self) { try Self.run("json.encode = nil") }
    #expect(error.message.contains("attempt to modify read-only table 'json'"))
  }
}
