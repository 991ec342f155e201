import PropertyList
import Testing

@Suite struct XMLScannerTests {
  final class Recorder: XMLScanner.Delegate {
    var events: [String] = []
    func startElement(_ name: String, attributes: [String: String]) throws {
      events.append("<\(name)" + attributes.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined() + ">")
    }
    func endElement(_ name: String) throws { events.append("</\(name)>") }
    func characters(_ text: String) throws {
      if let last = events.last, last.hasPrefix("text:") {
        events[events.count - 1] = last + text
      } else {
        events.append("text:" + text)
      }
    }
  }

  static func scan(_ text: String) throws -> [String] {
    let recorder = Recorder()
    var scanner = XMLScanner(Array(text.utf8))
    try scanner.scan(recorder)
    return recorder.events
  }

  static func failure(_ bytes: [UInt8]) -> XMLScanError? {
    var scanner = XMLScanner(bytes)
    do {
      try scanner.scan(Recorder())
      return nil
    } catch {
      return error as? XMLScanError
    }
  }

  @Test func readsWhatModelAndPropertyListFilesUse() throws {
    let events = try Self.scan(
      """
      \u{FEFF}<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd" [ <!ENTITY x "]>"> ]>
      <!-- a comment with <tags> -->
      <a one="1" two='it&apos;s' three="&lt;&amp;&gt;&quot;&#65;&#x42;">x &amp; y<![CDATA[<raw> & ]]><b/><c
        d = "e" ></c></a>
      <?trailing instruction?>
      """)
    #expect(
      events == [
        "<a one=1 three=<&>\"AB two=it's>", "text:x & y<raw> & ", "<b>", "</b>", "<c d=e>", "</c>", "</a>",
      ])
  }

  @Test(arguments: [
    ("<a><b></a>", 1, 7, "</a> closes <b>"),
    ("<a>\n  <b x=\"1\" x=\"2\"/></a>", 2, 12, "has the attribute x twice"),
    ("<a>&nbsp;</a>", 1, 4, "unknown entity &nbsp;"),
    ("<a>&#0;</a>", 1, 4, "is not a character"),
    ("<a>&#xD800;</a>", 1, 4, "is not a character"),
    ("<a x=1/>", 1, 6, "must be quoted"),
    ("<a x=\"<\"/>", 1, 7, "'<' in the value"),
    ("text<a/>", 1, 1, "text outside the root element"),
    ("<a/><b/>", 1, 5, "a second root element"),
    ("<a><b>", 1, 7, "the document ends inside <b>"),
    ("<a><!-- never", 1, 8, "the comment is never closed"),
    ("<a x=\"1\"y=\"2\"/>", 1, 9, "must be separated by spaces"),
    ("", 1, 1, "no root element"),
    ("<1a/>", 1, 2, "a name was expected"),
    ("</a>", 1, 1, "</a> closes nothing"),
  ]) func malformedDocumentsSayWhatAndWhere(text: String, line: Int, column: Int, message: String) throws {
    let error = try #require(Self.failure(Array(text.utf8)))
    #expect(error.line == line && error.column == column, "\(error)")
    #expect(error.message.contains(message), "\(error)")
  }

  @Test(arguments: [
    [0x3C, 0x61, 0xFF, 0x2F, 0x3E],  // 0xFF never appears in UTF-8
    [0x3C, 0x61, 0x3E, 0xC3, 0x3C, 0x2F, 0x61, 0x3E],  // a lead byte without its continuation
    [0x3C, 0x61, 0x3E, 0xED, 0xA0, 0x80, 0x3C, 0x2F, 0x61, 0x3E],  // an encoded surrogate
    [0x3C, 0x61, 0x3E, 0xF4, 0x90, 0x80, 0x80, 0x3C, 0x2F, 0x61, 0x3E],  // beyond U+10FFFF
    [0x3C, 0x61, 0x3E, 0xC0, 0xAF, 0x3C, 0x2F, 0x61, 0x3E],  // an overlong '/'
  ]) func bytesThatAreNotUTF8AreRefusedBeforeAnyEvent(bytes: [UInt8]) throws {
    let error = try #require(Self.failure(bytes))
    #expect(error.message.contains("not UTF-8"), "\(error)")
  }

  @Test func deepNestingIsRefusedNotOverflowed() throws {
    let depth = XMLScanner.maximumDepth + 1
    let text = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
    let error = try #require(Self.failure(Array(text.utf8)))
    #expect(error.message.contains("nested deeper than \(XMLScanner.maximumDepth)"))
    let fits = String(repeating: "<a>", count: depth - 1) + String(repeating: "</a>", count: depth - 1)
    #expect(Self.failure(Array(fits.utf8)) == nil)
  }

  @Test func multibyteNamesAndTextAreKept() throws {
    #expect(try Self.scan("<modèle nom=\"café ☕\">日本</modèle>") == ["<modèle nom=café ☕>", "text:日本", "</modèle>"])
  }
}
