import Foundation
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

@Suite struct KillTests {
  /// kill -9 in the middle of a migration: the original is byte-identical, and the next run cleans
  /// up the working files and completes.
  @Test func killDuringTheCopyLeavesTheOriginalAndTheNextRunCompletes() throws {
    let folder = try TemporaryDirectory()
    try folder.write(
      #"<model><entity name="R"><attribute name="n" attributeType="Integer 64" defaultValueString="0"/></entity></model>"#,
      to: "R.xcdatamodeld/R.xcdatamodel/contents")
    try folder.write(
      #"<model><entity name="R"><attribute name="n" attributeType="Integer 64" defaultValueString="0" versionHashModifier="2"/></entity></model>"#,
      to: "R.xcdatamodeld/R 2.xcdatamodel/contents")
    // Slow on purpose (a busy loop per object), so the kill lands mid-copy.
    try folder.write(
      "return { R = { attributes = { n = function(src) local s = 0 for i = 1, 30000 do s = s + i end return src.n * 2 end } } }",
      to: "policies/R-R 2.lua")
    let bundle = folder.url.appendingPathComponent("R.xcdatamodeld")
    let store = try folder.folder("data").appendingPathComponent("r.sqlite")
    let created = try SQLiteStore.create(at: store, model: try ModelBundle(modelOrStoreAt: bundle).model(named: "R"))
    try created.write { writer in
      for index in 1...6000 {
        try writer.insert(
          StoredObject(id: ObjectID(entity: "R", primaryKey: Int64(index)), attributes: ["n": .integer(Int64(index))]))
      }
    }
    try created.close()
    let original = try Data(contentsOf: store)
    let arguments = [
      "migrate", store.path, "--model", bundle.path, "--policies", folder.url.appendingPathComponent("policies").path,
    ]

    let process = Process()
    process.executableURL = MigrunProcess.executable
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    var sawWorkingFile = false
    for _ in 0..<600 where process.isRunning {
      let names = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path)
      if names.contains(where: { $0.hasPrefix(".r.sqlite.migrun-") && $0.hasSuffix("step1") }) {
        sawWorkingFile = true
        break
      }
      usleep(20_000)
    }
    #expect(sawWorkingFile, "the migration was caught while writing its working copy")
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal)
    #expect(try Data(contentsOf: store) == original, "the original is byte-identical after kill -9")

    let rerun = try MigrunProcess.run(arguments)
    #expect(rerun.status == 0, "\(rerun.stderr)")
    let names = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path).sorted()
    #expect(names == ["r.sqlite", "r~.sqlite"], "the killed run's working files are gone")
    #expect(try Data(contentsOf: store.deletingLastPathComponent().appendingPathComponent("r~.sqlite")) == original)
  }
}
