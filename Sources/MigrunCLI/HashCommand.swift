import ArgumentParser
import Foundation
import MigrunKit
import MigrunModel
import MigrunTools
import SwiftDataModel

struct HashCommand: ProjectCommand {
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

  func execute(_ project: ProjectConfig?) throws {
    try show(
      HashJob(
        model: try modelPath(argument: modelArgument, option: model, project: project), modelVersion: modelVersion,
        json: json
      )
      .run())
  }
}
