import SwiftData

enum CRMSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Contact.self, Address.self] }

  @Model final class Contact {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Address.contact) var address: Address?
    init(name: String) { self.name = name }
  }

  @Model final class Address {
    var street: String
    var contact: Contact?
    init(street: String) { self.street = street }
  }
}

enum CRMSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Contact.self, Address.self] }

  @Model final class Contact {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Address.contact) var addresses: [Address] = []
    init(name: String) { self.name = name }
  }

  @Model final class Address {
    var street: String
    var label: String?
    var contact: Contact?
    init(street: String) { self.street = street }
  }
}

enum CRMMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [CRMSchemaV1.self, CRMSchemaV2.self] }
  static var stages: [MigrationStage] { [] }
}
