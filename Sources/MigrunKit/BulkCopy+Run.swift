import Foundation
import GRDB
import MigrunModel
import MigrunStore

// Running a bulk copy: the plan (``BulkCopy``, from ``BulkCopy/decide(mapping:sourceSchema:policies:manager:mixed:)``)
// is a value that `plan` shows and `migrate` runs; this is the part that writes.
extension BulkCopy {
  /// Copies the source store at `sourceURL` into `destination` (created empty, without indexes),
  /// then builds the indexes and checks the model's rules. One transaction: on any error nothing
  /// of it is left in the destination.
  func run(from sourceURL: URL, into destination: SQLiteStore, progress: (MigrationProgress) -> Void) throws {
    try destination.withConnection { db in
      // The migrator reads a snapshot whenever the store's -wal has content, so a direct path exists;
      // it reads the store only once its session found it free, else its own files: none is held.
      guard let path = SQLiteStore.readOnlyPath(sourceURL, isHeld: false) else {
        throw StoreError(
          .io, file: sourceURL.path, reason: "the store's -wal has content and no -shm: migrate a snapshot of it")
      }
      try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [path])
      defer { try? db.execute(sql: "DETACH DATABASE src") }
      try db.inTransaction {
        for copy in copies {
          let total =
            try Int.fetchOne(
              db, sql: "SELECT count(*) FROM src.\(copy.sourceTable) WHERE \(copy.sourceRows)") ?? 0
          let last = try Int64.fetchOne(db, sql: "SELECT max(Z_PK) FROM src.\(copy.sourceTable)") ?? 0
          if let rows = copy.rows {
            try run(rows, of: copy, total: total, reading: path, into: db, progress)
            continue
          }
          let statement = try db.makeStatement(sql: copy.insert)
          var done = 0
          var low: Int64 = .min
          progress(MigrationProgress(stage: .instances, mapping: copy.mapping.name, done: 0, total: total))
          while low < last {
            let high = low == .min ? Self.chunk : low + Self.chunk
            try statement.execute(
              arguments: StatementArguments(copy.constants + [low.databaseValue, high.databaseValue]))
            done += db.changesCount
            low = high
            progress(MigrationProgress(stage: .instances, mapping: copy.mapping.name, done: done, total: total))
          }
        }
        for join in joins { try db.execute(sql: join) }
        for (root, table) in keyTables.sorted(by: { $0.key < $1.key }) {
          guard let layout = destination.schema.layout(of: root) else { continue }
          try db.execute(
            sql:
              "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, (SELECT coalesce(max(Z_PK), 0) FROM src.\(table))) WHERE Z_ENT = ?",
            arguments: [layout.number])
        }
        try SQLiteStore.createIndexes(db, destination.schema)
        return .commit
      }
    }
  }

  /// The row loop of a copy through a transform: read a source row, compute, insert — run by the
  /// transform itself where it can (``RowLoopTransform``: in C), row by row here otherwise and for
  /// the rows it hands back.
  /// The source is read through a connection of its own (`sourcePath`): the loop may insert on
  /// another thread, which then has the destination's connection to itself.
  private func run(
    _ rows: RowLoop, of copy: Copy, total: Int, reading sourcePath: String, into db: Database,
    _ progress: (MigrationProgress) -> Void
  ) throws {
    let sourceQueue = try DatabaseQueue(path: sourcePath, configuration: SQLiteStore.configuration(readOnly: true))
    defer { try? sourceQueue.close() }
    try sourceQueue.read { source in
      try run(rows, of: copy, total: total, from: source, into: db, progress)
    }
  }

  private func run(
    _ rows: RowLoop, of copy: Copy, total: Int, from source: Database, into db: Database,
    _ progress: (MigrationProgress) -> Void
  ) throws {
    let selectStatement = try source.makeStatement(sql: rows.select)
    try selectStatement.setArguments(StatementArguments(copy.constants))
    let insertStatement = try db.makeStatement(sql: rows.insert)
    guard let sourceConnection = source.sqliteConnection, let connection = db.sqliteConnection else {
      throw StoreError(.sqlite, reason: "the store is closed")
    }
    let select = RawStatement(handle: selectStatement.sqliteStatement, connection: sourceConnection)
    let insert = RawStatement(handle: insertStatement.sqliteStatement, connection: connection)
    defer { select.reset() }
    let entity = copy.mapping.sourceEntity ?? ""
    let plainCount = Int32(rows.plainCount)
    var done = 0
    var inputs: [StoreValue] = []
    func report() {
      progress(MigrationProgress(stage: .instances, mapping: copy.mapping.name, done: done, total: total))
    }
    let current = { ObjectID(entity: entity, primaryKey: select.integer(0)) }
    /// Runs the insert of the row the select is on, its computed values bound.
    func insertRow(_ computed: [StoreValue]) throws {
      var index = plainCount + 1
      for value in computed {
        insert.bind(value, at: index)
        index += 1
      }
      do {
        try insert.run()
      } catch let error as StoreError {
        throw Self.located(error, current())
      }
      done += 1
    }
    /// The row the select is on, read, computed and inserted here.
    func copyRow() throws {
      for column in 0..<plainCount { insert.bind(columnOf: select, column, at: column + 1) }
      inputs.removeAll(keepingCapacity: true)
      for (offset, type) in rows.inputTypes.enumerated() {
        inputs.append(select.value(plainCount + Int32(offset), type: type))
      }
      let id = current()
      let computed: [StoreValue]
      do {
        computed = try rows.transform.transform(id, inputs)
      } catch {
        throw MigrationManager.located(error, mapping: copy.mapping, object: id)
      }
      try insertRow(computed)
    }
    report()
    guard let loop = rows.transform as? any RowLoopTransform else {
      while try select.step() {
        try copyRow()
        if done % 10_000 == 0 || done == total { report() }
      }
      return
    }
    while true {
      let (count, stop) = try loop.runRows(
        select: select.handle, insert: insert.handle, plainCount: rows.plainCount, inputTypes: rows.inputTypes,
        limit: 10_000, currentObject: current)
      done += count
      switch stop {
      case .finished:
        report()
        return
      case .paused: report()
      case .hostRow: try copyRow()
      case .hostOutputs(let computed): try insertRow(computed)
      case .sqliteFailed(let key):
        let error = (key != nil ? insert : select).failure()
        if key != nil { insert.reset() }
        throw Self.located(error, key.map { ObjectID(entity: entity, primaryKey: $0) } ?? current())
      }
    }
  }

  /// A row's SQLite failure, naming the object the row is.
  private static func located(_ error: StoreError, _ id: ObjectID) -> StoreError {
    StoreError(error.code, entity: id.entity, primaryKey: id.primaryKey, reason: error.reason, underlying: error)
  }
}
