import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// `migrun diagram`: SVG drawn by Graphviz (installed by scripts/setup), well-formed, naming what it
/// draws; DOT on request; a store's path.
@Suite struct DiagramCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  /// Collects the text an SVG shows.
  final class SVGText: NSObject, XMLParserDelegate {
    var texts: [String] = []
    var elements = 0
    private var current = ""
    func parser(
      _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
      attributes: [String: String] = [:]
    ) { elements += 1 }
    // The parser may hand an element's text over in pieces: one string per element.
    func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }
    func parser(
      _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
    ) {
      if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { texts.append(current) }
      current = ""
    }
  }

  static func parse(_ data: Data) -> (wellFormed: Bool, text: String, elements: Int) {
    let parser = XMLParser(data: data)
    let collector = SVGText()
    parser.delegate = collector
    let ok = parser.parse()
    return (ok, collector.texts.joined(separator: "\n"), collector.elements)
  }

  @Test func aModelIsDrawnAsWellFormedSVG() throws {
    let folder = try TemporaryDirectory()
    let out = folder.url.appendingPathComponent("moody.svg")
    let run = try MigrunProcess.run(["diagram", Self.moody, "--out", out.path])
    #expect(run.status == 0, "\(run.stderr)")
    let svg = Self.parse(try Data(contentsOf: out))
    #expect(svg.wellFormed)
    #expect(svg.elements > 50)
    for name in ["Continent", "Country", "Mood", "numericISO3166Code: Integer 16", "moods → [Mood]", "countries"] {
      #expect(svg.text.contains(name), "\(name)")
    }
    let old = try MigrunProcess.run(["diagram", Self.moody, "--model-version", "Moody 2", "--format", "dot"])
    #expect(old.stdout.hasPrefix("digraph \"Moody · Moody 2\" {"))
    #expect(old.stdout.contains("GeographicRegion</B></I> «abstract»"))
  }

  @Test func aStepAndAPlanAreDrawn() throws {
    let folder = try TemporaryDirectory()
    let policies = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody").path
    let step = try MigrunProcess.run([
      "diagram", Self.moody, "--from", "Moody 2", "--to", "Moody 3", "--policies", policies,
    ])
    #expect(step.status == 0, "\(step.stderr)")
    let drawn = Self.parse(Data(step.stdout.utf8))
    #expect(drawn.wellFormed)
    #expect(drawn.text.contains("Moody 2 → Moody 3 (Lua: Moody 2-Moody 3.lua)"), "\(drawn.text.prefix(300))")
    #expect(drawn.text.contains("(added)"))
    let store = try copyOfFixture("objcio-core-data-moody/stores/Moody 2.moody.sqlite", into: folder)
    let plan = try MigrunProcess.run(["diagram", store.path, "--model", Self.moody, "--plan", "--format", "dot"])
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("label=\"inferred\""), "Core Data's path: one inferred step")
    #expect(plan.stdout.contains("\"Moody 2\" -> \"Moody 6\""))
    let one = try MigrunProcess.run(["diagram", store.path, "--model", Self.moody, "--format", "dot"])
    #expect(one.stdout.contains("subgraph \"cluster_to\""))
    let half = try MigrunProcess.run(["diagram", Self.moody, "--from", "Moody 2"])
    #expect(half.errorLines == ["migrun: error: give both --from and --to to draw a step"])
  }
}
