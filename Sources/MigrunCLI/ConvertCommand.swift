import ArgumentParser
import Foundation
import MigrunKit
import MigrunScripting
import MigrunTools

struct ConvertCommand: MigrunCommand {
  static let configuration = CommandConfiguration(
    commandName: "convert",
    abstract: "Write an Xcode mapping model (.xcmappingmodel or .cdm) as the equivalent Lua mapping file.",
    discussion: HelpText.reflow(
      """
      Each entity mapping becomes an entry keyed by its destination entity; each value expression
      is written as Lua beside the expression it came from. A custom NSEntityMigrationPolicy class
      the mapping model names is taken from ClassName.lua in a --policies folder when there is one
      (a `require` of it), else written as a stub table with the seven hooks to fill in. The file is
      loaded once for its step before it is written, so what is written runs.

      Example:
        migrun convert "Moody 4-Moody 5.xcmappingmodel" --model Moody.xcdatamodeld --out policies/
      """))

  @Argument(help: "The mapping model: an .xcmappingmodel folder or a .cdm file.") var mapping: String
  @Option(help: "The model it maps between: a .xcdatamodeld or .momd.") var model: String
  @Option(
    name: .customLong("policies"), help: "Folders with Lua policies ClassName.lua for its custom classes (repeatable).")
  var policyFolders: [String] = []
  @Option(help: "Write to this file, or to <From>-<To>.lua in this folder (default: standard output).") var out: String?
  @Flag(help: "Replace the --out file if it exists.") var force = false

  func execute() throws {
    try show(
      ConvertJob(mapping: mapping, model: model, policyFolders: policyFolders, out: out, force: force).run())
  }
}
