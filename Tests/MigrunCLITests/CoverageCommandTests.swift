import Foundation
import TestSupport
import Testing

/// `migrun test --coverage FILE`: an lcov tracefile of the library's files, and a summary naming the
/// lines no test ran.
@Suite struct CoverageCommandTests {
  @Test func aBranchNoTestTakesIsReportedNeverRun() throws {
    let folder = try TemporaryDirectory()
    let library = folder.url.appendingPathComponent("lib", isDirectory: true)
    try FileManager.default.createDirectory(
      at: library.appendingPathComponent("text"), withIntermediateDirectories: true)
    try Data(
      """
      -- Says what a number is.
      local M = {}

      local function sign(n)
        if n < 0 then
          return "negative"
        end
        return "positive"
      end

      function M.describe(n)
        local word = sign(n)
        return word .. " " .. tostring(n)
      end

      return M
      """.utf8
    ).write(to: library.appendingPathComponent("text/numbers.lua"))
    try Data(
      """
      local numbers = require "text.numbers"
      test("a positive number", function()
        expect(numbers.describe(3)):equals("positive 3")
      end)
      """.utf8
    ).write(to: library.appendingPathComponent("text/numbers_test.lua"))
    let out = folder.url.appendingPathComponent("lcov.info")
    let run = try MigrunProcess.run(["test", library.path, "--coverage", out.path])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("  lib/text/numbers.lua  never run: 6"), "\(run.stdout)")
    let lcov = try String(contentsOf: out, encoding: .utf8)
    #expect(lcov.hasPrefix("TN:\nSF:\(library.appendingPathComponent("text/numbers.lua").standardizedFileURL.path)\n"))
    // Executable: 2 (M = {}), 5, 6, 8 (in sign), 11, 12, 13 (describe), 16 (return M) — and `end` lines
    // that ran.
    #expect(lcov.contains("DA:6,0\n"))
    #expect(lcov.contains("DA:5,1\n") && lcov.contains("DA:8,1\n") && lcov.contains("DA:12,1\n"))
    #expect(
      !lcov.contains("DA:1,") && !lcov.contains("DA:4,"), "comments and a local function's header are not lines of code"
    )
    #expect(lcov.contains("end_of_record\n"))
    let found = try #require(lcov.split(separator: "\n").first { $0.hasPrefix("LF:") })
    let hit = try #require(lcov.split(separator: "\n").first { $0.hasPrefix("LH:") })
    #expect(Int(found.dropFirst(3)) ?? 0 == (Int(hit.dropFirst(3)) ?? 0) + 1, "one line never ran: \(lcov)")
    #expect(!lcov.contains("numbers_test.lua"), "tests are not the library")
  }

  /// A function written on one line (as `diff --lua` writes attribute functions) counts as run only
  /// when a test ran it — not because its file loaded.
  @Test func aOneLineFunctionCountsOnlyWhenItRan() throws {
    let folder = try TemporaryDirectory()
    let library = folder.url.appendingPathComponent("lib", isDirectory: true)
    try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
    try Data(
      """
      local M = {}
      M.twice = function(n) return n * 2 end
      M.never = function(n) return n end -- "end" in a comment: not a word
      M.label = function(n) if n > 1 then return "many" end return "one" end
      return M
      """.utf8
    ).write(to: library.appendingPathComponent("small.lua"))
    try Data(
      """
      local small = require "small"
      test("twice", function() expect(small.twice(2)):equals(4) end)
      test("label", function() expect(small.label(3)):equals("many") end)
      """.utf8
    ).write(to: library.appendingPathComponent("small_test.lua"))
    let out = folder.url.appendingPathComponent("lcov.info")
    let run = try MigrunProcess.run(["test", library.path, "--coverage", out.path])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let lcov = try String(contentsOf: out, encoding: .utf8)
    #expect(lcov.contains("DA:2,1\n"), "\(lcov)")
    #expect(lcov.contains("DA:3,0\n"), "never called: \(lcov)")
    #expect(lcov.contains("DA:4,1\n"), "\(lcov)")
    #expect(run.stdout.contains("never run: 3"), "\(run.stdout)")
  }
}
