import Foundation
import TestSupport
import Testing

/// The docs run: every shell example of README.md and docs/ marked runnable (a ```` ```sh runnable ````
/// fence) runs as written — a page's blocks in order, in one scratch folder laid out as the repository is (its `policies`
/// beside it, `../shared` above it), with the `migrun` just built. A command's output is held to the
/// `# …` lines the page shows under it (spaces collapsed; a line with `…` stands for what is left out),
/// and its exit status to the page's `(exit N)`, 0 where the page says none.
@Suite(.enabled(if: Fixtures.areAvailable))
struct DocsRunTests {
  struct Command {
    var line: String
    var expected: [String] = []
    var exit: Int32 = 0
  }

  /// The runnable blocks of `file`, each as its commands.
  static func blocks(of file: URL) throws -> [[Command]] {
    let text = try String(contentsOf: file, encoding: .utf8)
    return text.components(separatedBy: "```sh runnable\n").dropFirst().map { block in
      var commands: [Command] = []
      for line in block.components(separatedBy: "\n```")[0].split(separator: "\n").map(String.init) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("#"), !commands.isEmpty {
          var shown = String(trimmed.dropFirst()).trimmingCharacters(in: .whitespaces)
          if let exit = exitStatus(in: &shown) { commands[commands.count - 1].exit = exit }
          if !shown.isEmpty, !shown.contains("…") { commands[commands.count - 1].expected.append(shown) }
        } else if !trimmed.isEmpty {
          var command = Command(line: line)
          var comment = line.components(separatedBy: " # ").dropFirst().joined(separator: " # ")
          if let exit = exitStatus(in: &comment) { command.exit = exit }
          commands.append(command)
        }
      }
      return commands
    }
  }

  /// A trailing `(exit N)`, taken out of `text`.
  static func exitStatus(in text: inout String) -> Int32? {
    guard let range = text.range(of: #"\(exit (\d+)\)\s*$"#, options: .regularExpression) else { return nil }
    let status = Int32(text[range].filter(\.isNumber))
    text = String(text[..<range.lowerBound]).trimmingCharacters(in: .whitespaces)
    return status
  }

  static func collapsed(_ text: String) -> String {
    text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
  }

  static var pages: [URL] {
    let root = Fixtures.repositoryRoot
    let docs = root.appendingPathComponent("docs")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []
    return [root.appendingPathComponent("README.md")]
      + names.filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
  }

  @Test func everyRunnableExampleRunsAsWritten() throws {
    var ran = 0
    // A page's blocks run in order in one scratch folder, as a reader following the page runs them.
    for page in Self.pages {
      let blocks = try Self.blocks(of: page)
      guard !blocks.isEmpty else { continue }
      let left = try Self.run(blocks.flatMap { $0 }, from: page)
      // The README's tour leaves the repository's root as it found it (issue 61: it left
      // Moody.sqlite, Moody~.sqlite, mine/ and step.svg there).
      if page.lastPathComponent == "README.md" { #expect(left == ["policies"], "README.md's tour wrote \(left)") }
      ran += blocks.count
    }
    #expect(ran >= 3, "runnable examples found: \(ran)")
  }

  /// Runs one block in a fresh scratch layout; each command's output and status held to the page.
  /// Returns what the working folder (the repository's root, for the page) holds afterwards.
  @discardableResult
  static func run(_ commands: [Command], from page: URL) throws -> [String] {
    let scratch = try TemporaryDirectory()
    let work = try scratch.folder("work")
    try FileManager.default.createSymbolicLink(
      at: scratch.url.appendingPathComponent("shared"),
      withDestinationURL: Fixtures.coreData.deletingLastPathComponent()
        .deletingLastPathComponent())
    try FileManager.default.createSymbolicLink(
      at: work.appendingPathComponent("policies"),
      withDestinationURL: Fixtures.repositoryRoot.appendingPathComponent("policies"))
    var script = ""
    for (index, command) in commands.enumerated() {
      script += "echo '@@command \(index)'\n\(command.line)\necho \"@@exit $?\"\n"
    }
    let file = scratch.url.appendingPathComponent("example.sh")
    try script.write(to: file, atomically: true, encoding: .utf8)
    let bin = MigrunProcess.executable.deletingLastPathComponent().path
    let result = try MigrunProcess.run(
      ["-c", "PATH=\"\(bin):$PATH\" bash \(file.path) 2>&1"], in: work, program: "/bin/sh")
    let parts = result.stdout.components(separatedBy: "@@command ").dropFirst()
    #expect(parts.count == commands.count, "\(page.lastPathComponent): \(result.stdout)")
    for (command, part) in zip(commands, parts) {
      let body = part.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
      let exitLine = body.last { $0.hasPrefix("@@exit ") }
      let status = exitLine.flatMap { Int32($0.dropFirst("@@exit ".count)) }
      let output = Self.collapsed(body.filter { !$0.hasPrefix("@@exit ") }.joined(separator: "\n"))
      #expect(status == command.exit, "\(page.lastPathComponent): `\(command.line)` exited \(status ?? -1)\n\(output)")
      for line in command.expected {
        #expect(
          output.contains(Self.collapsed(line)),
          "\(page.lastPathComponent): `\(command.line)` does not print '\(line)'\n\(output)")
      }
    }
    return try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
  }
}
