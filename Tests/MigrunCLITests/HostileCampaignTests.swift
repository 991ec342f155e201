import Foundation
import TestSupport
import Testing

/// The standing hostile suite (issue 69): each campaign is one kind of attack run against every
/// command it can reach — not one test per report — through the doors every command shares: the
/// door in (`InputFile`), the door out (`OutputFile`, `ReadFiles`) and the door to the terminal
/// (`StandardOutput`). A campaign's case passes when the command ends (a hang is exit 124/137 from
/// `timeout`), refuses with the reason named, and every file of the scene is as it was.
@Suite struct HostileCampaignTests {
  static let fixtureModel = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
  static let fixtureStore = "objcio-core-data-moody/stores/Moody 2.moody.sqlite"
  static let fixtureMapping = Fixtures.url("objcio-core-data-moody/mappings/Moody 2-Moody 3.xcmappingmodel")

  /// A store with a committed `-wal`, a model, a mapping model and a policy folder (with a module a
  /// test requires), all copies in a folder of their own, and a folder outside with a secret.
  struct Scene {
    let root: TemporaryDirectory
    let folder: URL
    let store: URL
    let model: URL
    let mapping: URL
    let policies: URL
    let outside: URL

    init() throws {
      root = try TemporaryDirectory()
      folder = try root.folder("work")
      store = try writableCopyOfFixture(HostileCampaignTests.fixtureStore, in: folder)
      model = folder.appendingPathComponent("Moody.xcdatamodeld")
      try FileManager.default.copyItem(at: HostileCampaignTests.fixtureModel, to: model)
      mapping = folder.appendingPathComponent("Moody 2-Moody 3.xcmappingmodel")
      try FileManager.default.copyItem(at: HostileCampaignTests.fixtureMapping, to: mapping)
      policies = try root.folder("work/policies")
      try Data("return { twice = function(x) return 2 * x end }\n".utf8)
        .write(to: policies.appendingPathComponent("helper.lua"))
      try Data(
        """
        local helper = require("helper")
        test("twice", function() expect(helper.twice(2)).to_be(4) end)

        """.utf8
      ).write(to: policies.appendingPathComponent("helper_test.lua"))
      outside = try root.folder("outside")
      try Data("secret\n".utf8).write(to: outside.appendingPathComponent("secret.txt"))
    }

    func path(_ relative: String) -> String { folder.appendingPathComponent(relative).path }

    /// Every regular file under the scene with its bytes, and every other entry's kind.
    func files() throws -> [String: Data] {
      var found: [String: Data] = [:]
      let enumerator = FileManager.default.enumerator(atPath: root.url.path)
      while let relative = enumerator?.nextObject() as? String {
        let path = root.url.appendingPathComponent(relative).path
        var info = stat()
        guard lstat(path, &info) == 0 else { continue }
        switch info.st_mode & S_IFMT {
        case S_IFREG: found[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        case S_IFDIR: found[relative] = Data("folder".utf8)
        default: found[relative] = Data("other \(info.st_mode & S_IFMT)".utf8)
        }
      }
      return found
    }

    /// Runs migrun in the scene's folder, bounded: a hang ends as exit 124 (or 137).
    func migrun(_ arguments: [String], environment: [String: String] = [:]) throws -> MigrunProcess.Result {
      try MigrunProcess.run(
        ["--kill-after=5", "60", MigrunProcess.executable.path] + arguments, in: folder, program: "/usr/bin/timeout",
        environment: environment)
    }
  }

  /// A case of a campaign: what it runs, and words its refusal must hold.
  struct Case: CustomTestStringConvertible, Sendable {
    let arguments: @Sendable (Scene) -> [String]
    let says: String
    let name: String

    init(_ name: String, says: String, _ arguments: @Sendable @escaping (Scene) -> [String]) {
      self.name = name
      self.says = says
      self.arguments = arguments
    }

    var testDescription: String { name }
  }

  // MARK: - Outputs onto inputs

