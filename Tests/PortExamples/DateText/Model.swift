import SwiftData

enum OrdersSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Order.self] }

  @Model final class Order {
    var number: String
    var placedOn: String?
    init(number: String) { self.number = number }
  }
}

enum OrdersSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Order.self] }

  @Model final class Order {
    var number: String
    var placedAt: Date?
    init(number: String) { self.number = number }
  }
}

enum OrdersMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [OrdersSchemaV1.self, OrdersSchemaV2.self] }
  static var stages: [MigrationStage] { [] }
}
