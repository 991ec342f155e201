import Foundation
import GRDB
import MigrunModel
import MigrunStore
import Testing

@testable import MigrunKit

/// Migrations as many suites run them: a one-step inferred plan between two models, a model from
/// its XML, and a plan run each of the three ways (DDL, rows, objects) with the results held equal.
public enum Migrations {
  /// Runs `plan` on a copy of `store` each of the three ways; returns the results by method and
  /// checks they are one store. `expectDDL`: whether the DDL run must have run every step as DDL.
  @discardableResult
  public static func migrateEveryWay(
    _ store: URL, plan: MigrationPlan, destination: ObjectModel, in folder: TemporaryDirectory, expectDDL: Bool,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [StepMethod: URL] {
    var results: [StepMethod: URL] = [:]
    var exports: [StepMethod: String] = [:]
    var layouts: [StepMethod: SchemaSnapshot] = [:]
    for method in [StepMethod.ddl, .copyRows, .objects] {
      let url = try folder.folder(UUID().uuidString).appendingPathComponent(store.lastPathComponent)
      try FileManager.default.copyItem(at: store, to: url)
      let support = ExternalData.supportFolder(of: store)
      if FileManager.default.fileExists(atPath: support.path) {
        try FileManager.default.copyItem(at: support, to: ExternalData.supportFolder(of: url))
      }
      let report = try StoreMigrator(
        store: url, plan: plan, options: .init(keepBackup: false, bulkCopy: method != .objects, ddl: method == .ddl)
      ).run()
      if method == .ddl {
        #expect(report.steps.allSatisfy { $0.method == .ddl } == expectDDL, sourceLocation: sourceLocation)
      } else {
        #expect(!report.steps.contains { $0.method == .ddl }, sourceLocation: sourceLocation)
      }
      let migrated = try SQLiteStore(url: url, model: destination)
      exports[method] = try StoreJSON.export(migrated)
      try migrated.close()
      layouts[method] = try SchemaSnapshot(of: url, excluding: isPersistentHistory)
      results[method] = url
    }
    // The DDL edit leaves the older form of an index on a table it does not change (as Core Data's
    // migration in place does); the other paths build every table anew.
    let older = Set(StoreSchema(model: destination).olderFormIndexes.map(\.name))
    layouts[.ddl]?.indexes.subtract(older)
    for method in [StepMethod.copyRows, .objects] {
      #expect(layouts[.ddl] == layouts[method], "DDL vs \(method)", sourceLocation: sourceLocation)
      #expect(exports[.ddl] == exports[method], "DDL vs \(method)", sourceLocation: sourceLocation)
    }
    // Laid out as a new store of the destination version.
    let fresh = try folder.folder(UUID().uuidString).appendingPathComponent("fresh.sqlite")
    try SQLiteStore.create(at: fresh, model: destination).close()
    #expect(layouts[.ddl] == (try SchemaSnapshot(of: fresh)), sourceLocation: sourceLocation)
    return results
  }

  /// A one-step inferred plan between two models (named `from` and `to`, else by their versions).
  public static func plan(_ v1: ObjectModel, _ v2: ObjectModel, from: String? = nil, to: String? = nil) throws
    -> MigrationPlan
  {
    let step = MigrationStep(
      from: from ?? v1.versionName ?? "V1", to: to ?? v2.versionName ?? "V2", kind: .inferred,
      inferredMapping: try MappingModel.inferred(from: v1, to: v2), source: v1, destination: v2)
    return MigrationPlan(
      sourceVersion: step.from, destinationVersion: step.to, steps: [step], rule: .directInferred)
  }

  public static func model(_ xml: String, _ version: String) throws -> ObjectModel {
    try XcdatamodelReader.parse(Data(xml.utf8), file: "\(version).xcdatamodel/contents", versionName: version)
  }
}

/// Writes the version `version` of the model `bundle` (an `.xcdatamodeld` folder, made when need be)
/// as Xcode writes its `contents`: `entities` are its `<entity>` elements.
public func writeModelVersion(_ version: String, of bundle: URL, entities: String) throws {
  let contents = bundle.appendingPathComponent("\(version).xcdatamodel/contents")
  try FileManager.default.createDirectory(at: contents.deletingLastPathComponent(), withIntermediateDirectories: true)
  try Data(
    """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
    \(entities)
    </model>
    """.utf8
  ).write(to: contents)
}