  static let outputsOntoInputs: [Case] = [
    Case("review onto the store's -wal", says: "which this command read") {
      ["review", $0.store.path, "--model", $0.model.path, "--out", $0.store.path + "-wal", "--force"]
    },
    Case("export onto the store's -wal", says: "which this command read") {
      ["export", $0.store.path, "--model", $0.model.path, "--out", $0.store.path + "-wal", "--force"]
    },
    Case("export onto the store's -journal", says: "which this command read") {
      ["export", $0.store.path, "--model", $0.model.path, "--out", $0.store.path + "-journal", "--force"]
    },
    Case("export onto the store itself", says: "which this command read") {
      ["export", $0.store.path, "--model", $0.model.path, "--out", $0.store.path, "--force"]
    },
    Case("diagram onto a version's contents", says: "which this command read") {
      ["diagram", $0.model.path, "--out", $0.path("Moody.xcdatamodeld/Moody 2.xcdatamodel/contents")]
    },
    Case("lint's baseline onto a version's contents", says: "which this command read") {
      ["lint", $0.model.path, "--write-baseline", $0.path("Moody.xcdatamodeld/Moody 6.xcdatamodel/contents")]
    },
    Case("convert onto the mapping model's own file", says: "which this command read") {
      [
        "convert", $0.mapping.path, "--model", $0.model.path, "--out",
        $0.mapping.appendingPathComponent("xcmapping.xml").path, "--force",
      ]
    },
    Case("test's JUnit onto a module a test requires", says: "which this command read") {
      ["test", $0.policies.path, "--junit", $0.policies.appendingPathComponent("helper.lua").path, "--force"]
    },
    Case("test's coverage onto a test file", says: "which this command read") {
      ["test", $0.policies.path, "--coverage", $0.policies.appendingPathComponent("helper_test.lua").path, "--force"]
    },
    Case("salvage onto the store's -wal", says: "which this command read") {
      ["salvage", $0.store.path, "--out", $0.store.path + "-wal", "--model", $0.model.path]
    },
    Case("copy onto the store's -shm", says: "which this command read") {
      ["copy", $0.store.path, $0.store.path + "-shm", "--type", "xml", "--model", $0.model.path]
    },
    Case("export onto a FIFO", says: "is a FIFO, not a regular file") {
      ["export", $0.store.path, "--model", $0.model.path, "--out", $0.path("fifo"), "--force"]
    },
    // Device nodes made in the scene (as /dev/null and /dev/full are): a failure replaces nothing of the machine's.
    Case("export onto a null device", says: "is a device, not a regular file") {
      ["export", $0.store.path, "--model", $0.model.path, "--out", $0.path("null"), "--force"]
    },
    Case("export onto a full device", says: "is a device, not a regular file") {
      ["export", $0.store.path, "--model", $0.model.path, "--out", $0.path("full"), "--force"]
    },
    Case("review onto a FIFO", says: "is a FIFO, not a regular file") {
      ["review", $0.store.path, "--model", $0.model.path, "--out", $0.path("fifo"), "--force"]
    },
  ]

  /// No output replaces one of the command's inputs (a store's sidecar included), or anything not a
  /// regular file, `--force` or not: refused by name, every file of the scene as it was.
  @Test(arguments: outputsOntoInputs)
  func anOutputNeverReplacesAnInputOrANonFile(_ attack: Case) throws {
    let scene = try Scene()
    try SQLiteShell.commitIntoWAL(scene.store, "UPDATE ZMOOD SET ZCOLORS = ZCOLORS WHERE Z_PK = 1;")
    #expect(mkfifo(scene.path("fifo"), 0o644) == 0)
    // makedev(1, 3) and makedev(1, 7): the old encoding holds for device numbers below 256.
    #expect(mknod(scene.path("null"), S_IFCHR | 0o666, (1 << 8) | 3) == 0)
    #expect(mknod(scene.path("full"), S_IFCHR | 0o666, (1 << 8) | 7) == 0)
    let before = try scene.files()
    let result = try scene.migrun(attack.arguments(scene))
    #expect(result.status == 1, "\(result.status): \(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains(attack.says), "\(result.stderr)")
    #expect(try scene.files() == before, "a file of the scene changed")
  }

  // MARK: - Inputs that are not files

