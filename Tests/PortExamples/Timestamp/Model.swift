import SwiftData

enum EventsSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Event.self] }

  @Model final class Event {
    var title: String
    var timestampMs: Int64 = 0
    init(title: String) { self.title = title }
  }
}

enum EventsSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Event.self] }

  @Model final class Event {
    var title: String
    var startsAt: Date?
    var isAllDay: Bool = false
    init(title: String) { self.title = title }
  }
}

enum EventsMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [EventsSchemaV1.self, EventsSchemaV2.self] }
  static var stages: [MigrationStage] { [] }
}
