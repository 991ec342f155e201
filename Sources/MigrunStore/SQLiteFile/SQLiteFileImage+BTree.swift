import Foundation

extension SQLiteFileImage {
  /// What a walk of one table's b-tree found.
  package struct TableScan: Sendable {
    /// The tree's readable leaves, in key order.
    package var leaves: [Int] = []
    /// The tree's pages read (interior and leaf).
    package var pages: Set<Int> = []
    /// Overflow pages of the rows' payloads.
    package var overflow: Set<Int> = []
    /// Pages the tree points at that are not pages of a table tree (overwritten, cut off, or out of
    /// the file): the rows under them are not in ``rows``.
    package var unreadable: Set<Int> = []
    /// Cells on readable pages that did not parse (a damaged record, an overflow chain broken).
    package var badCells = 0
    /// The keys of those cells, where the cell's key itself reads: rows known lost.
    package var badKeys: [Int64] = []
    /// The rowid ranges the unreadable pages held, as their parents' cells bound them (lower bound
    /// exclusive, upper inclusive; nil where the parent gives none): where the lost rows were.
    package var lostRanges: [(after: Int64?, upTo: Int64?)] = []
    /// The rowid ranges the readable leaves hold, as their parents bound them: a key inside one that
    /// the leaf does not hold is no row of the table (a row of it found elsewhere was deleted).
    package var readRanges: [(after: Int64?, upTo: Int64?)] = []
  }

  /// Every row of the table b-tree whose root is `root` handed to `row` (none kept: a big table is
  /// read again from ``TableScan/leaves`` when it is written), its pages, and what could not be read.
  /// Pages in `avoid` (another tree's, the freelist) are not entered.
  package func scanTable(root: Int, avoid: Set<Int> = [], row: (Row) -> Void = { _ in }) -> TableScan {
    var scan = TableScan()
    var pending: [(page: Int, depth: Int, after: Int64?, upTo: Int64?)] = [(root, 0, nil, nil)]
    while let (number, depth, after, upTo) = pending.popLast() {
      func unreadable() {
        scan.unreadable.insert(number)
        scan.lostRanges.append((after, upTo))
      }
      guard scan.pages.insert(number).inserted else { continue }
      guard depth < 20, !avoid.contains(number) else {
        unreadable()
        continue
      }
      switch kind(of: number) {
      case .tableInterior?:
        guard let children = interiorChildren(number) else {
          unreadable()
          continue
        }
        // Cell i's child holds the keys after cell i-1's key up to cell i's; the right-most
        // pointer those after the last cell's key. Pushed last child first, so that the first is
        // taken next: the leaves come in key order (a salvage writing them in reverse left the new
        // table's pages half full: 96 MB for a 52 MB store).
        var lower = after
        var next: [(page: Int, depth: Int, after: Int64?, upTo: Int64?)] = []
        for (child, key) in children {
          next.append((child, depth + 1, lower, key ?? upTo))
          lower = key ?? lower
        }
        pending.append(contentsOf: next.reversed())
      case .tableLeaf?:
        guard let (rows, bad) = leafRows(number, overflow: &scan.overflow) else {
          unreadable()
          continue
        }
        scan.leaves.append(number)
        scan.readRanges.append((after, upTo))
        rows.forEach(row)
        scan.badCells += bad
        if bad > 0 { scan.badKeys += badCellKeys(number) }
      default: unreadable()
      }
    }
    return scan
  }

  /// The b-tree header's offset in page `number` (page 1 has the file header first).
  private func headerOffset(_ number: Int) -> Int { number == 1 ? 100 : 0 }

  /// The cell offsets of a b-tree page whose header is `headerSize` bytes, each checked to lie in
  /// the page's content area; nil when the header's counts cannot be right.
  private func cellOffsets(_ page: ArraySlice<UInt8>, number: Int, headerSize: Int) -> [Int]? {
    let base = page.startIndex
    let header = headerOffset(number)
    let count = Int(page[base + header + 3]) << 8 | Int(page[base + header + 4])
    let pointers = header + headerSize
    guard pointers + 2 * count <= usableSize else { return nil }
    var offsets: [Int] = []
    for index in 0..<count {
      let at = base + pointers + 2 * index
      let offset = Int(page[at]) << 8 | Int(page[at + 1])
      guard offset >= pointers + 2 * count, offset < usableSize else { return nil }
      offsets.append(offset)
    }
    return offsets
  }

  /// An interior table page's children, each with the largest key it holds: each cell's left child
  /// and the cell's key, then the right-most pointer (no key of its own).
  func interiorChildren(_ number: Int) -> [(page: Int, key: Int64?)]? {
    guard let page = page(number), let offsets = cellOffsets(page, number: number, headerSize: 12) else { return nil }
    let content = Array(page.prefix(usableSize))
    var children: [(Int, Int64?)] = []
    for offset in offsets {
      var at = offset + 4
      guard offset + 4 <= usableSize, let key = Self.varint(content, &at) else { return nil }
      children.append((Int(Self.bigEndian(content, offset, 4)), key))
    }
    let right = headerOffset(number) + 8
    children.append((Int(Self.bigEndian(content, right, 4)), nil))
    return children.allSatisfy { $0.0 >= 1 && $0.0 <= pageCount } ? children : nil
  }

