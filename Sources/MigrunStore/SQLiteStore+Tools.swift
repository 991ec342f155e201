import Foundation
import MigrunModel

/// What ``SQLiteStore/salvage(_:bundle:to:wait:)`` recovered: the objects written and known lost
/// per entity, what a check of the new store still finds, and the whole report as
/// `migrun salvage --json` writes it.
public struct SalvageSummary: Sendable {
  /// The model version the rows were read as (or the store's own model, named so).
  public let version: String
  /// Objects written to the new store, by entity.
  public let written: [String: Int]
  /// Objects known to have existed that the new store lacks, by entity (only those counted).
  public let lost: [String: Int]
  /// What `check` still finds in the new store, one line each.
  public let remaining: [String]
  /// The full report as JSON (repairs, set-aside rows, unreadable pages…), `migrun salvage --json`'s.
  public let report: Data
}

extension SQLiteStore {
  /// `migrun salvage`: the objects of the damaged SQLite store at `damaged` — read from its pages as
  /// they lie on disk, by proof of which table and column each value belongs to — written as a new
  /// store at `output` (which must not exist) of the version `bundle` finds by the store's hashes
  /// (its own model when `bundle` is nil). The damaged file is only read. Waits up to `wait` seconds
  /// for a process that has the store open.
  ///
  /// ```swift
  /// let salvaged = try SQLiteStore.salvage(damagedURL, bundle: bundle, to: rescuedURL)
  /// print(salvaged.written, salvaged.lost, salvaged.remaining)
  /// ```
  public static func salvage(_ damaged: URL, bundle: ModelBundle?, to output: URL, wait: Double = 0) throws
    -> SalvageSummary
  {
    guard WorkingFiles.entry(at: output.path) == .none else {
      throw StoreError(.io, file: output.path, reason: "already exists: salvage writes a new store")
    }
    try StoreUse.waitUntilFree(damaged, wait: wait)
    let (version, read) = try Salvage.read(damaged, bundle: bundle)
    let report: SalvageReport
    do {
      report = try Salvage.write(read, model: version, to: output, externalDataOf: damaged)
    } catch {
      StoreFiles.remove(output)
      try? FileManager.default.removeItem(at: ExternalData.supportFolder(of: output))
      throw error
    }
    return SalvageSummary(
      version: report.version, written: report.entities.mapValues(\.written),
      lost: report.entities.mapValues(\.lost).filter { $0.value > 0 }, remaining: report.remaining,
      report: try JSONEncoder().encode(report))
  }

  /// `migrun export`: every object of the store as JSON (attributes, relationships by key; values
  /// kept outside the store read through their files), the form ``importJSON(_:)`` reads back.
  public func exportJSON() throws -> String { try StoreJSON.export(self) }

  /// `migrun import`: the objects of an export (``exportJSON()``) written into this store, keys kept.
  public func importJSON(_ json: Data) throws { try StoreJSON.importObjects(json, into: self) }
}
