import Foundation
import TestSupport
import Testing

/// Every command's output written as `migrate` writes its store: a full disk or a full standard
/// output is exit 12 with a message, never a crash or output lost with exit 0; nothing partial is
/// left under a final name, and no hidden working file behind.
@Suite(.serialized) struct OutputFaultTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let moodyStore = "objcio-core-data-moody/stores/Moody 2.moody.sqlite"
  static let sampleStore = "coredataplus-samplemodels/SampleModel2/Fixtures/SampleModel2_V1.sqlite"
  static let mapping = Fixtures.url("objcio-core-data-moody/mappings/Moody 5-Moody 6.xcmappingmodel").path

  /// A library of one module and one passing test of it, for `test --junit/--coverage`.
  static func library(in folder: TemporaryDirectory) throws -> URL {
    try folder.write("return { one = function() return 1 end }\n", to: "lib/one.lua")
    try folder.write(
      "local m = require(\"one\")\ntest(\"one\", function() expect(m.one()):equals(1) end)\n", to: "lib/one_test.lua")
    return folder.url.appendingPathComponent("lib")
  }

  /// Fills the file system at `mountPoint` with a file `filler`, leaving `free` bytes or none.
  static func fill(_ mountPoint: URL, leaving free: Int = 0) throws {
    let filler = mountPoint.appendingPathComponent("filler")
    _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
    let handle = try FileHandle(forWritingTo: filler)
    let block = Data(count: 4096)
    var written: UInt64 = 0
    while (try? handle.write(contentsOf: block)) != nil { written += 4096 }
    try handle.truncate(atOffset: written >= UInt64(free) ? written - UInt64(free) : 0)
    try handle.close()
  }

  /// Each command's output to a full standard output: exit 12 and one message saying so.
  @Test(arguments: [
    ["inspect", "STORE"], ["inspect", "STORE", "--json"], ["check", "STORE"], ["check", "STORE", "--json"],
    ["status", "STORE", "--model", moody, "--json"], ["status", "STORE", "--model", moody], ["hash", moody],
    ["convert", mapping, "--model", moody], ["export", "STORE"], ["salvage", "STORE", "--out", "OUT", "--json"],
    ["plan", "STORE", "--model", moody], ["--help"],
  ])
  func outputToAFullStandardOutputIsExit12(_ arguments: [String]) throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(Self.moodyStore, into: folder).path
    let out = folder.url.appendingPathComponent("out.sqlite").path
    let full = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
    let result = try MigrunProcess.run(
      arguments.map { $0 == "STORE" ? store : $0 == "OUT" ? out : $0 }, standardOutput: full)
    #expect(result.status == 12, "\(arguments): \(result.stderr)")
    #expect(
      result.errorLines.last == "migrun: error: cannot write to standard output: no space left on the disk; the output "
        + "is incomplete — free some space, or send it elsewhere", "\(arguments): \(result.stderr)")
  }

  /// Stores, exports, reports, JUnit, coverage and converted mappings written to a disk that fills:
  /// exit 12 naming the file, nothing under its name, no working file left, the input unchanged.
  @Test func outputsToAFullDiskAreExit12AndLeaveNothing() throws {
    let folder = try TemporaryDirectory()
    let sample = try copyOfFixture(Self.sampleStore, into: folder)
    let moodyStore = try copyOfFixture(Self.moodyStore, into: folder)
    let export = folder.url.appendingPathComponent("sample.json")
    #expect(try MigrunProcess.run(["export", sample.path, "--out", export.path]).status == 0)
    // Its persistent history an XML store has no place for.
    let history = ["--drop", "ACHANGE", "--drop", "ATRANSACTION", "--drop", "ATRANSACTIONSTRING"]
    let xml = folder.url.appendingPathComponent("sample.xml")
    #expect(try MigrunProcess.run(["copy", sample.path, xml.path, "--type", "xml"] + history).status == 0)
    let library = try Self.library(in: folder)
    let model = sample.path
    guard let tiny = try DeviceStoreTests.tinyFileSystem("1m", in: folder, test: "outputs to a full disk") else {
      return
    }
    defer { DeviceStoreTests.unmount(tiny) }
    let place = tiny.path
    // Part way: the disk fills while each is written.
    try Self.fill(tiny, leaving: 64 << 10)
    try Self.expectFull(
      [
        ["export", sample.path, "--out", "\(place)/e.json"],
        ["salvage", sample.path, "--out", "\(place)/s.sqlite"],
        ["copy", sample.path, "\(place)/c.xml", "--type", "xml"] + history,
        ["copy", xml.path, "\(place)/c.sqlite", "--model", model],
        ["import", export.path, "--out", "\(place)/i.sqlite", "--model", model],
      ], in: tiny)
    // No room at all: the small outputs.
    try Self.fill(tiny)
    try Self.expectFull(
      [
        ["create", "\(place)/n.sqlite", "--model", Self.moody],
        ["convert", Self.mapping, "--model", Self.moody, "--out", "\(place)/m.lua"],
        ["status", moodyStore.deletingLastPathComponent().path, "--model", Self.moody, "--report", "\(place)/r.json"],
        ["test", library.path, "--junit", "\(place)/j.xml"],
        ["test", library.path, "--coverage", "\(place)/c.info"],
        ["export", moodyStore.path, "--out", "\(place)/e.json"],
      ], in: tiny)
  }

  /// The temporary folder full (TMPDIR on a full disk): `verify`'s made-up stores, `review`'s copy
  /// and a policy test's `migrate{ store = … }` copy cannot be written — exit 12 saying so, never a
  /// version, a review or a test reported failed for it (verify said "0 of 5 versions reach").
  @Test func aFullTemporaryFolderIsExit12AndNoFinding() throws {
    let folder = try TemporaryDirectory()
    let store = try copyOfFixture(Self.moodyStore, into: folder)
    try folder.write(
      """
      test("migrates", function()
        local out = migrate { store = "\(store.lastPathComponent)", model = "Moody.xcdatamodeld" }
        expect(#out.Mood):equals(4)
      end)
      """, to: "lib/store_test.lua")
    try FileManager.default.copyItem(at: store, to: folder.url.appendingPathComponent("lib/" + store.lastPathComponent))
    guard let tiny = try DeviceStoreTests.tinyFileSystem("1m", in: folder, test: "a full temporary folder") else {
      return
    }
    defer { DeviceStoreTests.unmount(tiny) }
    try Self.fill(tiny)
    let models = URL(fileURLWithPath: Self.moody).deletingLastPathComponent().path
    for arguments in [
      ["verify", Self.moody],
      ["review", store.path, "--model", Self.moody, "--out", folder.url.appendingPathComponent("r.html").path],
      ["test", folder.url.appendingPathComponent("lib").path, "--fixtures", models],
    ] {
      let result = try MigrunProcess.run(arguments, environment: ["TMPDIR": tiny.path])
      #expect(result.status == 12, "\(arguments[0]): \(result.status) \(result.stdout)\(result.stderr)")
      #expect(
        (result.stdout + result.stderr).contains(arguments[0] == "test" ? "met a full disk" : "temporary folder"),
        "\(arguments[0]): \(result.stdout)\(result.stderr)")
      #expect(!result.stdout.contains("0 of"), "\(arguments[0]): \(result.stdout)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: tiny.path) == ["filler"], "\(arguments[0])")
    }
  }

  static func expectFull(_ runs: [[String]], in tiny: URL) throws {
    for arguments in runs {
      let result = try MigrunProcess.run(arguments)
      #expect(result.status == 12, "\(arguments): \(result.stdout)\(result.stderr)")
      #expect(result.errorLines.count == 1, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains("not enough free space on its disk; nothing was written"), "\(result.stderr)")
      #expect(!result.stderr.contains("SQLite error"), "\(result.stderr)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: tiny.path) == ["filler"], "\(arguments)")
    }
  }
}
