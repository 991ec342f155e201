import Foundation

/// A fast pass over a SQLite file's structure, by SQLite's documented file format
/// (sqlite.org/fileformat2.html), for the one question a migration asks of its input before the
/// swap: is the file sound? It makes the structural checks of SQLite's `PRAGMA quick_check` —
/// every b-tree page's header, cell pointers, cells and freeblocks inside the page and not
/// overlapping, the fragment count the header gives, rowids in order within their parents' bounds,
/// every leaf at one depth, overflow chains of the length their payload needs, the freelist's
/// trunks and count, an auto-vacuum file's pointer map (every page's parent as the map records it,
/// the largest root as the header gives it), and every page used exactly once — in one read of the mapped file instead of
/// SQLite's two passes through `pread`.
///
/// It only ever answers "sound" or "not sure": anything it does not find as SQLite writes it (a
/// header size that disagrees with the file, a depth past any real
/// tree's, a page that does not parse) is "not sure", and the caller asks SQLite's own check,
/// whose verdict decides. So a store is never refused on this pass's word; what it proves sound is
/// what SQLite's quick check would pass, short of the row pass that tests `NOT NULL` columns —
/// which the caller asks SQLite for, table by table (`StoreCheck.OpenedFile`).
package enum BTreeStructure {
  /// A b-tree the schema names: its root page and whether it is a table's (integer keys) or an
  /// index's (a `WITHOUT ROWID` table's too).
  package struct Tree: Sendable {
    package var root: Int
    package var hasIntegerKeys: Bool

    package init(root: Int, hasIntegerKeys: Bool) {
      self.root = root
      self.hasIntegerKeys = hasIntegerKeys
    }
  }

  /// The b-trees of `sqlite_master` rows (`type`, `rootpage`, `sql`): tables and indexes with a
  /// root page (views, triggers and virtual tables have none). The schema's own tree (page 1) is
  /// added by ``check(_:trees:)``.
  package static func trees(ofSchema rows: [(type: String, rootPage: Int, sql: String?)]) -> [Tree] {
    rows.compactMap { row in
      guard row.rootPage > 0, row.type == "table" || row.type == "index" else { return nil }
      let withoutRowid = row.sql.map { $0.uppercased().contains("WITHOUT ROWID") } ?? false
      return Tree(root: row.rootPage, hasIntegerKeys: row.type == "table" && !withoutRowid)
    }
  }

  /// Whether the file `bytes` (the whole main file; no `-wal` content, no hot journal) is sound:
  /// nil when it is, else why this pass is not sure (SQLite's check then decides). `mapped`: `bytes`
  /// is a shared, read-only map of the file — every few thousand pages its pages are let go
  /// (`MADV_DONTNEED`; the file's pages stay in the page cache), so the process holds a window of the
  /// file, not the whole of it.
  package static func check(_ bytes: UnsafeRawBufferPointer, trees: [Tree], mapped: Bool = false) -> String? {
    var walk: Walk
    switch Walk.make(bytes) {
    case .success(let made): walk = made
    case .failure(let why): return why.text
    }
    walk.mapped = mapped
    defer { walk.copy.deallocate() }
    do {
      try walk.pointerMap(roots: trees.map(\.root))
      for tree in [Tree(root: 1, hasIntegerKeys: true)] + trees {
        if tree.root != 1 { try walk.expect(tree.root, .root, parent: 0) }
        var leafDepth: Int?
        try walk.page(tree.root, table: tree.hasIntegerKeys, depth: 0, leafDepth: &leafDepth, bounds: (nil, nil))
      }
      try walk.freelist()
      try walk.everyPageUsed()
    } catch let notSure as NotSure {
      return notSure.text
    } catch {
      return "\(error)"
    }
    return nil
  }

  /// Why the pass is not sure.
  struct NotSure: Error {
    var text: String
    init(_ text: String) { self.text = text }
  }

  /// Pages walked between two lettings-go of a mapped file (32 MiB of 4 KiB pages).
  static let window = 8192

  /// The deepest b-tree taken as real (SQLite's own limit is 20 levels).
  static let deepest = 40

  struct Walk {
    let bytes: UnsafeRawBufferPointer
    let pageSize: Int
    let usable: Int
    let pageCount: Int
    /// SQLite's lock-byte page (the page holding byte 2^30), never used for content.
    let lockPage: Int
    /// Pages one pointer-map page covers (itself included); nil when the file has no pointer map.
    let perMapPage: Int?
    var used: [Bool]
    /// The b-tree page being read (``current``), copied out of the map in one sweep: the processor
    /// streams a copy, where reading cell after cell in the map waits on memory for each.
    let copy: UnsafeMutableRawBufferPointer
    var current = 0
    /// Whether ``bytes`` is a map of the file that may be let go of (see ``check(_:trees:mapped:)``).
    var mapped = false
    var taken = 0
    /// A page's cells and freeblocks, the buffer kept from page to page.
    var spans: [(start: Int, end: Int)] = []

    /// What a pointer-map entry says a page is (SQLite's codes).
    enum Role: Int {
      case root = 1
      case free = 2
      case firstOverflow = 3
      case overflow = 4
      case child = 5
    }

    static func make(_ bytes: UnsafeRawBufferPointer) -> Result<Walk, NotSure> {
      guard bytes.count >= 512, bytes.starts(with: Array("SQLite format 3\0".utf8)) else {
        return .failure(NotSure("not a SQLite file header"))
      }
      let declared = Int(bytes[16]) << 8 | Int(bytes[17])
      let pageSize = declared == 1 ? 65536 : declared
      guard SQLiteFileImage.validPageSize(pageSize) else {
        return .failure(NotSure("page size \(declared)"))
      }
      let usable = pageSize - Int(bytes[20])
      guard usable >= 480, bytes[21] == 64, bytes[22] == 32, bytes[23] == 32 else {
        return .failure(NotSure("payload fractions or reserved bytes not SQLite's"))
      }
      let counted = read32(bytes, 28)
      guard counted > 0, read32(bytes, 24) == read32(bytes, 92), bytes.count == counted * pageSize else {
        return .failure(NotSure("the header's page count is not the file's"))
      }
      let lockPage = (1 << 30) / pageSize + 1
      // An auto-vacuum file (the header names its largest root) holds pointer-map pages; past the
      // lock-byte page their places shift, which this pass leaves to SQLite.
      let autoVacuum = read32(bytes, 52) != 0
      guard !autoVacuum || counted < lockPage else { return .failure(NotSure("an auto-vacuum file past 1 GiB")) }
      return .success(
        Walk(
          bytes: bytes, pageSize: pageSize, usable: usable, pageCount: counted, lockPage: lockPage,
          perMapPage: autoVacuum ? usable / 5 + 1 : nil, used: [Bool](repeating: false, count: counted + 1),
          copy: UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)))
    }

    static func read32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Int {
      Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }

    @inline(__always)
    func u8(_ page: Int, _ at: Int) -> Int { Int(page == current ? copy[at] : bytes[(page - 1) * pageSize + at]) }
    func u16(_ page: Int, _ at: Int) -> Int { u8(page, at) << 8 | u8(page, at + 1) }
    func u32(_ page: Int, _ at: Int) -> Int { Self.read32(bytes, (page - 1) * pageSize + at) }

    /// The varint at `at` of `page`, and the offset after it; throws past `end`. (Most are one
    /// byte: read here, the rest by ``longVarint(_:_:end:)``.)
    @inline(__always)
    func varint(_ page: Int, _ at: Int, end: Int) throws -> (value: Int64, next: Int) {
      guard at < end else { throw NotSure("page \(page): a varint runs off its cell") }
      let first = u8(page, at)
      if first < 0x80 { return (Int64(first), at + 1) }
      return try longVarint(page, at, end: end)
    }

    func longVarint(_ page: Int, _ at: Int, end: Int) throws -> (value: Int64, next: Int) {
      var value: UInt64 = 0
      var offset = at
      for index in 0..<9 {
        guard offset < end else { throw NotSure("page \(page): a varint runs off its cell") }
        let byte = UInt64(u8(page, offset))
        offset += 1
        if index == 8 { return (Int64(bitPattern: value << 8 | byte), offset) }
        value = value << 7 | (byte & 0x7f)
        if byte & 0x80 == 0 { break }
      }
      return (Int64(bitPattern: value), offset)
    }

    /// Marks `page` used, once.
    mutating func take(_ page: Int, as what: String) throws {
      guard page >= 1, page <= pageCount, page != lockPage else {
        throw NotSure("\(what) names page \(page), outside the file")
      }
      guard !used[page] else { throw NotSure("page \(page) is used twice (\(what))") }
      used[page] = true
      taken += 1
      if mapped, taken % BTreeStructure.window == 0, let start = bytes.baseAddress {
        madvise(UnsafeMutableRawPointer(mutating: start), bytes.count, MADV_DONTNEED)
      }
    }

    /// The pointer-map page that holds `page`'s entry.
    func mapPage(of page: Int, every: Int) -> Int { (page - 2) / every * every + 2 }

    /// An auto-vacuum file's pointer-map pages taken, and its header's largest root checked.
    mutating func pointerMap(roots: [Int]) throws {
      guard let every = perMapPage else { return }
      guard Self.read32(bytes, 52) == roots.max() ?? 1 else {
        throw NotSure("the header's largest root page is not the schema's")
      }
      for page in stride(from: 2, through: pageCount, by: every) { try take(page, as: "the pointer map") }
    }

    /// Checks an auto-vacuum file's pointer-map entry for `page`: its role and its parent.
    func expect(_ page: Int, _ role: Role, parent: Int) throws {
      guard let every = perMapPage, page >= 2, page <= pageCount else { return }
      let map = mapPage(of: page, every: every)
      let offset = 5 * (page - map - 1)
      guard offset >= 0, u8(map, offset) == role.rawValue, u32(map, offset + 1) == parent else {
        throw NotSure("page \(page): the pointer map disagrees")
      }
    }

    /// Walks the b-tree page `number` and what hangs from it. `bounds`: the rowids its subtree may
    /// hold, (lower, upper] (table trees only).
    mutating func page(
      _ number: Int, table: Bool, depth: Int, leafDepth: inout Int?, bounds: (Int64?, Int64?)
    ) throws {
      guard depth < BTreeStructure.deepest else { throw NotSure("a b-tree deeper than \(BTreeStructure.deepest)") }
      try take(number, as: "a b-tree")
      let start = (number - 1) * pageSize
      copy.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<start + pageSize]))
      current = number
      let layout = try self.layout(of: number, table: table)
      if layout.isLeaf {
        if let known = leafDepth, known != depth { throw NotSure("page \(number): leaves at two depths") }
        leafDepth = depth
      }
      var ranges: [(start: Int, end: Int)] = []
      swap(&ranges, &spans)
      ranges.removeAll(keepingCapacity: true)
      var previousKey = bounds.0
      var children: [(page: Int, bounds: (Int64?, Int64?))] = []
      for index in 0..<layout.cells {
        let (span, key, child) = try cell(index, of: layout)
        if let key {
          if let lower = previousKey, layout.isLeaf ? key <= lower : key < lower {
            throw NotSure("page \(number): rowid \(key) out of order")
          }
          if let upper = bounds.1, key > upper { throw NotSure("page \(number): rowid \(key) past its parent's") }
        }
        if let child { children.append((child, table ? (previousKey, key) : (nil, nil))) }
        if let key { previousKey = key }
        ranges.append(span)
      }
      try coverage(of: layout, cells: &ranges)
      swap(&ranges, &spans)
      guard !layout.isLeaf else { return }
      children.append((u32(number, layout.header + 8), (previousKey, bounds.1)))
      for child in children {
        try expect(child.page, .child, parent: number)
        try page(child.page, table: table, depth: depth + 1, leafDepth: &leafDepth, bounds: child.bounds)
      }
    }

    /// A b-tree page's header as read: its kind, its cells and where their content starts.
    struct Layout {
      var number: Int
      var header: Int
      var table: Bool
      var isLeaf: Bool
      var cells: Int
      var contentStart: Int
    }

    func layout(of number: Int, table: Bool) throws -> Layout {
      let header = number == 1 ? 100 : 0
      let kind = u8(number, header)
      let isLeaf: Bool
      switch (kind, table) {
      case (13, true), (10, false): isLeaf = true
      case (5, true), (2, false): isLeaf = false
      default: throw NotSure("page \(number): type \(kind) in a \(table ? "table" : "index") b-tree")
      }
      let cells = u16(number, header + 3)
      let firstCell = header + (isLeaf ? 8 : 12) + 2 * cells
      let contentStart = u16(number, header + 5) == 0 ? 65536 : u16(number, header + 5)
      guard cells <= (pageSize - 8) / 6, firstCell <= usable, contentStart >= firstCell, contentStart <= usable else {
        throw NotSure("page \(number): header out of range")
      }
      return Layout(
        number: number, header: header, table: table, isLeaf: isLeaf, cells: cells, contentStart: contentStart)
    }

    /// Cell `index` of a page: the bytes it takes, its rowid (table trees), its child (interior
    /// pages); its record and overflow chain checked.
    mutating func cell(_ index: Int, of layout: Layout) throws -> (
      span: (start: Int, end: Int), key: Int64?, child: Int?
    ) {
      let number = layout.number
      let start = u16(number, layout.header + (layout.isLeaf ? 8 : 12) + 2 * index)
      guard start >= layout.contentStart, start <= usable - 4 else {
        throw NotSure("page \(number): cell \(index) at \(start), outside \(layout.contentStart)..\(usable - 4)")
      }
      var at = start
      var child: Int?
      if !layout.isLeaf {
        child = u32(number, at)
        at += 4
      }
      let hasPayload = !(layout.table && !layout.isLeaf)
      var payload: Int64 = 0
      if hasPayload { (payload, at) = try varint(number, at, end: usable) }
      var key: Int64?
      if layout.table { (key, at) = try varint(number, at, end: usable) }
      var end = at
      if hasPayload {
        guard payload >= 0, payload <= Int64(Int32.max) else { throw NotSure("page \(number): payload size") }
        let (local, overflowPages) = spill(Int(payload), tableLeaf: layout.table)
        end = at + local + (overflowPages > 0 ? 4 : 0)
        guard end <= usable else { throw NotSure("page \(number): cell \(index) runs off the page") }
        try record(number, at: at, local: local, payload: Int(payload))
        if overflowPages > 0 { try overflow(from: u32(number, at + local), pages: overflowPages, of: number) }
      }
      return ((start, max(end, start + 4)), key, child)
    }

    /// Every byte of a page from its content start on is a cell, a freeblock (in increasing order,
    /// inside the content area) or one of the fragment bytes its header counts — none twice.
    func coverage(of layout: Layout, cells ranges: inout [(start: Int, end: Int)]) throws {
      let number = layout.number
      var free = u16(number, layout.header + 1)
      var lastFree = 0
      while free != 0 {
        guard free > lastFree, free >= layout.contentStart, free <= usable - 4 else {
          throw NotSure("page \(number): freeblock at \(free) out of place")
        }
        let size = u16(number, free + 2)
        guard size >= 4, free + size <= usable else { throw NotSure("page \(number): freeblock size \(size)") }
        ranges.append((free, free + size))
        lastFree = free + size
        free = u16(number, free)
      }
      ranges.sort { $0.start < $1.start }
      var reached = layout.contentStart
      var fragments = 0
      for range in ranges {
        guard range.start >= reached else { throw NotSure("page \(number): bytes used twice at \(range.start)") }
        fragments += range.start - reached
        reached = range.end
      }
      fragments += usable - reached
      guard reached <= usable, fragments == u8(number, layout.header + 7) else {
        throw NotSure("page \(number): \(fragments) fragment bytes, the header says \(u8(number, layout.header + 7))")
      }
    }

    /// A record's header, as SQLite decodes it to read a row's last column: its size within the
    /// payload, whole varints ending exactly at its end, and the values' sizes it gives adding up
    /// to the payload. (A header longer than the payload's part on the page: not sure.)
    func record(_ page: Int, at start: Int, local: Int, payload: Int) throws {
      let (size, first) = try varint(page, start, end: start + local)
      guard size >= first - start, size <= local else {
        throw NotSure("page \(page): a record header of \(size) bytes")
      }
      let headerEnd = start + Int(size)
      var at = first
      var total = Int(size)
      while at < headerEnd {
        let type: Int64
        (type, at) = try varint(page, at, end: headerEnd)
        switch type {
        case 0, 8, 9, 10, 11: break
        case 1...4: total += Int(type)
        case 5: total += 6
        case 6, 7: total += 8
        default:
          guard type <= Int64(Int32.max) else { throw NotSure("page \(page): a record's value size") }
          total += Int(type - 12) / 2
        }
      }
      guard total == payload else { throw NotSure("page \(page): a record's values are \(total) bytes of \(payload)") }
    }

    /// How much of a payload stays on its page (SQLite's rule, by the usable size) and how many
    /// overflow pages hold the rest.
    func spill(_ payload: Int, tableLeaf: Bool) -> (local: Int, pages: Int) {
      let local = SQLiteFileImage.localPayload(payload, usable: usable, tableLeaf: tableLeaf)
      return (local, local == payload ? 0 : (payload - local + usable - 5) / (usable - 4))
    }

    /// An overflow chain of a cell on `page`: `pages` pages from `first`, each naming the next, the
    /// last naming none (SQLite follows a chain to its end, whatever the cell needs).
    mutating func overflow(from first: Int, pages: Int, of page: Int) throws {
      var next = first
      var previous = page
      var count = 0
      while next != 0 {
        count += 1
        guard count <= pages else { throw NotSure("page \(page): an overflow chain longer than its cell") }
        try expect(next, count == 1 ? .firstOverflow : .overflow, parent: count == 1 ? page : previous)
        try take(next, as: "an overflow chain")
        previous = next
        next = u32(next, 0)
      }
      guard count == pages else { throw NotSure("page \(page): an overflow chain of \(count) pages, not \(pages)") }
    }

    /// The freelist: trunk pages from the header, each with its leaves, as many as the header counts.
    mutating func freelist() throws {
      var trunk = Self.read32(bytes, 32)
      var counted = 0
      let expected = Self.read32(bytes, 36)
      while trunk != 0 {
        try expect(trunk, .free, parent: 0)
        try take(trunk, as: "the freelist")
        counted += 1
        let leaves = u32(trunk, 4)
        guard leaves <= usable / 4 - 2 else { throw NotSure("freelist trunk \(trunk): \(leaves) leaves") }
        for index in 0..<leaves {
          let leaf = u32(trunk, 8 + 4 * index)
          try expect(leaf, .free, parent: 0)
          try take(leaf, as: "the freelist")
        }
        counted += leaves
        guard counted <= expected else { throw NotSure("the freelist holds more pages than the header counts") }
        trunk = u32(trunk, 0)
      }
      guard counted == expected else {
        throw NotSure("the freelist holds \(counted) pages, the header counts \(expected)")
      }
    }

    func everyPageUsed() throws {
      for page in 1...pageCount where !used[page] && page != lockPage {
        throw NotSure("page \(page) is never used")
      }
    }
  }
}
