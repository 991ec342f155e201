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
      [.text(iso(try HostLibraries.number(arguments, 0, "date.iso")))]
    }
    vm.register("now", in: "date") { _ in [.number(Date().timeIntervalSinceReferenceDate)] }
    vm.register("parse", in: "date") { arguments in
      let text = String(decoding: try HostLibraries.bytes(arguments, 0, "date.parse"), as: UTF8.self)
      guard let seconds = parse(text) else { throw HostError("date.parse: '\(text)' is not an ISO-8601 date") }
      return [.number(seconds)]
    }
  }

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
