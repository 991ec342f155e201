import ArgumentParser
import MigrunTools

struct PortCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "port",
    abstract: "Write an app's custom migration code in Swift as a Lua policy folder migrun runs.",
    discussion: HelpText.reflow(PortJob.help))

  @Argument(help: "Swift files, folders of them, and mapping models (.xcmappingmodel, .cdm) naming the classes.")
  var inputs: [String]
  @Option(help: "The model: a .xcdatamodeld or .momd, or SwiftData sources.") var model: String?
  @Option(help: ArgumentHelp("The folder to write (default: the current folder).", valueName: "dir")) var out: String?
  @Flag(help: "Replace files of the same names in the folder.") var force = false

  func execute(_ project: ProjectConfig?) throws {
    let model = try modelPath(argument: nil, option: model, project: project)
    try show(PortJob(inputs: inputs, model: model, out: out, force: force).run())
  }
}