  static let storeCommands: [Case] = [
    Case("status", says: "is a FIFO") { ["status", $0.path("fifo"), "--model", $0.model.path] },
    Case("inspect", says: "is a FIFO") { ["inspect", $0.path("fifo"), "--model", $0.model.path] },
    Case("check", says: "is a FIFO") { ["check", $0.path("fifo"), "--model", $0.model.path] },
    Case("plan", says: "is a FIFO") { ["plan", $0.path("fifo"), "--model", $0.model.path] },
    Case("migrate", says: "is a FIFO") { ["migrate", $0.path("fifo"), "--model", $0.model.path] },
    Case("export", says: "is a FIFO") { ["export", $0.path("fifo"), "--model", $0.model.path] },
    Case("copy", says: "is a FIFO") { ["copy", $0.path("fifo"), $0.path("out.xml"), "--type", "xml"] },
    Case("salvage", says: "is a FIFO") { ["salvage", $0.path("fifo"), "--out", $0.path("out.sqlite")] },
    Case("review", says: "is a FIFO") { ["review", $0.path("fifo"), "--model", $0.model.path] },
    Case("hash of a model", says: "is a FIFO") { ["hash", $0.path("fifo")] },
    Case("--model", says: "is a FIFO") { ["status", $0.store.path, "--model", $0.path("fifo")] },
    Case("import", says: "is a FIFO") { ["import", $0.path("fifo"), "--model", $0.model.path, "--out", "x.sqlite"] },
    Case("convert", says: "is a FIFO") { ["convert", $0.path("fifo.cdm"), "--model", $0.model.path] },
    Case("lint's baseline", says: "is a FIFO") { ["lint", $0.model.path, "--baseline", $0.path("fifo")] },
    Case("merge-reports", says: "is a FIFO") { ["merge-reports", $0.path("fifo")] },
  ]

  /// A FIFO given where a file is read never blocks a command: it ends, refusing it by name.
  @Test(arguments: storeCommands)
  func aFIFOGivenAsAnInputIsRefusedNotWaitedOn(_ attack: Case) throws {
    let scene = try Scene()
    #expect(mkfifo(scene.path("fifo"), 0o644) == 0)
    #expect(mkfifo(scene.path("fifo.cdm"), 0o644) == 0)
    let result = try scene.migrun(attack.arguments(scene))
    #expect(result.status == 1, "\(result.status): \(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains(attack.says), "\(result.stderr)")
  }

  /// A FIFO, a link and a store under a fleet's folder: the store's status is told, the other two
  /// named as failures, never opened; a FIFO planted as a scratch folder's `.owner` in the
  /// temporary folder is never opened either.
  @Test func aFleetFolderAndTheTemporaryFolderWithFIFOsEnd() throws {
    let scene = try Scene()
    let fleet = try scene.root.folder("fleet")
    try FileManager.default.copyItem(at: scene.store, to: fleet.appendingPathComponent("a.sqlite"))
    #expect(mkfifo(fleet.appendingPathComponent("b.sqlite").path, 0o644) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: fleet.appendingPathComponent("c.sqlite").path, withDestinationPath: scene.store.path)
    let temporary = try scene.root.folder("tmp")
    let planted = try scene.root.folder("tmp/migrun-read-planted")
    #expect(mkfifo(planted.appendingPathComponent(".owner").path, 0o644) == 0)
    let result = try scene.migrun(
      ["status", fleet.path, "--model", scene.model.path], environment: ["TMPDIR": temporary.path])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("a.sqlite: at Moody 2; needs migrating"), "\(result.stdout)\(result.stderr)")
    let all = result.stdout + result.stderr
    #expect(all.contains("b.sqlite") && all.contains("FIFO"), "\(all)")
    #expect(all.contains("c.sqlite") && all.contains("symbolic link"), "\(all)")
    // A store with committed transactions in its -wal and no -shm is read from a copy in a scratch
    // folder: making one sweeps the abandoned ones, and the planted FIFO is passed over.
    try SQLiteShell.commitIntoWAL(scene.store, "UPDATE ZMOOD SET ZRATING = 3 WHERE Z_PK = 1;")
    try FileManager.default.removeItem(atPath: scene.store.path + "-shm")
    let inspect = try scene.migrun(
      ["inspect", scene.store.path, "--model", scene.model.path], environment: ["TMPDIR": temporary.path])
    #expect(inspect.status == 0, "\(inspect.status): \(inspect.stdout)\(inspect.stderr)")
  }

