import CSQLiteSetup

/// SQLite's settings for the whole process, which a program makes before its first connection: the
/// command line does at start. A library never changes them for the program that uses it (they
/// are that program's: `sqlite3_memory_used` and the soft heap limit need the statistics).
package enum SQLiteProcess {
  /// Turns SQLite's memory statistics off: otherwise every `sqlite3_malloc` and `free` takes one
  /// global mutex to count bytes, a lock every thread shares — a bulk copy's row loop reads on one
  /// and inserts on another (~2 allocations a row). Returns false when SQLite was already in use
  /// (nothing is changed then).
  @discardableResult package static func turnOffMemoryStatistics() -> Bool {
    mr_sqlite_memory_statistics_off() == 0
  }
}
