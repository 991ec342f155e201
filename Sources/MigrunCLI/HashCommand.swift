import ArgumentParser
import Foundation
import MigrunKit
import MigrunModel
import MigrunTools
import SwiftDataModel

struct HashCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "hash",
    abstract: "Print a model version's entity version hashes, as Core Data stores them.",
    discussion: HelpText.reflow(
      """
      Prints each entity's version hash in base64 (as in a store's NSStoreModelVersionHashes), then
      the model's NSStoreModelVersionHashesDigest and NSStoreModelVersionChecksumKey.

      Example:
        migrun hash Moody.xcdatamodeld --model-version "Moody 2"
      """)
  )

  @Argument(
    help:
      "A .xcdatamodeld or .xcdatamodel, a compiled .momd or .mom, SwiftData sources (a folder or .swift file), or a store (its Z_MODELCACHE)."
  )
  var modelArgument: String?

  @Option(help: "The model, as every other command takes it (instead of the argument).")
  var model: String?

  @Option(name: .customLong("model-version"), help: "The version to hash (default: the current version).")
  var modelVersion: String?

  @Flag(help: "One JSON line (docs/json.md): a `hash` event {version, entities, digest, checksum}.")
  var json = false

  func execute() throws {
    let bundle = try loadModel(URL(fileURLWithPath: try modelPath(argument: modelArgument, option: model)))
    let versionName = modelVersion ?? bundle.currentVersionName
    let objectModel = try bundle.model(named: versionName)
    let hashes = objectModel.entityVersionHashes.mapValues(\.base64)
    if json {
      try JSONLines.emit(
        "hash",
        encoding: HashReport(
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
