import Foundation

/// The files below a set of policy folders, walked once: planning weighs every pair of versions,
/// and asking the folders again for each pair made `plan` of a 60-version model with its 59 step
/// files take most of a minute. A value made when a plan starts and dropped when it ends — the
/// folders are read once per job, and what changes between jobs is seen.
package struct PolicyFiles: Sendable {
  package let folders: [URL]
  /// Each folder's files as ``ScriptedStep/filesBelow(_:)`` lists them, in the folders' order.
  package let below: [[URL]]
  /// Each folder's files by name.
  private let byName: [[String: [URL]]]

  package init(_ folders: [URL]) {
    self.folders = folders
    below = folders.map(ScriptedStep.filesBelow)
    byName = below.map { Dictionary(grouping: $0, by: \.lastPathComponent) }
  }

  /// The script for `from → to`: the first folder that has one, `.lua` first, then the folder's own
  /// files before those of its subfolders (see ``ScriptedStep/find(from:to:in:)``).
  package func find(from: String, to: String) -> URL? {
    for files in byName {
      for pathExtension in ScriptedStep.extensions {
        if let file = files["\(from)-\(to).\(pathExtension)"]?.first { return file }
      }
    }
    return nil
  }

  /// Every file of the folders named one of `names`.
  package func named(_ names: [String]) -> [URL] {
    byName.flatMap { files in names.flatMap { files[$0] ?? [] } }
  }
}
