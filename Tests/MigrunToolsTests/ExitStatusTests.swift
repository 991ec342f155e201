import Foundation
import LuaHost
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore
import MigrunTools
import Testing

/// Every error a job can throw reaches one mapping (`ExitStatus.failure`): the line the command
/// prints and its status, read from the failure's kind — the same for each type, a cause underneath
/// included.
struct ExitStatusTests {
  static let inUse = StoreError(.inUse, file: "a.sqlite", reason: "process 12 holds a write lock")
  static let full = StoreError(.noSpace, file: "a.sqlite", reason: "12 MB free, 40 MB needed")

  @Test func eachOfMigrunsErrorTypesSaysItselfWithItsStatus() {
    let failures: [(any Error, message: String, status: Int32)] = [
      (ModelError(.notAModel, file: "M.xcdatamodel", reason: "no model element"), "M.xcdatamodel: no model element", 1),
      (Self.inUse, "a.sqlite: process 12 holds a write lock", 11),
      (Self.full, "a.sqlite: 12 MB free, 40 MB needed", 12),
      (MigrationError(.notInferable, reason: "write a mapping"), "write a mapping", 1),
      (
        LuaError(kind: .runtime, message: "attempt to index a nil value", script: "p.lua", line: 3),
        "p.lua:3: attempt to index a nil value", 1
      ),
      (
        LuaError(kind: .instructionLimit, message: "instruction limit of 5 exceeded"),
        "instruction limit of 5 exceeded", 1
      ),
      (ToolError(message: "give --model"), "give --model", 1),
    ]
    for (error, message, status) in failures {
      let failure = ExitStatus.failure(error)
      #expect(failure.message.hasSuffix(message), "\(type(of: error)): \(failure.message)")
      #expect(failure.status == status, "\(type(of: error)): \(failure.status)")
    }
  }

  /// A context save on a store another process holds is a `ContextError` over the store's error:
  /// it exits 11 as a migration on that store does (it used to escape the mapping and exit 1).
  @Test func aContextErrorOverAStoreInUseIsEleven() {
    let save = ContextError(.store, reason: "save failed", underlying: Self.inUse)
    #expect(ExitStatus.failure(save) == .init(message: save.description, status: 11))
    let conflicts = ContextError(.conflicts, reason: "1 conflict under merge policy error")
    #expect(ExitStatus.failure(conflicts).status == 1)
    #expect(ExitStatus.failure(ContextError(.store, reason: "x", underlying: Self.full)).status == 12)
  }

  /// An error no layer worded (the system's, Foundation's) under which the disk is full says so in
  /// words a person can act on; any other is printed as it is, exit 1.
  @Test func anUnwordedFullDiskIsSaidPlainly() {
    let failure = ExitStatus.failure(POSIXError(.ENOSPC))
    #expect(failure.status == 12)
    #expect(failure.message.hasPrefix("no space left on the disk ("), "\(failure.message)")
    #expect(failure.message.hasSuffix("free some space and run it again"))
    let other = ExitStatus.failure(POSIXError(.EACCES))
    #expect(other == .init(message: "\(POSIXError(.EACCES))", status: 1))
  }
}
