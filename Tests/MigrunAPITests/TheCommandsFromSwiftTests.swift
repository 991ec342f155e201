import Foundation
import MigrunKit
import MigrunScripting
import TestSupport
import Testing

/// The lint and convert examples of TheCommandsFromSwift.md, word for word, on Moody's model, its
/// policies and its real mapping models.
@Suite(.enabled(if: Fixtures.areAvailable))
struct TheCommandsFromSwiftTests {
  @Test func lintAndConvertFromSwift() throws {
    let bundle = try ModelBundle(modelOrStoreAt: Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld"))
    let policiesURL = Fixtures.repositoryRoot.appendingPathComponent("policies/examples/moody")
    let mappingURL = Fixtures.url("objcio-core-data-moody/mappings/Moody 3-Moody 4.xcmappingmodel")
    for finding in try MigrationScripts.lint(bundle, policyFolders: [policiesURL]) { print(finding) }
    let lua = try MigrationScripts.luaMapping(converting: mappingURL, bundle: bundle)
    // Lint's lines, as `migrun lint` prints them: the uniqueness constraints Moody 4 adds.
    let findings = try MigrationScripts.lint(bundle)
    #expect(findings.contains { $0.hasPrefix("Moody 3 → Moody 4: Country.") && $0.hasSuffix("[uniqueness-added]") })
    // The conversion is a Lua mapping file: a table of entries in the mapping model's order.
    #expect(lua.contains("return {") && lua.contains("order = {"), "\(lua.prefix(400))")
    #expect(throws: MigrationError.self) {
      try MigrationScripts.luaMapping(converting: policiesURL, bundle: bundle)
    }
  }
}
