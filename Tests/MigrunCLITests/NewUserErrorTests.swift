import Foundation
import TestSupport
import Testing

/// What a new user trips on (issue 48, part): errors that name what was given and what it is.
@Suite struct NewUserErrorTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld").path

  @Test func aFolderGivenAsAStoreIsSaidToBeAFolder() throws {
    let folder = try TemporaryDirectory()
    let given = try folder.folder("stores")
    for command in ["inspect", "check", "export"] {
      let result = try MigrunProcess.run([command, given.path, "--model", Self.moody])
      #expect(result.status != 0)
      #expect(result.stderr.contains("\(given.path): a folder, not a store file"), "\(command): \(result.stderr)")
    }
  }

  @Test func aFolderWithNoModelIsSaidToHoldNone() throws {
    let folder = try TemporaryDirectory()
    let empty = try folder.folder("Model")
    let result = try MigrunProcess.run(["hash", empty.path])
    #expect(result.status != 0)
    #expect(result.stderr.contains("a folder with no model in it"), "\(result.stderr)")
    #expect(!result.stderr.contains("/contents"), "\(result.stderr)")
  }

  @Test func helpForNoCommandIsAnError() throws {
    let result = try MigrunProcess.run(["help", "nosuch"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("no command 'nosuch'"), "\(result.stderr)")
    #expect(try MigrunProcess.run(["help", "plan"]).status == 0)
  }
}
