import Foundation
import MigrunModel

extension ModelBundle {
  /// Reads a model as ``ModelBundle/init(contentsOf:storeModel:)`` does — or, for a Core Data store,
  /// the model its `Z_MODELCACHE` carries (a store is a model of one version).
  public init(modelOrStoreAt url: URL) throws(ModelError) {
    try self.init(contentsOf: url, storeModel: Self.cachedModel(ofStore:versionName:))
  }

  /// The configuration a store of this bundle was written for, found from the store: the version
  /// its metadata's hashes name (a configuration's store records the whole model's), then the one
  /// configuration of it whose tables are the store's (``ObjectModel/configuration(ofStoreTables:)``).
  /// Nil when the store holds every table of its version (a whole-model store — today's Core Data
  /// writes every table whatever the configuration) or no single configuration fits.
  public func configuration(ofStoreAt url: URL) throws -> String? {
    try configuration(ofStore: StoreSession(url))
  }

  /// ``configuration(ofStoreAt:)``, from what the session read of the store.
  package func configuration(ofStore session: StoreSession) throws -> String? {
    // An XML or binary store has no tables to tell a configuration by.
    if let type = session.type, type != .sqlite { return nil }
    guard let model = version(matching: try session.metadata().versionHashes) else { return nil }
    return model.configuration(ofStoreTables: try session.tableNames())
  }

  /// The model a store carries in `Z_MODELCACHE`, named `versionName`.
  static func cachedModel(ofStore url: URL, versionName: String) throws(ModelError) -> ObjectModel {
    let cached: ObjectModel?
    let session = StoreSession(url)
    do {
      _ = try session.metadata()
    } catch {
      let why = (error as? StoreError)?.reason ?? "\(error)"
      throw ModelError(.notAModel, file: url.path, reason: "a SQLite database, but \(why); \(accepted)")
    }
    do {
      cached = try session.cachedModel()
    } catch {
      throw ModelError(
        .notAModel, file: url.path, reason: "a SQLite database whose model cannot be read (\(error)); \(accepted)")
    }
    guard let cached else {
      throw ModelError(
        .notAModel, file: url.path,
        reason:
          "a Core Data store without a model cache (Z_MODELCACHE: stores written before iOS 7 / OS X 10.9, or emptied): give its model"
      )
    }
    return try cached.named(versionName)
  }
}
