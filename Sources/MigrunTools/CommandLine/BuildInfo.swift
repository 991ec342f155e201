/// Which commit the running binary was built from, for `migrun --version`: the checkout's commit,
/// written into the build by the `BuildCommit` plugin (`builtCommit`) — the same in a debug build,
/// an installed binary or a copy anywhere, with no `.git` needed at run time.
package enum BuildInfo {
  package static let version = "0.1.0"

  package static var versionLine: String { "\(version) (commit \(builtCommit ?? "unknown"))" }
}
