import Foundation
import MigrunModel

/// What `migrun salvage` saved and what it could not: per entity, rows read, written, set aside and
/// known to have existed but not recovered; the repairs it made; what a check of the new store says.
package struct SalvageReport: Sendable, Encodable {
  /// The ``version`` of a store written with its own model (Z_MODELCACHE), which names no version.
  package static let ownModel = "the store's own model (Z_MODELCACHE)"

  package struct EntityCounts: Sendable, Encodable, Hashable {
    /// Rows of the entity read from the damaged file.
    package var read = 0
    /// Rows written to the new store.
    package var written = 0
    /// Objects other rows name (to-one keys, join rows) that were not recovered: known lost.
    package var missing = 0
    /// Rows found with the schema lost whose columns no proof placed: kept whole in
    /// `MIGRUN_SETASIDE_<ENTITY>`, not written as objects.
    package var setAside = 0
    /// Links to objects not recovered, cleared or removed, by relationship.
    package var linksLost: [String: Int] = [:]
    /// Objects known to have existed that the new store lacks, each once: keys the unreadable
    /// pages' ranges held that no row was recovered for (a hierarchy's counted under its root
    /// entity unless a link names the entity), and objects other rows name (``missing``).
    package var lost = 0
    /// Their keys, as ranges (`[first, last]` in JSON).
    package var lostKeys: [ClosedRange<Int64>] = []
    /// Unreadable pages of the entity's table whose keys no neighbour bounds: their objects are
    /// lost, and not counted in ``lost``.
    package var pagesLostUncounted = 0
    /// With the schema lost, how the rows of the entity's table were placed (nil: by the store's
    /// own statement, the schema found).
    package var placement: String? = nil
    /// Where unreadable pages' keys are not known (``pagesLostUncounted``, or the file cut short),
    /// the keys up to the
    /// store's own `Z_PRIMARYKEY.Z_MAX` that have no row, read or set aside: an estimate of the
    /// objects those pages held — each lost with them, or deleted before the damage (the file does
    /// not say which). Counted under the hierarchy's root, at most 1,000,000 keys looked at.
    package var keysUnaccounted = 0
  }

  package var version: String
  package var entities: [String: EntityCounts] = [:]
  /// Rows written to tables that are not the model's (history, an app's own), by table.
  package var otherTables: [String: Int] = [:]
  /// Rows whose `Z_ENT` names no entity of their table, set aside in `MIGRUN_SALVAGED_<TABLE>`.
  package var setAside: [String: Int] = [:]
  /// Values in columns the model version's tables lack (a store laid out otherwise), by
  /// `TABLE.COLUMN`: not written, counted as lost.
  package var valuesLeft: [String: Int] = [:]
  /// Columns of the model's tables the model does not have (an app's `ALTER TABLE … ADD COLUMN`),
  /// `TABLE.COLUMN`: added to the new store's table as the store declared them, their values kept.
  package var columnsKept: [String] = []
  /// Columns whose `DEFAULT` is an expression, `TABLE.COLUMN`: never evaluated — a row written
  /// before the column was added (shorter than its table) reads NULL there.
  package var defaultsNotEvaluated: [String] = []
  /// Rows kept value by value in `MIGRUN_SALVAGED_VALUES`, by the table they were read as (`(no
  /// table)` for rows of no table): more values than SQLite lets a table have, or their table (the
  /// store's own) could not be made again.
  package var rowsKeptByValue: [String: Int] = [:]
  /// Tables of rows set aside whole, their columns not proven (the schema lost), by table.
  package var unplacedTables: [String: Int] = [:]
  /// What a reader of the kept metadata should know (empty: the store's own, nothing to say).
  package var metadataNotes: [String] = []
  /// Whether `Z_MODELCACHE` holds the store's own bytes (else written from the model: the store's was lost).
  package var modelCacheFromStore = false
  /// The store never had a model cache: its schema survived without `Z_MODELCACHE` (Core Data wrote
  /// none in its first frameworks: the 2011 store at framework 386) — nothing lost.
  package var storeHadNoModelCache = false
  /// What a reader of the kept model cache should know (empty: the version written's, nothing to say).
  package var modelCacheNotes: [String] = []
  /// `Z_PRIMARYKEY` rows of the store's own beyond the model's entities (persistent history's), carried.
  package var primaryKeysCarried = 0
  /// Triggers and views of the store's own made again in the new store.
  package var othersMade: [String] = []
  /// The store's own objects that could not be made again, by name, with why.
  package var notCarried: [String: String] = [:]
  /// Rows on leaves no tree leads to that fit no table (their table's definition lost), set aside
  /// in `MIGRUN_SALVAGED_ROWS` with their rowid and page.
  package var rowsOfNoTable = 0
  package var unreadablePages = 0
  /// Per table, keys the unreadable pages held that no row was recovered for: rows known lost.
  package var keysLost: [String: Int] = [:]
  /// Rows known lost of tables that hold no entity (the store's own, join tables), by table.
  package var otherRowsLost: [String: Int] = [:]
  /// Unreadable pages' ranges of tables that hold no entity whose lost rows are not counted, by table.
  package var otherPagesLostUncounted: [String: Int] = [:]
  package var badCells = 0
  package var unassignedRows = 0
  package var danglingKeysCleared = 0
  package var danglingKeysKept = 0
  package var joinRowsRemoved = 0
  /// Links to rows set aside (their columns not proven), kept aside with them as they were:
  /// to-ones in `MIGRUN_SETASIDE_LINKS`, join rows in `MIGRUN_SETASIDE_<JOIN TABLE>`.
  package var linksSetAside = 0
  package var maxKeysRaised = 0
  /// Where the metadata came from: the store's own, or — lost — new for the model (a new UUID).
  package var metadataFromStore = true
  /// With the schema lost, pages that each looked like `Z_METADATA`'s whole table (none taken).
  package var metadataPagesAlike = 0
  package var schemaFound = true
  package var headerIntact = true
  /// The page size the file was read at, and how it was found.
  package var pageSize = 4096
  package var pageSizeSource = SQLiteFileImage.PageSizeSource.header
  package var walFramesApplied = 0
  /// Frames of the -wal's last transaction, never committed (or torn), left out as SQLite would.
  package var walFramesLeftOut = 0
  /// Rows on pages no tree leads to whose keys their table's readable pages cover without them:
  /// deleted rows on a freed page, left out as SQLite leaves them out.
  package var deletedRowsLeftOut = 0
  /// Frames of a `-wal` whose header does not check, not read (as SQLite reads none): what they
  /// committed is lost.
  package var walFramesUnread = 0
  /// Pages the header counts that the file does not hold (cut short): what they held is lost, uncounted.
  package var pagesCutOff = 0
  /// Pages a hot `-journal` put back (``SQLiteFileImage/journalPagesRolledBack``): the store as
  /// its last committed transaction left it, a crashed writer's uncommitted changes undone.
  package var journalPagesRolledBack = 0
  /// The super-journal a hot `-journal` named that does not exist: the journal was not played back
  /// (SQLite reads its transaction as committed), the file read as it is.
  package var journalNotPlayedBack: String?
  /// What `check` still finds in the new store (empty: clean).
  package var remaining: [String] = []

  /// The figures in a line (what `check`'s dry run and salvage both say): objects written, rows of
  /// the store's own tables, rows set aside, and what is known lost.
  package var summary: String {
    let objects = entities.values.reduce(0) { $0 + $1.written }
    let others = otherTables.values.reduce(0, +)
    let aside =
      unplacedTables.values.reduce(0, +) + setAside.values.reduce(0, +) + rowsOfNoTable
      + rowsKeptByValue.filter { $0.key != "(no table)" }.values.reduce(0, +)
    let links = entities.values.reduce(0) { $0 + $1.linksLost.values.reduce(0, +) }
    var parts = ["\(objects) objects of \(entities.values.filter { $0.written > 0 }.count) entities"]
    if others > 0 { parts.append("\(others) rows of the store's own tables") }
    if aside > 0 { parts.append("\(aside) rows set aside") }
    let lostObjects = entities.filter { $0.value.lost > 0 }.sorted { $0.key < $1.key }
    if !lostObjects.isEmpty {
      let total = lostObjects.reduce(0) { $0 + $1.value.lost }
      parts.append(
        "\(total) objects lost (" + lostObjects.map { "\($0.key) \($0.value.lost)" }.joined(separator: ", ") + ")")
    }
    let uncounted = entities.values.reduce(0) { $0 + $1.pagesLostUncounted }
    if uncounted > 0 { parts.append("objects of \(uncounted) unreadable pages lost, uncounted") }
    if pagesCutOff > 0 { parts.append("the file cut short: what \(pagesCutOff) pages held lost, uncounted") }
    let rows = otherRowsLost.values.reduce(0, +)
    if rows > 0 { parts.append("\(rows) rows of tables of no entity lost") }
    let otherUncounted = otherPagesLostUncounted.values.reduce(0, +)
    if otherUncounted > 0 {
      parts.append("rows of \(otherUncounted) unreadable pages of tables of no entity lost, uncounted")
    }
    if links > 0 { parts.append("\(links) links lost") }
    return parts.joined(separator: "; ")
  }

  /// Keys as ranges: `1, 2, 3, 7` → `1...3, 7...7`.
  static func ranges(_ keys: [Int64]) -> [ClosedRange<Int64>] {
    var ranges: [ClosedRange<Int64>] = []
    for key in keys.sorted() {
      if let last = ranges.last, key == last.upperBound + 1 {
        ranges[ranges.count - 1] = last.lowerBound...key
      } else if ranges.last?.contains(key) != true {
        ranges.append(key...key)
      }
    }
    return ranges
  }

  /// Whether anything the damaged file held is known not to be in the new store as it was: lost,
  /// or kept only aside (rows of no table, of no entity, or whose columns are not proven).
  package var lost: Bool {
    unreadablePages > 0 || badCells > 0 || unassignedRows > 0 || pagesCutOff > 0 || !metadataFromStore
      || !valuesLeft.isEmpty
      || !notCarried.isEmpty
      || entities.values.contains { $0.missing > 0 || $0.setAside > 0 } || !unplacedTables.isEmpty
      || rowsOfNoTable > 0 || !setAside.isEmpty || walFramesUnread > 0 || !rowsKeptByValue.isEmpty
  }
}

