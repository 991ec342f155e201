extension Attribute {
  /// The integer at the start of `text` (after spaces, with an optional sign), 0 when there is none,
  /// clamped to 64 bits — `NSString.longLongValue`'s documented reading.
  static func leadingInteger(_ text: String) -> Int64 {
    var scalars = Substring(text).drop { $0 == " " || $0 == "\t" || $0 == "\n" }
    var negative = false
    if let sign = scalars.first, sign == "-" || sign == "+" {
      negative = sign == "-"
      scalars = scalars.dropFirst()
    }
    var value: Int64 = 0
    for character in scalars {
      guard let digit = character.wholeNumberValue, character.isASCII else { break }
      let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
      let (plus, overflow2) = times.addingReportingOverflow(Int64(digit))
      if overflow1 || overflow2 { return negative ? Int64.min : Int64.max }
      value = plus
    }
    return negative ? -value : value
  }

  /// The default value as a stored value (`defaultValueString` read by type), or NULL.
  public var defaultValue: StoreValue {
    guard let text = defaultValueString else { return .null }
    switch type {
    case .integer16, .integer32, .integer64:
      // Read as NSString's longLongValue reads it (leading decimal digits, else 0): a Boolean turned
      // into an integer keeps Xcode's `defaultValueString="NO"`, which Core Data's stores show
      // filled as 0. (Our reading of how the model compiler converts the text; not documented.)
      return .integer(Self.leadingInteger(text))
    case .boolean: return .boolean(text == "YES" || text == "1" || text.lowercased() == "true")
    case .double, .float, .decimal: return Double(text).map(StoreValue.double) ?? .null
    case .date: return Double(text).map(StoreValue.date) ?? .null
    case .string, .uri: return .string(text)
    default: return .null
    }
  }
}
