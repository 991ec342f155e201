/// The command line's words for the library's options: a message of the layers below names the API
/// option a Swift caller sets (`StoreMigrator.Options.wait`); the command line says its flag
/// instead (`--wait SECONDS`). One table, so that neither wording is made up in two places.
package enum CommandLineWords {
  /// API option → the flag that sets it.
  static let flags: [(option: String, flag: String)] = [
    ("StoreMigrator.Options.wait", "--wait SECONDS"),
    ("StoreMigrator.Options.allowCloudKitChanges", "--allow-cloudkit-changes"),
    ("StoreMigrator.Options.refuseDrops", "--no-drops"),
  ]

  /// `message` with every API option it names said as the command line's flag.
  package static func flags(in message: String) -> String {
    flags.reduce(message) { text, pair in text.replacingOccurrences(of: pair.option, with: pair.flag) }
  }
}
