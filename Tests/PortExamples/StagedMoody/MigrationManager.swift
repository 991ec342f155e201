import CoreData

/// Moody's staged migration (iOS 17's NSStagedMigrationManager): Moody 4 → Moody 5 is lightweight,
/// with a custom stage around it that clears moods marked for deletion before the step and counts
/// each country's moods after it.
enum MoodyMigrations {
  static func manager() -> NSStagedMigrationManager {
    let moody4 = NSManagedObjectModelReference(name: "Moody 4", in: .main, versionChecksum: "3pmUuH3n1w")
    let moody5 = NSManagedObjectModelReference(name: "Moody 5", in: .main, versionChecksum: "o5uWb1ElJg")
    let stage = NSCustomMigrationStage(migratingFrom: moody4, to: moody5)
    stage.willMigrateHandler = { manager, _ in
      guard let container = manager.container else { return }
      let context = container.newBackgroundContext()
      try context.performAndWait {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Mood")
        request.predicate = NSPredicate(format: "markedForDeletionDate != nil")
        for mood in try context.fetch(request) {
          context.delete(mood)
        }
        try context.save()
      }
    }
    stage.didMigrateHandler = { manager, _ in
      guard let container = manager.container else { return }
      let context = container.newBackgroundContext()
      try context.performAndWait {
        let countries = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Country"))
        for country in countries {
          let moods = country.value(forKey: "moods") as? Set<NSManagedObject> ?? []
          country.setValue(Int64(moods.count), forKey: "numberOfMoods")
        }
        try context.save()
      }
    }
    return NSStagedMigrationManager([stage])
  }
}
