import Foundation
import GRDB

#if canImport(Glibc)
  import Glibc
#endif

/// A store's rollback journal (`NAME-journal`): the pages a writer changed, as they were before its
/// transaction began (sqlite.org/fileformat2.html, "the rollback journal"). A journal is *hot* —
/// a writer crashed part way, its uncommitted pages possibly in the main file — when it is there,
/// not empty, starts with the journal's magic, and no process holds a write lock on the store.
/// SQLite rolls a hot journal back before anything reads the store; so does migrun, never on the
/// user's files: on a private copy (``rolledBackCopy(of:to:)``) or on the pages it reads
/// (``SQLiteFileImage``).
///
/// ```swift
/// if RollbackJournal.isHot(url) { try RollbackJournal.rolledBackCopy(of: url, to: copy) }
/// ```
package struct RollbackJournal: Sendable {
  /// Page number → where the page's bytes before the unfinished transaction lie in the journal
  /// (its first record of the page): read from the file when asked (``original(_:)``), never held.
  package let originals: [Int: Int]
  /// The store's size in pages before the transaction: pages past it were added by the transaction.
  package let originalPageCount: Int
  /// The page size the journal was written for.
  package let pageSize: Int
  /// The super-journal (SQLite's master journal) the journal names, when it names one whose
  /// checksum holds: the transaction was one of several databases' (sqlite.org/atomiccommit.html).
  package let superJournal: String?
  /// The journal's bytes, read a record at a time.
  private let file: SidecarFile

  static let magic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]

  /// The journal's file beside `store`.
  package static func url(of store: URL) -> URL { URL(fileURLWithPath: store.path + "-journal") }

  /// Whether `store` has a hot journal: one SQLite would roll back before reading the store.
  package static func isHot(_ store: URL) -> Bool {
    // Never through a link, never blocked by a FIFO: only a plain file is a journal
    // (``StoreFiles/checkSidecars(of:)`` refuses anything else by name).
    let descriptor = open(url(of: store).path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
    var header = [UInt8](repeating: 0, count: magic.count)
    guard pread(descriptor, &header, magic.count, 0) == magic.count, header == magic else { return false }
    // A writer holding its lock is still writing: its journal is live, not hot.
    return StoreUse.writer(of: store) == nil
  }

  /// The journal beside `store` when it is hot, read; `nil` when there is none. A hot journal that
  /// cannot be read is an error naming it: the file then holds a crashed writer's uncommitted pages,
  /// and nothing read from it could be told from the store (SQLite refuses it too). Its records are
  /// read where they lie, one at a time: a journal of any size is read in bounded memory.
  package static func hot(beside store: URL) throws -> RollbackJournal? {
    guard isHot(store) else { return nil }
    guard let file = try? SidecarFile(url: url(of: store)), let journal = RollbackJournal(file: file) else {
      throw StoreError(
        .io, file: store.path,
        reason:
          "\(url(of: store).lastPathComponent) is a hot journal (a writer crashed mid-transaction) that cannot be "
          + "read: the file holds that writer's uncommitted pages, and the committed ones cannot be told from them")
    }
    return journal
  }

  /// Reads journal `bytes` (see ``init(file:)``).
  package init?(bytes: [UInt8]) {
    self.init(file: SidecarFile(bytes: bytes))
  }

  /// Reads a journal: its segments, each a sector-padded header and page records (page number,
  /// the page's original bytes, a checksum), up to the first record that is cut short or does not
  /// check — as SQLite's playback reads it — and the super-journal it names at its end. `nil` when
  /// the first header is not a journal's.
  package init?(file: SidecarFile) {
    guard let first = Header(file, at: 0) else { return nil }
    self.file = file
    pageSize = first.pageSize
    originalPageCount = first.originalPageCount
    superJournal = Self.superJournal(in: file)
    var originals: [Int: Int] = [:]
    var offset = 0
    while let header = Header(file, at: offset), header.pageSize == first.pageSize {
      offset += header.sectorSize
      let recordSize = header.pageSize + 8
      let count = header.records == 0xFFFF_FFFF ? (file.count - offset) / recordSize : Int(header.records)
      var read = 0
      while read < count, let record = file.bytes(at: offset, count: recordSize) {
        let number = Int(SQLiteFileImage.bigEndian(record, 0, 4))
        let sum = UInt32(SQLiteFileImage.bigEndian(record, 4 + header.pageSize, 4))
        guard number >= 1, Self.checksum(record[4..<4 + header.pageSize], nonce: header.nonce) == sum else { break }
        if originals[number] == nil { originals[number] = offset + 4 }
        read += 1
        offset += recordSize
      }
      guard read == count, header.records != 0xFFFF_FFFF, count > 0 else { break }
      offset = (offset + header.sectorSize - 1) / header.sectorSize * header.sectorSize
    }
    self.originals = originals
  }

  /// Page `number`'s bytes before the unfinished transaction; nil when the journal has none.
  package func original(_ number: Int) -> [UInt8]? {
    originals[number].flatMap { file.bytes(at: $0, count: pageSize) }
  }

  /// Whether SQLite plays the journal back. A journal that names a super-journal which does not
  /// exist (or is empty) is not: the transaction committed — every database's journal was made
  /// stale by deleting the super-journal, the commit point — and SQLite deletes the journal
  /// without reading it (sqlite.org/atomiccommit.html, "Multi-file commit"; `pager_playback`).
  /// A name is looked up as SQLite looks it up, as it is written (absolute as SQLite writes it).
  package var isPlayedBack: Bool {
    guard let superJournal else { return true }
    var info = stat()
    guard stat(superJournal, &info) == 0 else { return false }
    return info.st_mode & S_IFMT != S_IFREG || info.st_size > 0
  }

  /// The super-journal's name at the journal's end, as SQLite's `readSuperJournal` reads it: the
  /// last 16 bytes are the name's length, its checksum (the sum of its bytes) and the journal's
  /// magic, the name just before them; nil when any of it does not hold (a checksum that fails:
  /// SQLite plays the journal back).
  static func superJournal(in file: SidecarFile) -> String? {
    let size = file.count
    guard size >= 16, let tail = file.bytes(at: size - 16, count: 16), Array(tail[8..<16]) == magic else { return nil }
    let length = Int(SQLiteFileImage.bigEndian(tail, 0, 4))
    let sum = UInt32(SQLiteFileImage.bigEndian(tail, 4, 4))
    // SQLite's bound: shorter than the longest path its VFS takes (512 on Unix), inside the file.
    guard length > 0, length < 513, length <= size - 16, let name = file.bytes(at: size - 16 - length, count: length)
    else { return nil }
    // `char` is signed on some platforms and not on others: the sum as either.
    let signed = name.reduce(UInt32(0)) { $0 &+ UInt32(bitPattern: Int32(Int8(bitPattern: $1))) }
    let unsigned = name.reduce(UInt32(0)) { $0 &+ UInt32($1) }
    guard sum == signed || sum == unsigned else { return nil }
    let text = name.prefix { $0 != 0 }
    return text.isEmpty ? nil : String(decoding: text, as: UTF8.self)
  }

  /// Copies `store` and its hot journal (and `-wal`) to `target`, then has SQLite roll the journal
  /// back there: `target` holds what the store held before the unfinished transaction. The store's
  /// own files are only read.
  package static func rolledBackCopy(of store: URL, to target: URL) throws {
    StoreFiles.remove(target)
    do {
      try StoreFiles.cloneOrCopy(store, to: target)
      try StoreFiles.cloneOrCopy(url(of: store), to: url(of: target))
      if StoreFiles.hasWALContent(store) {
        try StoreFiles.cloneOrCopy(
          URL(fileURLWithPath: store.path + "-wal"), to: URL(fileURLWithPath: target.path + "-wal"))
      }
      // SQLite rolls a hot journal back as the first read begins; the checkpoint folds a -wal in.
      let queue = try DatabaseQueue(path: target.path, configuration: SQLiteStore.configuration(readOnly: false))
      _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
      try queue.close()
      try StoreFiles.checkpoint(target)
      guard !isHot(target) else {
        throw StoreError(.sqlite, file: target.path, reason: "SQLite left the journal in place")
      }
    } catch {
      StoreFiles.remove(target)
      throw StoreError(
        StoreFailure.isDiskFull(error) ? .noSpace : .io, file: store.path,
        reason: "cannot roll its hot journal back on a private copy (\(error))", underlying: error)
    }
  }

  /// The checksum of a page record: the header's nonce plus every 200th byte of the page, from
  /// 200 bytes before its end towards its start (SQLite's `pager_cksum`).
  static func checksum(_ page: ArraySlice<UInt8>, nonce: UInt32) -> UInt32 {
    var sum = nonce
    var index = page.count - 200
    while index > 0 {
      sum = sum &+ UInt32(page[page.startIndex + index])
      index -= 200
    }
    return sum
  }

  /// A segment's header: magic, record count (`0xFFFFFFFF`: up to the end of the file), checksum
  /// nonce, the store's size in pages before the transaction, sector size, page size.
  private struct Header {
    let records: UInt32
    let nonce: UInt32
    let originalPageCount: Int
    let sectorSize: Int
    let pageSize: Int

    init?(_ file: SidecarFile, at offset: Int) {
      guard let bytes = file.bytes(at: offset, count: 28), Array(bytes[0..<8]) == RollbackJournal.magic else {
        return nil
      }
      records = UInt32(SQLiteFileImage.bigEndian(bytes, 8, 4))
      nonce = UInt32(SQLiteFileImage.bigEndian(bytes, 12, 4))
      originalPageCount = Int(SQLiteFileImage.bigEndian(bytes, 16, 4))
      sectorSize = Int(SQLiteFileImage.bigEndian(bytes, 20, 4))
      pageSize = Int(SQLiteFileImage.bigEndian(bytes, 24, 4))
      guard sectorSize >= 32, sectorSize <= 65536, sectorSize & (sectorSize - 1) == 0,
        SQLiteFileImage.validPageSize(pageSize)
      else { return nil }
    }
  }
}
