import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunTools

struct VerifyCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract:
      "Check that a store of every old version reaches the current one: made-up stores, migrated as migrate would.",
    discussion: HelpText.reflow(
      """
      For every version before the destination, a store of that version is filled with --objects
      made-up objects per entity (valid under that version's rules, every relationship shape used,
      the same for the same --seed) and migrated to the destination the way migrate would (Core
      Data's path, or a chain file; the mapping files and policies of --policies), with the
      migration's own checks: objects and links conserved, the destination's rules met. One line
      (and one JUnit test case) per version; exit 1 when any fails.
      """))

  @Argument(help: "A .xcdatamodeld or .momd, or SwiftData sources (a folder or .swift file).") var modelArgument:
    String?
  @Option(help: "The model, as every other command takes it (instead of the argument).") var model: String?
  @Option(help: "The destination version (default: the current version).") var to: String?
  @Option(name: .customLong("policies"), help: "A folder of mapping files and Lua policies (repeatable).")
  var policyFolders: [String] = []
  @Option(help: "Objects made up per entity.") var objects = 20
  @Option(help: "The seed of the made-up objects.") var seed: UInt64 = 1
  @Option(help: ArgumentHelp("Write one JUnit test case per version to this file.", valueName: "file")) var junit:
    String?

  /// The most objects made up per entity: a store of that many per entity is already far past
  /// what a migration's checks need, and a count past it would only fill the memory.
  static let objectRange = 0...1_000_000

  /// A count of objects outside ``objectRange`` is a bad command line (exit 64), found before any work.
  func validate() throws {
    guard Self.objectRange.contains(objects) else {
      throw ValidationError(
        "--objects: give a number of objects per entity from \(Self.objectRange.lowerBound) to \(Self.objectRange.upperBound)"
      )
    }
  }

  func execute(_ project: ProjectConfig?) throws {
    try show(
      VerifyJob(
        model: try modelPath(argument: modelArgument, option: model, project: project), to: to,
        policyFolders: policyFolders,
        objects: objects, seed: seed, junit: junit
      ).run())
  }
}
