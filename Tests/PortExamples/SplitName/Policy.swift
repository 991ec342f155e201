import CoreData

/// A person's full name becomes a first name and the rest: "Ada King Lovelace" is Ada, King Lovelace.
/// The policy makes the destination object itself and associates it (no super).
final class PersonToPersonPolicy: NSEntityMigrationPolicy {
  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    let person = NSEntityDescription.insertNewObject(
      forEntityName: mapping.destinationEntityName ?? "Person", into: manager.destinationContext)
    let fullName = (sInstance.value(forKey: "fullName") as? String) ?? ""
    let parts = fullName.components(separatedBy: " ").filter { !$0.isEmpty }
    person.setValue(parts.first ?? "", forKey: "firstName")
    if parts.count > 1 {
      person.setValue(parts.dropFirst().joined(separator: " "), forKey: "lastName")
    }
    person.setValue(sInstance.value(forKey: "email"), forKey: "email")
    manager.associate(sourceInstance: sInstance, withDestinationInstance: person, for: mapping)
  }
}
