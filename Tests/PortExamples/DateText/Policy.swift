import CoreData

/// Version 1 kept the day an order was placed as text ("2024-03-01"); version 2 keeps a Date. The
/// DateFormatter is what the port does not translate: its two statements are placeholders to write.
final class OrderToOrderPolicy: NSEntityMigrationPolicy {
  private let formatter: DateFormatter = {
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd"
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter
  }()

  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    guard
      let order = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first,
      let text = sInstance.value(forKey: "placedOn") as? String
    else { return }
    order.setValue(formatter.date(from: text), forKey: "placedAt")
  }
}
