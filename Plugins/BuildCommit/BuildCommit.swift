import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` into the target it serves: the commit of the checkout being built
/// (`git rev-parse --short=12 HEAD` in the package's folder, no network), or `nil` where there is no
/// checkout or no `git`, for `migrun --version`.
///
/// A prebuild command, so it runs at every build (a new commit needs no clean build); the file is
/// rewritten only when the commit changed, so an unchanged commit recompiles nothing.
@main
struct BuildCommit: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
    let folder = context.pluginWorkDirectoryURL.appendingPathComponent("generated")
    let file = folder.appendingPathComponent("BuildCommit.swift")
    let script = """
      mkdir -p "$(dirname "$2")"
      commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=
      value=nil
      [ -n "$commit" ] && value="\\"$commit\\""
      printf '%s\\n' "// Written at build time by Plugins/BuildCommit: the commit of the checkout built." \
        "extension BuildInfo { static let builtCommit: String? = $value }" > "$2.new"
      if cmp -s "$2.new" "$2"; then rm "$2.new"; else mv "$2.new" "$2"; fi
      """
    return [
      .prebuildCommand(
        displayName: "Reading the checkout's commit for migrun --version",
        executable: URL(fileURLWithPath: "/bin/sh"),
        arguments: ["-c", script, "sh", context.package.directoryURL.path, file.path],
        outputFilesDirectory: folder)
    ]
  }
}
