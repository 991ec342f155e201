import Foundation
import GRDB
import TestSupport
import Testing

/// Issue 62's kill campaign over the commands that write new files: `kill -9` at seeded random
/// moments of each (its inputs big enough that the kills land in the work), then the inputs are
/// byte-identical, nothing is under the output's name unless it is whole, and a rerun completes
/// leaving nothing of the killed runs — beside the output or in the temporary folder.
@Suite struct KillCampaignTests {
  /// The inputs: a store of 20,000 items (`in/items.sqlite`), its export, Moody's model and a
  /// mapping model of it, the policy library.
  static func inputs(in folder: TemporaryDirectory) throws -> URL {
    let inputs = try folder.folder("in")
    let bundle = try folder.write(
      """
      <model><entity name="Item"><attribute name="n" attributeType="Integer 64" defaultValueString="0"/>\
      <attribute name="name" optional="YES" attributeType="String"/>\
      <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>\
      </entity></model>
      """, to: "in/Items.xcdatamodeld/Items.xcdatamodel/contents"
    ).deletingLastPathComponent().deletingLastPathComponent()
    let store = inputs.appendingPathComponent("items.sqlite")
    #expect(try MigrunProcess.run(["create", store.path, "--model", bundle.path]).status == 0)
    try DatabaseQueue(path: store.path).write { db in
      try db.execute(
        sql: """
          WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
          INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZN, ZNAME) SELECT i, 1, 1, i, 'item ' || i FROM c;
          UPDATE Z_PRIMARYKEY SET Z_MAX = 20000;
          """)
    }
    let export = inputs.appendingPathComponent("items.json")
    #expect(try MigrunProcess.run(["export", store.path, "--out", export.path]).status == 0)
    return inputs
  }

  /// Each command, `IN` its inputs' folder and `OUT` the folder it writes in, with what it writes there.
  static let commands: [(name: String, arguments: [String], product: String)] = [
    ("salvage", ["salvage", "IN/items.sqlite", "--out", "OUT/saved.sqlite"], "saved.sqlite"),
    ("export", ["export", "IN/items.sqlite", "--out", "OUT/items.json"], "items.json"),
    ("import", ["import", "IN/items.json", "--model", "IN/Items.xcdatamodeld", "--out", "OUT/i.sqlite"], "i.sqlite"),
    ("copy", ["copy", "IN/items.sqlite", "OUT/items.storedata", "--type", "xml"], "items.storedata"),
    ("create", ["create", "OUT/new.sqlite", "--model", ConvertCommandTests.moody], "new.sqlite"),
    (
      "convert",
      [
        "convert", ConvertCommandTests.mappings.appendingPathComponent("Moody 5-Moody 6.xcmappingmodel").path,
        "--model", ConvertCommandTests.moody, "--out", "OUT",
      ], "Moody 5-Moody 6.lua"
    ),
    // A fleet's report (the fleet being the inputs' folder, its one store current).
    ("fleet", ["status", "IN/", "--model", "IN/Items.xcdatamodeld", "--report", "OUT/report.json"], "report.json"),
    (
      "test",
      ["test", TestCommandTests.library.path, "--fixtures", Fixtures.coreData.path, "--junit", "OUT/junit.xml"],
      "junit.xml"
    ),
  ]

  @Test(arguments: commands.indices)
  func aKillLeavesTheInputsAndNothingButAWholeOutput(index: Int) throws {
    let (name, template, product) = Self.commands[index]
    let folder = try TemporaryDirectory()
    let inputs = try Self.inputs(in: folder)
    let before = try Self.files(in: inputs)
    let temporary = try folder.folder("tmp")
    func run(in out: URL) -> [String] {
      template.map {
        $0.replacingOccurrences(of: "IN/", with: inputs.path + "/").replacingOccurrences(of: "OUT", with: out.path)
      }
    }
    let environment = ["TMPDIR": temporary.path]
    // One run whole: the reference output, and how long the command takes.
    let reference = try folder.folder("reference")
    let started = Date()
    let whole = try MigrunProcess.run(run(in: reference), environment: environment)
    #expect(whole.status == 0, "\(name): \(whole.stdout)\(whole.stderr)")
    let length = Date().timeIntervalSince(started)
    var random = SeededRandom(seed: UInt64(62 + index))
    for attempt in 0..<3 {
      let out = try folder.folder("out\(attempt)")
      let moment = Double.random(in: 0..<length, using: &random)
      try Self.kill(run(in: out), after: moment, environment: environment)
      #expect(try Self.files(in: inputs) == before, "\(name), killed at \(moment) s: the inputs are as they were")
      let output = out.appendingPathComponent(product)
      if FileManager.default.fileExists(atPath: output.path) {
        #expect(try Self.same(output, as: reference, product), "\(name), killed at \(moment) s: a partial output")
        try FileManager.default.removeItem(at: output)
      }
      let rerun = try MigrunProcess.run(run(in: out), environment: environment)
      #expect(rerun.status == 0, "\(name), the rerun after a kill at \(moment) s: \(rerun.stderr)")
      #expect(try Self.same(output, as: reference, product), "\(name): the rerun's output is whole")
      let left = try FileManager.default.contentsOfDirectory(atPath: out.path)
      #expect(left == [product], "\(name), after a kill at \(moment) s and a rerun: \(left)")
      let scratch = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
      #expect(scratch.isEmpty, "\(name), after a kill at \(moment) s and a rerun, in TMPDIR: \(scratch)")
    }
  }

  /// Runs `migrun arguments` and kills it with SIGKILL after `seconds`.
  static func kill(_ arguments: [String], after seconds: Double, environment: [String: String]) throws {
    let process = Process()
    process.executableURL = MigrunProcess.executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    usleep(UInt32(seconds * 1_000_000))
    Foundation.kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  /// Every file below `folder` with its bytes.
  static func files(in folder: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    for case let path as String in FileManager.default.enumerator(atPath: folder.path) ?? .init() {
      let url = folder.appendingPathComponent(path)
      var isFolder: ObjCBool = false
      if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue {
        files[path] = try Data(contentsOf: url)
      }
    }
    return files
  }

  /// Whether `output` is the whole of what the reference run wrote: a SQLite store with the same
  /// export (but for a new store's own UUID), a fleet report that is a whole JSON document (it holds
  /// times), a file with the same bytes (a JUnit file without its times).
  static func same(_ output: URL, as reference: URL, _ product: String) throws -> Bool {
    let expected = reference.appendingPathComponent(product)
    switch output.pathExtension {
    case "sqlite":
      let exports = try [output, expected].map { try MigrunProcess.run(["export", $0.path]) }
      let uuid = /"uuid": "[0-9A-F-]+"/
      return exports[0].status == 0
        && exports[0].stdout.replacing(uuid, with: "") == exports[1].stdout.replacing(uuid, with: "")
    case "xml":
      let untimed = try [output, expected].map {
        try String(contentsOf: $0, encoding: .utf8).replacing(/time="[0-9.]+"/, with: "")
      }
      return untimed[0] == untimed[1]
    case _ where product == "report.json":
      return (try? JSONSerialization.jsonObject(with: Data(contentsOf: output))) != nil
    default:
      return FileManager.default.contents(atPath: output.path) == FileManager.default.contents(atPath: expected.path)
    }
  }
}
