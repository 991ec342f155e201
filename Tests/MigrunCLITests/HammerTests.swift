import Foundation
import MigrunContext
import MigrunKit
import MigrunStore
import TestSupport
import Testing

/// Two processes increment the same 100 counters at once (`migrun-bench hammer`), each for a
/// bounded number of rounds: no increment is lost, and a failed save writes nothing.
@Suite(.serialized) struct HammerTests {
  static let rounds = 15

  /// A store of 100 employees with counter 0, and the model's `contents` file beside it.
  static func setUp(_ folder: TemporaryDirectory) throws -> (store: URL, model: URL) {
    let model = try folder.write(SampleModels.company, to: "Company.xcdatamodel/contents")
    let url = folder.url.appendingPathComponent("hammer.sqlite")
    let store = try SQLiteStore.create(at: url, model: try SampleModels.companyModel())
    let context = StoreCoordinator(store: store).newContext()
    for index in 1...100 { try context.insert("Employee", ["name": .string("E\(index)")]) }
    try context.save()
    try store.close()
    return (url, model)
  }

  /// Runs two hammer processes at once and returns their JSON summaries.
  static func hammer(_ store: URL, _ model: URL, policy: String) throws -> [[String: Any]] {
    let binary = MigrunProcess.executable.deletingLastPathComponent().appendingPathComponent("migrun-bench")
    var processes: [(Process, Pipe, Pipe)] = []
    for _ in 0..<2 {
      let process = Process()
      process.executableURL = binary
      process.arguments = ["hammer", store.path, model.path, String(rounds), policy]
      let output = Pipe()
      let errors = Pipe()
      process.standardOutput = output
      process.standardError = errors
      try process.run()
      processes.append((process, output, errors))
    }
    var summaries: [[String: Any]] = []
    for (process, output, errors) in processes {
      let data = output.fileHandleForReading.readDataToEndOfFile()
      let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      #expect(process.terminationStatus == 0, "\(message)")
      let summary = try JSONSerialization.jsonObject(with: data) as? [String: Any]
      summaries.append(summary ?? [:])
    }
    return summaries
  }

  static func counters(_ store: URL) throws -> [Int64] {
    let context = StoreCoordinator(store: try SQLiteStore(url: store, model: try SampleModels.companyModel()))
      .newContext()
    return try context.fetch("Employee").map {
      if case .integer(let value) = try $0.value("counter") { value } else { -1 }
    }
  }

  @Test func propertyMergeLosesNoIncrement() throws {
    let folder = try TemporaryDirectory()
    let (store, model) = try Self.setUp(folder)
    let summaries = try Self.hammer(store, model, policy: "mergeByPropertyStoreTrump")
    #expect(summaries.count == 2)
    let counters = try Self.counters(store)
    #expect(counters.count == 100)
    #expect(Set(counters) == [Int64(2 * Self.rounds)], "every counter got both processes' \(Self.rounds) increments")
  }

  @Test func underTheErrorPolicyEveryFailedSaveIsReportedAndNothingIsHalfWritten() throws {
    let folder = try TemporaryDirectory()
    let (store, model) = try Self.setUp(folder)
    let summaries = try Self.hammer(store, model, policy: "error")
    let saves = summaries.compactMap { $0["saves"] as? Int }
    let failed = summaries.compactMap { $0["failedSaves"] as? Int }
    let conflicts = summaries.compactMap { $0["conflictsReported"] as? Int }
    #expect(saves == [Self.rounds, Self.rounds])
    #expect(conflicts == failed.map { $0 * 100 }, "a failed save lists all 100 changed counters")
    let counters = try Self.counters(store)
    #expect(Set(counters) == [Int64(saves.reduce(0, +))], "each successful save moved all 100 counters, no other did")
  }
}
