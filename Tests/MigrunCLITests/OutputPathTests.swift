import Foundation
import TestSupport
import Testing

/// Where a command may write: never over its input, an existing file it was not told to replace
/// (`--force`), through a symbolic link, or as if a folder were a store — each refused by name
/// before any work; a folder it cannot write in said to be one.
@Suite struct OutputPathTests {
  static let moody = OutputFaultTests.moody

  @Test func exportNeverReplacesItsStoreAndReplacesAnotherFileOnlyWithForce() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(OutputFaultTests.moodyStore, into: folder)
    let bytes = try Data(contentsOf: store)
    for force in [[], ["--force"]] {
      let onto = try MigrunProcess.run(["export", store.path, "--out", store.path] + force)
      #expect(onto.status == 1, "\(onto.stderr)")
      #expect(
        onto.errorLines == [
          "migrun: error: --out \(store.path): is \(store.path), which this command reads; give another file to write"
        ])
      #expect(try Data(contentsOf: store) == bytes)
    }
    let existing = try folder.write("keep me", to: "e.json")
    let refused = try MigrunProcess.run(["export", store.path, "--out", existing.path])
    #expect(refused.status == 1)
    #expect(
      refused.errorLines == [
        "migrun: error: --out \(existing.path): a file is already there; give --force to replace it, or another name"
      ])
    #expect(try String(contentsOf: existing, encoding: .utf8) == "keep me")
    let replaced = try MigrunProcess.run(["export", store.path, "--out", existing.path, "--force"])
    #expect(replaced.status == 0, "\(replaced.stderr)")
    #expect(try String(contentsOf: existing, encoding: .utf8).hasPrefix("{"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted().filter { $0.hasPrefix(".") } == [])
  }

  @Test func testReportsReplaceNoFileUnaskedAndNeverATestFile() throws {
    let folder = try TemporaryDirectory()
    let library = try OutputFaultTests.library(in: folder)
    let testFile = library.appendingPathComponent("one_test.lua")
    let source = try String(contentsOf: testFile, encoding: .utf8)
    for option in ["--junit", "--coverage"] {
      let existing = try folder.write("keep me", to: "report\(option)")
      let refused = try MigrunProcess.run(["test", library.path, option, existing.path])
      #expect(refused.status == 1)
      #expect(refused.stderr.contains("\(option) \(existing.path): a file is already there; give --force"))
      #expect(refused.stdout.isEmpty, "refused before any test ran: \(refused.stdout)")
      #expect(try String(contentsOf: existing, encoding: .utf8) == "keep me")
      #expect(try MigrunProcess.run(["test", library.path, option, existing.path, "--force"]).status == 0)
      #expect(try String(contentsOf: existing, encoding: .utf8) != "keep me")
      let onTest = try MigrunProcess.run(["test", library.path, option, testFile.path, "--force"])
      #expect(onTest.status == 1)
      #expect(onTest.stderr.contains("which this command reads"), "\(onTest.stderr)")
      #expect(try String(contentsOf: testFile, encoding: .utf8) == source)
    }
  }

  /// A symbolic link, dangling or not, is never written through: the file it names is not made.
  @Test func outputsThroughSymbolicLinksAreRefused() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(OutputFaultTests.moodyStore, into: folder)
    let target = folder.url.appendingPathComponent("target.sqlite")
    let link = folder.url.appendingPathComponent("link.sqlite")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
    for arguments in [
      ["create", link.path, "--model", Self.moody], ["export", store.path, "--out", link.path, "--force"],
      ["copy", store.path, link.path, "--type", "xml"], ["salvage", store.path, "--out", link.path],
    ] {
      let result = try MigrunProcess.run(arguments)
      #expect(result.status == 1, "\(arguments)")
      #expect(result.stderr.contains("\(link.path): is a symbolic link; migrun does not write through links"))
      #expect(!FileManager.default.fileExists(atPath: target.path), "\(arguments)")
    }
  }

  /// A fleet's report replaces the report of a run before, never a store of the run.
  @Test func aFleetsReportNeverReplacesAStoreOfTheRun() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(OutputFaultTests.moodyStore, into: folder)
    let bytes = try Data(contentsOf: store)
    let stores = store.deletingLastPathComponent().path
    for option in ["--report", "--junit"] {
      let result = try MigrunProcess.run(["status", stores, "--model", Self.moody, option, store.path])
      #expect(result.status == 1, "\(result.stderr)")
      #expect(result.stderr.contains("\(option) \(store.path): is \(store.path), which this command reads"))
      #expect(try Data(contentsOf: store) == bytes)
    }
    let report = folder.url.appendingPathComponent("r.json")
    for _ in 0..<2 {
      let run = try MigrunProcess.run(["status", stores, "--model", Self.moody, "--report", report.path])
      #expect(run.status == 10, "\(run.stderr)")
    }
    #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: report)) is [String: Any])
  }

  /// `check` of a folder says it is one, and recommends no salvage of it.
  @Test func checkOfAFolderSaysItIsAFolder() throws {
    let folder = try TemporaryDirectory()
    let result = try MigrunProcess.run(["check", folder.url.path])
    #expect(result.status == 1)
    #expect(result.stderr.contains("\(folder.url.path): a folder, not a store file"), "\(result.stderr)")
    #expect(!result.stderr.contains("salvage") && result.stdout.isEmpty)
  }

  /// A folder migrun may not write in, as a user without the right (not root): "permission denied"
  /// naming the folder, before any work; a read-only file system, the same.
  @Test func aFolderThatCannotBeWrittenInIsNamed() throws {
    let folder = try TemporaryDirectory()
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.url.path)
    let store = try copyOfFixture(OutputFaultTests.moodyStore, into: folder)
    let locked = try folder.folder("locked")
    try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked.path)
    for arguments in [
      ["create", "\(locked.path)/n.sqlite", "--model", Self.moody],
      ["export", store.path, "--out", "\(locked.path)/e.json"],
      ["copy", store.path, "\(locked.path)/c.xml", "--type", "xml"],
    ] {
      let result: MigrunProcess.Result
      if getuid() == 0 {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        result = try MigrunProcess.run(
          ["--reuid=nobody", "--regid=nogroup", "--clear-groups", MigrunProcess.executable.path] + arguments,
          program: "/usr/bin/setpriv")
      } else {
        result = try MigrunProcess.run(arguments)
      }
      #expect(result.status == 1, "\(arguments): \(result.stderr)")
      #expect(
        result.stderr.contains("permission denied: cannot write in the folder \(locked.path)"),
        "\(arguments): \(result.stderr)")
    }
  }

  /// `create` writes through a hidden working file: one left by a killed run is no obstacle
  /// (kills themselves: `OutputKillTests`).
  @Test func createWritesThroughAWorkingFile() throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("n.sqlite")
    try folder.write("half a store", to: ".n.sqlite.migrun-create")
    let created = try MigrunProcess.run(["create", store.path, "--model", Self.moody])
    #expect(created.status == 0, "\(created.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["n.sqlite"])
    #expect(try MigrunProcess.run(["inspect", store.path]).status == 0)
  }
}