  /// A table leaf page's rows, and how many of its cells did not parse; nil when the page's header
  /// cannot be right. The overflow pages the rows use are added to `overflow`.
  package func leafRows(_ number: Int, overflow: inout Set<Int>) -> (rows: [Row], bad: Int)? {
    guard let page = page(number), kind(of: number) == .tableLeaf,
      let offsets = cellOffsets(page, number: number, headerSize: 8)
    else { return nil }
    let content = Array(page.prefix(usableSize))
    var rows: [Row] = []
    var bad = 0
    for offset in offsets {
      guard let row = cell(at: offset, in: content, page: number, overflow: &overflow) else {
        bad += 1
        continue
      }
      rows.append(row)
    }
    return (rows, bad)
  }

  /// The keys of a table leaf page's cells that do not parse as rows (their record or overflow chain
  /// damaged) whose key itself reads: a cell's payload size and rowid come first.
  func badCellKeys(_ number: Int) -> [Int64] {
    guard let page = page(number), let offsets = cellOffsets(page, number: number, headerSize: 8) else { return [] }
    let content = Array(page.prefix(usableSize))
    var ignored = Set<Int>()
    return offsets.compactMap { offset in
      guard cell(at: offset, in: content, page: number, overflow: &ignored) == nil else { return nil }
      var at = offset
      guard let size = Self.varint(content, &at), size >= 0, let rowid = Self.varint(content, &at) else { return nil }
      return rowid
    }
  }

  /// The row of the table leaf cell at `offset`: its rowid and record, its payload's overflow
  /// chain followed (a chain that loops, leaves the file or falls short gives nil).
  private func cell(at offset: Int, in page: [UInt8], page number: Int, overflow: inout Set<Int>) -> Row? {
    var at = offset
    guard let size = Self.varint(page, &at), let rowid = Self.varint(page, &at), size >= 0,
      size <= Int64(pageCount) * Int64(usableSize)
    else { return nil }
    let total = Int(size)
    let local = localPayloadSize(total)
    guard at + local <= page.count else { return nil }
    var payload = Array(page[at..<at + local])
    var chain: [Int] = []
    if local < total {
      guard at + local + 4 <= page.count else { return nil }
      var next = Int(Self.bigEndian(page, at + local, 4))
      var seen = Set<Int>()
      while payload.count < total {
        guard next >= 1, next <= pageCount, seen.insert(next).inserted, let chunk = self.page(next) else { return nil }
        chain.append(next)
        let body = Array(chunk.prefix(usableSize))
        next = Int(Self.bigEndian(body, 0, 4))
        payload += body[4..<min(body.count, 4 + total - payload.count)]
      }
      overflow.formUnion(seen)
    }
    guard let values = Self.record(payload) else { return nil }
    return Row(rowid: rowid, values: values, page: number, overflow: chain)
  }

  /// How much of a table leaf cell's payload of `total` bytes is on the page itself.
  private func localPayloadSize(_ total: Int) -> Int { Self.localPayload(total, usable: usableSize, tableLeaf: true) }

  /// How much of a cell's payload of `total` bytes stays on its page (SQLite's rule: the rest is on
  /// overflow pages), for pages of `usable` bytes — a table leaf's, or an index cell's.
  static func localPayload(_ total: Int, usable: Int, tableLeaf: Bool) -> Int {
    let maxLocal = tableLeaf ? usable - 35 : (usable - 12) * 64 / 255 - 23
    guard total > maxLocal else { return total }
    let minLocal = (usable - 12) * 32 / 255 - 23
    let spill = minLocal + (total - minLocal) % (usable - 4)
    return spill <= maxLocal ? spill : minLocal
  }

  /// A SQLite varint at `at` (advanced past it); nil when the bytes end first.
  static func varint(_ bytes: [UInt8], _ at: inout Int) -> Int64? {
    var value: UInt64 = 0
    for index in 0..<9 {
      guard at < bytes.count else { return nil }
      let byte = bytes[at]
      at += 1
      if index == 8 { return Int64(bitPattern: value << 8 | UInt64(byte)) }
      value = value << 7 | UInt64(byte & 0x7F)
      if byte & 0x80 == 0 { return Int64(bitPattern: value) }
    }
    return nil
  }