/// The figures `check`'s dry run and salvage both give: the summary line and each entity's counts.
package struct SalvageFigures: Sendable, Encodable, Hashable {
  package var summary: String
  package var entities: [String: SalvageReport.EntityCounts]
}

extension SalvageReport {
  /// What the file's reading says, before anything is written.
  init(_ read: SalvageRead, version: String) {
    self.init(version: version)
    unreadablePages = read.unreadablePages
    badCells = read.tables.values.reduce(0) { $0 + $1.badCells }
    unassignedRows = read.unassignedRows
    schemaFound = read.schemaFound
    headerIntact = read.headerIntact
    walFramesApplied = read.walFramesApplied
    walFramesLeftOut = read.walFramesLeftOut
    deletedRowsLeftOut = read.deletedRowsLeftOut
    walFramesUnread = read.walFramesUnread
    pagesCutOff = read.pagesCutOff
    journalPagesRolledBack = read.journalPagesRolledBack
    metadataPagesAlike = read.metadataPagesAlike
    pageSize = read.image.pageSize
    pageSizeSource = read.image.pageSizeSource
    journalNotPlayedBack = read.image.journalNotPlayedBack
    defaultsNotEvaluated = read.tables.values.flatMap { table in
      (table.definition?.columns ?? []).compactMap { column in
        if case .expression? = column.defaultValue { "\(table.name).\(column.name)" } else { nil }
      }
    }.sorted()
  }

  package var figures: SalvageFigures { SalvageFigures(summary: summary, entities: entities) }
}
