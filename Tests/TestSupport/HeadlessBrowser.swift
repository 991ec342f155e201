import Foundation

/// A page as headless Chromium loads it (`scripts/browse`: the DevTools protocol over a pipe).
public struct BrowsedPage: Sendable {
  /// The document's HTML after loading.
  public let dom: String
  /// Its visible text: a table row's cells separated by tabs.
  public let text: String
  /// Requests the page made other than for its own file.
  public let requests: [String]
  /// Console messages, uncaught exceptions and the browser's errors, as "level: text".
  public let console: [String]
  /// `href="#id"` links whose target is not in the page.
  public let brokenLinks: [String]
  /// `<script>` elements in the page.
  public let scripts: Int
  /// The layout's width at the viewport asked for.
  public let width: Int
  /// Whether a `<nav>` is displayed.
  public let navShown: Bool

  /// Loads `file` at a viewport `width` CSS pixels wide (a phone's with `mobile`; laid out for
  /// printing with `print`), and — with `screenshot` — writes a PNG of the first screen.
  public static func load(
    _ file: URL, width: Int = 1200, mobile: Bool = false, print: Bool = false, screenshot: URL? = nil
  ) throws -> BrowsedPage {
    var arguments = [
      Fixtures.repositoryRoot.appendingPathComponent("scripts/browse").path, file.path, "--width", "\(width)",
    ]
    if mobile { arguments.append("--mobile") }
    if print { arguments.append("--print") }
    if let screenshot { arguments += ["--screenshot", screenshot.path] }
    let run = try MigrunProcess.run(arguments, program: "/usr/bin/python3")
    guard run.status == 0, let data = run.stdout.data(using: .utf8),
      let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { throw BrowseError(description: "scripts/browse failed (\(run.status)): \(run.stderr)") }
    let console = (object["console"] as? [[String: Any]] ?? []).map {
      "\($0["level"] as? String ?? "?"): \($0["text"] as? String ?? "")"
    }
    return BrowsedPage(
      dom: object["dom"] as? String ?? "", text: object["text"] as? String ?? "",
      requests: object["requests"] as? [String] ?? [], console: console,
      brokenLinks: object["brokenLinks"] as? [String] ?? [], scripts: object["scripts"] as? Int ?? -1,
      width: object["width"] as? Int ?? 0, navShown: object["navShown"] as? Bool ?? true)
  }

  public struct BrowseError: Error, CustomStringConvertible {
    public let description: String
  }

  /// Whether Chromium is installed (scripts/setup installs Debian's `chromium`).
  public static var isAvailable: Bool {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].contains {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }
}
