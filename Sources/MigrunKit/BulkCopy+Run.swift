import Foundation
import MigrunModel
import MigrunStore

// Running a bulk copy: the plan (``BulkCopy``, from ``BulkCopy/decide(mapping:sourceSchema:policies:manager:mixed:)``)
// is a value that `plan` shows and `migrate` runs; this is the part that writes.
extension BulkCopy {
  /// Copies the source store at `sourceURL` into `destination` (created empty, without indexes),
  /// then builds the indexes and checks the model's rules. One transaction: on any error nothing
  /// of it is left in the destination. `isHeld`: whether the source is read with SQLite's locks
  /// (the store itself, which an app may open at any time) or, where nothing else can hold it, as
  /// immutable (``SQLiteStore/readOnlyPath(_:isHeld:)``); a lock met on it is waited for
  /// `readWait` seconds.
  func run(
    from sourceURL: URL, isHeld: Bool, readWait: Double, into destination: SQLiteStore,
    progress: (MigrationProgress) -> Void
  ) throws {
    // The migrator reads a snapshot whenever the store's -wal has content, so a direct path exists.
    guard let path = SQLiteStore.readOnlyPath(sourceURL, isHeld: isHeld) else {
      throw StoreError(
        .io, file: sourceURL.path, reason: "the store's -wal has content and no -shm: migrate a snapshot of it")
    }
    try destination.editing(attaching: sourceURL, at: path, readWait: readWait) { store in
      try store.inTransaction {
        for copy in copies {
          let total = try store.rowCount(of: copy.sourceTable, in: "src", where: copy.sourceRows)
          let last = try store.largestKey(of: copy.sourceTable, in: "src")
          if let rows = copy.rows {
            try store.rowLoop(
              readingFrom: path, readWait: readWait, select: rows.select, constants: copy.constants, insert: rows.insert
            ) { select, insert in
              try run(rows, of: copy, total: total, select: select, insert: insert, progress)
            }
            continue
          }
          let statement = try store.prepareCopy(copy.insert)
          var done = 0
          var low: Int64 = .min
          progress(MigrationProgress(stage: .instances, mapping: copy.mapping.name, done: 0, total: total))
          while low < last {
            // A range of `chunk` rows, whatever the keys: ranges of `chunk` keys took one statement
            // per 50,000 keys between the smallest and the largest — forever for a file whose keys
            // are 1 and Int64.max (and `low + chunk` then overflowed).
            let high = try store.key(after: low, rows: Self.chunk, of: copy.sourceTable, in: "src") ?? last
            done += try statement.run(copy.constants, keysAbove: low, upTo: high)
            low = high
            progress(MigrationProgress(stage: .instances, mapping: copy.mapping.name, done: done, total: total))
          }
        }
        for join in joins { try store.copyJoins(join) }
        for (root, table) in keyTables.sorted(by: { $0.key < $1.key }) {
          guard let layout = destination.schema.layout(of: root) else { continue }
          try store.keepKeys(of: layout, usedBy: table)
        }
        try store.createIndexes(of: destination.schema)
      }
    }
  }

  /// The row loop of a copy through a transform: read a source row, compute, insert — run by the
  /// transform itself where it can (``RowLoopTransform``: in C), row by row here otherwise and for
  /// the rows it hands back.
  /// The source is read through a connection of its own: the loop may insert on another thread,
  /// which then has the destination's connection to itself.
  private func run(
    _ rows: RowLoop, of copy: Copy, total: Int, select: RawStatement, insert: RawStatement,
    _ progress: (MigrationProgress) -> Void
  ) throws {
    defer { select.reset() }
    var copier = RowCopier(rows: rows, mapping: copy.mapping, select: select, insert: insert)
    func report() {
      progress(MigrationProgress(stage: .instances, mapping: copy.mapping.name, done: copier.done, total: total))
    }
    report()
    guard let loop = rows.transform as? any RowLoopTransform else {
      while try select.step() {
        try copier.copyRow()
        if copier.done % 10_000 == 0 || copier.done == total { report() }
      }
      return
    }
    while true {
      let (count, stop) = try loop.runRows(
        select: select.handle, insert: insert.handle, plainCount: rows.plainCount, inputTypes: rows.inputTypes,
        limit: 10_000, currentObject: copier.current)
      copier.done += count
      switch stop {
      case .finished:
        report()
        return
      case .paused: report()
      case .hostRow: try copier.copyRow()
      case .hostOutputs(let computed): try copier.insertRow(computed)
      case .sqliteFailed(let key):
        let error = (key != nil ? insert : select).failure()
        if key != nil { insert.reset() }
        throw Self.located(error, key.map { ObjectID(entity: copier.entity, primaryKey: $0) } ?? copier.current())
      }
    }
  }

  /// A row's SQLite failure, naming the object the row is.
  fileprivate static func located(_ error: StoreError, _ id: ObjectID) -> StoreError {
    StoreError(error.code, entity: id.entity, primaryKey: id.primaryKey, reason: error.reason, underlying: error)
  }
}

/// One row of a copy through a transform, as the host copies it: the plain columns bound straight
/// from the select, the transform's inputs read and its outputs bound after them; `done` counts
/// the rows inserted.
private struct RowCopier {
  let rows: BulkCopy.RowLoop
  let mapping: EntityMapping
  let select: RawStatement
  let insert: RawStatement
  let entity: String
  let plainCount: Int32
  var done = 0
  private var inputs: [StoreValue] = []

  init(rows: BulkCopy.RowLoop, mapping: EntityMapping, select: RawStatement, insert: RawStatement) {
    self.rows = rows
    self.mapping = mapping
    self.select = select
    self.insert = insert
    entity = mapping.sourceEntity ?? ""
    plainCount = Int32(rows.plainCount)
  }

  /// The object of the row the select is on.
  func current() -> ObjectID { ObjectID(entity: entity, primaryKey: select.integer(0)) }

  /// Runs the insert of the row the select is on, its computed values bound.
  mutating func insertRow(_ computed: [StoreValue]) throws {
    var index = plainCount + 1
    for value in computed {
      try insert.bind(value, at: index)
      index += 1
    }
    do {
      try insert.run()
    } catch let error as StoreError {
      throw BulkCopy.located(error, current())
    }
    done += 1
  }

  /// The row the select is on, read, computed and inserted here.
  mutating func copyRow() throws {
    for column in 0..<plainCount { try insert.bind(columnOf: select, column, at: column + 1) }
    inputs.removeAll(keepingCapacity: true)
    for (offset, type) in rows.inputTypes.enumerated() {
      inputs.append(select.value(plainCount + Int32(offset), type: type))
    }
    let id = current()
    let computed: [StoreValue]
    do {
      computed = try rows.transform.transform(id, inputs)
    } catch {
      throw MigrationManager.located(error, mapping: mapping, object: id)
    }
    try insertRow(computed)
  }
}
