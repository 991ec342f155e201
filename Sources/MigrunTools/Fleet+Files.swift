import Foundation

extension Fleet.Report {
  /// Writes the report as JSON and as JUnit where asked.
  package func write(suite: String, json: String?, junit: String?) throws {
    if let path = json {
      do {
        try self.json().write(to: URL(fileURLWithPath: path))
      } catch {
        throw ToolError(message: "--report: cannot write \(path) (\(error.localizedDescription))")
      }
    }
    if let path = junit {
      do {
        try Data(self.junit(suite: suite).utf8).write(to: URL(fileURLWithPath: path))
      } catch {
        throw ToolError(message: "--junit: cannot write \(path) (\(error.localizedDescription))")
      }
    }
  }
}
