import FileDoors
import Foundation

/// The versions of one model: an `.xcdatamodeld` folder (or a single `.xcdatamodel`), or a
/// compiled model — a `.momd` folder (or a single `.mom`), see `CompiledModel` — or a Core Data
/// store, whose `Z_MODELCACHE` holds its model: one version, named after the file.
///
/// Versions are the `NAME.xcdatamodel` folders inside; the current one is named by
/// `.xccurrentversion` (an XML plist whose `_XCCurrentVersionName` names it). Versions are listed in
/// natural order of their names (`Moody` < `Moody 2` < `Moody 10`): Xcode keeps no order of its own,
/// so that order is a convention (``isOrderGuessed``). A `.momd`'s versions are its `.mom` files,
/// its current version the one `VersionInfo.plist` names; the order is again a guess from names.
///
/// ```swift
/// let bundle = try ModelBundle(contentsOf: URL(fileURLWithPath: "Moody.xcdatamodeld"))
/// bundle.versionNames          // ["Moody", "Moody 2", …, "Moody 6"]
/// bundle.currentVersionName    // "Moody 6"
/// let v2 = try bundle.model(named: "Moody 2")
/// ```
public struct ModelBundle: Sendable {
  /// The folder or file read.
  public let url: URL
  /// The bundle's name: the folder name without its extension.
  public let name: String
  /// Every version's name, in natural order.
  public let versionNames: [String]
  /// The version Xcode marks as current (the last in natural order when `.xccurrentversion` is missing).
  public let currentVersionName: String
  /// Whether ``versionNames``' order comes from names alone (always, for Xcode's format).
  public let isOrderGuessed: Bool

  /// The current version's model.
  public private(set) var currentModel: ObjectModel
  /// The configuration every version was restricted to (``restricted(toConfiguration:)``), if any.
  public private(set) var configuration: String?

  /// For a `.momd`: the entity hashes its `VersionInfo.plist` holds per version (what Xcode's model
  /// compiler computed); empty for other formats.
  public private(set) var recordedVersionHashes: [String: [String: VersionHash]]

  private var modelsByName: [String: ObjectModel]

