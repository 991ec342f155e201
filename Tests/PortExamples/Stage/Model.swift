import Foundation
import SwiftData

enum TripsSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Trip.self] }

  @Model final class Trip {
    var name: String
    var start: Date
    init(name: String, start: Date) {
      self.name = name
      self.start = start
    }
  }
}

enum TripsSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Trip.self] }

  @Model final class Trip {
    @Attribute(.unique) var name: String
    var start: Date
    var slug: String?
    init(name: String, start: Date) {
      self.name = name
      self.start = start
    }
  }
}

enum TripsMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [TripsSchemaV1.self, TripsSchemaV2.self] }
  static var stages: [MigrationStage] { [migrateV1toV2] }
}
