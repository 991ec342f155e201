import FileDoors
import Foundation

/// A SQLite database file read page by page without SQLite, trusting nothing in it — what salvage
/// reads when SQLite itself answers "database disk image is malformed". The layout is SQLite's
/// documented file format (sqlite.org/fileformat2.html): a 100-byte header on page 1, b-tree pages
/// (table interior 5, table leaf 13, index interior 2, index leaf 10) with cell pointer arrays,
/// varints, records of serial types, overflow chains, the freelist, and the write-ahead log's frames.
///
/// Every number the file gives is checked before it is used: a page that does not parse is named as
/// unreadable, never followed; loops in trees, overflow chains and the freelist end the walk.
package struct SQLiteFileImage: Sendable {
  /// A value of a record, as SQLite stores it.
  package enum Value: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
  }

  /// One row read from a table leaf page.
  package struct Row: Sendable {
    package var rowid: Int64
    package var values: [Value]
    /// The page the row's cell is on.
    package var page: Int
    /// The overflow pages its payload continues on.
    package var overflow: [Int] = []
  }

  /// A page's b-tree kind, from its first byte.
  package enum PageKind: UInt8, Sendable {
    case indexInterior = 2
    case tableInterior = 5
    case indexLeaf = 10
    case tableLeaf = 13
  }

  package let pageSize: Int
  /// How ``pageSize`` was found: the header's, or — the header damaged — proven or guessed.
  package let pageSizeSource: PageSizeSource
  /// Bytes of each page that hold content (the page size less the reserved bytes at its end).
  package let usableSize: Int
  /// How the page size was found: from the header, or guessed from the pages (a damaged header).
  package let headerIntact: Bool
  /// Frames of the write-ahead log applied (its committed frames up to the first that does not
  /// check: a torn last frame is left out, as SQLite leaves it out). Frames of pages past the last
  /// commit's database size are not read.
  package let walFramesApplied: Int
  /// Frames of the write-ahead log's last transaction, left out because it was never committed:
  /// frames after the last commit frame, a frame whose checksum fails (torn) and those after it,
  /// and a frame cut short by the file's end (frames of an earlier log, other salts, not counted).
  package let walFramesLeftOut: Int
  /// Frames of a `-wal` whose header does not check (no log magic, another page size, a checksum
  /// that fails): not read, as SQLite does not read them — what they committed is lost.
  package let walFramesUnread: Int
  /// Pages the header counts that the file (with its `-wal`) does not hold: the file cut short.
  package let pagesCutOff: Int
  /// Pages of a hot rollback journal put back (a crashed writer's uncommitted pages undone, as
  /// SQLite's rollback undoes them), and pages past the size the store had before it cut off.
  package let journalPagesRolledBack: Int
  /// The super-journal a hot `-journal` names, when that file does not exist: SQLite reads the
  /// transaction as committed and deletes the journal unplayed (``RollbackJournal/isPlayedBack``),
  /// and so the file is read as it is — nil otherwise.
  package let journalNotPlayedBack: String?
  /// The main file: mapped from disk (its pages are copied out as they are read, so memory follows
  /// the pages being worked on, not the file's size).
  private let bytes: Data
  /// Page number → where its bytes lie in the write-ahead log (newer than the main file's).
  private let walPages: [Int: Int]
  /// The write-ahead log, read a page at a time.
  private let wal: SidecarFile
  /// The hot journal played back, and the pages it puts back (the page before the unfinished
  /// transaction), read from it a page at a time.
  private let journal: RollbackJournal?
  private let journalPages: Set<Int>
  /// The main file's pages that count: its own, or as many as it had before a hot journal's
  /// transaction grew it — none past the database's size.
  let mainPageCount: Int
  /// The database's size in pages, as SQLite takes it (sqlite.org/fileformat2.html, "in-header
  /// database size"): the header's count where it holds, else the last commit's in the `-wal`,
  /// else the file's. Pages past it are not the database's (a vacuum's leftovers: deleted rows),
  /// never read.
  let databasePages: Int

  package var pageCount: Int {
    max(mainPageCount, walPages.keys.max() ?? 0)
  }

  /// Pages the `-wal`'s committed frames hold.
  var walPageNumbers: Dictionary<Int, Int>.Keys { walPages.keys }

  /// Reads the database at `url` (and its hot `-journal` and its `-wal`, when there are) — only read.
  package init(url: URL) throws {
    try StoreFiles.checkSidecars(of: url)
    let main: Data
    do {
      // Through the door first: a FIFO or a device is refused by name, never waited on.
      try InputFile.check(url)
      main = try Data(contentsOf: url, options: .alwaysMapped)
    } catch let error as InputFileError {
      throw StoreError(.io, file: url.path, reason: error.reason, underlying: error)
    } catch {
      throw StoreError(.io, file: url.path, reason: "cannot read the file (\(error.localizedDescription))")
    }
    // The sidecars are read where they lie, a frame or a record at a time (a 1.5 GB -journal read
    // whole crashed salvage).
    let wal = ((try? SidecarFile(url: URL(fileURLWithPath: url.path + "-wal"))) ?? nil) ?? SidecarFile(bytes: [])
    self.init(data: main, wal: wal, journal: try RollbackJournal.hot(beside: url))
  }

  package init(bytes: [UInt8], wal: [UInt8] = [], journal: RollbackJournal? = nil) {
    self.init(data: Data(bytes), wal: SidecarFile(bytes: wal), journal: journal)
  }

  init(data bytes: Data, wal: SidecarFile, journal hot: RollbackJournal? = nil, pageSize forced: Int? = nil) {
    self.bytes = bytes
    self.wal = wal
    // A journal naming a super-journal that is gone is stale: SQLite does not play it back.
    let journal = hot?.isPlayedBack == false ? nil : hot
    journalNotPlayedBack = journal == nil ? hot?.superJournal : nil
    self.journal = journal
    // Page 1 of the main file may be the crashed writer's: the journal's page size is the store's.
    let declared = journal?.pageSize ?? Self.declaredPageSize(bytes)
    let walSize = wal.count >= 32 ? Int(wal.bigEndian(8, 4)) : 0
    let size: Int
    if let forced {
      (size, pageSizeSource) = (forced, .structure)
    } else if let declared {
      (size, pageSizeSource) = (declared, journal == nil ? .header : .journal)
    } else if Self.validPageSize(walSize) {
      (size, pageSizeSource) = (walSize, .wal)
    } else {
      (size, pageSizeSource) = Self.guessedPageSize(bytes)
    }
    pageSize = size
    headerIntact = declared != nil && forced == nil
    let header = journal?.original(1).map { Data($0) } ?? bytes
    let reserved = declared != nil && header.count > 20 ? Int(header[header.startIndex + 20]) : 0
    usableSize = max(480, size - reserved)
    let log = Self.committedFrames(wal, pageSize: size)
    (walFramesApplied, walFramesLeftOut, walFramesUnread) = (log.applied, log.leftOut, log.unread)
    let filePages = bytes.count / size
    journalPages = Set(journal?.originals.keys.filter { $0 <= (journal?.originalPageCount ?? 0) } ?? [])
    let kept = journal.map { min(filePages, $0.originalPageCount) } ?? filePages
    journalPagesRolledBack = journalPages.count + max(0, filePages - kept)
    // The database's size as SQLite takes it: the last commit's in the -wal (a transaction that
    // shrank the store — a vacuum — leaves the main file's pages past it as they were: deleted rows),
    // else the file's; the header's own count where it holds and is not more (then the file is cut).
    let held = log.databasePages ?? max(kept, log.pages.keys.max() ?? 0)
    let walHeader = log.pages[1].flatMap { wal.bytes(at: $0, count: size) }.map { Data($0) }
    let counted = declared == nil ? nil : Self.pagesCounted(walHeader ?? header)
    let pages = counted.map { min($0, held) } ?? held
    databasePages = pages
    walPages = log.pages.filter { $0.key <= pages }
    let inFile = min(kept, pages)
    mainPageCount = inFile
    let walLast = log.pages.keys.filter { $0 <= pages }.max() ?? 0
    pagesCutOff = counted.map { max(0, $0 - max(inFile, walLast)) } ?? 0
  }

  /// The pages the header counts (its in-header database size), when SQLite's rule says it holds:
  /// non-zero and written by the same change as the change counter.
  static func pagesCounted(_ header: Data) -> Int? {
    let pages = Int(bigEndian(header, 28, 4))
    guard pages > 0, bigEndian(header, 92, 4) == bigEndian(header, 24, 4) else { return nil }
    return pages
  }

  /// The bytes of page `number` (1-based), or nil when the file does not hold it whole.
  package func page(_ number: Int) -> ArraySlice<UInt8>? {
    guard number <= databasePages else { return nil }
    if let offset = walPages[number] { return wal.bytes(at: offset, count: pageSize)?[...] }
    if journalPages.contains(number) { return journal?.original(number)?[...] }
    guard number >= 1, number <= mainPageCount else { return nil }
    let start = (number - 1) * pageSize
    guard start + pageSize <= bytes.count else { return nil }
    return Array(bytes[bytes.startIndex + start..<bytes.startIndex + start + pageSize])[...]
  }

  /// The kind of page `number` by its b-tree header byte; nil for any other page.
  package func kind(of number: Int) -> PageKind? {
    let offset = number == 1 ? 100 : 0
    guard number <= databasePages else { return nil }
    if walPages[number] != nil || journalPages.contains(number) {
      return page(number).flatMap { $0.count > offset ? PageKind(rawValue: $0[$0.startIndex + offset]) : nil }
    }
    let start = (number - 1) * pageSize
    guard number >= 1, number <= mainPageCount, start + pageSize <= bytes.count else { return nil }
    return PageKind(rawValue: bytes[bytes.startIndex + start + offset])
  }

  // MARK: - Header and log

  static func bigEndian<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ at: Int, _ count: Int) -> UInt64
  where Bytes.Index == Int {
    guard at >= 0, at + count <= bytes.count else { return 0 }
    let start = bytes.startIndex + at
    return bytes[start..<start + count].reduce(0) { $0 << 8 | UInt64($1) }
  }

  static func validPageSize(_ size: Int) -> Bool { size >= 512 && size <= 65536 && size & (size - 1) == 0 }

  /// The page size the header declares, when the header is SQLite's.
  static func declaredPageSize(_ bytes: Data) -> Int? {
    guard bytes.count >= 100, bytes.starts(with: Array("SQLite format 3\0".utf8)) else { return nil }
    let raw = Int(bigEndian(bytes, 16, 2))
    let size = raw == 1 ? 65536 : raw
    return validPageSize(size) ? size : nil
  }

  /// What the write-ahead log's committed frames hold.
  struct CommittedLog {
    /// Page number → where its newest committed bytes lie in the log.
    var pages: [Int: Int] = [:]
    /// Frames applied (up to the last commit frame that checks).
    var applied = 0
    /// Frames of this log's salts after it: a transaction never committed, torn, or cut short.
    var leftOut = 0
    /// The database's size in pages after the last commit applied (its commit frame's field).
    var databasePages: Int?
    /// Frames of a log whose header is not this file's log header (no log magic, another page size,
    /// a checksum that fails): none read, as SQLite reads none.
    var unread = 0
  }

  /// The write-ahead log's committed frames: frames are read while their salts match the header's
  /// and their cumulative checksums check; those after the last commit frame among them are left
  /// out, and counted with the frames of this log's salts after a failing checksum and a frame cut
  /// short. The log is read a frame at a time: only where each page lies is kept.
  static func committedFrames(_ wal: SidecarFile, pageSize: Int) -> CommittedLog {
    var log = CommittedLog()
    guard wal.count >= 32, let header = wal.bytes(at: 0, count: 32) else { return log }
    // A log whose header is not one of this file's is not read (SQLite resets it): its frames, named.
    log.unread = (wal.count - 32) / (24 + pageSize)
    let magic = UInt32(bigEndian(header, 0, 4))
    guard magic == 0x377f_0682 || magic == 0x377f_0683, Int(bigEndian(header, 8, 4)) == pageSize else { return log }
    let bigEndianSums = magic == 0x377f_0683
    var sums = checksum(header[0..<24], bigEndian: bigEndianSums, start: (0, 0))
    guard sums.0 == UInt32(bigEndian(header, 24, 4)), sums.1 == UInt32(bigEndian(header, 28, 4)) else { return log }
    log.unread = 0
    let salts = (bigEndian(header, 16, 4), bigEndian(header, 20, 4))
    var pending: [Int: Int] = [:]
    var frames = 0
    var offset = 32
    while let frame = wal.bytes(at: offset, count: 24 + pageSize) {
      guard bigEndian(frame, 8, 4) == salts.0, bigEndian(frame, 12, 4) == salts.1 else { break }
      sums = checksum(frame[0..<8], bigEndian: bigEndianSums, start: sums)
      sums = checksum(frame[24..<24 + pageSize], bigEndian: bigEndianSums, start: sums)
      guard sums.0 == UInt32(bigEndian(frame, 16, 4)), sums.1 == UInt32(bigEndian(frame, 20, 4)) else { break }
      let number = Int(bigEndian(frame, 0, 4))
      guard number >= 1 else { break }  // SQLite reads a frame of page 0 as the end of the log
      pending[number] = offset + 24
      frames += 1
      let commit = Int(bigEndian(frame, 4, 4))
      if commit != 0 {
        log.pages.merge(pending) { _, newer in newer }
        pending = [:]
        log.applied = frames
        log.databasePages = commit
      }
      offset += 24 + pageSize
    }
    log.leftOut = frames - log.applied + framesOfLog(wal, from: offset, pageSize: pageSize, salts: salts)
    return log
  }

  /// Frames of this log (its salts) from `offset` on, a frame the file's end cuts short counted too.
  private static func framesOfLog(_ wal: SidecarFile, from offset: Int, pageSize: Int, salts: (UInt64, UInt64)) -> Int {
    var count = 0
    var offset = offset
    while let frame = wal.bytes(at: offset, count: 24), bigEndian(frame, 8, 4) == salts.0,
      bigEndian(frame, 12, 4) == salts.1
    {
      count += 1
      offset += 24 + pageSize
    }
    return count
  }

  /// SQLite's WAL checksum over `data` (8-byte steps), continuing from `start`.
  static func checksum(_ data: ArraySlice<UInt8>, bigEndian: Bool, start: (UInt32, UInt32)) -> (UInt32, UInt32) {
    var (s0, s1) = start
    var index = data.startIndex
    func word(_ at: Int) -> UInt32 {
      let b = (UInt32(data[at]), UInt32(data[at + 1]), UInt32(data[at + 2]), UInt32(data[at + 3]))
      return bigEndian ? b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3 : b.3 << 24 | b.2 << 16 | b.1 << 8 | b.0
    }
    while index + 8 <= data.endIndex {
      s0 = s0 &+ word(index) &+ s1
      s1 = s1 &+ word(index + 4) &+ s0
      index += 8
    }
    return (s0, s1)
  }
}
