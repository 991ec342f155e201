import FileDoors
import Foundation

extension Fleet.Report {
  /// Writes the report as JSON and as JUnit where asked, each whole or not at all (a report of a
  /// run before is replaced: a re-run writes its report where the first did).
  package func write(suite: String, json: String?, junit: String?) throws {
    if let path = json { try writeAtomically(to: path) { try $0.write(try self.json()) } }
    if let path = junit { try writeAtomically(to: path, text: self.junit(suite: suite)) }
  }
}

extension Fleet.Report {
  /// A report as `--report FILE.json` wrote it (`merge-reports`' input).
  package static func read(_ data: Data) throws -> Fleet.Report {
    try JSONDecoder().decode(Fleet.Report.self, from: data)
  }
}

extension Fleet {
  /// `merge-reports`: the reports read and merged, written where asked (`out`, `junit`); without
  /// `out` the caller writes the merged report itself. The output says what it holds (exit 1 when a
  /// store of it failed).
  package static func merge(reports: [String], out: String?, junit: String?) throws -> (
    report: Report, output: JobOutput
  ) {
    guard !reports.isEmpty else { throw ToolError(message: "give the reports to merge") }
    for (option, path) in [("--out", out), ("--junit", junit)] {
      if let path { try OutputFile.check(path, option: option, force: true) }
    }
    var read: [Report] = []
    for path in reports {
      do {
        read.append(try Report.read(InputFile.data(URL(fileURLWithPath: path), origin: .named)))
      } catch let error as InputFileError {
        throw ToolError(message: "\(error)", underlying: error)
      } catch {
        throw ToolError(message: "\(path): not a migrun report (\(error.localizedDescription))", underlying: error)
      }
    }
    let merged = Report.merged(read)
    try merged.write(suite: "migrun", json: out, junit: junit)
    var output = JobOutput()
    if out != nil {
      // Written to files: say what the merged report holds, and where it went.
      output.say(
        "merged \(plural(read.count, "report")): \(plural(merged.stores.count, "store")), \(merged.migrated) migrated, \(merged.current) current, \(merged.failed) failed → "
          + ([out, junit].compactMap { $0 }.joined(separator: ", ")))
    }
    output.status = merged.failed > 0 ? 1 : 0
    return (merged, output)
  }
}
