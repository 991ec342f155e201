import Foundation
import GRDB
import TestSupport
import Testing

/// `status` and `migrate` over folders of stores: every store once, failures of their own, the
/// report and the JUnit file, shards that split the fleet, re-runs that finish what is left.
@Suite struct FleetCommandTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let stores = "objcio-core-data-moody/stores"

  struct Report: Decodable {
    struct Store: Decodable {
      let path: String
      let from: String?
      let to: String?
      let status: String
      let objects: Int?
      let error: String?
    }
    let migrated: Int
    let current: Int
    let failed: Int
    let stores: [Store]
  }

  /// A fleet: eight Moody stores of every version in two folders, another app's store (no path to
  /// Moody 6), a corrupt store, a backup, a SQLite file that is not a store and a text file.
  static func fleet(in folder: TemporaryDirectory) throws -> (root: URL, bystanders: [URL: Data]) {
    let root = folder.url.appendingPathComponent("fleet", isDirectory: true)
    let versions = ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"]
    for index in 0..<8 {
      let url = root.appendingPathComponent("user\(index % 2)/store\(index).sqlite")
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try FileManager.default.copyItem(
        at: Fixtures.url("\(stores)/\(versions[index % versions.count]).moody.sqlite"), to: url)
    }
    try FileManager.default.copyItem(
      at: Fixtures.url("coredataplus-samplemodels/SampleModel/Fixtures/SampleModel_V1.sqlite"),
      to: root.appendingPathComponent("user1/other-app.sqlite"))
    try Data("SQLite format 3\0 and then nothing".utf8).write(to: root.appendingPathComponent("user1/corrupt.sqlite"))
    try FileManager.default.copyItem(
      at: Fixtures.url("\(stores)/Moody 2.moody.sqlite"), to: root.appendingPathComponent("user0/old~.sqlite"))
    try makeDatabase(root.appendingPathComponent("user0/cache.db"), ["CREATE TABLE t (a)", "INSERT INTO t VALUES (1)"])
    try Data("notes".utf8).write(to: root.appendingPathComponent("notes.txt"))
    var bystanders: [URL: Data] = [:]
    for name in ["user0/old~.sqlite", "user0/cache.db", "notes.txt", "user1/corrupt.sqlite", "user1/other-app.sqlite"] {
      let url = root.appendingPathComponent(name)
      bystanders[url] = try Data(contentsOf: url)
    }
    return (root, bystanders)
  }

  @Test func aFolderMigratesStoreByStoreAndReportsEach() throws {
    let folder = try TemporaryDirectory()
    let (root, bystanders) = try Self.fleet(in: folder)
    let before = try MigrunProcess.run(["status", root.path, "--model", Self.moody])
    #expect(before.status == 1, "failures come first: \(before.stdout)")
    let report = folder.url.appendingPathComponent("report.json")
    let junit = folder.url.appendingPathComponent("report.xml")
    let run = try MigrunProcess.run([
      "migrate", root.path, "--model", Self.moody, "--jobs", "3", "--report", report.path, "--junit", junit.path,
    ])
    #expect(run.status == 1, "two stores fail: \(run.stdout) \(run.stderr)")
    let decoded = try JSONDecoder().decode(Report.self, from: Data(contentsOf: report))
    #expect((decoded.migrated, decoded.current, decoded.failed) == (8, 0, 2))
    #expect(decoded.stores.count == 10)
    #expect(decoded.stores.filter { $0.status == "migrated" }.allSatisfy { $0.to == "Moody 6" && $0.objects ?? 0 > 0 })
    let failed = decoded.stores.filter { $0.status == "failed" }.map { URL(fileURLWithPath: $0.path).lastPathComponent }
    #expect(failed.sorted() == ["corrupt.sqlite", "other-app.sqlite"])
    let other = decoded.stores.first { $0.path.hasSuffix("other-app.sqlite") }
    #expect(other?.error?.contains("has no entity of Moody's version Moody 6: it is not a store of this model") == true)
    // Nothing but the stores was touched; every migrated store kept its backup.
    for (url, bytes) in bystanders { #expect(try Data(contentsOf: url) == bytes, "\(url.lastPathComponent)") }
    for index in 0..<8 {
      #expect(
        FileManager.default.fileExists(
          atPath: root.appendingPathComponent("user\(index % 2)/store\(index)~.sqlite").path))
    }
    let xml = try String(contentsOf: junit, encoding: .utf8)
    #expect(xml.components(separatedBy: "<testcase ").count - 1 == 10)
    #expect(xml.contains(#"failures="2""#))
    // A re-run finishes what is left: every store is current now, the failures stay failures.
    let again = try MigrunProcess.run(["migrate", root.path, "--model", Self.moody, "--report", report.path])
    #expect(again.status == 1)
    let second = try JSONDecoder().decode(Report.self, from: Data(contentsOf: report))
    #expect((second.migrated, second.current, second.failed) == (0, 8, 2))
    #expect(again.stdout.contains("10 stores in"), "\(again.stdout)")
  }

  @Test func statusSaysWhatNeedsMigratingAcrossStores() throws {
    let folder = try TemporaryDirectory()
    let a = try copyOfFixture("\(Self.stores)/Moody 2.moody.sqlite", into: folder)
    let b = try copyOfFixture("\(Self.stores)/Moody 5.moody.sqlite", into: folder)
    let needs = try MigrunProcess.run(["status", a.path, b.path, "--model", Self.moody])
    #expect(needs.status == 10, "\(needs.stdout)")
    #expect(needs.stdout.contains("2 stores: 0 current, 2 need migrating, 0 failed"), "\(needs.stdout)")
    #expect(try MigrunProcess.run(["migrate", a.path, b.path, "--model", Self.moody, "--jobs", "2"]).status == 0)
    let current = try MigrunProcess.run(["status", a.path, b.path, "--model", Self.moody])
    #expect(current.status == 0, "\(current.stdout)")
  }

  /// A store given as an argument is named as given in every line; one found in a folder by its
  /// full path (docs/json.md).
  @Test func storesAreNamedAsGiven() throws {
    let folder = try TemporaryDirectory()
    let a = try copyOfFixture("\(Self.stores)/Moody 2.moody.sqlite", into: folder)
    let given = a.deletingLastPathComponent().lastPathComponent + "/" + a.lastPathComponent
    let inside = try folder.folder("more")
    let b = inside.appendingPathComponent("b.sqlite")
    try FileManager.default.copyItem(at: a, to: b)
    let run = try MigrunProcess.run(["status", given, "more", "--model", Self.moody, "--json"], in: folder.url)
    #expect(run.status == 10, "\(run.stdout)\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }.filter { $0["event"] as? String == "status" }
    #expect(lines.allSatisfy { $0["version"] as? String == "Moody 2" }, "\(run.stdout)")
    let stores = Set(lines.compactMap { $0["store"] as? String })
    #expect(stores == [given, b.resolvingSymlinksInPath().path] || stores == [given, b.path], "\(run.stdout)")
    let text = try MigrunProcess.run(["status", given, "--model", Self.moody], in: folder.url)
    #expect(text.stdout.hasPrefix("\(given): at Moody 2"), "\(text.status) \(text.stdout)\(text.stderr)")
  }

  /// Three machines each take their shard of the same folder; together they migrate every store
  /// once, and their reports merge into the fleet's.
  @Test func shardsSplitTheFleetAndTheirReportsMerge() throws {
    let folder = try TemporaryDirectory()
    let (root, _) = try Self.fleet(in: folder)
    var reports: [String] = []
    var seen: [String] = []
    for index in 0..<3 {
      let report = folder.url.appendingPathComponent("shard\(index).json").path
      let run = try MigrunProcess.run([
        "migrate", root.path, "--model", Self.moody, "--shard", "\(index)/3", "--jobs", "2", "--report", report,
      ])
      #expect(run.status == 0 || run.status == 1, "\(run.stderr)")
      seen += try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: report))).stores
        .map(\.path)
      reports.append(report)
    }
    #expect(seen.count == 10)
    #expect(Set(seen).count == 10, "every store exactly once")
    let merged = try MigrunProcess.run(["merge-reports"] + reports)
    #expect(merged.status == 1, "two stores failed")
    let fleet = try JSONDecoder().decode(Report.self, from: Data(merged.stdout.utf8))
    #expect((fleet.migrated, fleet.current, fleet.failed) == (8, 0, 2))
    #expect(fleet.stores.map(\.path) == seen.sorted())
    // Usage errors exit 64, before any store is touched: a shard out of range, no jobs, a report
    // that could not be written.
    let refused = try MigrunProcess.run(["migrate", root.path, "--model", Self.moody, "--shard", "3/3"])
    #expect(refused.status == 64)
    #expect(refused.errorLines.first == "migrun: error: --shard: give K/N with 0 ≤ K < N (e.g. 0/4), not '3/3'")
    let noJobs = try MigrunProcess.run(["migrate", root.path, "--model", Self.moody, "--jobs", "0"])
    #expect(noJobs.status == 64)
    let before = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
    let lost = try MigrunProcess.run([
      "migrate", root.path, "--model", Self.moody, "--report", "/no/such/dir/r.json",
    ])
    #expect(lost.status == 64)
    #expect(lost.stderr.contains("--report /no/such/dir/r.json: there is no folder /no/such/dir"), "\(lost.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == before, "nothing migrated")
  }

  /// docs/fleet.md's xargs recipe, run as it is written (migrun on PATH): every store once, the
  /// merged report and JUnit file written.
  @Test func theShellRecipeRunsAsWritten() throws {
    let doc = try String(
      contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/fleet.md"), encoding: .utf8)
    let start = try #require(doc.range(of: "<!-- recipe: xargs -->"))
    let end = try #require(doc.range(of: "<!-- end recipe -->"))
    let block = doc[start.upperBound..<end.lowerBound]
      .replacingOccurrences(of: "```sh", with: "").replacingOccurrences(of: "```", with: "")
    let folder = try TemporaryDirectory()
    let (root, _) = try Self.fleet(in: folder)
    let reports = folder.url.appendingPathComponent("reports", isDirectory: true)
    try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
    let script = folder.url.appendingPathComponent("recipe.sh")
    try Data(("set -e\n" + block).utf8).write(to: script)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [script.path]
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = MigrunProcess.executable.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
    environment["STORES"] = root.path
    environment["MODEL"] = Self.moody
    environment["REPORTS"] = reports.path
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 1, "merge-reports exits 1: two stores of the fleet fail")
    let fleet = try JSONDecoder().decode(
      Report.self, from: Data(contentsOf: reports.appendingPathComponent("fleet.json")))
    #expect((fleet.migrated, fleet.current, fleet.failed) == (8, 0, 2))
    #expect(Set(fleet.stores.map(\.path)).count == 10)
    #expect(FileManager.default.fileExists(atPath: reports.appendingPathComponent("fleet.xml").path))
  }

  /// With --json, one line per store event, and a last line with the totals.
  @Test func jsonGivesOneLinePerStoreEvent() throws {
    let folder = try TemporaryDirectory()
    let a = try copyOfFixture("\(Self.stores)/Moody 3.moody.sqlite", into: folder)
    let b = try copyOfFixture("\(Self.stores)/Moody 4.moody.sqlite", into: folder)
    let run = try MigrunProcess.run(["migrate", a.path, b.path, "--model", Self.moody, "--json"])
    #expect(run.status == 0, "\(run.stderr)")
    let lines = try run.jsonLines()
    #expect(lines.filter { $0["event"] as? String == "start" }.count == 2)
    #expect(lines.filter { $0["event"] as? String == "result" && $0["result"] as? String == "migrated" }.count == 2)
    #expect(lines.last?["event"] as? String == "summary")
    #expect(lines.last?["migrated"] as? Int == 2)
  }
}

