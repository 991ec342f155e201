import Foundation
import GRDB
import MigrunModel

/// A Core Data–level integrity report of one store (`migrun check`): SQLite's own check, then what
/// Core Data tolerates but a user should know — links naming no object, `Z_ENT` values no entity
/// has, `Z_PRIMARYKEY.Z_MAX` below a table's largest key, external-data references without files
/// and files no reference names, metadata that matches no model version and a cache that disagrees
/// with it. Nothing is written: the store is read as immutable (or read-only beside its `-shm`).
///
/// ```swift
/// for finding in try StoreCheck.findings(of: url, bundle: bundle) { print(finding) }
/// ```
public enum StoreCheck {
  /// One thing the check found: a kind to match on, and a message naming the store, entity and object.
  public struct Finding: Sendable, Hashable, CustomStringConvertible {
    /// `sqlite-integrity`, `link-to-no-object`, `unknown-entity-number`, `primary-key-behind`,
    /// `external-file-missing`, `external-file-unreferenced`, `no-matching-version`,
    /// `cache-disagrees-with-metadata`, `index-missing`, `value-of-another-type`, `required-value-null`,
    /// `primary-key-exhausted`, `no-such-store` (a path `check` was given names no store file); notes
    /// (``isNote``): `index-older-form`.
    public let kind: String
    /// What was found, in words.
    public let message: String
    /// What Core Data itself leaves so and a user may want to know, not damage: the store stays clean.
    public package(set) var isNote: Bool = false
    /// For the `salvage` note: the figures its dry run gives (those salvage then writes).
    package var salvage: SalvageFigures? = nil
    public var description: String { "\(isNote ? "note: " : "")\(kind): \(message)" }

    package init(kind: String, message: String, isNote: Bool = false, salvage: SalvageFigures? = nil) {
      self.kind = kind
      self.message = message
      self.isNote = isNote
      self.salvage = salvage
    }
  }

  /// SQLite's integrity check of the file at `url` (`quick_check`, or the full `integrity_check`):
  /// its complaints, empty when the file is sound.
  public static func sqliteProblems(of url: URL, full: Bool = false, limit: Int = 10) throws -> [String] {
    try sqliteProblems(of: StoreSession(url), full: full, limit: limit)
  }

  /// ``sqliteProblems(of:full:limit:)`` of the session's store, through the connection the session
  /// holds when it holds one (its functions are a superset).
  package static func sqliteProblems(of session: StoreSession, full: Bool = false, limit: Int = 10) throws
    -> [String]
  {
    guard SQLiteStore.readOnlyPath(session.url, isHeld: session.isHeld) != nil else {
      // Refused by name (this throws): only a copy could read it unchanged.
      _ = try openQueueForCheck(session.url, isHeld: session.isHeld, readWait: session.readWait)
      return []
    }
    return try session.withConnection { try sqliteProblems($0, full: full, limit: limit) }
  }

  /// A store file held open read-only for a check run later (on another thread, while the file is
  /// still there): opened by ``openForCheck(_:isHeld:readWait:)``, checked once by ``problems()``, then closed.
  package final class OpenedFile: @unchecked Sendable {
    private let queue: DatabaseQueue
    /// The file itself, held from the start too: the structure pass maps it (never through a link).
    private let descriptor: Int32
    private let path: String

    /// The file opened first, SQLite's connection after it: the file at the path when SQLite opens
    /// it is the one mapped, or the pass is not sure.
    fileprivate init(path: String, connecting: () throws -> DatabaseQueue) throws {
      self.path = path
      // Never waiting: a FIFO put in the store's place after its look is opened and not mapped.
      descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
      do {
        queue = try connecting()
      } catch {
        if descriptor >= 0 { close(descriptor) }
        throw error
      }
    }

    /// The file's damage as SQLite's quick check finds it (empty: none), the file closed after it.
    /// The structure pass (`BTreeStructure`) answers first, in one read of the mapped file; only
    /// where it is not sure does SQLite's own check run, and its verdict decides — so a store is
    /// refused only on SQLite's word.
    package func problems() throws -> [String] {
      defer {
        try? queue.close()
        if descriptor >= 0 { close(descriptor) }
      }
      if (try? isSound()) == true { return [] }
      return try StoreCheck.sqliteProblems(queue)
    }

    /// Whether the structure pass finds the file sound (``StoreCheck/isSound(_:file:mapped:)``) —
    /// inside one read transaction, so no writer changes the file meanwhile, and only while the
    /// file it maps is still the one at the path SQLite opened (else SQLite's check decides).
    private func isSound() throws -> Bool {
      guard descriptor >= 0 else { return false }
      return try queue.read { db in
        var info = stat()
        var named = stat()
        guard fstat(descriptor, &info) == 0, lstat(path, &named) == 0, info.st_dev == named.st_dev,
          info.st_ino == named.st_ino, info.st_size >= 512, let size = Int(exactly: info.st_size)
        else { return false }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED
        else {
          return false
        }
        defer { munmap(mapped, size) }
        // The pass reads every page in the trees' order, not the file's: on a file not in the page
        // cache (a store as it lies on disk) each fault waited on a small read. Asked for whole,
        // the file is read ahead in its own order while the pass starts.
        _ = madvise(mapped, size, MADV_WILLNEED)
        return try StoreCheck.isSound(db, file: UnsafeRawBufferPointer(start: mapped, count: size), mapped: true)
      }
    }
  }

