import Foundation
import MigrunKit
import Testing

@testable import MigrunScripting
@testable import MigrunTools
@testable import TestSupport

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// Many stores: which files of a folder are stores, how a list splits between machines, how runs'
/// reports merge.
@Suite struct FleetTests {
  /// Every store lands in exactly one of N shards, for lists of every size and N from 1 to 9; a
  /// store keeps its shard when other stores come and go.
  @Test func shardsCoverEveryStoreExactlyOnce() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<50 {
      let stores = (0..<Int.random(in: 0...300, using: &generator)).map {
        URL(fileURLWithPath: "/fleet/user-\($0)-\(UInt32.random(in: 0...UInt32.max, using: &generator)).sqlite")
      }
      for count in 1...9 {
        let parts = (0..<count).map { Fleet.shard(stores, index: $0, of: count) }
        #expect(parts.flatMap { $0 }.map(\.path).sorted() == stores.map(\.path).sorted())
        #expect(Set(parts.flatMap { $0 }.map(\.path)).count == stores.count)
        // Stable: a sublist's stores stay in their parts.
        let half = Array(stores.prefix(stores.count / 2))
        for index in 0..<count {
          #expect(Fleet.shard(half, index: index, of: count).allSatisfy { parts[index].contains($0) })
        }
      }
    }
    #expect(Fleet.parseShard("0/4")! == (0, 4))
    for bad in ["4/4", "-1/4", "1", "a/b", "1/0", "1/2/3"] { #expect(Fleet.parseShard(bad) == nil, "\(bad)") }
  }

  /// Shards' reports merge into one with every store once; a re-run's outcome wins.
  @Test func reportsMerge() throws {
    let first = Fleet.Report([
      Fleet.Outcome(path: "/a.sqlite", from: "1", to: "2", status: .migrated, objects: 3, seconds: 0.5),
      Fleet.Outcome(path: "/c.sqlite", status: .failed, error: "in use"),
    ])
    let second = Fleet.Report([
      Fleet.Outcome(path: "/b.sqlite", from: "2", to: "2", status: .current),
      Fleet.Outcome(path: "/c.sqlite", from: "1", to: "2", status: .migrated, objects: 1),
    ])
    let merged = Fleet.Report.merged([first, second])
    #expect(merged.stores.map(\.path) == ["/a.sqlite", "/b.sqlite", "/c.sqlite"])
    #expect((merged.migrated, merged.current, merged.failed) == (2, 1, 0))
    // JSON round trip, in the documented shape.
    let decoded = try JSONDecoder().decode(Fleet.Report.self, from: try merged.json())
    #expect(decoded == merged)
    let object = try #require(try JSONSerialization.jsonObject(with: try first.json()) as? [String: Any])
    #expect(Set(object.keys) == ["migrated", "current", "failed", "stores"])
    let store = try #require((object["stores"] as? [[String: Any]])?.first)
    #expect(Set(store.keys) == ["path", "from", "to", "status", "objects", "seconds"])
  }

  /// The JUnit file parses as XML, with a failure for each failed store and its message escaped.
  @Test func junitIsWellFormed() throws {
    let report = Fleet.Report([
      Fleet.Outcome(path: "/a & b.sqlite", from: "1", to: "2", status: .migrated, seconds: 0.25),
      Fleet.Outcome(path: "/c.sqlite", status: .failed, error: "<bad> \"quote\" \u{1}"),
    ])
    let xml = report.junit(suite: "migrun migrate")
    let parser = JUnitCounter(data: Data(xml.utf8))
    #expect(parser.parse(), "\(xml)")
    #expect(parser.testCases == 2)
    #expect(parser.failures == ["<bad> \"quote\"  "])
  }

  /// A folder holds stores among other things: only the stores are taken.
  @Test func aFolderIsSearchedForStoresOnly() throws {
    let folder = try TemporaryDirectory()
    let root = folder.url
    let nested = root.appendingPathComponent("users/42", isDirectory: true)
    try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
    let fixture = Fixtures.url("objcio-core-data-moody/stores/Moody 2.moody.sqlite")
    for path in ["a.sqlite", "users/42/b.sqlite", "a~.sqlite", ".a.sqlite.migrun-step1", ".a_SUPPORT/c.sqlite"] {
      let url = root.appendingPathComponent(path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try FileManager.default.copyItem(at: fixture, to: url)
    }
    try makeDatabase(root.appendingPathComponent("other.db"), ["CREATE TABLE t (a)"])
    try Data("SQLite format 3\0 but broken".utf8).write(to: root.appendingPathComponent("broken.sqlite"))
    try Data("notes".utf8).write(to: root.appendingPathComponent("notes.txt"))
    let found = Fleet.stores(in: [root.path, root.appendingPathComponent("missing").path])
    #expect(
      found.stores.map { String($0.path.dropFirst(root.path.count)) } == [
        "/a.sqlite", "/broken.sqlite", "/users/42/b.sqlite",
      ])
    #expect(found.refused.map(\.reason) == ["no such file or folder"])
  }
}

/// Counts test cases and collects failure messages.
final class JUnitCounter: NSObject, XMLParserDelegate {
  private let parser: XMLParser
  var testCases = 0
  var failures: [String] = []

  init(data: Data) {
    parser = XMLParser(data: data)
    super.init()
    parser.delegate = self
  }

  func parse() -> Bool { parser.parse() }

  func parser(
    _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
    attributes: [String: String] = [:]
  ) {
    if elementName == "testcase" { testCases += 1 }
    if elementName == "failure" { failures.append(attributes["message"] ?? "") }
  }
}
