import PropertyList

/// The one-line form every MigrunKit error takes: `where: entity 'E', property 'p': reason`, each
/// part present only when known.
package enum ErrorMessage {
  package static func line(_ origin: String?, entity: String?, detail: String?, _ reason: String) -> String {
    let place = [entity.map { "entity '\($0)'" }, detail].compactMap { $0 }.joined(separator: ", ")
    return [origin, place.isEmpty ? nil : place, reason].compactMap { $0 }.joined(separator: ": ")
  }

  /// `text` as a message quotes it: whole up to 200 characters, else its first 200 and its length
  /// (a model file's or a script's text can be a megabyte long).
  package static func quoted(_ text: String) -> String {
    text.count > 200 ? "\(text.prefix(200))… (\(text.count) characters)" : text
  }

  /// `text` as a terminal shows it harmlessly (`TerminalText.safe`).
  package static func terminalSafe(_ text: String) -> String { TerminalText.safe(text) }
}
