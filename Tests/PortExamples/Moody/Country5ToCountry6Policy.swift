import CoreData

/// Moody 6 brings Continent back as an entity (objc.io's "Core Data" book, chapter 9): each country's
/// continent code becomes its continent, found or made. The mapping model "Moody 5-Moody 6" names this
/// class for its CountryToCountry entity mapping.
final class Country5ToCountry6Policy: NSEntityMigrationPolicy {
  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    guard
      let country = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first
    else { fatalError("must return country") }
    guard let context = country.managedObjectContext else { fatalError("must have context") }
    guard let code = sInstance.value(forKey: "isoContinent") as? NSNumber else { return }
    let continent = findOrCreateContinent(withISOCode: code.int16Value, in: context)
    country.setValue(continent, forKey: "continent")
  }

  /// What a mapping model's FUNCTION($entityPolicy, "touched:", $source.updatedAt) calls: a country's
  /// updatedAt a day later, so that every device fetches it again.
  @objc func touched(_ updatedAt: Date) -> Date {
    updatedAt.addingTimeInterval(86_400)
  }

  private func findOrCreateContinent(withISOCode isoCode: Int16, in context: NSManagedObjectContext)
    -> NSManagedObject
  {
    let request = NSFetchRequest<NSManagedObject>(entityName: "Continent")
    request.predicate = NSPredicate(format: "%K == %d", "numericISO3166Code", Int(isoCode))
    request.fetchLimit = 1
    request.returnsObjectsAsFaults = false
    if let existing = try? context.fetch(request).first { return existing }
    let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
    continent.setValue(NSNumber(value: isoCode), forKey: "numericISO3166Code")
    return continent
  }
}
