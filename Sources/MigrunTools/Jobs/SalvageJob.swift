import Foundation
import MigrunModel
import MigrunStore

/// `migrun salvage STORE --out NEW`: whatever a damaged store still holds, written as a new store
/// of its model version that `check` calls clean, with a report of what was saved and what was
/// lost (exit 1 when something was). The original's files are only read; `NEW` is written whole
/// or not at all.
package struct SalvageJob: ProjectJob {
  package var store: String
  package var out: String
  package var model: String?
  package var json: Bool
  package var options = Salvage.Options()
  /// The project file the command line read (`.migrun.yml`), for the options not given.
  package var project: ProjectConfig?
  /// How long to wait for another process to let go of the store, in seconds (`--wait`).
  package var wait: Double = 0

  package init(store: String, out: String, model: String?, json: Bool, keepDanglingKeys: Bool) {
    self.store = store
    self.out = out
    self.model = model
    self.json = json
    options.keepDanglingKeys = keepDanglingKeys
  }

  package func run() throws -> JobOutput {
    var output = JobOutput()
    let url = URL(fileURLWithPath: store)
    guard FileManager.default.fileExists(atPath: url.path) else { throw ToolError(message: "\(store): no such file") }
    try OutputFile.check(out, option: "--out", inputs: [store])
    if let type = StoreType.of(url), type != .sqlite {
      throw ToolError(message: "\(store) is a \(type.label) store: salvage reads SQLite stores")
    }
    // Salvage reads the file's pages as they lie on disk, past SQLite's locks: a process with the
    // store open could change them under it, and a writer's pages are not yet the store's.
    try StoreUse.waitUntilFree(url, wait: wait)
    let bundle = try modelOrProject(model, project).map { try loadModel(URL(fileURLWithPath: $0)) }
    let (version, read) = try Salvage.read(url, bundle: bundle)
    var written: SalvageReport?
    var support: URL?
    do {
      try writeNewStore(at: out, label: "salvage", inputs: [store]) { working in
        support = ExternalData.supportFolder(of: working)
        written = try Salvage.write(read, model: version, to: working, options: options, externalDataOf: url)
      }
    } catch {
      if let support { try? FileManager.default.removeItem(at: support) }
      throw error
    }
    guard var report = written else { return output }
    // What check still finds, in the command line's words (its flags for the API's options).
    report.remaining = report.remaining.map(CommandLineWords.flags(in:))
    // The working file's support folder (external data, linked) follows it to its name.
    if let support, FileManager.default.fileExists(atPath: support.path) {
      let final = ExternalData.supportFolder(of: URL(fileURLWithPath: out))
      guard rename(support.path, final.path) == 0 else {
        throw ToolError(message: "\(final.path): cannot move the external data folder into place")
      }
    }
    if json {
      try output.emit("salvage", encoding: SalvageJSON(store: store, out: out, report: report))
    } else {
      output.lines = Self.lines(report, store: url, out: URL(fileURLWithPath: out))
    }
    if report.lost { output.status = 1 }
    return output
  }

  /// The report as text: what was written, per entity; the repairs; what was lost.
  static func lines(_ report: SalvageReport, store: URL, out: URL) -> [String] {
    let version = report.version == SalvageReport.ownModel ? "with \(report.version)" : "at version \(report.version)"
    var lines = ["Salvaged \(store.lastPathComponent) → \(out.lastPathComponent) \(version): \(report.summary)"]
    let width = report.entities.keys.map(\.count).max() ?? 0
    for (name, counts) in report.entities.sorted(by: { $0.key < $1.key })
    where counts.read + counts.written + counts.lost + counts.setAside + counts.pagesLostUncounted > 0 {
      lines.append(
        "  \((name + ":").padding(toLength: width + 1, withPad: " ", startingAt: 0))  "
          + Self.entityLine(counts, of: name))
    }
    for (table, count) in report.otherTables.sorted(by: { $0.key < $1.key }) {
      lines.append("  \(table) (the store's own table): \(count) rows")
    }
    let byValue = report.rowsKeptByValue["(no table)"] ?? 0
    if report.rowsOfNoTable > byValue {
      lines.append(
        "  \(report.rowsOfNoTable - byValue) rows whose table's definition was lost: set aside in MIGRUN_SALVAGED_ROWS")
    }
    for (table, count) in report.rowsKeptByValue.sorted(by: { $0.key < $1.key }) {
      let of = table == "(no table)" ? "of no table" : "of \(table)"
      lines.append(
        "  \(count) rows \(of) kept value by value in MIGRUN_SALVAGED_VALUES: more values than a table can hold, "
          + "or their table could not be made again")
    }
    for (table, count) in report.unplacedTables.sorted(by: { $0.key < $1.key }) {
      lines.append(
        "  \(count) rows set aside whole in \(table): the schema lost, no proof placed their values in columns "
          + "(a value no column order admits, or two orders that place it differently)")
    }
    for (table, count) in report.setAside.sorted(by: { $0.key < $1.key }) {
      lines.append(
        "  \(count) rows of \(table) set aside in MIGRUN_SALVAGED_\(table): their Z_ENT names no entity of the table, "
          + "or a uniqueness constraint refused them")
    }
    let repairs = repairs(report)
    lines.append("Repairs: " + (repairs.isEmpty ? "none" : repairs.joined(separator: "; ")))
    lines.append("Read: " + Self.read(report).joined(separator: "; "))
    lines.append(
      report.lost
        ? "Lost: " + lost(report).joined(separator: "; ") : "Nothing lost: every row the file held is in the new store."
    )
    lines.append(
      report.remaining.isEmpty
        ? "migrun check calls \(out.lastPathComponent) clean."
        : "check still finds: " + report.remaining.joined(separator: "; "))
    return lines
  }
}

