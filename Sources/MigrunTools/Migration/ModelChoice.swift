import Foundation
import MigrunModel
import MigrunStore
import SwiftDataModel

/// The model at `url`: an `.xcdatamodeld`, `.xcdatamodel`, `.momd` or `.mom`, a store (its own
/// model), or Swift sources — a folder or `.swift` file declaring SwiftData's `@Model` classes.
package func loadModel(_ url: URL) throws -> ModelBundle { try SwiftDataSources.load(url) }

/// The model named by an argument or by `--model` (one of them, or both the same), else the
/// project file's `model:` (`project`, as the command line read it).
package func modelPath(argument: String?, option: String?, project: ProjectConfig?) throws -> String {
  switch (argument, option) {
  case (let path?, nil), (nil, let path?): return path
  case (let first?, let second?) where first == second: return first
  case (_?, _?): throw ToolError(message: "give the model once: as the argument or as --model, not both")
  case (nil, nil):
    if let model = project?.model { return model }
    throw ToolError(
      message: "give the model: migrun … MODEL, or --model MODEL (or model: in \(ProjectConfig.fileName))")
  }
}

/// `--model` when given, else the project file's `model:` (commands whose model is optional).
package func modelOrProject(_ option: String?, _ project: ProjectConfig?) -> String? {
  option ?? project?.model
}

/// Which configuration a store was written for (`--configuration`, or found from the store), and the
/// bundle restricted to it.
package enum ConfigurationChoice {
  package static func bundle(_ bundle: ModelBundle, configuration: String?, store: URL?) throws -> ModelBundle {
    try Self.bundle(bundle, configuration: configuration, session: store.map { StoreSession($0) })
  }

  /// ``bundle(_:configuration:store:)`` from what the session read of the store.
  package static func bundle(_ bundle: ModelBundle, configuration: String?, session: StoreSession?) throws
    -> ModelBundle
  {
    if let configuration { return try bundle.restricted(toConfiguration: configuration) }
    guard bundle.configuration == nil, let session, let found = try bundle.configuration(ofStore: session) else {
      return bundle
    }
    return try bundle.restricted(toConfiguration: found)
  }
}

/// How a store's model is found: a version of `--model` whose hashes match, or the store's own.
package struct ModelResolution {
  package let model: ObjectModel?
  package let versionName: String?
  /// Why no version matched, entity by entity (empty when one did or no bundle was given).
  package let mismatch: [String]

  package static func resolve(store url: URL, bundlePath: String?, version: String? = nil, configuration: String? = nil)
    throws
    -> ModelResolution
  {
    try resolve(
      session: StoreSession(url), bundlePath: bundlePath, version: version, configuration: configuration)
  }

  /// ``resolve(store:bundlePath:version:configuration:)`` from what the session read of the store.
  package static func resolve(
    session: StoreSession, bundlePath: String?, version: String? = nil, configuration: String? = nil
  ) throws -> ModelResolution {
    let metadata = try session.metadata()
    guard let bundlePath else { return ModelResolution(model: nil, versionName: nil, mismatch: []) }
    let bundle = try ConfigurationChoice.bundle(
      loadModel(URL(fileURLWithPath: bundlePath)), configuration: configuration, session: session)
    if let version {
      let model = try bundle.model(named: version)
      let differences = metadata.differences(from: model).map(\.description)
      return ModelResolution(model: differences.isEmpty ? model : nil, versionName: version, mismatch: differences)
    }
    if let model = bundle.version(matching: metadata.versionHashes) {
      return ModelResolution(model: model, versionName: model.versionName, mismatch: [])
    }
    var lines = ["no version of \(bundle.name) matches the store's entity hashes"]
    if let closest = bundle.closestVersions(to: metadata.versionHashes).first,
      let model = try? bundle.model(named: closest.name)
    {
      lines.append(
        "closest: \(closest.name) (\(closest.matchingEntities) of \(metadata.versionHashes.count) entities equal)")
      lines += metadata.differences(from: model).map { "  \($0)" }
    }
    lines.append("store entities: " + metadata.versionHashes.keys.sorted().joined(separator: ", "))
    return ModelResolution(model: nil, versionName: nil, mismatch: lines)
  }
}
