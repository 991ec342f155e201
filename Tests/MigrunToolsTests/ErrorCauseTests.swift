import Foundation
import GRDB
import MigrunKit
import MigrunModel
import MigrunStore
import MigrunTools
import Testing

/// Errors keep the error underneath them, and what a failure was is read from codes through the
/// chain of causes — never from a message's words.
struct ErrorCauseTests {
  @Test func aFullDiskIsKnownFromSQLitesResultCodeThroughEveryWrapping() {
    let sqlite = DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full")
    let store = StoreError(.sqlite, file: "a.sqlite", reason: "the DDL edit failed", underlying: sqlite)
    let migration = MigrationError(.store, step: "A → B", reason: "\(store)", underlying: store)
    #expect(StoreFailure.isDiskFull(migration))
    #expect(ExitStatus.of(migration) == 12)
    #expect(ErrorCause.chain(migration).count == 3)
    #expect((migration.underlyingError as? StoreError)?.underlyingError is DatabaseError)
  }

  @Test func theWordsOfAMessageAreNotTheFailure() {
    let worded = MigrationError(.store, reason: "database or disk is full; No space left on device")
    #expect(!StoreFailure.isDiskFull(worded))
    #expect(ExitStatus.of(worded) == 1)
  }

  @Test func theSystemsErrnoAndFoundationsCodesCountToo() {
    let posix = StoreError(.io, reason: "cannot copy", underlying: POSIXError(.ENOSPC))
    #expect(StoreFailure.isDiskFull(posix))
    let foundation = NSError(
      domain: NSCocoaErrorDomain, code: 640,
      userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))])
    #expect(StoreFailure.isDiskFull(ToolError(message: "cannot write", underlying: foundation)))
  }

  @Test func aStoreInUseIsElevenWhereverItSits() {
    let busy = StoreError(.sqlite, reason: "database is locked", underlying: DatabaseError(resultCode: .SQLITE_BUSY))
    #expect(ExitStatus.of(MigrationError(.store, reason: "x", underlying: busy)) == 11)
    #expect(ExitStatus.of(StoreError(.inUse, reason: "process 12 holds a write lock")) == 11)
    #expect(ExitStatus.of(ModelError(.notAModel, reason: "no")) == 1)
  }

  @Test func equalErrorsStayEqualWithTheirCauses() {
    let cause = DatabaseError(resultCode: .SQLITE_IOERR, message: "disk I/O error")
    #expect(
      StoreError(.sqlite, reason: "r", underlying: cause) == StoreError(.sqlite, reason: "r", underlying: cause))
    #expect(StoreError(.sqlite, reason: "r", underlying: cause) != StoreError(.sqlite, reason: "r"))
  }
}
