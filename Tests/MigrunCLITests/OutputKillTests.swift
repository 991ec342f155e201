import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// kill -9 at random moments of each command that writes a file: under the output's name there is
/// afterwards nothing or the whole output, the input is unchanged, and a rerun completes.
@Suite struct OutputKillTests {
  /// What a whole output is: a store `inspect` reads, a JSON document, an XML document, or the
  /// bytes an uninterrupted run wrote.
  enum Whole: Sendable { case store, json, xml, sameText }

  /// Each command, with `OUT` for its output, and what a whole output of it is.
  static func campaign(in folder: TemporaryDirectory) throws -> (input: URL, runs: [([String], Whole)]) {
    let sample = try copyOfFixture(OutputFaultTests.sampleStore, into: folder)
    let export = folder.url.appendingPathComponent("sample.json")
    #expect(try MigrunProcess.run(["export", sample.path, "--out", export.path]).status == 0)
    let library = try OutputFaultTests.library(in: folder)
    let moody = try copyOfFixture(OutputFaultTests.moodyStore, into: folder)
    let history = ["--drop", "ACHANGE", "--drop", "ATRANSACTION", "--drop", "ATRANSACTIONSTRING"]
    return (
      sample,
      [
        (["export", sample.path, "--out", "OUT"], .sameText),
        (["salvage", sample.path, "--out", "OUT"], .store),
        (["copy", sample.path, "OUT", "--type", "xml"] + history, .store),
        (["import", export.path, "--out", "OUT", "--model", sample.path], .store),
        (["create", "OUT", "--model", OutputFaultTests.moody], .store),
        (["convert", OutputFaultTests.mapping, "--model", OutputFaultTests.moody, "--out", "OUT"], .sameText),
        (
          ["status", moody.deletingLastPathComponent().path, "--model", OutputFaultTests.moody, "--report", "OUT"],
          .json
        ),
        (["test", library.path, "--junit", "OUT"], .xml),
      ]
    )
  }

  @Test func aKillAtAnyMomentLeavesNothingOrTheWholeOutput() throws {
    let folder = try TemporaryDirectory()
    let (input, runs) = try Self.campaign(in: folder)
    let before = try Data(contentsOf: input)
    for (index, (arguments, whole)) in runs.enumerated() {
      let place = try folder.folder("run\(index)")
      // One run whole, for how long it takes: the kills land anywhere in it.
      let started = Date()
      let complete = place.appendingPathComponent("complete")
      let reference = try MigrunProcess.run(arguments.map { $0 == "OUT" ? complete.path : $0 })
      #expect([0, 10].contains(reference.status), "\(arguments): \(reference.stderr)")
      let length = max(Date().timeIntervalSince(started), 0.05)
      for attempt in 0..<4 {
        let out = place.appendingPathComponent("killed\(attempt)")
        let process = Process()
        process.executableURL = MigrunProcess.executable
        process.arguments = arguments.map { $0 == "OUT" ? out.path : $0 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(UInt32(Double.random(in: 0..<length) * 1_000_000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        if FileManager.default.fileExists(atPath: out.path) {
          #expect(try Self.isWhole(out, whole, like: complete), "\(arguments): a partial output under its name")
        } else {
          let rerun = try MigrunProcess.run(process.arguments ?? [])
          #expect([0, 10].contains(rerun.status), "\(arguments): the rerun after a kill: \(rerun.stderr)")
          #expect(try Self.isWhole(out, whole, like: complete), "\(arguments): the rerun's output")
        }
      }
    }
    #expect(try Data(contentsOf: input) == before)
  }

  static func isWhole(_ file: URL, _ whole: Whole, like complete: URL) throws -> Bool {
    switch whole {
    case .store: return try MigrunProcess.run(["inspect", file.path]).status == 0
    case .xml: return XMLParser(contentsOf: file)?.parse() == true
    case .json: return (try? JSONSerialization.jsonObject(with: Data(contentsOf: file))) != nil
    case .sameText: return try Data(contentsOf: file) == Data(contentsOf: complete)
    }
  }
}
