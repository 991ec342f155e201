import Foundation
import MigrunStore
import Testing

/// Scratch folders no killed process leaves behind for good — not even one killed while the folder
/// was being made, before it had its lock and its name (seen in KillCampaignTests: `migrun test`
/// killed at that moment left `.migrun-test-UUID` in TMPDIR, which no later run removed).
@Suite struct ScratchFolderTests {
  @Test func aFolderWhoseMakerIsGoneIsRemovedAndOneBeingMadeIsNot() throws {
    let finished = Process()
    finished.executableURL = URL(fileURLWithPath: "/bin/true")
    try finished.run()
    finished.waitUntilExit()
    let temporary = FileManager.default.temporaryDirectory
    let abandoned = temporary.appendingPathComponent(".migrun-probe-\(UUID().uuidString).\(finished.processIdentifier)")
    let beingMade = temporary.appendingPathComponent(".migrun-probe-\(UUID().uuidString).\(getpid())")
    for folder in [abandoned, beingMade] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
    }
    defer { for folder in [abandoned, beingMade] { try? FileManager.default.removeItem(at: folder) } }
    let scratch = try ScratchFolder.make("probe")
    defer { ScratchFolder.remove(scratch) }
    #expect(!FileManager.default.fileExists(atPath: abandoned.path), "its maker is gone")
    #expect(FileManager.default.fileExists(atPath: beingMade.path), "its maker is this process")
  }
}
