import Foundation
import SwiftData

enum ProfilesSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Profile.self] }

  @Model final class Profile {
    var name: String
    var settings: Data?
    init(name: String) { self.name = name }
  }
}

enum ProfilesSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Profile.self] }

  @Model final class Profile {
    var name: String
    var theme: String = "light"
    var fontSize: Int = 12
    var notifications: Bool = true
    init(name: String) { self.name = name }
  }
}

enum ProfilesMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [ProfilesSchemaV1.self, ProfilesSchemaV2.self] }
  static var stages: [MigrationStage] { [] }
}
