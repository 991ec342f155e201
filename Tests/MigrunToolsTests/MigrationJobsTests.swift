import Foundation
import MigrunKit
import MigrunStore
import MigrunTools
import TestSupport
import Testing

/// `migrate` as the tools layer runs it (`MigrationJobs.migrate`), through the one owner of a
/// migration (`MigrationSession`): the store taken once, planned from that look, run, let go.
@Suite(.enabled(if: Fixtures.areAvailable))
struct MigrationJobsTests {
  static let moody = Fixtures.url("objcio-core-data-moody/models/Moody.xcdatamodeld")
  static let store = "objcio-core-data-moody/stores/Moody 4.moody.sqlite"

  @Test func aJobRunsThePlanItSaysItStartsAndLetsTheStoreGo() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.store, into: folder)
    var started: [MigrationPlan] = []
    var steps = 0
    let outcome = try MigrationJobs(MigrationSetup(model: Self.moody)).migrate(
      store, options: StoreMigrator.Options(keepBackup: false), progress: { _ in steps += 1 },
      willStart: { started.append($0) })
    #expect(started.map(\.sourceVersion) == ["Moody 4"], "willStart is told once, with the plan it runs")
    #expect(outcome.report?.steps.count == started.first?.steps.count)
    #expect(outcome.plan.destinationVersion == "Moody 6")
    #expect(steps > 0)
    // Let go: the store is current now, and another session takes it at once.
    let again = try MigrationJobs(MigrationSetup(model: Self.moody)).migrate(store, options: StoreMigrator.Options())
    #expect(again.report == nil, "current")
    let session = try MigrationSession(store, options: StoreMigrator.Options())
    session.close()
  }

  @Test func aStoreAnotherSessionHoldsIsRefusedAsInUseAndLeftAlone() throws {
    let folder = try TemporaryDirectory()
    let store = try writableCopyOfFixture(Self.store, into: folder)
    let before = try Data(contentsOf: store)
    let holder = try MigrationSession(store, options: StoreMigrator.Options())
    defer { holder.close() }
    #expect {
      _ = try MigrationJobs(MigrationSetup(model: Self.moody)).migrate(store, options: StoreMigrator.Options())
    } throws: { error in
      (error as? StoreError)?.code == .inUse && "\(error)".contains("another migrun")
    }
    #expect(try Data(contentsOf: store) == before)
  }
}
