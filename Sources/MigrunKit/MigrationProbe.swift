import MigrunStore

/// Where a running migration lets its caller look in — and damage on purpose — between the work of a
/// step and the checks that judge it: a test's own type conforms and goes in through
/// `StoreMigrator.Options.probe`, so the migrator holds no hook of a test's. A migration without one
/// runs exactly as with one that does nothing.
package protocol MigrationProbe: Sendable {
  /// A step's written file, before its counts are checked (tests that damage a path's output and see
  /// ``Conservation`` catch it).
  func stepWritten(_ destination: SQLiteStore, by method: StepMethod) throws
  /// Inside a DDL step's edit, before it commits (tests that damage the edit itself and see the
  /// edit's watch on the rows it keeps, `StoreEdit.KeptRows`, refuse it).
  func stepEditing(_ edit: StoreEdit) throws
}

extension MigrationProbe {
  package func stepWritten(_ destination: SQLiteStore, by method: StepMethod) throws {}
  package func stepEditing(_ edit: StoreEdit) throws {}
}
