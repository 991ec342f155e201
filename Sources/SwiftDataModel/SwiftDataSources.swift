import Foundation
import MigrunModel
import MigrunStore
import SwiftSyntax

/// A SwiftData model read from the app's Swift sources: the `@Model` classes, each
/// `VersionedSchema` a version (named by its `versionIdentifier`: `1.0.0`), in the order of the
/// `SchemaMigrationPlan`'s `schemas`. Sources without a `VersionedSchema` are one version holding
/// every `@Model` class, named after the folder or file.
///
/// The sources are parsed with swift-syntax, Apple's own Swift parser; nothing is compiled, so only
/// what the text says is read. What cannot be read from it — a property without a type the model
/// can take, a macro argument migrun does not know — is an error naming the file and line.
///
/// ```swift
/// let bundle = try SwiftDataSources.bundle(at: URL(fileURLWithPath: "App/Models"))
/// bundle.versionNames   // ["1.0.0", "2.0.0"]
/// ```
package enum SwiftDataSources {
  /// Whether `url` is Swift source: a `.swift` file, or a folder (not a model package) holding one.
  package static func isSwiftSource(_ url: URL) -> Bool {
    if url.pathExtension == "swift" { return true }
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue,
      !["xcdatamodeld", "xcdatamodel", "momd"].contains(url.pathExtension)
    else { return false }
    return !(swiftFiles(in: url).isEmpty)
  }

  /// The model at `url`, whatever its form: Swift sources, else what ``ModelBundle/init(contentsOf:)``
  /// reads (`.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`, a store's own model).
  package static func load(_ url: URL) throws(ModelError) -> ModelBundle {
    if isSwiftSource(url) { return try bundle(at: url) }
    return try ModelBundle(modelOrStoreAt: url)
  }

  /// The `.swift` files under `folder` (hidden folders and `.build` left out), in path order.
  package static func swiftFiles(in folder: URL) -> [URL] {
    guard
      let walker = FileManager.default.enumerator(
        at: folder, includingPropertiesForKeys: [.isDirectoryKey], options: [.skipsHiddenFiles])
    else { return [] }
    var files: [URL] = []
    for case let url as URL in walker {
      if url.lastPathComponent == ".build" || url.lastPathComponent.hasPrefix(".build-") {
        walker.skipDescendants()
      } else if url.pathExtension == "swift" {
        files.append(url)
      }
    }
    return files.sorted { $0.path < $1.path }
  }

  /// The model the sources at `url` (a folder or one `.swift` file) declare, every version.
  package static func bundle(at url: URL) throws(ModelError) -> ModelBundle {
    let files = url.pathExtension == "swift" ? [url] : swiftFiles(in: url)
    let root = url.pathExtension == "swift" ? url.deletingLastPathComponent() : url
    guard !files.isEmpty else {
      throw ModelError(.noVersions, file: url.path, reason: "no .swift files")
    }
    let name = url.deletingPathExtension().lastPathComponent
    return try made(name: name, url: url) { try SourceDeclarations(files: files, relativeTo: root) }
  }

  /// The model of sources given as text (`files`: name → contents): for tests and tools.
  package static func bundle(sources: [(file: String, text: String)], name: String) throws(ModelError) -> ModelBundle {
    try made(name: name, url: URL(fileURLWithPath: name)) {
      var declarations = SourceDeclarations()
      for source in sources { try declarations.add(source: source.text, file: source.file) }
      declarations.mergeExtensions()
      return declarations
    }
  }

  /// The bundle of the declarations `read` gives; a source error is a model error at its file and line.
  /// Parsing and reading run on a stack deep enough for any file within the size migrun reads.
  private static func made(name: String, url: URL, _ read: () throws -> SourceDeclarations) throws(ModelError)
    -> ModelBundle
  {
    try DeepStack.run { () -> Result<ModelBundle, ModelError> in
      Result { () throws(ModelError) -> ModelBundle in try reading(name: name, url: url, read) }
    }.get()
  }

  private static func reading(name: String, url: URL, _ read: () throws -> SourceDeclarations) throws(ModelError)
    -> ModelBundle
  {
    do {
      let reader = SchemaReader(declarations: try read())
      let versions = try reader.versions(defaultName: name)
      return try ModelBundle(
        name: name, url: url, versions: versions.map { ($0.name, $0.model) },
        current: versions[versions.count - 1].name, isOrderGuessed: false,
        declaredOrder: reader.declaredOrder(of: versions))
    } catch let error as SourceError {
      throw ModelError(.notAModel, file: error.spot.description, reason: error.reason, underlying: error)
    } catch let error as ModelError {
      throw error
    } catch {
      throw ModelError(.unreadable, file: url.path, reason: "\(error)", underlying: error)
    }
  }
}