extension FleetCommandTests {
  /// A fleet of nothing is an error (a CI job whose folder held no store must not pass), unless the
  /// run says it may be empty.
  @Test func aFolderWithoutStoresIsAnErrorUnlessAllowed() throws {
    let folder = try TemporaryDirectory()
    let empty = try folder.folder("empty")
    try Data("not a store".utf8).write(to: empty.appendingPathComponent("notes.txt"))
    for command in ["migrate", "status"] {
      let refused = try MigrunProcess.run([command, empty.path, "--model", Self.moody])
      #expect(refused.status == 1, "\(command): \(refused.stdout)\(refused.stderr)")
      #expect(refused.stderr.contains("no store in \(empty.path)"), "\(refused.stderr)")
      let allowed = try MigrunProcess.run([command, empty.path, "--model", Self.moody, "--allow-empty"])
      #expect(allowed.status == 0, "\(command): \(allowed.stderr)")
      #expect(allowed.stdout.contains("0 stores"), "\(allowed.stdout)")
    }
  }

  /// A store already at the destination is reported current while its app writes it: there is no
  /// work, so nothing waits for it or refuses it; the same store behind would be in use.
  @Test func aCurrentStoreItsAppHoldsIsCurrentNotInUse() throws {
    let folder = try TemporaryDirectory()
    let store = folder.url.appendingPathComponent("live.sqlite")
    try FileManager.default.copyItem(at: Fixtures.url("\(Self.stores)/Moody 5.moody.sqlite"), to: store)
    let migrated = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody, "--no-backup"])
    #expect(migrated.status == 0, "\(migrated.stderr)")
    // A write begun and not committed (a RESERVED lock): readers still read the file.
    let shell = try SQLiteShell(store, "PRAGMA journal_mode = DELETE;\nBEGIN IMMEDIATE;")
    defer { shell.close() }
    let bytes = try Data(contentsOf: store)
    let again = try MigrunProcess.run(["migrate", store.path, "--model", Self.moody])
    #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
    #expect(try Data(contentsOf: store) == bytes)
  }
}

