import Foundation
import Testing

@testable import MigrunTools

/// `review --coverage` reads lcov as `migrun test --coverage` writes it, and never credits a file
/// with another's lines by a guess.
@Suite struct ReviewCoverageTests {
  static func tracefile(_ text: String) throws -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("cov-\(UUID().uuidString).info")
    try text.write(to: url, atomically: true, encoding: .utf8)
    return url.path
  }

  @Test func aDARecordsCountIsItsSecondFieldChecksumOrNot() throws {
    let path = try Self.tracefile("SF:/p/a.lua\nDA:1,3,abcd\nDA:2,0\nDA:3,1\nend_of_record\n")
    let files = try ReviewJob.readCoverage(path)
    #expect(files["/p/a.lua"]?.lines == 3)
    #expect(files["/p/a.lua"]?.run == 2)
  }

  @Test func aBadDARecordIsAnErrorNamingIt() throws {
    let path = try Self.tracefile("SF:/p/a.lua\nDA:x,1\n")
    #expect(throws: ToolError.self) { try ReviewJob.readCoverage(path) }
  }

  @Test func twoFilesOfOneNameAreNeitherTakenByName() {
    let coverage: [String: (run: Int, lines: Int)] = ["/p/one/Item.lua": (1, 2), "/p/two/Item.lua": (2, 2)]
    #expect(ReviewJob.coverage(of: ["elsewhere/Item.lua"], in: coverage).isEmpty)
    #expect(ReviewJob.coverage(of: ["/p/two/Item.lua"], in: coverage).map(\.linesRun) == [2])
    #expect(ReviewJob.coverage(of: ["x/Item.lua"], in: ["/p/one/Item.lua": (1, 2)]).count == 1)
  }
}
