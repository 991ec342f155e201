import FileDoors
import Foundation
import PropertyList

/// Compiled models, as Xcode's model compiler writes them into an app: a `NAME.momd` folder (one
/// `VERSION.mom` per version, and `VersionInfo.plist` naming the current version and holding each
/// version's entity hashes) or a single `.mom`.
///
/// A `.mom` is an `NSKeyedArchiver` archive of the `NSManagedObjectModel` — the same archive a
/// store keeps (deflated) in `Z_MODELCACHE`, so both are read by one decoder (``ModelCache``). A
/// `.momd` may also hold `.omo` files (an optimized binary form of the current version); the `.mom`
/// beside it has the same model, so they are not read.
enum CompiledModel {
  /// What `VersionInfo.plist` says: the current version's name and, per version, the entity hashes
  /// the model compiler computed.
  struct VersionInfo {
    var currentVersionName: String?
    var versionHashes: [String: [String: VersionHash]] = [:]
  }

  package static func read(mom url: URL, versionName: String) throws(ModelError) -> ObjectModel {
    let data: Data
    do {
      data = try InputFile.data(url)
    } catch {
      throw ModelError(.unreadable, file: url.path, reason: (error as? InputFileError)?.reason ?? "\(error)")
    }
    let archive: ArchivedValue
    do {
      archive = try KeyedArchive.unarchive(Array(data), linkKeys: ModelCache.links)
    } catch {
      throw ModelError(
        .notAModel, file: url.path,
        reason: "cannot be read as a compiled model (an archived NSManagedObjectModel): \(error)")
    }
    do {
      return try ModelCache.model(from: archive, versionName: versionName)
    } catch {
      // The decoder speaks of Z_MODELCACHE, where it usually reads this archive.
      let reason = error.reason.replacingOccurrences(of: "Z_MODELCACHE", with: "the file")
      throw ModelError(.notAModel, file: url.path, entity: error.entity, reason: reason)
    }
  }

  static func versionInfo(in momd: URL) throws(ModelError) -> VersionInfo {
    let file = momd.appendingPathComponent("VersionInfo.plist")
    let read: Data?
    do {
      read = try InputFile.dataIfPresent(file)
    } catch {
      throw ModelError(.unreadable, file: file.path, reason: (error as? InputFileError)?.reason ?? "\(error)")
    }
    guard let data = read else { return VersionInfo() }
    let plist: PropertyListValue
    do {
      plist = try PropertyListValue(decoding: Array(data))
    } catch {
      throw ModelError(.notAModel, file: file.path, reason: "not a property list: \(error)", underlying: error)
    }
    var info = VersionInfo(currentVersionName: plist["NSManagedObjectModel_CurrentVersionName"]?.stringValue)
    for (version, entities) in plist["NSManagedObjectModel_VersionHashes"]?.dictionaryValue ?? [:] {
      var hashes: [String: VersionHash] = [:]
      for (entity, value) in entities.dictionaryValue ?? [:] {
        if let bytes = value.dataValue, let hash = VersionHash(data: Data(bytes)) { hashes[entity] = hash }
      }
      info.versionHashes[version] = hashes
    }
    return info
  }
}
