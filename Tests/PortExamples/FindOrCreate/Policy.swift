import CoreData

/// Version 2 gives each book an Author instead of a name: one Author per name, however many books
/// carry it. The policy lives as long as its entity mapping, so the dictionary finds the author an
/// earlier book made.
final class BookToBookPolicy: NSEntityMigrationPolicy {
  private var authorsByName: [String: NSManagedObject] = [:]

  override func createDestinationInstances(
    forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
  ) throws {
    try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    guard
      let book = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first
    else { return }
    guard let rawName = sInstance.value(forKey: "authorName") as? String else { return }
    let name = rawName.trimmingCharacters(in: .whitespacesAndNewlines)
    if name.isEmpty { return }
    if let author = authorsByName[name] {
      book.setValue(author, forKey: "author")
      return
    }
    let author = NSEntityDescription.insertNewObject(forEntityName: "Author", into: manager.destinationContext)
    author.setValue(name, forKey: "name")
    authorsByName[name] = author
    book.setValue(author, forKey: "author")
  }
}