extension FleetCommandTests {
  /// A store of the folder another process holds EXCLUSIVE (a writer in the middle of its commit):
  /// that store gets the in-use answer, naming the holder, and is left as it was; the others are
  /// done. With --wait, the run waits for the holder and migrates it too.
  @Test func aStoreHeldByAnotherProcessIsInUseAndTheOthersAreDone() throws {
    let folder = try TemporaryDirectory()
    let root = try folder.folder("fleet")
    let names = ["a", "b", "c"]
    for (name, version) in zip(names, ["Moody 2", "Moody 3", "Moody 4"]) {
      try FileManager.default.copyItem(
        at: Fixtures.url("\(Self.stores)/\(version).moody.sqlite"), to: root.appendingPathComponent("\(name).sqlite"))
    }
    let held = root.appendingPathComponent("b.sqlite")
    let shell = try SQLiteShell(held, "PRAGMA journal_mode = DELETE;\nBEGIN EXCLUSIVE;")
    defer { shell.close() }
    let bytes = try Data(contentsOf: held)
    let inUse = "\(held.path): the store is in use: process \(shell.pid) (sqlite3) holds a write lock"
    let status = try MigrunProcess.run(["status", root.path, "--model", Self.moody])
    #expect(status.status == 1 && status.stdout.contains("\(held.path): failed: \(inUse)"), "\(status.stdout)")
    #expect(status.stdout.contains("2 need migrating, 1 failed"), "\(status.stdout)")
    let report = folder.url.appendingPathComponent("report.json")
    let run = try MigrunProcess.run(["migrate", root.path, "--model", Self.moody, "--report", report.path])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let decoded = try JSONDecoder().decode(Report.self, from: Data(contentsOf: report))
    #expect((decoded.migrated, decoded.current, decoded.failed) == (2, 0, 1))
    let refused = decoded.stores.first { $0.path == held.path }
    #expect(refused?.error?.hasPrefix(inUse) == true, "\(String(describing: refused?.error))")
    #expect(!(refused?.error ?? "").contains("not a SQLite") && !(refused?.error ?? "").contains("damaged"))
    #expect(try Data(contentsOf: held) == bytes, "the held store is left as it was")
    let listing = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
    #expect(listing == ["a.sqlite", "a~.sqlite", "b.sqlite", "c.sqlite", "c~.sqlite"], "\(listing)")
    // The holder lets go a moment after the run starts waiting: the held store is migrated too.
    DispatchQueue.global().asyncAfter(deadline: .now() + 1) { shell.close() }
    let waited = try MigrunProcess.run(["migrate", root.path, "--model", Self.moody, "--wait", "120"])
    #expect(waited.status == 0, "\(waited.stdout)\(waited.stderr)")
    #expect(waited.stdout.contains("1 migrated") && waited.stdout.contains("2 current"), "\(waited.stdout)")
  }
}
