import ArgumentParser
import Foundation
import MigrunKit
import MigrunStore
import MigrunTools

struct CheckCommand: ProjectCommand {
  static let configuration = CommandConfiguration(
    commandName: "check",
    abstract: "Check stores the way Core Data would need them: exit 0 when clean, 1 on findings.",
    discussion: HelpText.reflow(
      """
      For each store, one line per finding: SQLite's own integrity check (sqlite-integrity; the rest is
      skipped on a damaged file), to-one keys and join rows naming no object (link-to-no-object), rows
      whose Z_ENT no entity of their table has (unknown-entity-number), Z_PRIMARYKEY.Z_MAX below a
      table's largest key (primary-key-behind), values kept outside the store whose file is missing
      (external-file-missing) and files no value names (external-file-unreferenced), metadata hashes
      that match no version of --model (no-matching-version) and a cached model that disagrees with the
      metadata (cache-disagrees-with-metadata: both hashes; Core Data opens a store by its metadata's).
      Columns a table has that the model does not (added by hand) are a note (column-not-in-model).
      Nothing is written: a store is read as immutable, or through a snapshot when its -wal holds
      transactions (findings name the store, never the snapshot). migrate carries all of these but
      SQLite's damage, and reports what it carried.
      """))

  @Argument(help: "The stores.") var stores: [String]
  @Option(
    help:
      "The model folder the stores' versions should be in (default: model: in .migrun.yml, else each store's own cache)."
  )
  var model: String?
  @Option(help: "The model configuration the stores were written for (default: found from each store).")
  var configuration: String?
  @Flag(
    help: "JSON lines (docs/json.md): a `check` line per store {store, findings: [{kind, message}]}, then a `summary`.")
  var json = false

  func validate() throws {
    guard !stores.isEmpty else { throw ValidationError("give a store (or several)") }
  }

  @OptionGroup var waiting: StoreWaitOption

  func execute(_ project: ProjectConfig?) throws {
    var job = CheckJob(stores: stores, model: model, configuration: configuration, json: json).reading(project)
    job.wait = waiting.wait
    try show(job.run())
  }
}
