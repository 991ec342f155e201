import Foundation
import TestSupport
import Testing

/// Planning reads each policy folder a fixed number of times, however many versions it weighs
/// (issue 69: `plan` of a 60-version model with its 59 step files walked the folders again for every
/// pair of versions, 54 s). Counted, not timed: the folder's opens under `strace`.
@Suite struct PolicyFolderReadsTests {
  /// A model of `count` versions of Moody 6, each adding an optional attribute to Mood (every step
  /// inferable), with a Lua step file for each pair of neighbours, and a store at the first.
  static func scene(versions count: Int, in root: TemporaryDirectory) throws -> (store: URL, model: URL, policies: URL)
  {
    let six = try String(
      contentsOf: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld/Moody 6.xcdatamodel/contents"),
      encoding: .utf8)
    let policies = try root.folder("policies-\(count)")
    for version in 1...count {
      let extra = (1..<version).map { #"<attribute name="extra\#($0)" optional="YES" attributeType="String"/>"# }
      let opening = try #require(six.range(of: #"<entity name="Mood""#))
      let end = try #require(six[opening.upperBound...].firstIndex(of: ">"))
      let contents = six[...end] + extra.joined() + six[six.index(after: end)...]
      try root.write(String(contents), to: "M\(count).xcdatamodeld/V\(version).xcdatamodel/contents")
      if version > 1 {
        try root.write("return { Mood = \"copy\" }\n", to: "policies-\(count)/V\(version - 1)-V\(version).lua")
      }
    }
    try root.write(
      #"<plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>V\#(count).xcdatamodel</string></dict></plist>"#,
      to: "M\(count).xcdatamodeld/.xccurrentversion")
    let model = root.url.appendingPathComponent("M\(count).xcdatamodeld")
    let store = root.url.appendingPathComponent("s\(count).sqlite")
    let created = try MigrunProcess.run(["create", store.path, "--model", model.path, "--model-version", "V1"])
    #expect(created.status == 0, "\(created.stderr)")
    return (store, model, policies)
  }

  /// The opens of `folder` by `migrun arguments…`.
  static func opens(of folder: URL, _ arguments: [String]) throws -> Int {
    let trace = folder.deletingLastPathComponent().appendingPathComponent("trace-\(folder.lastPathComponent)")
    let result = try MigrunProcess.run(
      ["-f", "-e", "trace=openat", "-o", trace.path, MigrunProcess.executable.path] + arguments,
      program: "/usr/bin/strace")
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
    return lines.filter { $0.contains("\"\(folder.path)\", ") && $0.contains("O_DIRECTORY") }.count
  }

  @Test func planReadsThePolicyFolderAsOftenForTwentyVersionsAsForFive() throws {
    let root = try TemporaryDirectory()
    var reads: [Int] = []
    for count in [5, 20] {
      let scene = try Self.scene(versions: count, in: root)
      reads.append(
        try Self.opens(
          of: scene.policies,
          ["plan", scene.store.path, "--model", scene.model.path, "--policies", scene.policies.path]))
    }
    // 20 versions weigh 380 pairs, 5 weigh 20: the folder is read the same few times for both.
    #expect(reads[0] == reads[1], "\(reads)")
    #expect(reads[1] <= 8, "\(reads)")
  }
}
