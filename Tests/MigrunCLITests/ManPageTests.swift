import Foundation
import TestSupport
import Testing

/// The man pages `scripts/install` puts in place: one per command, from the command definitions,
/// every character kept.
@Suite struct ManPageTests {
  @Test func everyCommandHasAPageAndNoCharacterIsDropped() throws {
    let folder = try TemporaryDirectory()
    let script = Fixtures.repositoryRoot.appendingPathComponent("scripts/manpages").path
    let made = try MigrunProcess.run(
      ["python3", script, MigrunProcess.executable.path, folder.url.path], program: "/usr/bin/env")
    #expect(made.status == 0, "\(made.stderr)")
    let pages = Set(try FileManager.default.contentsOfDirectory(atPath: folder.url.path))
    for command in ["migrun", "migrun.status", "migrun.migrate", "migrun.plan", "migrun.check", "migrun.test"] {
      #expect(pages.contains("\(command).1"), "\(pages.sorted())")
    }
    let main = try String(contentsOf: folder.url.appendingPathComponent("migrun.1"), encoding: .utf8)
    #expect(main.contains("Core Data–compatible"))
    #expect(main.contains(".It Xr migrun.migrate 1"))
    let migrate = try String(contentsOf: folder.url.appendingPathComponent("migrun.migrate.1"), encoding: .utf8)
    #expect(migrate.contains(".It Fl -no-backup"))
  }
}
