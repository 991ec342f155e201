import CoreData

/// CoreDataPlus's SampleModel 3 makes a car's maker an entity: the V2toV3 mapping model names this
/// policy for its three car mappings (CarToCar, SportCarToSportCar, LuxuryCarToLuxuryCar). Each car's
/// maker is found by name in the destination context, or made, by an extension of the context.
final class V2to3MakerPolicy: NSEntityMigrationPolicy {
  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    guard let car = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first
    else {
      fatalError("must return car")
    }
    guard let context = car.managedObjectContext else {
      fatalError("must have context")
    }
    guard let makerName = sInstance.value(forKey: "maker") as? String else {
      return
    }
    guard let maker = context.findOrCreateMaker(withName: makerName, in: context) else {
      fatalError("must return maker")
    }
    car.setValue(maker, forKey: "createdBy")
    guard let currentCars = maker.value(forKey: "cars") as? Set<NSManagedObject> else {
      fatalError("must have cars")
    }
    let updatedCars = currentCars.union([car])
    maker.setValue(updatedCars, forKey: "cars")
  }
}

extension NSManagedObjectContext {
  fileprivate func findOrCreateMaker(withName name: String, in context: NSManagedObjectContext) -> NSManagedObject? {
    guard let maker = findMaker(withName: name, in: context) else {
      let maker = NSEntityDescription.insertNewObject(forEntityName: "Maker", into: context)
      maker.setValue(name, forKey: "name")
      return maker
    }
    return maker
  }

  fileprivate func findMaker(withName name: String, in context: NSManagedObjectContext) -> NSManagedObject? {
    let makerRequest = NSFetchRequest<NSManagedObject>(entityName: "Maker")
    makerRequest.predicate = NSPredicate(format: "name == %@", name)
    makerRequest.fetchLimit = 1
    makerRequest.returnsObjectsAsFaults = true
    let result = try? context.fetch(makerRequest)
    return result?.first
  }
}
