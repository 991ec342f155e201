import Foundation

/// `date`: Core Data stores dates as seconds since 2001-01-01 00:00:00 UTC (its reference date).
///
/// - `date.fromUnix(seconds)` → reference seconds; `date.toUnix(reference)` → Unix seconds
/// - `date.iso(reference)` → `"2024-05-01T12:00:00Z"` (fractions when there are any)
/// - `date.parse(text)` → reference seconds from ISO-8601 (`2024-05-01`, `…T12:00:00Z`, offsets, fractions)
/// - `date.now()` → the current time in reference seconds (Swift's `Date()` in a ported policy)
enum CoreDataDate {
  /// Unix time of 2001-01-01 00:00:00 UTC.
  static let referenceOffset: Double = 978_307_200

  static func register(in vm: LuaVM) {
    vm.register("fromUnix", in: "date") { arguments in
      [.number(try HostLibraries.number(arguments, 0, "date.fromUnix") - referenceOffset)]
    }
    vm.register("toUnix", in: "date") { arguments in
      [.number(try HostLibraries.number(arguments, 0, "date.toUnix") + referenceOffset)]
    }
    vm.register("iso", in: "date") { arguments in
      let reference = try HostLibraries.number(arguments, 0, "date.iso")
      // NaN and infinities are no time (Foundation wrote "" for them), nor is a year ISO-8601's four
      // digits cannot hold.
      guard isoRange.contains(reference) else {
        throw HostError(
          "date.iso: \(reference.isNaN ? "nan" : "\(reference)") is no date: give seconds since 2001-01-01, a number for a time in years 1 to 9999"
        )
      }
      return [.text(iso(reference))]
    }
    vm.register("now", in: "date") { _ in [.number(Date().timeIntervalSinceReferenceDate)] }
    vm.register("parse", in: "date") { arguments in
      let text = String(decoding: try HostLibraries.bytes(arguments, 0, "date.parse"), as: UTF8.self)
      guard let seconds = parse(text) else { throw HostError("date.parse: '\(text)' is not an ISO-8601 date") }
      return [.number(seconds)]
    }
  }

  /// The reference seconds of 0001-01-01T00:00:00Z through 9999-12-31T23:59:59Z.
  static let isoRange: ClosedRange<Double> = -63_113_904_000...252_423_993_599

  static func iso(_ reference: Double) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    if reference.rounded(.down) != reference { formatter.formatOptions.insert(.withFractionalSeconds) }
    return formatter.string(from: Date(timeIntervalSinceReferenceDate: reference))
  }

  static func parse(_ text: String) -> Double? {
    let formatter = ISO8601DateFormatter()
    let attempts: [ISO8601DateFormatter.Options] = [
      [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds], [.withFullDate],
    ]
    for options in attempts {
      formatter.formatOptions = options
      if let date = formatter.date(from: text) { return date.timeIntervalSinceReferenceDate }
    }
    return nil
  }
}