  /// Whether the file `bytes` that `db` reads (in a read transaction, the whole main file) passes
  /// the structure pass (`BTreeStructure`) and SQLite's quick check of the tables with `NOT NULL`
  /// columns, `STRICT` types or `CHECK` constraints — the row tests the structure pass leaves out.
  /// False: not sure.
  /// `mapped`: `bytes` is a read-only map of the file, which the pass lets go of as it goes.
  package static func isSound(_ db: Database, file bytes: UnsafeRawBufferPointer, mapped: Bool = false) throws -> Bool {
    let schema = try Row.fetchAll(db, sql: "SELECT type, name, rootpage, sql FROM sqlite_master").map { row in
      (
        type: (row["type"] as String?) ?? "", name: (row["name"] as String?) ?? "",
        rootPage: (row["rootpage"] as Int?) ?? 0, sql: row["sql"] as String?
      )
    }
    let trees = BTreeStructure.trees(ofSchema: schema.map { ($0.type, $0.rootPage, $0.sql) })
    guard BTreeStructure.check(bytes, trees: trees, mapped: mapped) == nil else { return false }
    for table in schema where table.type == "table" {
      // Asked of SQLite, not read off the statement (`NOT` and `NULL` may stand apart, a comment
      // between them); `CHECK` anywhere in it, as a word or not, is taken to be one.
      let testsRows =
        try Bool.fetchOne(
          db, sql: #"SELECT EXISTS (SELECT 1 FROM pragma_table_info(?) WHERE "notnull")"#, arguments: [table.name])
        == true
        || Bool.fetchOne(
          db, sql: "SELECT EXISTS (SELECT 1 FROM pragma_table_list WHERE schema = 'main' AND name = ? AND strict)",
          arguments: [table.name]) == true
        || (table.sql?.uppercased().contains("CHECK") ?? false)
      guard testsRows else { continue }
      let literal = "'" + table.name.replacingOccurrences(of: "'", with: "''") + "'"
      guard try String.fetchAll(db, sql: "PRAGMA quick_check(\(literal))") == ["ok"] else { return false }
    }
    return true
  }

  /// The file opened read-only for a check (its file held open from here on).
  /// `isHeld`: whether another process holds it, when the caller knows (``SQLiteStore/readOnlyPath(_:isHeld:)``).
  package static func openForCheck(_ url: URL, isHeld: Bool? = nil, readWait: Double = 0) throws -> OpenedFile {
    try OpenedFile(path: url.path) { try openQueueForCheck(url, isHeld: isHeld, readWait: readWait) }
  }

  private static func openQueueForCheck(_ url: URL, isHeld: Bool?, readWait: Double) throws -> DatabaseQueue {
    // A file only a copy can read unchanged (a -wal without its -shm, a hot journal) is never opened
    // in place: SQLite would write a -shm or roll the journal back beside the user's store.
    guard let path = SQLiteStore.readOnlyPath(url, isHeld: isHeld) else {
      throw StoreError(
        .io, file: url.path,
        reason: "can be read unchanged only through a copy (its -wal has no -shm, or a hot journal)")
    }
    // SQLite's check computes expression indexes and derived values: the store's own configuration
    // has Core Data's functions (and the read's --wait).
    return try DatabaseQueue(path: path, configuration: SQLiteStore.configuration(readOnly: true, readWait: readWait))
  }

  package static func sqliteProblems(_ queue: DatabaseQueue, full: Bool = false, limit: Int = 10) throws -> [String] {
    do {
      let rows = try queue.read { db in
        try String.fetchAll(db, sql: "PRAGMA \(full ? "integrity_check" : "quick_check")(\(limit))")
      }
      return rows == ["ok"] ? [] : rows
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    {
      // So damaged the check itself cannot walk it: that is its finding.
      return [error.message ?? "database disk image is malformed"]
    }
  }

  /// Every finding for the store at `url`; `bundle`: the model folder its version should be in.
  public static func findings(of url: URL, bundle: ModelBundle? = nil) throws -> [Finding] {
    try findings(of: StoreSession(url), bundle: bundle)
  }

  /// ``findings(of:bundle:)`` of the session's store, from what the session read of it already.
  package static func findings(of session: StoreSession, bundle: ModelBundle? = nil) throws -> [Finding] {
    let url = session.url
    if let type = session.type, type != .sqlite { return atomicFindings(of: url, bundle: bundle) }
    try StoreFiles.checkSidecars(of: url)
    // A store whose -wal holds transactions, or with a hot journal, is read through a snapshot (the
    // original's files are never written); its external data stays where it is.
    let hotJournal = RollbackJournal.isHot(url)
    guard !StoreFiles.hasWALContent(url) && !hotJournal else {
      let folder = try ScratchFolder.make("check")
      defer { ScratchFolder.remove(folder) }
      let snapshot = folder.appendingPathComponent(url.lastPathComponent)
      if hotJournal {
        try RollbackJournal.rolledBackCopy(of: url, to: snapshot)
      } else {
        try StoreFiles.snapshot(url, to: snapshot)
      }
      let found = try naming(url, for: snapshot) {
        try findings(
          of: StoreSession(snapshot, readWait: session.readWait), bundle: bundle, externalData: ExternalData(store: url)
        )
      }
      return hotJournal ? [hotJournalNote(url)] + found : found
    }
    return try findings(of: session, bundle: bundle, externalData: ExternalData(store: url))
  }

  /// What `check` finds on a private copy of the store (`snapshot`) said of the user's file at
  /// `url`: every finding's message and a store error thrown name the store, never the copy.
  static func naming(_ url: URL, for snapshot: URL, _ body: () throws -> [Finding]) throws -> [Finding] {
    func named(_ text: String) -> String { text.replacingOccurrences(of: snapshot.path, with: url.path) }
    do {
      return try body().map {
        Finding(kind: $0.kind, message: named($0.message), isNote: $0.isNote, salvage: $0.salvage)
      }
    } catch let error as StoreError {
      throw StoreError(
        error.code, file: error.file.map(named), entity: error.entity, primaryKey: error.primaryKey,
        reason: named(error.reason), underlying: error.underlyingError)
    }
  }

  /// A hot journal beside the store: a writer crashed part way through a transaction, which SQLite
  /// undoes before the next read — not damage: the store is checked as the rollback leaves it.
  static func hotJournalNote(_ url: URL) -> Finding {
    Finding(
      kind: "hot-journal",
      message: "\(url.lastPathComponent)-journal: a writer crashed part way through a transaction; SQLite rolls it "
        + "back when the store is next opened for writing (the app, or `migrun migrate`). Checked as the rollback "
        + "leaves it (on a private copy; the store's files untouched)",
      isNote: true)
  }

  /// For a file SQLite calls damaged: what `migrun salvage` would write — salvage itself, read as
  /// salvage reads (``Salvage/read(_:bundle:)``) and written to a scratch folder thrown away: the
  /// figures are the ones salvage then writes.
  static func salvageNote(_ url: URL, bundle: ModelBundle?) -> Finding? {
    let version: ObjectModel
    let read: SalvageRead
    do {
      (version, read) = try Salvage.read(url, bundle: bundle)
    } catch {
      // Said as it is: the version salvage could not settle on, never a guess at why.
      return Finding(
        kind: "salvage",
        message: "\(salvaging(url)) cannot run as it is: \(error)", isNote: true)
    }
    // The dry run writes a whole store: in a scratch folder a killed check leaves to the next sweep.
    let report: SalvageReport
    do {
      let scratch = try ScratchFolder.make("dry")
      defer { ScratchFolder.remove(scratch) }
      report = try Salvage.write(read, model: version, to: scratch.appendingPathComponent("dry.sqlite"))
    } catch {
      return Finding(
        kind: "salvage",
        message: "\(salvaging(url)) would read \(read.rowCount) rows; its dry run "
          + "could not write them (\(error))", isNote: true)
    }
    return Finding(
      kind: "salvage", message: "\(salvaging(url)) would write " + report.summary,
      isNote: true, salvage: report.figures)
  }

  /// Salvage of the store at `url`, in the library's words (the command line says its command,
  /// `CommandLineWords`).
  static func salvaging(_ url: URL) -> String { "Salvage of `\(url.lastPathComponent)` into a new store" }

  /// An XML or binary store's damage: a file Core Data could not load (cut short, an object or link
  /// it cannot read — named), no version matching its hashes, a next key behind the largest key.
  private static func atomicFindings(of url: URL, bundle: ModelBundle?) -> [Finding] {
    let store: AtomicStore
    do {
      store = try AtomicStore.open(url)
    } catch {
      return [Finding(kind: "store-unreadable", message: "\(error)")]
    }
    var found: [Finding] = []
    // Whether the file records the next key or the last one given is not confirmed by a real file
    // (migrun writes the next): only a key below the largest is damage either way.
    if store.nextKey > 0 && store.nextKey < store.largestKey {
      found.append(
        Finding(
          kind: "primary-key-behind",
          message: "the store's next key, \(store.nextKey), is below its largest key \(store.largestKey)"))
    }
    guard let bundle else {
      found.append(
        Finding(
          kind: "no-matching-version",
          message: "no model: give StoreCheck a model bundle (XML and binary stores hold none)"))
      return found
    }
    guard let model = bundle.version(matching: store.metadata.versionHashes) else {
      found.append(
        Finding(kind: "no-matching-version", message: "the store's metadata hashes match no version of \(bundle.name)"))
      return found
    }
    do {
      _ = try store.objects(of: model)
    } catch {
      found.append(Finding(kind: "store-unreadable", message: "\(error)"))
    }
    return found
  }

  private static func findings(of session: StoreSession, bundle: ModelBundle?, externalData: ExternalData) throws
    -> [Finding]
  {
    let url = session.url
    var found: [Finding] = []
    let sqlite: [String]
    do {
      sqlite = try sqliteProblems(of: session, full: true)
    } catch {
      // Held by a writer in the middle of its commit: in use, not damage.
      if StoreFailure.isInUse(error) { throw StoreUse.inUseError(url, cause: error, waited: session.readWait) }
      return [Finding(kind: "sqlite-integrity", message: "\(url.lastPathComponent): \(error)")]
        + [salvageNote(url, bundle: bundle)].compactMap { $0 }
    }
    found += sqlite.map { Finding(kind: "sqlite-integrity", message: $0) }
    guard sqlite.isEmpty else { return found + [salvageNote(url, bundle: bundle)].compactMap { $0 } }
    let metadata = try session.metadata()
    var model = bundle?.version(matching: metadata.versionHashes)
    if let bundle, model == nil {
      found.append(
        Finding(
          kind: "no-matching-version",
          message: "the store's metadata hashes match no version of \(bundle.name); its own cached model is used"))
    }
    if model == nil { model = try session.cachedModel() }
    guard let model else {
      found.append(
        Finding(
          kind: "no-matching-version", message: "no model: give StoreCheck a model bundle (the store has no cache)"))
      return found
    }
    let store = try SQLiteStore(url: url, model: model, access: .readOnly, fastWrites: false, session: session)
    store.externalData = externalData
    defer { try? store.close() }
    found += store.cacheDisagreement.map { cacheDisagreement($0, modelGiven: bundle != nil) }
    for (place, count) in try store.danglingLinks().sorted(by: { $0.key < $1.key }) {
      found.append(
        Finding(kind: "link-to-no-object", message: "\(place): \(count) link\(count == 1 ? "" : "s") naming no object"))
    }
    found +=
      try store.unknownEntityNumbers() + store.primaryKeysBehind() + store.indexFindings()
      + store.valuesOfAnotherType()
    found += try externalFileFindings(store)
    return try found + store.columnsNotInModel() + store.rowsSetAside()
  }

  /// An entity whose hash from the store's own cached model is not the one in its metadata. Core
  /// Data opens a store by its metadata's hashes (the app's model has them), never by the cache's, so
  /// the store opens in the app; what differs is migrun's reading of the cache — a property kind
  /// whose hash rule it does not have, or a cache written by another build of the model.
  static func cacheDisagreement(_ difference: EntityDifference, modelGiven: Bool) -> Finding {
    guard case .hashDiffers(let stored, let cached) = difference.kind else {
      return Finding(
        kind: "cache-disagrees-with-metadata",
        message: "\(difference.description) (the store's metadata and its cached model name other entities)")
    }
    return Finding(
      kind: "cache-disagrees-with-metadata",
      message: "\(difference.entity): the hash migrun computes from the store's cached model (\(cached.base64)) is "
        + "not the one in its metadata (\(stored.base64)). Core Data opens a store by its metadata's hashes, so the "
        + "app whose model wrote it opens it; the cache holds a property migrun hashes otherwise, or was written by "
        + "another build of the model"
        + (modelGiven ? "" : ". Give the app's model (StoreCheck's bundle) to check against it"))
  }

  /// Values kept outside the store whose file is missing, and files no value names.
  private static func externalFileFindings(_ store: SQLiteStore) throws -> [Finding] {
    var found: [Finding] = []
    let references = try store.externalReferences()
    // Behind a link nothing is read (files() is empty): the link is the finding, not every value missing.
    if !references.isEmpty, let link = store.externalData.linkOnTheWay(to: nil) {
      return [
        Finding(
          kind: "external-data-link",
          message:
            "\(link.path) is a symbolic link: the \(references.count) values kept outside the store are read only "
            + "from plain files in the store's own support folder, never through a link")
      ]
    }
    let files = store.externalData.files()
    var missing: [String: Int] = [:]
    for reference in references where !files.contains(reference.file) {
      missing["\(reference.object.entity).\(reference.attribute)", default: 0] += 1
    }
    for (place, count) in missing.sorted(by: { $0.key < $1.key }) {
      found.append(
        Finding(
          kind: "external-file-missing",
          message: "\(place): \(count) value\(count == 1 ? "" : "s") kept outside the store whose file is missing"))
    }
    let unreferenced = files.subtracting(references.map(\.file))
    if !unreferenced.isEmpty {
      found.append(
        Finding(
          kind: "external-file-unreferenced",
          message:
            "\(unreferenced.count) file\(unreferenced.count == 1 ? "" : "s") in \(store.externalData.folder.path) no value names"
        ))
    }
    return found
  }

  /// Whether the model requires a value of `attribute` (Core Data's validation refuses to save an
  /// object without one): not optional, not derived — a composite's elements may be NULL when the
  /// composite is, so required is the composite's flag and no element's.
  static func requiresValue(_ attribute: Attribute) -> Bool {
    !attribute.isOptional && attribute.type != .composite && attribute.derivation == nil
  }

  /// Whether a real in an integer column is within `range`, as SQLite compares them (`BETWEEN`);
  /// NaN, which SQLite keeps as NULL, is no number outside it. (Int64's largest is no double: 2^63
  /// is the nearest, and past it.)
  static func fits(_ number: Double, _ range: ClosedRange<Int64>) -> Bool {
    number.isNaN
      || (number >= Double(range.lowerBound) && number <= Double(range.upperBound) && number < 0x1p63)
  }
}

extension SQLiteStore {
  /// Rows of the model's tables whose `Z_ENT` is no entity of the table (an entity removed without
  /// its rows, a damaged row).
  func unknownEntityNumbers() throws -> [StoreCheck.Finding] {
    var byTable: [String: Set<Int>] = [:]
    for layout in schema.entities { byTable[layout.table, default: []].insert(layout.number) }
    var found: [StoreCheck.Finding] = []
    for (table, numbers) in byTable.sorted(by: { $0.key < $1.key }) {
      let known = numbers.sorted().map(String.init).joined(separator: ", ")
      let rows = try read { db in
        try Row.fetchAll(
          db, sql: "SELECT Z_ENT, count(*) FROM \(table) WHERE Z_ENT IS NULL OR Z_ENT NOT IN (\(known)) GROUP BY Z_ENT")
      }
      for row in rows {
        // Z_ENT may hold text or bytes in a damaged store: shown as SQLite quotes it, never read as a number.
        let number = (row[0] as DatabaseValue).description
        let count = try row.required(at: 1, named: "count(*)", as: Int.self)
        found.append(
          StoreCheck.Finding(
            kind: "unknown-entity-number",
            message:
              "\(table): \(count) row\(count == 1 ? "" : "s") with Z_ENT \(number), which no entity of the table has"))
      }
    }
    return found
  }

  /// Indexes the model calls for (as the framework that wrote the store writes them) that the store
  /// lacks — Core Data's fetches by those properties scan their table — and, as notes, indexes of
  /// the form before framework 847 that a store Core Data migrated in place keeps on a table the
  /// migration left alone.
  func indexFindings() throws -> [StoreCheck.Finding] {
    let present = try read { db in
      try String.fetchAll(db, sql: "SELECT upper(name) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
    }
    let names = Set(present)
    var found: [StoreCheck.Finding] = []
    for index in schema.indexes where !names.contains(index.name.uppercased()) {
      // Frameworks before iOS 9 wrote a uniqueness constraint as `CONSTRAINT … UNIQUE` in the table.
      if index.isUnique, try hasUniqueConstraint(on: index.table, columns: index.columns.map(Self.bareColumn)) {
        continue
      }
      found.append(
        StoreCheck.Finding(
          kind: "index-missing",
          message: "\(index.table): no index \(index.name), which the model calls for (\(index.createStatement))"))
    }
    let current = Dictionary(
      schema.indexes.map {
        ($0.table.uppercased() + " " + $0.columns.map(Self.bareColumn).joined(separator: ","), $0.name)
      },
      uniquingKeysWith: { first, _ in first })
    for index in schema.olderFormIndexes where names.contains(index.name.uppercased()) {
      let today = current[index.table.uppercased() + " " + index.columns.map(Self.bareColumn).joined(separator: ",")]
      found.append(
        StoreCheck.Finding(
          kind: "index-older-form",
          message:
            "\(index.table): index \(index.name) is the form Core Data wrote before framework 847, kept from an earlier "
            + "framework\(today.map { "; today's Core Data writes \($0)" } ?? "")",
          isNote: true))
    }
    return found
  }

  /// Attribute values Core Data could not read back as their type: an integer outside its
  /// attribute's width (Integer 16, Integer 32), text or bytes where a number or date belongs (but
  /// the text `NaN`, Core Data's own form of a floating-point NaN) — and NULL in an attribute the
  /// model says is not optional (Core Data's validation refuses to save one; SQLite keeps a NaN date
  /// as NULL). One scan per entity: every attribute it declares counted at once, over its objects and
  /// its subentities'.
  func valuesOfAnotherType() throws -> [StoreCheck.Finding] {
    var found: [StoreCheck.Finding] = []
    for layout in schema.entities {
      guard let entity = model.entity(named: layout.name) else { continue }
      // Per attribute: the SQL counting values of another type, and the finding's words.
      var counts: [(sql: String, place: String, what: String, kind: String)] = []
      for attribute in entity.attributes {
        let required = StoreCheck.requiresValue(attribute)
        for leaf in attribute.leaves where !leaf.isTransient {
          guard case .attribute(let column)? = layout.properties[leaf.name] else { continue }
          let place = "\(layout.name).\(leaf.name) (\(leaf.type.xmlName))"
          counts += Self.anotherType(leaf.type, column: column.name).map {
            ($0.sql, place, $0.what, "value-of-another-type")
          }
          if required {
            // Rows of the entity's own kinds only: a row of no entity is a finding of its own.
            let own =
              "\(column.name) IS NULL AND Z_ENT IN (\(layout.kindNumbers.map(String.init).joined(separator: ", ")))"
            counts.append((own, place, "NULL, where the model requires a value", "required-value-null"))
          }
        }
      }
      guard !counts.isEmpty else { continue }
      let sums = counts.map { "coalesce(sum(\($0.sql)), 0)" }.joined(separator: ", ")
      let condition = schema.rowCondition(layout).map { " WHERE \($0)" } ?? ""
      let row = try read { db in try Row.fetchOne(db, sql: "SELECT \(sums) FROM \(layout.table)\(condition)") }
      for (index, count) in counts.enumerated() {
        let number = try row?.value(at: index, named: "count", as: Int.self) ?? 0
        guard number > 0 else { continue }
        found.append(
          StoreCheck.Finding(
            kind: count.kind,
            message: "\(count.place): \(number) value\(number == 1 ? "" : "s") \(count.what)"))
      }
    }
    return found
  }

  /// The SQL conditions that find a value of another type than `type` in `column`, and their words.
  private static func anotherType(_ type: AttributeType, column: String) -> [(sql: String, what: String)] {
    let textOrBytes = "typeof(\(column)) IN ('text', 'blob')"
    switch type {
    case .integer16, .integer32, .integer64:
      guard let range = type.integerRange else { return [] }
      let (low, high) = (range.lowerBound, range.upperBound)
      return [
        (
          "typeof(\(column)) IN ('integer', 'real') AND \(column) NOT BETWEEN \(low) AND \(high)",
          "outside \(low)…\(high)"
        ),
        (textOrBytes, "stored as text or bytes"),
      ]
    case .boolean, .date: return [(textOrBytes, "stored as text or bytes")]
    case .double, .float, .decimal: return [("\(textOrBytes) AND \(column) IS NOT 'NaN'", "stored as text or bytes")]
    default: return []
    }
  }

  /// Whether `table` has a unique index or constraint on exactly `columns` (in any order).
  private func hasUniqueConstraint(on table: String, columns: [String]) throws -> Bool {
    try read { db in
      for index in try Row.fetchAll(
        db, sql: "SELECT name FROM pragma_index_list(?) WHERE \"unique\" = 1", arguments: [table])
      {
        let name: String = index[0]
        let indexed = try String.fetchAll(
          db, sql: "SELECT upper(name) FROM pragma_index_info(?) ORDER BY seqno", arguments: [name])
        if Set(indexed) == Set(columns), indexed.count == columns.count { return true }
      }
      return false
    }
  }

  /// An index column expression's column alone (`ZA COLLATE BINARY ASC` → `ZA`).
  private static func bareColumn(_ expression: String) -> String {
    String(expression.split(separator: " ").first ?? "").uppercased()
  }

  /// Columns of the model's tables that the model does not have (added by hand with `ALTER TABLE`):
  /// notes, since Core Data opens the store and neither reads nor writes them.
  func columnsNotInModel() -> [StoreCheck.Finding] {
    schema.extraColumns(existing: storedTables).map { table, columns in
      let named = columns.map { "\(table).\($0)" }.joined(separator: ", ")
      let version = model.versionName.map { "model version '\($0)'" } ?? "the model"
      return StoreCheck.Finding(
        kind: "column-not-in-model",
        message: "\(named): \(columns.count == 1 ? "a column" : "columns") \(version) does not have (added by hand?); "
          + "Core Data neither reads nor writes \(columns.count == 1 ? "it" : "them")",
        isNote: true)
    }
  }

  /// Rows a salvage could not place by proof (`MIGRUN_SETASIDE_<ENTITY>`: the rowid, then the
  /// values as read): a finding, never a clean bill — Core Data reads none of them as objects.
  func rowsSetAside() throws -> [StoreCheck.Finding] {
    try storedTables.keys.filter { $0.uppercased().hasPrefix("MIGRUN_SETASIDE_") }.sorted().map { table in
      let count = try countRows("SELECT count(*) FROM \(StoreEdit.quoted(table))")
      return StoreCheck.Finding(
        kind: "rows-set-aside",
        message: "\(ErrorMessage.terminalSafe(table)): \(count) row\(count == 1 ? "" : "s") salvage could not "
          + "place by proof, kept as read "
          + "(rowid, then C0, C1, …); Core Data reads none of them")
    }
  }

  /// Hierarchies whose `Z_PRIMARYKEY.Z_MAX` is below the largest key their table holds: Core Data
  /// would hand out a key already taken.
  func primaryKeysBehind() throws -> [StoreCheck.Finding] {
    var found: [StoreCheck.Finding] = []
    for layout in schema.entities where layout.superNumber == 0 {
      let (largest, max) = try read { db -> (Int64?, Int64?) in
        let largest = try Int64.fetchOne(
          db, sql: "SELECT max(Z_PK) FROM \(layout.table) WHERE \(schema.rowPredicate(layout))")
        let max = try Int64.fetchOne(
          db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [layout.number])
        return (largest, max)
      }
      if largest == .max || max == .max {
        found.append(
          StoreCheck.Finding(
            kind: "primary-key-exhausted",
            message:
              "\(layout.name): a key is \(Int64.max), the largest a key can be: Core Data can number no new object"))
      } else if let largest, largest > (max ?? 0) {
        found.append(
          StoreCheck.Finding(
            kind: "primary-key-behind",
            message:
              "\(layout.name): Z_PRIMARYKEY.Z_MAX is \(max.map(String.init) ?? "missing") but its table holds key \(largest)"
          ))
      }
    }
    return found
  }
}
