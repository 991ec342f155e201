import SwiftData

enum LibrarySchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Book.self] }

  @Model final class Book {
    var title: String
    var authorName: String?
    init(title: String, authorName: String?) {
      self.title = title
      self.authorName = authorName
    }
  }
}

enum LibrarySchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Book.self, Author.self] }

  @Model final class Book {
    var title: String
    var author: Author?
    init(title: String) { self.title = title }
  }

  @Model final class Author {
    var name: String
    @Relationship(inverse: \Book.author) var books: [Book] = []
    init(name: String) { self.name = name }
  }
}

enum LibraryMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [LibrarySchemaV1.self, LibrarySchemaV2.self] }
  static var stages: [MigrationStage] { [] }
}
