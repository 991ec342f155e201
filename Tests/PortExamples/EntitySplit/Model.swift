import SwiftData

enum ShopSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Customer.self] }

  @Model final class Customer {
    var name: String
    var street: String?
    var city: String?
    init(name: String) { self.name = name }
  }
}

enum ShopSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Customer.self, Address.self] }

  @Model final class Customer {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Address.customer) var address: Address?
    init(name: String) { self.name = name }
  }

  @Model final class Address {
    var street: String?
    var city: String?
    var customer: Customer?
    init() {}
  }
}

enum ShopMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [ShopSchemaV1.self, ShopSchemaV2.self] }
  static var stages: [MigrationStage] { [] }
}