  /// Files a policy folder holds — a chain, a step file, a test, a module — that are links to a
  /// file outside are refused by name; the file outside is never read or quoted.
  @Test func filesFoundInAPolicyFolderAreNeverFollowedOutOfIt() throws {
    let scene = try Scene()
    let secret = scene.outside.appendingPathComponent("secret.txt").path
    let links = [
      ("chain", ["plan", scene.store.path, "--model", scene.model.path, "--policies", scene.policies.path]),
      (
        "Moody 2-Moody 3.lua",
        ["plan", scene.store.path, "--model", scene.model.path, "--policies", scene.policies.path]
      ),
      ("leak_test.lua", ["test", scene.policies.path]),
      (
        "Moody 2-Moody 3.stage.lua",
        [
          "migrate", scene.store.path, "--model", scene.model.path, "--policies", scene.policies.path, "--to",
          "Moody 3", "--dry-run",
        ]
      ),
    ]
    for (name, arguments) in links {
      let link = scene.policies.appendingPathComponent(name).path
      try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: secret)
      let result = try scene.migrun(arguments)
      #expect(result.status == 1, "\(name): \(result.status) \(result.stdout)\(result.stderr)")
      #expect(!(result.stdout + result.stderr).contains("secret"), "\(name): \(result.stdout)\(result.stderr)")
      #expect((result.stdout + result.stderr).contains("symbolic link"), "\(name): \(result.stdout)\(result.stderr)")
      try FileManager.default.removeItem(atPath: link)
    }
  }

  /// A chain with a byte that is not UTF-8 is an error naming the file and line — never passed over
  /// for Core Data's direct step.
  @Test func aChainThatIsNotUTF8IsRefusedWithItsLine() throws {
    let scene = try Scene()
    try Data("Moody 2\nMoody 3\nMo\u{00F6}dy 4\n".utf8).write(to: scene.policies.appendingPathComponent("chain"))
    var bytes = try Data(contentsOf: scene.policies.appendingPathComponent("chain"))
    bytes = Data(bytes.map { $0 == 0xC3 ? 0xF6 : $0 }.filter { $0 != 0xB6 })
    try bytes.write(to: scene.policies.appendingPathComponent("chain"))
    let result = try scene.migrun([
      "plan", scene.store.path, "--model", scene.model.path, "--policies", scene.policies.path,
    ])
    #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("chain: line 3:") && result.stderr.contains("not UTF-8"), "\(result.stderr)")
  }

  // MARK: - Trust

  /// A project file another user owns, or one in a folder anyone may write, is not obeyed: a
  /// warning names it, and the command runs on its own options.
  @Test func aProjectFileAnotherUserOwnsIsIgnoredWithAWarning() throws {
    let scene = try Scene()
    let project = scene.root.url.appendingPathComponent(".migrun.yml")
    try Data("model: /nowhere/planted.xcdatamodeld\n".utf8).write(to: project)
    #expect(chown(project.path, 54_321, 54_321) == 0)
    let planted = try scene.migrun(["status", scene.store.path, "--model", scene.model.path])
    #expect(planted.stderr.contains("is not read: another user (uid 54321) owns it"), "\(planted.stderr)")
    #expect(planted.status == 10, "\(planted.stdout)\(planted.stderr)")

    #expect(chown(project.path, geteuid(), getegid()) == 0)
    #expect(chmod(scene.root.url.path, 0o777) == 0)
    let open = try scene.migrun(["status", scene.store.path, "--model", scene.model.path])
    #expect(open.stderr.contains("is writable by anyone"), "\(open.stderr)")
    #expect(chmod(scene.root.url.path, 0o755) == 0)
    // The user's own file, in a folder of the user's own, is obeyed (its bad model named).
    let own = try scene.migrun(["config"])
    #expect(own.stdout.contains("planted.xcdatamodeld"), "\(own.stdout)\(own.stderr)")
  }

  // MARK: - Lines printed

  /// A store whose file name holds an escape sequence and a line feed: every command that names it
  /// shows the name escaped — no control byte reaches the terminal, no line is forged.
  @Test func namesWithEscapeSequencesNeverReachTheTerminalRaw() throws {
    let scene = try Scene()
    let forged = scene.folder.appendingPathComponent("evil\u{1B}[2K\rMoody.sqlite\nat Moody 6; current")
    try FileManager.default.copyItem(at: scene.store, to: forged)
    let commands: [[String]] = [
      ["status", forged.path, "--model", scene.model.path],
      ["check", forged.path, "--model", scene.model.path],
      ["plan", forged.path, "--model", scene.model.path],
      ["inspect", forged.path, "--model", scene.model.path],
      ["migrate", forged.path, "--model", scene.model.path, "--dry-run"],
      ["salvage", forged.path, "--out", scene.path("salvaged.sqlite"), "--model", scene.model.path],
      ["check", scene.folder.path, "--model", scene.model.path],
      ["status", scene.folder.path, "--model", scene.model.path],
      ["status", scene.path("missing\u{1B}]0;title\u{07}.sqlite"), "--model", scene.model.path],
    ]
    for arguments in commands {
      let result = try scene.migrun(arguments)
      let all = result.stdout + result.stderr
      #expect(!all.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" }, "\(arguments[0]): \(all)")
      #expect(!all.split(separator: "\n").contains { $0.hasPrefix("at Moody 6; current") }, "\(arguments[0]): \(all)")
    }
  }
}
