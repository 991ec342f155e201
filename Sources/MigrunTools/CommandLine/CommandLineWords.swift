/// The command line's words for the library's options: a message of the layers below names the API
/// option a Swift caller sets (`StoreMigrator.Options.wait`); the command line says its flag
/// instead (`--wait SECONDS`). One table, so that neither wording is made up in two places.
package enum CommandLineWords {
  /// API option → the flag that sets it.
  static let flags: [(option: String, flag: String)] = [
    ("StoreMigrator.Options.wait", "--wait SECONDS"),
    ("StoreMigrator.Options.allowCloudKitChanges", "--allow-cloudkit-changes"),
    ("StoreMigrator.Options.refuseDrops", "--no-drops"),
    ("set StoreMigrator.Options.partialHistory", "give --partial-history"),
    ("run the migration without StoreMigrator.Options.dryRun", "run `migrun migrate` without --dry-run"),
    ("MigrationScripts.mergeRules", "migrun migrate --merge-rules FILE"),
    ("MigrationScripts.policyFolders", "--policies"),
    ("give StoreCheck a model bundle", "give --model"),
    ("(StoreCheck's bundle)", "(--model)"),
    ("MigrationScripts.mappingModels", "--mapping"),
    ("MigrationScripts.chain", "--chain"),
    ("ScriptLimits.instructions", "--lua-instructions"),
    ("ScriptLimits.seconds", "--lua-time"),
    ("ScriptLimits.memoryBytes", "--lua-memory"),
    (
      "SQLiteStore reads SQLite stores (convert it to StoreType.sqlite first)",
      "this command takes SQLite stores (`migrun copy --type sqlite` makes one)"
    ),
  ]

  /// `message` with every API option it names said as the command line's flag; names to drop
  /// (MigrunKit's `OptionWords.dropping`) as one `--drop` each.
  package static func flags(in message: String) -> String {
    flags.reduce(message) { text, pair in text.replacingOccurrences(of: pair.option, with: pair.flag) }
      .replacing(dropping) { match in
        "give " + match.output.1.components(separatedBy: ", ").map { "--drop \($0)" }.joined(separator: " ")
      }
      .replacing(destination) { match in "--to \(match.output.1)" }
      .replacing(salvage) { match in "`migrun salvage \(match.output.1) --out NEW`" }
  }

  // Checked when migrun is built (literals), lowered once, on first use. `Regex` is not declared
  // `Sendable`, but these constants are only read, and a regex lowers its program once, atomically.

  /// "add A, B to StoreMigrator.Options.drop" (from a whole word 'add'): the names to drop.
  nonisolated(unsafe) static let dropping = #/\badd ([^()]+?) to StoreMigrator\.Options\.drop/#
  /// "the destination V (MigrationScripts.plan's destination)": the version `--to` names.
  nonisolated(unsafe) static let destination = #/the destination ([^()]+?) \(MigrationScripts\.plan's destination\)/#
  /// "Salvage of `STORE` into a new store" (`StoreCheck`'s note on a damaged file): the store.
  nonisolated(unsafe) static let salvage = #/Salvage of `([^`]+)` into a new store/#
}
