import CoreData

/// Customer is split in two: its street and city move to an Address of its own (none when both are
/// empty), the customer keeps its name.
final class CustomerToCustomerPolicy: NSEntityMigrationPolicy {
  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    let customers = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance])
    guard let customer = customers.first else { return }
    let street = sInstance.value(forKey: "street") as? String
    let city = sInstance.value(forKey: "city") as? String
    if street == nil && city == nil {
      return
    }
    let address = NSEntityDescription.insertNewObject(forEntityName: "Address", into: manager.destinationContext)
    address.setValue(street, forKey: "street")
    address.setValue(city?.capitalized, forKey: "city")
    customer.setValue(address, forKey: "address")
  }
}
