import FileDoors
import Foundation
import MigrunKit
import MigrunModel

/// Steps that run several mapping models or Lua mapping files one after another into one
/// destination (Core Data's migration in chunks, ``MappingPass``), named in a policy folder by an
/// order file: `<From>-<To>.order` beside the files, one file name per line, in the order they run.
extension ScriptedStep {
  /// The order files' extension.
  package static let orderExtension = "order"

  /// The passes the order files below `files`' folders name, by "from\u{0}to" (the first folder's
  /// file for a step wins, as for step files). An order file that names no step of `versions`, or a
  /// file that is missing, is no step file or is named twice, is refused by name.
  package static func orderedPasses(in files: PolicyFiles, versions: Set<String>) throws -> [String: [URL]] {
    var passes: [String: [URL]] = [:]
    for file in files.below.joined() where file.pathExtension == orderExtension {
      let name = file.deletingPathExtension().lastPathComponent
      guard
        let from = versions.sorted().first(where: { from in
          name.hasPrefix(from + "-") && versions.contains(String(name.dropFirst(from.count + 1)))
        })
      else {
        throw MigrationError(
          .badMapping,
          reason: "\(file.path) is named for no step: an order file is <From>-<To>.order, two version names, "
            + "and lists the step's mapping models or Lua mapping files in the order they run")
      }
      let key = "\(from)\u{0}\(name.dropFirst(from.count + 1))"
      let listed = try listedFiles(in: file)
      if passes[key] == nil { passes[key] = listed }
    }
    return passes
  }

  /// The files an order file lists, relative to its folder; `#` starts a comment line.
  private static func listedFiles(in file: URL) throws -> [URL] {
    let text: String
    do {
      text = try InputFile.text(file)
    } catch {
      throw MigrationError(.badMapping, reason: "\(error)")
    }
    var listed: [URL] = []
    for line in text.split(whereSeparator: \.isNewline).map({ String($0).trimmingWhitespace() })
    where !line.isEmpty && !line.hasPrefix("#") {
      let url = file.deletingLastPathComponent().appendingPathComponent(line)
      // A name in the order file's own folder: never a path that leads out of the policy folder.
      guard !line.contains("/"), line != ".", line != ".." else {
        throw MigrationError(
          .badMapping, reason: "\(file.path) lists '\(line)': name a file beside the order file, not a path")
      }
      guard extensions.contains(url.pathExtension), InputFile.kind(at: url.path) != nil else {
        throw MigrationError(
          .badMapping,
          reason: "\(file.path) lists '\(line)', which is no mapping model or Lua mapping file in "
            + "\(file.deletingLastPathComponent().path)")
      }
      guard !listed.contains(url) else {
        throw MigrationError(.badMapping, reason: "\(file.path) lists '\(line)' twice")
      }
      listed.append(url)
    }
    guard !listed.isEmpty else {
      throw MigrationError(.badMapping, reason: "\(file.path) lists no file: name the step's files, one per line")
    }
    return listed
  }
}
