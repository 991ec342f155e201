import CoreData

/// Version 1 kept a JavaScript timestamp (milliseconds since 1970) from the server; version 2 keeps a
/// Date, and marks events that start at midnight UTC as all-day.
final class EventToEventPolicy: NSEntityMigrationPolicy {
  private static let secondsPerDay: Double = 86_400

  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    guard
      let event = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first
    else { return }
    let milliseconds = sInstance.value(forKey: "timestampMs") as? Int64 ?? 0
    guard milliseconds > 0 else { return }
    let date = dateFromMilliseconds(NSNumber(value: milliseconds))
    event.setValue(date, forKey: "startsAt")
    let seconds = date.timeIntervalSince1970
    event.setValue(seconds.truncatingRemainder(dividingBy: Self.secondsPerDay) == 0, forKey: "isAllDay")
  }

  /// Also what a mapping model's FUNCTION($entityPolicy, "dateFromMilliseconds:", $source.timestampMs) calls.
  @objc func dateFromMilliseconds(_ milliseconds: NSNumber) -> Date {
    Date(timeIntervalSince1970: milliseconds.doubleValue / 1000)
  }
}