  /// Reads every version at `url`: an `.xcdatamodeld` folder, an `.xcdatamodel` folder or a
  /// `contents` file; a compiled `.momd` folder or `.mom` file. A Core Data store carries its model
  /// too (`Z_MODELCACHE`), but this layer opens no store: `storeModel` reads it (given the store and
  /// the version name to give it) — the store layer's `ModelBundle(modelOrStoreAt:)` hands it in.
  public init(
    contentsOf url: URL, storeModel: ((URL, String) throws(ModelError) -> ObjectModel)? = nil
  ) throws(ModelError) {
    self.url = url
    name = url.deletingPathExtension().lastPathComponent
    guard FileManager.default.fileExists(atPath: url.path) else {
      throw ModelError(.unreadable, file: url.path, reason: "no such file or folder")
    }
    let single = try Self.singleVersion(at: url, name: name, storeModel: storeModel)
    if let model = single {
      let versionName = model.versionName ?? name
      modelsByName = [versionName: model]
      versionNames = [versionName]
      currentVersionName = versionName
      currentModel = model
      isOrderGuessed = false
      recordedVersionHashes = [:]
      return
    }
    let compiled = url.pathExtension == "momd"
    let suffix = compiled ? ".mom" : ".xcdatamodel"
    let files: [String]
    do {
      files = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(suffix) }
    } catch {
      throw ModelError(
        .unreadable, file: url.path, reason: "cannot list the folder (\(error.localizedDescription))", underlying: error
      )
    }
    guard !files.isEmpty else {
      throw ModelError(.noVersions, file: url.path, reason: "the folder holds no \(suffix) versions")
    }
    let models = try Self.versions(files, in: url, suffix: suffix, compiled: compiled)
    modelsByName = models
    versionNames = models.keys.sorted(by: NaturalOrder.precedes)
    isOrderGuessed = versionNames.count > 1
    let info = compiled ? try CompiledModel.versionInfo(in: url) : nil
    recordedVersionHashes = info?.versionHashes ?? [:]
    let named = compiled ? info?.currentVersionName : try Self.readCurrentVersionName(in: url)
    let current = named ?? versionNames[versionNames.count - 1]
    guard let currentModel = models[current] else {
      let file = compiled ? "VersionInfo.plist" : ".xccurrentversion"
      throw ModelError(
        .unknownVersion, file: url.appendingPathComponent(file).path,
        reason: "names current version '\(current)', which the folder does not hold")
    }
    currentVersionName = current
    self.currentModel = currentModel
  }

  /// The one version a `.mom`, an `.xcdatamodel` (or its `contents`) or a store holds; nil for a
  /// folder of versions (`.xcdatamodeld`, `.momd`).
  private static func singleVersion(
    at url: URL, name: String, storeModel: ((URL, String) throws(ModelError) -> ObjectModel)?
  ) throws(ModelError) -> ObjectModel? {
    switch url.pathExtension {
    case "xcdatamodeld", "momd": return nil
    case "mom": return try CompiledModel.read(mom: url, versionName: name)
    default:
      if let kind = FileKind.of(url), kind != .xml {
        // A Core Data store carries its model (Z_MODELCACHE): a store is a model of one version.
        guard kind == .sqlite else {
          throw ModelError(.notAModel, file: url.path, reason: "\(kind.description), not a model (\(Self.accepted))")
        }
        guard let storeModel else {
          throw ModelError(.notAModel, file: url.path, reason: "a Core Data store, not a model (\(Self.accepted))")
        }
        return try storeModel(url, name)
      } else {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue,
          !FileManager.default.fileExists(atPath: url.appendingPathComponent("contents").path)
        {
          try XcdatamodelReader.refuseXcode3Model(url)
          throw ModelError(
            .notAModel, file: url.path,
            reason: "a folder with no model in it: no contents file, no .xcdatamodel or .mom version (\(Self.accepted))"
          )
        }
        return try XcdatamodelReader.read(contentsOf: url)
      }
    }
  }

  /// The versions of a folder, by name.
  private static func versions(_ files: [String], in url: URL, suffix: String, compiled: Bool) throws(ModelError)
    -> [String: ObjectModel]
  {
    var models: [String: ObjectModel] = [:]
    for file in files {
      let versionName = String(file.dropLast(suffix.count))
      let path = url.appendingPathComponent(file)
      models[versionName] =
        try compiled
        ? CompiledModel.read(mom: path, versionName: versionName)
        : XcdatamodelReader.read(contentsOf: path, versionName: versionName)
    }
    return models
  }

  /// The order a migration walks, one version at a time, when the model itself declares one: a
  /// SwiftData `SchemaMigrationPlan`'s `schemas` (SwiftData migrates stage by stage). `nil` for
  /// Core Data's formats, whose stores go straight to the destination where they can.
  package private(set) var declaredOrder: VersionOrder?

  /// Versions made elsewhere (a SwiftData model read from its Swift sources), in `versions`' order.
  package init(
    name: String, url: URL, versions: [(name: String, model: ObjectModel)], current: String, isOrderGuessed: Bool,
    declaredOrder: VersionOrder? = nil
  ) throws(ModelError) {
    guard let currentModel = versions.first(where: { $0.name == current })?.model else {
      throw ModelError(.unknownVersion, file: url.path, reason: "no version '\(current)'")
    }
    self.url = url
    self.name = name
    versionNames = versions.map(\.name)
    currentVersionName = current
    self.isOrderGuessed = isOrderGuessed
    self.currentModel = currentModel
    recordedVersionHashes = [:]
    modelsByName = Dictionary(versions.map { ($0.name, $0.model) }, uniquingKeysWith: { first, _ in first })
    self.declaredOrder = declaredOrder
  }

  /// Every version restricted to configuration `name` (``ObjectModel/restricted(toConfiguration:)``):
  /// the models of that configuration's stores. Versions without the configuration stay whole.
  public func restricted(toConfiguration name: String) throws(ModelError) -> ModelBundle {
    guard modelsByName.values.contains(where: { $0.configurations[name] != nil }) else {
      let known = Set(modelsByName.values.flatMap(\.configurations.keys)).sorted()
      throw ModelError(
        .unknownConfiguration, file: url.path,
        reason:
          "no version of \(self.name) has a configuration '\(name)' (\(known.isEmpty ? "it has none" : "it has " + known.joined(separator: ", ")))"
      )
    }
    var copy = self
    var models: [String: ObjectModel] = [:]
    for (version, model) in modelsByName { models[version] = try model.restricted(toConfiguration: name) }
    copy.modelsByName = models
    if let current = models[currentVersionName] { copy.currentModel = current }
    // A configuration's models keep the whole model's hashes, so the compiler's recorded ones still apply.
    copy.configuration = name
    return copy
  }

  package static let accepted =
    "give a .xcdatamodeld, .xcdatamodel, .momd or .mom, or a Core Data store, whose Z_MODELCACHE holds its model"

  /// The version named `name` (without `.xcdatamodel`).
  public func model(named name: String) throws(ModelError) -> ObjectModel {
    guard let model = modelsByName[name] else {
      let known = versionNames.map { "'\($0)'" }.joined(separator: ", ")
      throw ModelError(.unknownVersion, file: url.path, reason: "no version named '\(name)' (versions: \(known))")
    }
    return model
  }

  /// Every version, in ``versionNames`` order.
  public var models: [ObjectModel] { versionNames.compactMap { modelsByName[$0] } }

  /// The version whose entity hashes are exactly `hashes` (a store's metadata), if any.
  public func version(matching hashes: [String: VersionHash]) -> ObjectModel? {
    models.first { $0.entityVersionHashes == hashes }
  }

  /// Versions ordered by how many of `hashes` they share, closest first (for "no version matches").
  public func closestVersions(to hashes: [String: VersionHash]) -> [(name: String, matchingEntities: Int)] {
    models.map { model in
      (model.versionName ?? "?", hashes.filter { model.entityVersionHashes[$0.key] == $0.value }.count)
    }.sorted { $0.matchingEntities > $1.matchingEntities }
  }

  // MARK: - Non public

  private static func readCurrentVersionName(in bundle: URL) throws(ModelError) -> String? {
    let file = bundle.appendingPathComponent(".xccurrentversion")
    let read: Data?
    do {
      read = try InputFile.dataIfPresent(file)
    } catch {
      throw ModelError(.unreadable, file: file.path, reason: (error as? InputFileError)?.reason ?? "\(error)")
    }
    guard let data = read else { return nil }
    let plist: Any
    do {
      plist = try PropertyListSerialization.propertyList(from: data, format: nil)
    } catch {
      throw ModelError(.notAModel, file: file.path, reason: "not a property list")
    }
    guard let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String else { return nil }
    return name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
  }
}

/// Natural order of version names: digit runs compare as numbers, so `Moody 2` < `Moody 10`.
package enum NaturalOrder {
  package static func precedes(_ lhs: String, _ rhs: String) -> Bool {
    let left = chunks(lhs)
    let right = chunks(rhs)
    for (a, b) in zip(left, right) where a != b {
      switch (a, b) {
      case (.number(let x), .number(let y)): return x < y
      case (.number, .text): return true
      case (.text, .number): return false
      case (.text(let x), .text(let y)): return x.utf16.lexicographicallyPrecedes(y.utf16)
      }
    }
    return left.count < right.count
  }

  private enum Chunk: Equatable {
    case text(String)
    case number(Double)
  }

  private static func chunks(_ string: String) -> [Chunk] {
    var result: [Chunk] = []
    var current = ""
    var inDigits = false
    func flush() {
      guard !current.isEmpty else { return }
      result.append(inDigits ? .number(Double(current) ?? 0) : .text(current))
      current = ""
    }
    for character in string {
      let isDigit = character.isASCII && character.isNumber
      if isDigit != inDigits {
        flush()
        inDigits = isDigit
      }
      current.append(character)
    }
    flush()
    return result
  }
}
