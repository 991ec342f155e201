import SwiftData

enum ContactsSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Person.self] }

  @Model final class Person {
    var fullName: String
    var email: String?
    init(fullName: String) { self.fullName = fullName }
  }
}

enum ContactsSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Person.self] }

  @Model final class Person {
    var firstName: String = ""
    var lastName: String?
    var email: String?
    init(firstName: String) { self.firstName = firstName }
  }
}

enum ContactsMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [ContactsSchemaV1.self, ContactsSchemaV2.self] }
  static var stages: [MigrationStage] { [] }
}
