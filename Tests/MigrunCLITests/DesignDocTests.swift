import Foundation
import TestSupport
import Testing

/// What docs/design.md and docs/development.md claim as a figure or a name is held to the code: the
/// targets the layer table and the layout name are Package.swift's and the folders' (issue 71: the
/// docs had left out a target and put a type in the wrong folder), and the opens of the original store
/// per command are the ones `strace` counts, as scripts/opens counts them.
@Suite struct DesignDocTests {
  static let root = Fixtures.repositoryRoot

  static func text(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  /// The targets Package.swift declares, tests and their support left out.
  static func targets() throws -> Set<String> {
    let package = try text("Package.swift")
    let declared = package.matches(
      of: /\.(?:target|executableTarget|systemLibrary|plugin)\(\s*name:\s*"([A-Za-z]+)"/)
    return Set(declared.map { String($0.output.1) }).subtracting(["TestSupport"])
  }

  @Test func theLayerTableNamesEveryTargetAndNoOther() throws {
    let design = try Self.text("docs/design.md")
    let rows = design.split(separator: "\n").filter { $0.hasPrefix("| `") }
    let named = Set(
      rows.flatMap { row in
        row.split(separator: "|").first.map { cell in cell.matches(of: /`([A-Za-z]+)`/).map { String($0.output.1) } }
          ?? []
      })
    let targets = try Self.targets()
    #expect(targets.subtracting(named).isEmpty, "targets the table leaves out: \(targets.subtracting(named).sorted())")
    let stray = named.subtracting(targets).subtracting(["TestSupport"])
    #expect(stray.isEmpty, "names in the table that are no target: \(stray.sorted())")
  }

  @Test func theLayoutNamesEverySourceFolderAndOnlyFoldersThatExist() throws {
    let development = try Self.text("docs/development.md")
    let sources = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
    // A layout line names one folder ("Sources/X   what it holds") or two ("Sources/CLua, CLuaShim   …").
    let named = Set(
      development.split(separator: "\n").filter { $0.hasPrefix("Sources/") }.flatMap { line in
        let folders = line.dropFirst("Sources/".count).components(separatedBy: "  ")[0]
        return folders.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      })
    let missing = Set(sources).subtracting(named)
    #expect(missing.isEmpty, "Sources folders the layout leaves out: \(missing.sorted())")
    let stray = named.subtracting(sources)
    #expect(stray.isEmpty, "folders the layout names that are not in Sources: \(stray.sorted())")
    // A target's folders, one per concept: each line "  Name/" under a target's line is a folder of it.
    var target: String?
    for line in development.split(separator: "\n") {
      if line.hasPrefix("Sources/") {
        target = line.dropFirst("Sources/".count).components(separatedBy: "  ")[0]
      } else if let target, let match = line.firstMatch(of: #/^  ([A-Za-z]+)\/ /#) {
        let folder = Self.root.appendingPathComponent("Sources/\(target)/\(match.output.1)")
        var isFolder: ObjCBool = false
        #expect(
          FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) && isFolder.boolValue,
          "development.md names \(target)/\(match.output.1)/, which is not there")
      } else if !line.hasPrefix(" ") {
        target = nil
      }
    }
  }

  /// design.md's sentence on opens: "`migrate` opens it N times" and "`status`, `plan`, `inspect`
  /// and `check` twice" — the same count as scripts/opens, on a copy of Moody 4 with the built migrun.
  @Test(.enabled(if: Fixtures.areAvailable && FileManager.default.fileExists(atPath: "/usr/bin/strace")))
  func theOpensDesignMdGivesAreTheOnesStraceCounts() throws {
    let design = try Self.text("docs/design.md").replacing(/\s+/, with: " ")
    let migrate = Int(try #require(design.firstMatch(of: /`migrate` opens it (\d+) times/)?.output.1))
    let others = try #require(
      design.firstMatch(of: /`status`, `plan`, `inspect` and `check` (twice|\d+ times)/)?.output.1)
    let expected = others == "twice" ? 2 : Int(others.prefix { $0.isNumber }) ?? -1
    let folder = try TemporaryDirectory()
    let model = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path
    func opens(_ arguments: [String]) throws -> Int {
      let store = folder.url.appendingPathComponent("store.sqlite")
      try? FileManager.default.removeItem(at: store)
      try FileManager.default.copyItem(
        at: Fixtures.url("objcio-core-data-moody/stores/Moody 4.moody.sqlite"), to: store)
      let trace = folder.url.appendingPathComponent("trace")
      _ = try MigrunProcess.run(
        ["-f", "-e", "trace=openat", "-o", trace.path, MigrunProcess.executable.path, arguments[0], store.path]
          + ["--model", model] + arguments.dropFirst(),
        program: "/usr/bin/strace")
      let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
      return lines.filter { $0.contains("\"\(store.path)\"") }.count
    }
    for command in ["status", "plan", "inspect", "check"] {
      #expect(try opens([command]) == expected, "\(command): design.md says \(others)")
    }
    #expect(try opens(["migrate", "--no-backup"]) == migrate, "migrate: design.md says \(migrate ?? -1)")
  }
}
