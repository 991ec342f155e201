import Foundation

/// SwiftData projects as text, for the tests of reading models from Swift sources.
public enum SwiftDataSamples {
  /// A two-version project in the shape Apple's documentation shows: models nested in each
  /// `VersionedSchema` (one of them in an extension, in another file), a plan giving the order, and a
  /// type alias for the current version.
  public static let trips: [(file: String, text: String)] = [
    (
      "Schema/V1.swift",
      """
      import SwiftData

      enum TripsSchemaV1: VersionedSchema {
        static var versionIdentifier = Schema.Version(1, 0, 0)
        static var models: [any PersistentModel.Type] { [Trip.self, Stop.self] }

        @Model final class Trip {
          @Attribute(.unique) var name: String
          var start: Date
          var stops: [Stop] = []
          init(name: String, start: Date) { self.name = name; self.start = start }
        }

        @Model final class Stop {
          var place: String
          var trip: Trip?
          init(place: String) { self.place = place }
        }
      }
      """
    ),
    (
      "Schema/V2.swift",
      """
      import SwiftData

      enum TripsSchemaV2: VersionedSchema {
        static var versionIdentifier: Schema.Version { .init(2, 0, 0) }
        static var models: [any PersistentModel.Type] { [Trip.self] }
      }

      extension TripsSchemaV2 {
        @Model final class Trip {
          #Unique<Trip>([\\.title, \\.start])
          @Attribute(originalName: "name") var title: String
          var start: Date
          var rating: Int = 3
          @Attribute(.externalStorage) var photo: Data?
          var tags: [String]?
          var budget: Money?
          var kind: Kind?
          var status: Status?
          @Relationship(deleteRule: .cascade, inverse: \\Stop.trip) var stops: [Stop] = []
          @Transient var cache: String = ""
          var isLong: Bool { stops.count > 3 }
          init() { fatalError() }
        }

        @Model final class Stop {
          var place: String
          var trip: Trip?
          init(place: String) { self.place = place }
        }
      }

      struct Money: Codable { var amount: Decimal; var currency: String; var history: [Decimal] }
      enum Kind: String, Codable { case leisure, work }
      enum Status: Codable { case planned, done, cancelled(reason: String) }

      typealias Trip = TripsSchemaV2.Trip

      enum TripsMigrationPlan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [TripsSchemaV1.self, TripsSchemaV2.self] }
        static var stages: [MigrationStage] { [] }
      }
      """
    ),
  ]

  /// Writes `sources` under `folder` (their paths relative to it).
  public static func write(_ sources: [(file: String, text: String)], into folder: URL) throws {
    for source in sources {
      let url = folder.appendingPathComponent(source.file)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try source.text.write(to: url, atomically: true, encoding: .utf8)
    }
  }
}
