import Foundation
import SwiftData

extension TripsMigrationPlan {
  /// Version 2 makes a trip's name unique: before the step, the newest trip of each name is kept and
  /// the others deleted; after it, every trip gets a slug made of its name.
  static let migrateV1toV2 = MigrationStage.custom(
    fromVersion: TripsSchemaV1.self,
    toVersion: TripsSchemaV2.self,
    willMigrate: { context in
      try TripsMigrationPlan.deduplicate(context)
    },
    didMigrate: { context in
      // A batch at a time, however many trips there are.
      try context.enumerate(FetchDescriptor<TripsSchemaV2.Trip>(predicate: #Predicate { $0.slug == nil })) { trip in
        trip.slug = trip.name.lowercased().replacingOccurrences(of: " ", with: "-")
      }
      try context.save()
    }
  )

  /// Keeps the newest trip of each name, deleting the others.
  static func deduplicate(_ context: ModelContext) throws {
    let newestFirst = FetchDescriptor<TripsSchemaV1.Trip>(
      sortBy: [SortDescriptor(\.name), SortDescriptor(\.start, order: .reverse)])
    let trips = try context.fetch(newestFirst)
    var kept = Set<String>()
    for trip in trips {
      if kept.contains(trip.name) {
        context.delete(trip)
      } else {
        kept.insert(trip.name)
      }
    }
    try context.save()
  }
}