  /// A record's values (header of serial types, then the values); nil when it does not parse.
  static func record(_ payload: [UInt8]) -> [Value]? {
    var at = 0
    guard let headerSize = varint(payload, &at), headerSize >= 1, headerSize <= payload.count else { return nil }
    var types: [Int64] = []
    types.reserveCapacity(Int(headerSize))
    while at < Int(headerSize) {
      guard let type = varint(payload, &at), type >= 0, type != 10, type != 11 else { return nil }
      types.append(type)
    }
    guard at == Int(headerSize) else { return nil }
    var values: [Value] = []
    values.reserveCapacity(types.count)
    for type in types {
      let length: Int
      switch type {
      case 0, 8, 9: length = 0
      case 1, 2, 3, 4: length = Int(type)
      case 5: length = 6
      case 6, 7: length = 8
      default: length = Int((type - (type % 2 == 0 ? 12 : 13)) / 2)
      }
      guard length >= 0, length <= payload.count - at else { return nil }
      let bytes = payload[at..<at + length]
      at += length
      switch type {
      case 0: values.append(.null)
      case 8: values.append(.integer(0))
      case 9: values.append(.integer(1))
      case 7: values.append(.real(Double(bitPattern: bytes.reduce(0) { $0 << 8 | UInt64($1) })))
      case 1...6:
        var number = bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let bits = length * 8
        if bits < 64, number & (Int64(1) << (bits - 1)) != 0 { number -= Int64(1) << bits }
        values.append(.integer(number))
      default:
        values.append(type % 2 == 0 ? .blob(Array(bytes)) : .text(String(decoding: bytes, as: UTF8.self)))
      }
    }
    return values
  }

  /// The pages on the freelist (trunk pages and the leaves they list), as the header names it; a
  /// chain that loops or leaves the file ends there.
  package func freelistPages() -> Set<Int> {
    guard headerIntact, let first = page(1) else { return [] }
    let header = Array(first.prefix(100))
    var trunk = Int(Self.bigEndian(header, 32, 4))
    var pages = Set<Int>()
    while trunk >= 1, trunk <= pageCount, pages.insert(trunk).inserted, let body = page(trunk) {
      let bytes = Array(body.prefix(usableSize))
      let count = Int(Self.bigEndian(bytes, 4, 4))
      guard count <= (usableSize - 8) / 4 else { break }
      for index in 0..<count {
        let leaf = Int(Self.bigEndian(bytes, 8 + 4 * index, 4))
        if leaf >= 1 && leaf <= pageCount { pages.insert(leaf) }
      }
      trunk = Int(Self.bigEndian(bytes, 0, 4))
    }
    return pages
  }

  /// With the header lost (page 1 overwritten: the freelist's first trunk is no longer named), the
  /// freelist found by content: pages laid out as trunk pages — no b-tree page's flag byte, the next
  /// trunk a page of the file or 0, a leaf count a trunk can hold, leaves distinct pages of the file
  /// — whose pages none of the trees walked (`claimed`) holds, with the leaves they list. A freed leaf
  /// keeps its old rows (deleted objects): without this they read as live orphans.
  ///
  /// A guess by shape, checked as far as the file allows: an overflow page can look like a trunk
  /// with no leaves (harmless: it lists nothing), and a trunk that lists a page a live tree holds is
  /// refused whole.
  package func freelistPagesByContent(excluding claimed: Set<Int>) -> Set<Int> {
    guard !headerIntact, pageCount >= 2 else { return [] }
    var pages = Set<Int>()
    let held = Set(heldPageNumbers())
    for number in heldPageNumbers() where !claimed.contains(number) && kind(of: number) == nil {
      guard let body = page(number) else { continue }
      let bytes = Array(body.prefix(usableSize))
      let next = Int(Self.bigEndian(bytes, 0, 4))
      let count = Int(Self.bigEndian(bytes, 4, 4))
      guard next <= pageCount, next != number, count >= 1, count <= (usableSize - 8) / 4 else { continue }
      let leaves = (0..<count).map { Int(Self.bigEndian(bytes, 8 + 4 * $0, 4)) }
      guard leaves.allSatisfy({ held.contains($0) && $0 != number && !claimed.contains($0) }),
        Set(leaves).count == count
      else { continue }
      pages.insert(number)
      pages.formUnion(leaves)
    }
    return pages
  }

  /// Every table leaf page of the file that is in none of `known` (trees walked, overflow chains,
  /// the freelist): the leaves a broken interior page no longer leads to.
  /// Only pages the file or its `-wal` holds are looked at: a `-wal` frame may name page 4294967280
  /// of a 4 KB file, and the pages between are nowhere.
  /// A page inside the overflow chain of a row read from another such leaf is that row's content
  /// (a blob's bytes can start like a leaf), never a leaf of its own.
  package func orphanLeaves(excluding known: Set<Int>) -> [Int] {
    guard pageCount >= 2 else { return [] }
    let leaves = heldPageNumbers().filter { !known.contains($0) && kind(of: $0) == .tableLeaf }
    var ignored = Set<Int>()
    let chained = Set(leaves.flatMap { leafRows($0, overflow: &ignored)?.rows.flatMap(\.overflow) ?? [] })
    return leaves.filter { !chained.contains($0) }
  }

  /// The page numbers past page 1 that the file or its `-wal` holds, in order: a `-wal` frame may
  /// name page 4294967280 of a 4 KB file, and the pages between are nowhere (never walked).
  func heldPageNumbers() -> [Int] {
    let inFile = mainPageCount >= 2 ? Array(2...mainPageCount) : []
    return inFile + walPageNumbers.filter { $0 > max(1, mainPageCount) }.sorted()
  }
}
