import ArgumentParser
import Foundation
import MigrunKit

struct HashCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "hash",
    abstract: "Print a model version's entity version hashes, as Core Data stores them.",
    discussion: """
      Prints each entity's version hash in base64 (as in a store's NSStoreModelVersionHashes), then
      the model's NSStoreModelVersionHashesDigest and NSStoreModelVersionChecksumKey.

      Example:
        migrun hash Moody.xcdatamodeld --version "Moody 2"
      """
  )

  @Argument(help: "A .xcdatamodeld or .xcdatamodel, or a compiled .momd or .mom.")
  var model: String

  @Option(help: "The version to hash (default: the current version).")
  var version: String?

  @Flag(help: "Print {\"version\", \"entities\", \"digest\", \"checksum\"} as JSON.")
  var json = false

  func execute() throws {
    let bundle = try ModelBundle(contentsOf: URL(fileURLWithPath: model))
    let versionName = version ?? bundle.currentVersionName
    let objectModel = try bundle.model(named: versionName)
    let hashes = objectModel.entityVersionHashes.mapValues(\.base64)
    if json {
      try printJSON(
        HashReport(
          version: versionName, entities: hashes, digest: objectModel.versionHashesDigest,
          checksum: objectModel.versionChecksum))
      return
    }
    print("\(bundle.name) — version \(versionName)")
    let width = hashes.keys.map(\.count).max() ?? 0
    for entity in objectModel.entities {
      let padded = entity.name.padding(toLength: width, withPad: " ", startingAt: 0)
      print("  \(padded)  \(hashes[entity.name] ?? "")")
    }
    print("digest    \(objectModel.versionHashesDigest)")
    print("checksum  \(objectModel.versionChecksum)")
  }
}

struct HashReport: Codable {
  let version: String
  let entities: [String: String]
  let digest: String
  let checksum: String
}