extension SalvageJob {
  /// One entity's figures: objects written, lost with their keys, set aside; links lost by
  /// relationship.
  static func entityLine(_ counts: SalvageReport.EntityCounts, of entity: String) -> String {
    var parts = ["\(counts.written) written"]
    if counts.lost > 0 { parts.append(objectsLost(counts, as: "lost")) }
    if counts.pagesLostUncounted > 0 {
      parts.append("the objects of \(counts.pagesLostUncounted) unreadable pages lost (their keys not known)")
    }
    if counts.keysUnaccounted > 0 {
      parts.append(
        "\(counts.keysUnaccounted) more keys up to Z_MAX have no row: lost with pages no key bounds, or deleted before")
    }
    if counts.setAside > 0 { parts.append("\(counts.setAside) set aside (columns not proven)") }
    let links = counts.linksLost.sorted { $0.key < $1.key }.map { "\(entity).\($0.key) \($0.value)" }
    if !links.isEmpty { parts.append("links lost: " + links.joined(separator: ", ")) }
    if let placement = counts.placement { parts.append(placement) }
    return parts.joined(separator: ", ")
  }

  /// `12 lost (keys 1041–1052)`: at most ten ranges named (`--json` has them all).
  static func objectsLost(_ counts: SalvageReport.EntityCounts, as noun: String) -> String {
    var keys = counts.lostKeys.prefix(10).map {
      $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)–\($0.upperBound)"
    }
    if counts.lostKeys.count > 10 { keys.append("… \(counts.lostKeys.count - 10) ranges more") }
    let named = counts.missing > 0 ? "; \(counts.missing) of them named by other objects" : ""
    return "\(counts.lost) \(noun) (keys \(keys.joined(separator: ", "))\(named))"
  }

  /// How the file was read: its header, schema, `-wal`, hot journal, metadata and model cache.
  static func read(_ report: SalvageReport) -> [String] {
    var read = [report.headerIntact ? "header intact" : "header damaged: " + pageSize(report)]
    if !report.schemaFound { read.append("schema lost: tables laid out from the model") }
    if report.walFramesApplied > 0 { read.append("\(report.walFramesApplied) committed frames of the -wal applied") }
    if report.walFramesLeftOut > 0 {
      read.append(
        "the -wal's last transaction was never committed: \(report.walFramesLeftOut) frames left out, as SQLite would")
    }
    if report.walFramesUnread > 0 {
      read.append(
        "the -wal's header does not check: its \(report.walFramesUnread) frames not read (SQLite reads none of them)")
    }
    if report.deletedRowsLeftOut > 0 {
      read.append(
        "\(report.deletedRowsLeftOut) rows on pages no table leads to left out: their table's own pages hold "
          + "their keys' place without them — deleted rows on a freed page (as SQLite reads the store)")
    }
    if report.journalPagesRolledBack > 0 {
      read.append(
        "hot -journal rolled back: \(report.journalPagesRolledBack) pages a crashed writer changed but never committed "
          + "put back as its last commit left them (as SQLite would)")
    }
    read += hostileNotes(report)
    if !report.columnsKept.isEmpty {
      read.append(
        "columns the model does not have kept as the store declared them: "
          + report.columnsKept.joined(separator: ", "))
    }
    read.append(
      report.metadataFromStore
        ? "the store's own metadata kept as it was" + report.metadataNotes.map { " (\($0))" }.joined()
        : report.metadataPagesAlike > 1
          ? "metadata not taken: \(report.metadataPagesAlike) pages each hold one row shaped as Z_METADATA's, which "
            + "is the store's cannot be told; new metadata (a new UUID) for the model"
          : "metadata lost: new metadata (a new UUID) for the model")
    read.append(
      report.modelCacheFromStore
        ? "its own model cache kept as it was" + report.modelCacheNotes.map { " (\($0))" }.joined()
        : report.storeHadNoModelCache
          ? "no model cache: the store never had one (written before Core Data kept its model in the store); written from the model "
            + "version \(report.version)"
          : "model cache lost: written from the model version \(report.version)")
    return read
  }

  /// What salvage did not take from the file, though it was there: a hot journal a missing
  /// super-journal made stale, defaults that are expressions.
  static func hostileNotes(_ report: SalvageReport) -> [String] {
    var notes: [String] = []
    if let name = report.journalNotPlayedBack {
      notes.append(
        "hot -journal not played back: it names the super-journal \(name), which does not exist — "
          + "its transaction committed, as SQLite reads it (SQLite deletes such a journal unplayed)")
    }
    if !report.defaultsNotEvaluated.isEmpty {
      notes.append(
        "defaults that are expressions not evaluated (a row written before such a column was added reads NULL there): "
          + report.defaultsNotEvaluated.joined(separator: ", "))
    }
    return notes
  }

  /// Rows of no known table, and rows too wide for any, as the `Lost:` line counts them.
  static func keptAside(_ report: SalvageReport) -> [String] {
    var lost: [String] = []
    let byValue = report.rowsKeptByValue["(no table)"] ?? 0
    if report.rowsOfNoTable > byValue {
      lost.append("\(report.rowsOfNoTable - byValue) rows kept aside in MIGRUN_SALVAGED_ROWS: their table is not known")
    }
    let keptByValue = report.rowsKeptByValue.values.reduce(0, +)
    if keptByValue > 0 { lost.append("\(keptByValue) rows kept value by value in MIGRUN_SALVAGED_VALUES, not as rows") }
    return lost
  }

  /// How the page size of a file whose header is damaged was found.
  static func pageSize(_ report: SalvageReport) -> String {
    let size = report.pageSize
    return switch report.pageSizeSource {
    case .header, .journal: "page size \(size) from the header"
    case .wal: "page size \(size) from the -wal's header"
    case .headerField: "page size \(size) from the header's own field, the file agreeing"
    case .schema: "page size \(size) proven by the schema's tree (page 1 and the tables' root pages)"
    case .structure: "page size \(size) guessed from interior pages spread over the file"
    case .fallback: "page size \(size) taken (SQLite's default): nothing in the file proved one"
    }
  }

  /// The repairs made, each counted.
  static func repairs(_ report: SalvageReport) -> [String] {
    var repairs: [String] = []
    if report.danglingKeysCleared > 0 { repairs.append("\(report.danglingKeysCleared) keys naming no object cleared") }
    if report.danglingKeysKept > 0 { repairs.append("\(report.danglingKeysKept) keys naming no object kept") }
    if report.joinRowsRemoved > 0 { repairs.append("\(report.joinRowsRemoved) join rows whose ends are gone removed") }
    if report.linksSetAside > 0 {
      repairs.append("\(report.linksSetAside) links to rows set aside kept aside with them")
    }
    if report.maxKeysRaised > 0 { repairs.append("Z_MAX raised for \(report.maxKeysRaised) entities") }
    if !report.othersMade.isEmpty { repairs.append("made again: \(report.othersMade.joined(separator: ", "))") }
    if report.primaryKeysCarried > 0 {
      repairs.append("\(report.primaryKeysCarried) Z_PRIMARYKEY rows of the store's own (persistent history's) carried")
    }
    return repairs
  }

  /// What is known lost, each part counted: objects by entity, rows of the store's own tables.
  static func lost(_ report: SalvageReport) -> [String] {
    var lost: [String] = []
    for (name, counts) in report.entities.sorted(by: { $0.key < $1.key }) {
      var parts: [String] = []
      if counts.lost > 0 { parts.append(objectsLost(counts, as: "objects")) }
      if counts.pagesLostUncounted > 0 {
        parts.append("the objects of \(counts.pagesLostUncounted) unreadable pages (their keys not known)")
      }
      if !parts.isEmpty { lost.append("\(name): " + parts.joined(separator: ", ")) }
    }
    for (table, count) in report.otherRowsLost.sorted(by: { $0.key < $1.key }) {
      lost.append("\(count) rows of \(table)")
    }
    for (table, ranges) in report.otherPagesLostUncounted.sorted(by: { $0.key < $1.key }) {
      lost.append("the rows of \(table) on \(ranges) unreadable pages (their keys not known)")
    }
    if report.walFramesUnread > 0 {
      lost.append("what the -wal's \(report.walFramesUnread) frames committed (its header does not check)")
    }
    if report.pagesCutOff > 0 {
      lost.append("the file is cut short: what \(report.pagesCutOff) pages its header counts held (uncounted)")
    }
    if lost.isEmpty && report.unreadablePages > 0 {
      lost.append("the rows of \(report.unreadablePages) unreadable pages (their keys not known)")
    }
    if report.badCells > 0 {
      lost.append(
        "\(report.badCells) damaged rows on pages otherwise read (a record or overflow chain broken: "
          + "their objects counted above where their keys read)")
    }
    if report.unassignedRows > 0 { lost.append("\(report.unassignedRows) damaged rows on pages no table leads to") }
    let links = report.entities.values.reduce(0) { $0 + $1.linksLost.values.reduce(0, +) }
    if links > 0 { lost.append("\(links) links to objects not recovered (per entity above)") }
    let unplaced = report.unplacedTables.values.reduce(0, +)
    if unplaced > 0 { lost.append("\(unplaced) rows kept aside, not as objects: their columns are not proven") }
    lost += keptAside(report)
    for (table, count) in report.setAside.sorted(by: { $0.key < $1.key }) {
      lost.append("\(count) rows of \(table) kept aside in MIGRUN_SALVAGED_\(table), not as objects")
    }
    if !report.metadataFromStore { lost.append("the metadata") }
    for (name, why) in report.notCarried.sorted(by: { $0.key < $1.key }) { lost.append("\(name): \(why)") }
    for (place, count) in report.valuesLeft.sorted(by: { $0.key < $1.key }) {
      lost.append("\(count) values of \(place), which the model version's tables lack")
    }
    return lost
  }
}

/// `salvage --json`'s line.
struct SalvageJSON: Encodable {
  let store: String
  let out: String
  let report: SalvageReport
  var lost: Bool { report.lost }

  private enum Keys: String, CodingKey { case store, out, lost, summary, report }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(store, forKey: .store)
    try container.encode(out, forKey: .out)
    try container.encode(lost, forKey: .lost)
    try container.encode(report.summary, forKey: .summary)
    try container.encode(report, forKey: .report)
  }
}
