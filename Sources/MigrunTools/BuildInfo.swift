import Foundation

/// Which commit the running binary was built from, for `migrun --version`: what `scripts/install`
/// wrote beside it (`PREFIX/share/migrun/commit`), else the checkout it was built in (the `.git`
/// above `.build/…/migrun`, read directly — no `git` needed), else unknown.
package enum BuildInfo {
  package static let version = "0.1.0"

  package static var versionLine: String { "\(version) (commit \(commit() ?? "unknown"))" }

  static func commit() -> String? {
    guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
      return nil
    }
    var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
    let stamped = folder.deletingLastPathComponent().appendingPathComponent("share/migrun/commit")
    if let text = try? String(contentsOf: stamped, encoding: .utf8), case let line = text.trimmed, !line.isEmpty {
      return line
    }
    for _ in 0..<8 {
      let git = folder.appendingPathComponent(".git")
      if FileManager.default.fileExists(atPath: git.path) { return headCommit(in: git) }
      folder.deleteLastPathComponent()
    }
    return nil
  }

  /// The commit `HEAD` names in a `.git` folder: a detached hash, or its branch's ref (loose or packed).
  static func headCommit(in git: URL) -> String? {
    guard let head = try? String(contentsOf: git.appendingPathComponent("HEAD"), encoding: .utf8).trimmed else {
      return nil
    }
    guard head.hasPrefix("ref: ") else { return short(head) }
    let ref = String(head.dropFirst(5))
    if let loose = try? String(contentsOf: git.appendingPathComponent(ref), encoding: .utf8) {
      return short(loose.trimmed)
    }
    let packed = (try? String(contentsOf: git.appendingPathComponent("packed-refs"), encoding: .utf8)) ?? ""
    for line in packed.split(separator: "\n") where line.hasSuffix(" " + ref) {
      return short(String(line.prefix { $0 != " " }))
    }
    return nil
  }

  static func short(_ hash: String) -> String? {
    hash.count >= 7 && hash.allSatisfy(\.isHexDigit) ? String(hash.prefix(12)) : nil
  }
}

extension String {
  fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
