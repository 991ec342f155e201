import Foundation
import GRDB
import MigrunStore
import TestSupport
import Testing

/// Files planted beside a store under the names migrun writes there — its lock, swap journal,
/// working copies, backups — are never trusted: refused by name, never followed, read as an
/// instruction, truncated or removed. Stores arrive next to whatever files came with them.
@Suite struct PlantedFileTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
  static let moodyStore = "objcio-core-data-moody/stores/Moody.moody.sqlite"

  /// A store in a folder of its own with a sibling file, and a folder outside with a file of its own.
  struct Scene {
    let root: TemporaryDirectory
    let folder: URL
    let store: URL
    let outside: URL

    init() throws {
      root = try TemporaryDirectory()
      folder = try root.folder("place")
      store = try writableCopyOfFixture(PlantedFileTests.moodyStore, in: folder)
      try Data("the user's notes\n".utf8).write(to: folder.appendingPathComponent("notes.txt"))
      outside = try root.folder("outside")
      try Data("secret\n".utf8).write(to: outside.appendingPathComponent("secret.txt"))
    }

    func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    /// Every entry under the scene, by path: a file's bytes, a link's target, a folder's mark —
    /// nothing followed.
    func entries() throws -> [String: Data] {
      var found: [String: Data] = [:]
      var pending = [folder, outside].map(\.path)
      while let path = pending.popLast() {
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
          let entry = path + "/" + name
          switch WorkingFiles.entry(at: entry) {
          case .symlink:
            found[entry] = Data(("link:" + (try FileManager.default.destinationOfSymbolicLink(atPath: entry))).utf8)
          case .file: found[entry] = try Data(contentsOf: URL(fileURLWithPath: entry))
          case .folder:
            found[entry] = Data("folder".utf8)
            pending.append(entry)
          default: found[entry] = Data("other".utf8)
          }
        }
      }
      return found
    }

    func migrun(_ arguments: [String]) throws -> MigrunProcess.Result {
      // Bounded: a hang is a failure of its own (exit 124; 137 when TERM did not end it — a process
      // blocked opening a FIFO, with TERM masked as the test runner spawns it), never a stuck suite.
      try MigrunProcess.run(
        ["--kill-after=5", "120", MigrunProcess.executable.path] + arguments, program: "/usr/bin/timeout")
    }

    func migrate(_ more: [String] = []) throws -> MigrunProcess.Result {
      try migrun(["migrate", store.path, "--model", PlantedFileTests.moody, "--to", "Moody 2"] + more)
    }
  }

  /// A swap journal migrun did not write, naming `..`: `status` does not read it as an interrupted
  /// migration, `migrate --dry-run` and `migrate` refuse it by name, and the folder keeps every entry.
  @Test(arguments: ["..", ".", "notes.txt", "Moody.moody.sqlite", "/work", "../outside"])
  func aPlantedSwapJournalIsNeverAnInstruction(named name: String) throws {
    let scene = try Scene()
    let state = StoreFiles.State(of: scene.store)
    try Data("\(name)\n\(state.text)\n".utf8).write(to: scene.url(".Moody.moody.sqlite.migrun-swap"))
    let before = try scene.entries()

    let status = try scene.migrun(["status", scene.store.path, "--model", Self.moody, "--to", "Moody 2"])
    #expect(status.status == 10, "\(status.stdout)\(status.stderr)")
    #expect(!status.stderr.contains("interrupted"), "\(status.stderr)")
    for dryRun in [true, false] {
      let run = try scene.migrate(dryRun ? ["--dry-run"] : [])
      #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
      #expect(
        run.stderr.contains(".Moody.moody.sqlite.migrun-swap beside the store does not hold what migrun writes there"),
        "\(run.stderr)")
      #expect(try scene.entries() == before, "nothing was changed, followed or removed")
    }
  }

  /// A migration lock that is a link to another file: refused by name, the file neither truncated
  /// nor written.
  @Test func aLockThatIsALinkIsRefusedAndItsTargetUntouched() throws {
    let scene = try Scene()
    try FileManager.default.createSymbolicLink(
      atPath: scene.url(".Moody.moody.sqlite.migrun-lock").path, withDestinationPath: scene.url("notes.txt").path)
    let hardLinked = try Scene()
    try FileManager.default.linkItem(
      at: hardLinked.url("notes.txt"), to: hardLinked.url(".Moody.moody.sqlite.migrun-lock"))
    for (scene, what) in [(scene, "is a symbolic link"), (hardLinked, "is a hard link to another file")] {
      let before = try scene.entries()
      let run = try scene.migrate()
      #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
      #expect(run.stderr.contains(".Moody.moody.sqlite.migrun-lock beside the store \(what)"), "\(run.stderr)")
      #expect(try scene.entries() == before)
    }
  }

  /// A dangling link under the backup's name takes that name: the backup takes the next free one.
  @Test func aDanglingBackupLinkIsPassedOver() throws {
    let scene = try Scene()
    let original = try Data(contentsOf: scene.store)
    try FileManager.default.createSymbolicLink(
      atPath: scene.url("Moody.moody~.sqlite").path, withDestinationPath: scene.url("gone.sqlite").path)
    let run = try scene.migrate()
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("Moody.moody~2.sqlite"), "\(run.stdout)")
    #expect(try Data(contentsOf: scene.url("Moody.moody~2.sqlite")) == original)
    #expect(WorkingFiles.entry(at: scene.url("Moody.moody~.sqlite").path) == .symlink)
    #expect(WorkingFiles.entry(at: scene.url("gone.sqlite").path) == .none, "the link was not written through")
  }

  /// A dry run of a store whose swap was cut short completes nothing and removes nothing: it says
  /// what `migrate` would do.
  @Test func aDryRunLeavesAnInterruptedSwapAsItIs() throws {
    let scene = try Scene()
    let working = scene.url(".Moody.moody.sqlite.migrun-1-step1")
    try FileManager.default.copyItem(at: scene.store, to: working)
    try Data((working.lastPathComponent + "\n" + StoreFiles.State(of: scene.store).text + "\n").utf8).write(
      to: scene.url(".Moody.moody.sqlite.migrun-swap"))
    try Data("stale".utf8).write(to: scene.url(".Moody.moody.sqlite.migrun-77-step2"))
    let before = try scene.entries()
    let run = try scene.migrate(["--dry-run"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("a dry run changes nothing"), "\(run.stderr)")
    #expect(try scene.entries() == before)
  }

  /// Working names of another run that are links are left alone (never removed as stale, never
  /// written through), and the migration goes on.
  @Test func staleLinksUnderWorkingNamesAreLeftAlone() throws {
    let scene = try Scene()
    let planted = scene.url(".Moody.moody.sqlite.migrun-4242-step1")
    try FileManager.default.createSymbolicLink(
      atPath: planted.path, withDestinationPath: scene.outside.appendingPathComponent("secret.txt").path)
    let run = try scene.migrate()
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(WorkingFiles.entry(at: planted.path) == .symlink)
    #expect(try String(contentsOf: scene.outside.appendingPathComponent("secret.txt"), encoding: .utf8) == "secret\n")
  }

  /// The campaign: every name migrun writes beside a store, planted with every kind of entry and
  /// content; `status`, `migrate --dry-run` and `migrate` each end (no crash, no hang), and the
  /// store, its siblings and the folder outside are intact — the store either as it was or
  /// migrated with the original kept byte for byte.
  @Test func plantedFilesNeverCostTheStoreOrItsSiblings() throws {
    var generator = SeededRandom(seed: 55)
    var failures: [String] = []
    for name in Self.plantedNames {
      for kind in PlantedKind.allCases {
        let scene = try Scene()
        let original = try Data(contentsOf: scene.store)
        try kind.plant(at: scene.url(name), in: scene, using: &generator)
        var before = try scene.entries()
        before[scene.store.path] = nil
        for arguments in [["--dry-run"], []] {
          let run = try scene.migrate(arguments)
          if run.status == 124 || run.status >= 128 {
            failures.append("\(name) as \(kind) \(arguments): \(run.status)")
          }
        }
        let status = try scene.migrun(["status", scene.store.path, "--model", Self.moody, "--to", "Moody 2"])
        if status.status == 124 || status.status >= 128 {
          failures.append("\(name) as \(kind) status: \(status.status)")
        }
        var after = try scene.entries()
        let migrated = after[scene.store.path] != original
        after[scene.store.path] = nil
        // What a successful migration adds: the backup (and its sidecars), under a free name.
        let added = Set(after.keys).subtracting(before.keys)
        let backups = added.filter { $0.hasPrefix(scene.url("Moody.moody~").path) }
        for key in added.subtracting(backups) { failures.append("\(name) as \(kind): left \(key)") }
        for (key, value) in before where after[key] != value { failures.append("\(name) as \(kind): changed \(key)") }
        if migrated, !backups.contains(where: { after[$0] == original }) {
          failures.append("\(name) as \(kind): migrated without the original kept")
        }
      }
    }
    #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
  }

  /// A store with one value kept outside it (external binary storage: a reference to `file`, which
  /// the caller writes or plants), its model in a folder of its own.
  static func photoStore(in folder: TemporaryDirectory) throws -> (store: URL, model: URL, file: URL) {
    let model = try folder.write(
      """
      <model><entity name="Photo"><attribute name="name" optional="YES" attributeType="String"/>\
      <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/></entity></model>
      """, to: "Photos.xcdatamodel/contents"
    ).deletingLastPathComponent()
    let store = try folder.folder("data").appendingPathComponent("photos.sqlite")
    #expect(try MigrunProcess.run(["create", store.path, "--model", model.path]).status == 0)
    let name = "0C7E2A59-5B8B-4E8C-9B5F-7A2D3F1E9C11"
    let external = store.deletingLastPathComponent().appendingPathComponent(".photos_SUPPORT/_EXTERNAL_DATA")
    try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
    try DatabaseQueue(path: store.path).write { db in
      let number = try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Photo'") ?? 0
      try db.execute(
        sql: "INSERT INTO ZPHOTO (Z_PK, Z_ENT, Z_OPT, ZNAME, ZIMAGE) VALUES (1, ?, 1, 'big', ?)",
        arguments: [number, Data([2] + Array(name.utf8))])
      try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = ?", arguments: [number])
    }
    return (store, model, external.appendingPathComponent(name))
  }

  /// A value's file that is a link to a file outside the store's folder is not read through it:
  /// the error names the link, and the outside file's bytes appear nowhere.
  @Test func anExternalValueIsNeverReadThroughALink() throws {
    let folder = try TemporaryDirectory()
    let (store, model, file) = try Self.photoStore(in: folder)
    let secret = try folder.write("the secret outside", to: "outside/secret.bin")
    try FileManager.default.createSymbolicLink(at: file, withDestinationURL: secret)
    let export = try MigrunProcess.run(["export", store.path, "--model", model.path])
    #expect(export.status == 1, "\(export.stdout)\(export.stderr)")
    #expect(export.stderr.contains("is a symbolic link"), "\(export.stderr)")
    #expect(!(export.stdout + export.stderr).contains("the secret outside"))
  }

  /// `_EXTERNAL_DATA` itself a link to a folder outside: a migration that would clean up files no
  /// longer referenced removes nothing through it; the files outside stay.
  @Test func noExternalFileIsRemovedThroughALinkedFolder() throws {
    let folder = try TemporaryDirectory()
    let (store, model, file) = try Self.photoStore(in: folder)
    let outside = try folder.folder("outside")
    try Data("kept".utf8).write(to: outside.appendingPathComponent(file.lastPathComponent))
    try Data("also kept".utf8).write(to: outside.appendingPathComponent("AAAA-BBBB"))
    let external = file.deletingLastPathComponent()
    try FileManager.default.removeItem(at: external)
    try FileManager.default.createSymbolicLink(at: external, withDestinationURL: outside)
    // Version 2 keeps the value inline: the file would no longer be referenced.
    let bundle = try folder.folder("Photos.xcdatamodeld")
    try FileManager.default.copyItem(at: model, to: bundle.appendingPathComponent("Photos.xcdatamodel"))
    try folder.write(
      """
      <model><entity name="Photo"><attribute name="name" optional="YES" attributeType="String"/>\
      <attribute name="image" optional="YES" attributeType="Binary"/></entity></model>
      """, to: "Photos.xcdatamodeld/Photos 2.xcdatamodel/contents")
    let before = try Data(contentsOf: store)
    let run = try MigrunProcess.run(["migrate", store.path, "--model", bundle.path])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("_EXTERNAL_DATA is a symbolic link"), "\(run.stderr)")
    #expect(try Data(contentsOf: store) == before)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: outside.path).sorted() == [
        "0C7E2A59-5B8B-4E8C-9B5F-7A2D3F1E9C11", "AAAA-BBBB",
      ])
  }

  /// `require` of a module whose file in the policy folder is a link to a file outside it: refused,
  /// the file's text nowhere in the output.
  @Test func aModuleLinkedFromOutsideThePolicyFolderIsNotLoaded() throws {
    let folder = try TemporaryDirectory()
    let secret = try folder.write("return 'the secret outside'", to: "outside/creds.lua")
    let library = try folder.folder("library")
    try FileManager.default.createSymbolicLink(
      at: library.appendingPathComponent("creds.lua"), withDestinationURL: secret)
    try folder.write(
      """
      test("reads creds", function()
        local creds = require "creds"
        expect(creds):equals("x")
      end)
      """, to: "library/creds_test.lua")
    let run = try MigrunProcess.run(["test", library.path])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect((run.stdout + run.stderr).contains("is a symbolic link leading out of its policy folder"), "\(run.stdout)")
    #expect(!(run.stdout + run.stderr).contains("the secret outside"))
  }

  /// A `-wal`, `-shm` or `-journal` beside the store that is a link (to a file outside, to another
  /// store), a folder or a FIFO: SQLite would read it as the store's own. Every command that reads
  /// the store refuses it by name — no hang on a FIFO, nothing read through a link, no `-wal` made
  /// beside the store, no "damage" reported — and the folder keeps every entry as it was.
  @Test(arguments: ["-wal", "-shm", "-journal"])
  func aSidecarThatIsNoPlainFileIsRefusedByEveryReader(suffix: String) throws {
    let kinds: [PlantedKind] = [.linkOutside, .linkToSibling, .folder, .fifo]
    for kind in kinds {
      let scene = try Scene()
      var generator = SeededRandom(seed: 62)
      try kind.plant(at: scene.url("Moody.moody.sqlite" + suffix), in: scene, using: &generator)
      let before = try scene.entries()
      let store = scene.store.path
      let out = scene.root.url.appendingPathComponent("out").path
      for arguments in [
        ["status", store, "--model", Self.moody], ["inspect", store], ["check", store], ["export", store],
        ["plan", store, "--model", Self.moody], ["salvage", store, "--out", out + ".sqlite"],
        ["migrate", store, "--model", Self.moody, "--dry-run"], ["migrate", store, "--model", Self.moody],
      ] {
        let run = try scene.migrun(arguments)
        let said = "Moody.moody.sqlite\(suffix) beside the store \(kind == .folder ? "is a folder" : "is")"
        #expect(run.status == 1, "\(kind) \(arguments[0]): \(run.status) \(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains(said), "\(kind) \(arguments[0]): \(run.stdout)\(run.stderr)")
        #expect(try scene.entries() == before, "\(kind) \(arguments[0]): nothing made, changed or removed")
        #expect(!FileManager.default.fileExists(atPath: out + ".sqlite"), "\(kind) \(arguments[0])")
      }
    }
  }

  /// A `-wal` (or `-shm`, `-journal`) already at the name of a store to be made — left by a store
  /// that was deleted without it: SQLite would read it as the new store's own, and the new store
  /// would open as the other store's tables. `create`, `import`, `copy` and `salvage` refuse by
  /// name and write nothing; the file is left as it was.
  @Test(arguments: ["-wal", "-shm", "-journal"])
  func aNewStoreIsNeverMadeBesideAnotherStoresSidecar(suffix: String) throws {
    let scene = try Scene()
    let export = try scene.migrun([
      "export", scene.store.path, "--out", scene.root.url.appendingPathComponent("e.json").path,
    ])
    #expect(export.status == 0, "\(export.stderr)")
    // Another store's transactions, still in its -wal.
    let other = scene.root.url.appendingPathComponent("other.sqlite")
    let writer = try DatabaseQueue(path: other.path)
    try writer.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0")
      try db.execute(sql: "CREATE TABLE EVIL (a); INSERT INTO EVIL VALUES ('planted')")
    }
    let stale = try Data(contentsOf: URL(fileURLWithPath: other.path + "-wal"))
    try writer.close()
    #expect(!stale.isEmpty)
    let target = scene.root.url.appendingPathComponent("new.sqlite").path
    try stale.write(to: URL(fileURLWithPath: target + suffix))
    for arguments in [
      ["create", target, "--model", Self.moody],
      [
        "import", scene.root.url.appendingPathComponent("e.json").path, "--model", Self.moody, "--model-version",
        "Moody", "--out", target,
      ],
      ["copy", scene.store.path, target, "--type", "xml", "--model", Self.moody],
      ["salvage", scene.store.path, "--out", target],
    ] {
      let run = try scene.migrun(arguments)
      #expect(run.status == 1, "\(arguments[0]): \(run.stdout)\(run.stderr)")
      #expect(run.stderr.contains("new.sqlite\(suffix) is already there"), "\(arguments[0]): \(run.stderr)")
      #expect(!FileManager.default.fileExists(atPath: target), "\(arguments[0]): no store made")
      #expect(try Data(contentsOf: URL(fileURLWithPath: target + suffix)) == stale, "\(arguments[0])")
    }
  }

  /// A policy test's `migrate{ store = … }` whose store has a `-wal` that is a FIFO or a link to a
  /// file outside the places a test may read: the copy is never made through it (a FIFO held
  /// `migrun test` forever; a link was copied as a link and read) — the test fails naming it.
  @Test func aTestStoresSidecarIsNeverCopiedThroughALinkOrAFIFO() throws {
    for kind in [PlantedKind.fifo, .linkOutside] {
      let scene = try Scene()
      try scene.root.write(
        """
        test("migrates", function()
          local out = migrate { store = "place/Moody.moody.sqlite", model = "Moody.xcdatamodeld" }
          expect(#out.Mood):equals(4)
        end)
        """, to: "s_test.lua")
      var generator = SeededRandom(seed: 7)
      try kind.plant(at: scene.url("Moody.moody.sqlite-wal"), in: scene, using: &generator)
      let before = try scene.entries()
      let models = URL(fileURLWithPath: Self.moody).deletingLastPathComponent().path
      let run = try scene.migrun(["test", scene.root.url.path, "--fixtures", models])
      #expect(run.status == 1, "\(kind): \(run.status) \(run.stdout)\(run.stderr)")
      #expect(
        run.stdout.contains("Moody.moody.sqlite-wal beside the store is"), "\(kind): \(run.stdout)\(run.stderr)")
      #expect(try scene.entries() == before, "\(kind)")
    }
  }

  static let plantedNames = [
    ".Moody.moody.sqlite.migrun-swap", ".Moody.moody.sqlite.migrun-lock", "Moody.moody~.sqlite",
    "Moody.moody~.sqlite-wal", ".Moody.moody~_SUPPORT", ".Moody.moody.sqlite.migrun-4242-step1",
    ".Moody.moody.sqlite.migrun-new", ".Moody.moody.sqlite.migrun-atomic-4242",
  ]

  /// What is planted under a name.
  enum PlantedKind: CaseIterable {
    case linkToSibling, linkToFolder, linkToParent, linkOutside, danglingLink
    case namesParent, namesSibling, namesStore, journalNamingParent, garbage
    case folder, hardLinkToSibling, fifo

    func plant(at url: URL, in scene: Scene, using generator: inout SeededRandom) throws {
      let manager = FileManager.default
      func text(_ string: String) throws { try Data(string.utf8).write(to: url) }
      switch self {
      case .linkToSibling: try manager.createSymbolicLink(at: url, withDestinationURL: scene.url("notes.txt"))
      case .linkToFolder: try manager.createSymbolicLink(atPath: url.path, withDestinationPath: ".")
      case .linkToParent: try manager.createSymbolicLink(atPath: url.path, withDestinationPath: "..")
      case .linkOutside:
        try manager.createSymbolicLink(at: url, withDestinationURL: scene.outside.appendingPathComponent("secret.txt"))
      case .danglingLink: try manager.createSymbolicLink(atPath: url.path, withDestinationPath: "nothing-here")
      case .namesParent: try text("..\n")
      case .namesSibling: try text("notes.txt\n")
      case .namesStore: try text("Moody.moody.sqlite\n")
      case .journalNamingParent: try text("..\n\(StoreFiles.State(of: scene.store).text)\n")
      case .garbage: try Data((0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: url)
      case .folder:
        try manager.createDirectory(at: url, withIntermediateDirectories: true)
        try Data("inside".utf8).write(to: url.appendingPathComponent("keep.txt"))
      case .hardLinkToSibling: try manager.linkItem(at: scene.url("notes.txt"), to: url)
      case .fifo: #expect(mkfifo(url.path, 0o644) == 0)
      }
    }
  }
}
