import Foundation
import MigrunKit
import MigrunModel
import MigrunScripting
import TestSupport
import Testing

/// `lint` on the real models in ../shared and the examples, with the mapping models their projects
/// ship (a step a script covers is the script's to fill): no heuristic finding, and every exact
/// finding true of the models.
@Suite struct RealModelLintTests {
  /// The folders of the fixture project around `bundle` that hold mapping models.
  static func mappingFolders(near bundle: URL) throws -> [URL] {
    let relative = bundle.path.dropFirst(Fixtures.coreData.path.count + 1)
    guard let project = relative.split(separator: "/").first else { return [] }
    let root = Fixtures.coreData.appendingPathComponent(String(project))
    guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
    var folders = Set<URL>()
    for case let url as URL in walker where ScriptedStep.isMappingModel(url) {
      folders.insert(url.deletingLastPathComponent())
    }
    return folders.sorted { $0.path < $1.path }
  }

  @Test func theRealModelsHaveOnlyTrueFindings() throws {
    var bundles = 0
    for url in try Fixtures.modelBundles() + [
      Fixtures.repositoryRoot.appendingPathComponent("policies/examples/recipes/Recipes.xcdatamodeld")
    ] {
      let bundle = try ModelBundle(modelOrStoreAt: url)
      let folders = url.path.hasPrefix(Fixtures.coreData.path) ? try Self.mappingFolders(near: url) : []
      let order = try MigrationPlanner.explicitOrder(bundle, policyFolders: [], override: nil)?.names
      let scripted = ScriptedStep.scriptedSteps(
        of: bundle, order: order ?? bundle.versionNames, in: PolicyFiles(folders))
      for finding in ModelLint.findings(bundle.models, scripted: scripted) {
        // Exact rules only, and true: the relationship changed cardinality between the two versions.
        #expect(finding.rule == "cardinality-change", "\(url.lastPathComponent): \(finding)")
        guard finding.rule == "cardinality-change", finding.versions.count == 2,
          let relationship = finding.properties.first
        else { continue }
        let (old, new) = (try bundle.model(named: finding.versions[0]), try bundle.model(named: finding.versions[1]))
        let after = new.entity(named: finding.entity).flatMap { entity in
          new.relationships(of: entity).first { $0.name == relationship }
        }
        // The relationship as the earlier version had it: under its renaming identifier, if any.
        let before = try MappingModel.match(try #require(new.entity(named: finding.entity)), in: old).flatMap {
          entity in old.relationships(of: entity).first { $0.name == (after?.renamingIdentifier ?? relationship) }
        }
        #expect(before != nil && after != nil && before?.isToMany != after?.isToMany, "\(finding)")
      }
      bundles += 1
    }
    #expect(bundles > 1)
  }

  /// The wibosco app's 1 → 2 step renames `color` to `hexColor` without a renaming identifier: lint
  /// says so — and says nothing once the app's mapping model for the step is given, which maps it.
  @Test func aRenameAMappingModelCoversIsLeftToIt() throws {
    let url = Fixtures.url(
      "wibosco-coredatamigration-example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
    )
    let bundle = try ModelBundle(modelOrStoreAt: url)
    let bare = ModelLint.findings(bundle.models)
    #expect(bare.map(\.rule) == ["probable-rename"])
    #expect(bare.first?.properties == ["color", "hexColor"])
    let scripted = ScriptedStep.scriptedSteps(
      of: bundle, order: bundle.versionNames, in: PolicyFiles(try Self.mappingFolders(near: url)))
    #expect(ModelLint.findings(bundle.models, scripted: scripted).isEmpty)
  }
}
