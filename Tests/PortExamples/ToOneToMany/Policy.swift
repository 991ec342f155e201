import CoreData

/// A contact had one address; now it has a list. The one it had becomes the first of the list,
/// labelled "home".
final class ContactToContactPolicy: NSEntityMigrationPolicy {
  override func createRelationships(
    forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    guard
      let source = manager.sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [dInstance]).first
    else { return }
    guard let oldAddress = source.value(forKey: "address") as? NSManagedObject else { return }
    let addresses = manager.destinationInstances(
      forEntityMappingName: "AddressToAddress", sourceInstances: [oldAddress])
    for address in addresses {
      address.setValue("home", forKey: "label")
    }
    dInstance.mutableSetValue(forKey: "addresses").addObjects(from: addresses)
  }
}
