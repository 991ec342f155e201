/// The one-line form every MigrunKit error takes: `where: entity 'E', property 'p': reason`, each
/// part present only when known.
package enum ErrorMessage {
  package static func line(_ origin: String?, entity: String?, detail: String?, _ reason: String) -> String {
    let place = [entity.map { "entity '\($0)'" }, detail].compactMap { $0 }.joined(separator: ", ")
    return [origin, place.isEmpty ? nil : place, reason].compactMap { $0 }.joined(separator: ": ")
  }

  /// `text` as a terminal shows it harmlessly: control characters (but tab) and C1 controls
  /// written as `\u{1B}` — a script's or a store's text never moves the cursor, recolours the
  /// screen or hides what follows.
  package static func terminalSafe(_ text: String) -> String {
    var safe = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      if (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value) {
        safe.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
      } else {
        safe.append(scalar)
      }
    }
    return String(safe)
  }
}
