import Foundation

extension SQLiteFileImage {
  /// How a file's page size was found, most trusted first: the report says which.
  package enum PageSizeSource: String, Sendable, Encodable {
    /// The header's (its magic intact).
    case header
    /// The hot journal's header (page 1 may be the crashed writer's).
    case journal
    /// The `-wal`'s header.
    case wal
    /// The header's page size field, the header otherwise damaged: kept where the file agrees (its
    /// size a multiple of it, and page 1's b-tree header or the header's page count fit it).
    case headerField = "header field"
    /// Proven from the schema's tree: page 1 read at that size gives `sqlite_master`'s rows, and
    /// their tables' root pages are pages of their trees (a table root's rows no wider than its
    /// statement) — more of them than at any other size.
    case schema
    /// Guessed from interior pages whose children are pages of their tree (or, a small store, from
    /// pages that start as b-tree pages do) — none inside another size's overflow chain: a blob
    /// laid out as pages proves nothing.
    case structure
    /// Nothing proved a size: 4096, SQLite's and Core Data's default, taken.
    case fallback
  }

  /// The page size of a file whose header is damaged, and how it was found (``PageSizeSource``).
  /// Nothing inside a page decides alone: a 200 KB blob laid out as 512-byte b-tree pages once made
  /// salvage read a 4096 store at 512 and write 334 made-up objects. A size is taken on structure
  /// that content cannot make — the header's own field where the file agrees with it; the schema's
  /// tree from page 1, its fixed root, which a blob inside another page never is; interior pages
  /// whose children check, none inside a row's overflow chain read at another size — else 4096.
  static func guessedPageSize(_ bytes: Data) -> (Int, PageSizeSource) {
    if let size = headerFieldPageSize(bytes) { return (size, .headerField) }
    let sizes = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536].filter { bytes.count >= 2 * $0 }
    // A file SQLite wrote is whole pages: sizes that divide it first (a file cut short: all).
    let whole = sizes.filter { bytes.count % $0 == 0 }
    let candidates = whole.isEmpty ? sizes : whole
    let proofs = candidates.map { size in
      (size: size, proven: SQLiteFileImage(data: bytes, wal: SidecarFile(bytes: []), pageSize: size).schemaProof())
    }
    if let best = proofs.map(\.proven).max(), best > 0 {
      let tied = proofs.filter { $0.proven == best }.map(\.size)
      return (structureGuess(bytes, among: tied) ?? tied[0], .schema)
    }
    if let size = structureGuess(bytes, among: candidates) { return (size, .structure) }
    return (4096, .fallback)
  }

  /// The page size for a header that is damaged, as found (see ``guessedPageSize(_:)``).
  static func guessPageSize(_ bytes: Data) -> Int { guessedPageSize(bytes).0 }

  /// The header's page size field where its magic is gone but the file agrees with it: the file a
  /// whole number of such pages, and page 1's b-tree header one of a table page of that size or the
  /// header's page count times it the file's size.
  static func headerFieldPageSize(_ bytes: Data) -> Int? {
    guard bytes.count >= 112 else { return nil }
    let raw = Int(bigEndian(bytes, 16, 2))
    let size = raw == 1 ? 65536 : raw
    guard validPageSize(size), bytes.count % size == 0 else { return nil }
    if Int(bigEndian(bytes, 28, 4)) * size == bytes.count { return size }
    return firstPageFits(bytes, size: size) ? size : nil
  }

  /// Whether page 1's b-tree header (after the file header) is a table page's of `size` bytes:
  /// every cell pointer inside the page past the pointer array.
  static func firstPageFits(_ bytes: Data, size: Int) -> Bool {
    guard bytes.count >= size, [5, 13].contains(bytes[bytes.startIndex + 100]) else { return false }
    let header = bytes[bytes.startIndex + 100] == 5 ? 12 : 8
    let cells = Int(bigEndian(bytes, 103, 2))
    let pointers = 100 + header
    guard cells >= 1, pointers + 2 * cells <= size else { return false }
    return (0..<cells).allSatisfy { index in
      let pointer = Int(bigEndian(bytes, pointers + 2 * index, 2))
      return pointer >= pointers + 2 * cells && pointer < size
    }
  }

  /// How much of the schema's tree reads at this image's page size: the tables and indexes whose
  /// root pages `sqlite_master`'s rows (read from page 1) name and that are pages of their kind —
  /// a table root that is a leaf only when its rows parse and are no wider than its statement's
  /// columns. 0 when page 1 does not read.
  func schemaProof() -> Int {
    var rows: [Row] = []
    _ = scanTable(root: 1) { rows.append($0) }
    var proven = 0
    for row in rows where SalvageRead.isSchemaRow(row) {
      guard case .text(let type) = row.values[0], case .integer(let root) = row.values[3], root >= 2,
        root <= Int64(mainPageCount)
      else { continue }
      switch (type, kind(of: Int(root))) {
      case ("table", .tableInterior?), ("index", .indexLeaf?), ("index", .indexInterior?): proven += 1
      case ("table", .tableLeaf?):
        var ignored = Set<Int>()
        let width = row.values[4].text.flatMap { CreateTableStatement(sql: $0) }?.columns.count ?? Int.max
        if let (cells, bad) = leafRows(Int(root), overflow: &ignored), bad == 0,
          cells.allSatisfy({ $0.values.count <= width })
        {
          proven += 1
        }
      default: continue
      }
    }
    return proven
  }

  /// Under the true size, an interior b-tree page's children (its right-most pointer and each
  /// cell's left child) are pages of the same tree's kind — a table's children table pages, an
  /// index's index pages — within the file. Under a multiple of it, page numbers counted in the
  /// true size land elsewhere (past the end, on overflow pages); under a fraction, pages start
  /// mid-page. So the size whose interior pages' children check best is taken, the smallest among
  /// those nearly as good. A blob spanning overflow pages that happen to start like b-tree pages at
  /// twice the size (every other page a leaf) once made 8192 of a 4096 store. A file with no
  /// interior page under any size (a small store) falls back to how many pages start as b-tree
  /// pages do. A page lying whole inside a row's complete overflow chain read at another size is
  /// that row's content (a blob), no evidence: made-up pages inside a blob prove nothing. Nil when
  /// no size has evidence.
  static func structureGuess(_ bytes: Data, among sizes: [Int]) -> Int? {
    var checked: [(size: Int, ratio: Double)] = []
    var started: [(size: Int, ratio: Double)] = []
    let chains = Dictionary(uniqueKeysWithValues: sizes.map { ($0, chainSlots(bytes, size: $0)) })
    for size in sizes where bytes.count >= 2 * size {
      let pages = bytes.count / size
      // The 512-byte slots other sizes' overflow chains hold.
      let inBlob = chains.filter { $0.key != size }.values.reduce(into: Set<Int>()) { $0.formUnion($1) }
      func isContent(_ page: Int) -> Bool {
        !inBlob.isEmpty && ((page - 1) * size / 512..<page * size / 512).allSatisfy { inBlob.contains($0) }
      }
      let kinds = (2...pages).map { isContent($0) ? nil : treePageKind(bytes, page: $0, size: size) }
      func kind(_ page: Int) -> UInt8? { page >= 2 && page <= pages ? kinds[page - 2] : nil }
      var children = 0
      var fitting = 0
      for number in 2...pages {
        guard let own = kind(number), own == 2 || own == 5 else { continue }
        for child in childPages(bytes, page: number, size: size) {
          children += 1
          if let found = kind(child), found == own || found == own + 8 {
            fitting += 1
          }
        }
      }
      if children > 0 { checked.append((size, Double(fitting) / Double(children))) }
      started.append((size, Double((2...pages).filter { kind($0) != nil }.count) / Double(pages - 1)))
    }
    if let best = checked.map(\.ratio).max(), best > 0 {
      return checked.first { $0.ratio >= best * 0.95 }?.size
    }
    let best = started.map(\.ratio).max() ?? 0
    return started.first { $0.ratio >= best * 0.75 && $0.ratio > 0 }?.size
  }

  /// The 512-byte slots of the file (offset / 512) that the complete overflow chains of the rows on
  /// `size`-byte table leaves hold: each chain as long as its payload needs, every link a page of
  /// the file, the last link 0. A real b-tree page is never inside one at another size (its first
  /// bytes, read as a link, name no page of the file).
  static func chainSlots(_ bytes: Data, size: Int) -> Set<Int> {
    let pages = bytes.count / size
    var slots = Set<Int>()
    guard pages >= 2 else { return slots }
    for page in 2...pages where treePageKind(bytes, page: page, size: size) == 13 {
      let start = (page - 1) * size
      let cells = Int(bigEndian(bytes, start + 3, 2))
      for index in 0..<cells {
        let pointer = Int(bigEndian(bytes, start + 8 + 2 * index, 2))
        guard pointer >= 8 + 2 * cells, pointer < size else { continue }
        var at = start + pointer
        let cell = Array(bytes[bytes.startIndex + at..<bytes.startIndex + min(start + size, at + 18)])
        var read = 0
        guard let total = varint(cell, &read), total > 0, total < Int64(bytes.count), varint(cell, &read) != nil
        else { continue }
        let local = localPayload(Int(total), usable: size, tableLeaf: true)
        guard local < Int(total), at + read + local + 4 <= start + size else { continue }
        at += read + local
        var next = Int(bigEndian(bytes, at, 4))
        var chain: [Int] = []
        var seen = Set<Int>()
        let links = (Int(total) - local + size - 5) / (size - 4)
        while chain.count < links, next >= 2, next <= pages, seen.insert(next).inserted {
          chain.append(next)
          next = Int(bigEndian(bytes, (next - 1) * size, 4))
        }
        guard chain.count == links, next == 0 else { continue }
        for link in chain { slots.formUnion((link - 1) * size / 512..<link * size / 512) }
      }
    }
    return slots
  }

  /// The b-tree page kind (2, 5, 10, 13) of page `page` read at `size`, when its header and cell
  /// pointers are those of one: a known kind, fewer cells than fit, the pointers past the header
  /// and inside the page.
  private static func treePageKind(_ bytes: Data, page: Int, size: Int) -> UInt8? {
    let start = (page - 1) * size
    guard start + size <= bytes.count else { return nil }
    let kind = bytes[bytes.startIndex + start]
    guard [2, 5, 10, 13].contains(kind) else { return nil }
    let header = kind == 2 || kind == 5 ? 12 : 8
    let cells = Int(bigEndian(bytes, start + 3, 2))
    let content = Int(bigEndian(bytes, start + 5, 2))
    guard cells < size / 4, header + 2 * cells <= size, content == 0 ? size == 65536 : content <= size else {
      return nil
    }
    for index in 0..<min(cells, 8) {
      let pointer = Int(bigEndian(bytes, start + header + 2 * index, 2))
      guard pointer >= header + 2 * cells, pointer < size else { return nil }
    }
    return kind
  }

  /// An interior page's children as page numbers: the right-most pointer, then each cell's left
  /// child (the first four bytes of the cell), the first 16 cells at most.
  private static func childPages(_ bytes: Data, page: Int, size: Int) -> [Int] {
    let start = (page - 1) * size
    var children = [Int(bigEndian(bytes, start + 8, 4))]
    let cells = Int(bigEndian(bytes, start + 3, 2))
    for index in 0..<min(cells, 16) {
      let pointer = Int(bigEndian(bytes, start + 12 + 2 * index, 2))
      guard pointer + 4 <= size else { continue }
      children.append(Int(bigEndian(bytes, start + pointer, 4)))
    }
    return children
  }
}

extension SQLiteFileImage.Value {
  /// The text, when the value is text.
  var text: String? {
    if case .text(let text) = self { text } else { nil }
  }
}
