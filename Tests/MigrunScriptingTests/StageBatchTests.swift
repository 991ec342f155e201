import Foundation
import LuaHost
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunScripting
import MigrunStore
import TestSupport
import Testing

/// A stage over a big entity: `ctx:each` walks it in batches (objects let go after each), a
/// batched `ctx:fetch` reads a batch when it is reached, `ids` and `properties` return no objects,
/// a list fills `IN %@`, and `ctx:count` counts in SQL.
@Suite struct StageBatchTests {
  /// 250 employees `e1`…`e250` (every tenth salary 100, the rest 1000 + n), in the company model.
  static func store(_ folder: TemporaryDirectory) throws -> SQLiteStore {
    let store = try SQLiteStore.create(
      at: folder.url.appendingPathComponent("many.sqlite"), model: try SampleModels.companyModel())
    let context = StoreCoordinator(store: store).newContext()
    for n in 1...250 {
      try context.insert(
        "Employee", ["name": .string("e\(n)"), "salary": .double(n % 10 == 0 ? 100 : Double(1000 + n))])
    }
    try context.save()
    return store
  }

  /// Runs `willMigrate` of a stage with `body` on a fresh context of `store`; the lines it logged
  /// are the handler's return, through a global.
  static func run(
    _ body: String, on store: SQLiteStore, _ folder: TemporaryDirectory, limits: LuaLimits = LuaLimits()
  ) throws -> (context: ObjectContext, changes: StageChanges) {
    let file = folder.url.appendingPathComponent("A-B.stage.lua")
    try "return { willMigrate = function(ctx)\n\(body)\nend }".write(to: file, atomically: true, encoding: .utf8)
    let stage = try LuaStage(file: file, limits: limits)
    let context = StoreCoordinator(store: store).newContext()
    let step = MigrationStep(
      from: "A", to: "B", kind: .inferred, inferredMapping: nil, source: store.model, destination: store.model)
    return (context, try stage.run(.willMigrate, on: context, step: step))
  }

  @Test func eachWalksInBatchesAndLetsGoOfWhatItSaved() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    // Every object with salary 100 is raised, saved per batch of 40; the walk counts what it saw.
    let (context, changes) = try Self.run(
      """
      local seen = 0
      local walked = ctx:each("Employee", "salary < %@", function(e)
        seen = seen + 1
        e.salary = e.salary + 1
      end, { args = { 500 }, batch = 40, save = true, sort = { "-name" } })
      assert(walked == 25 and seen == 25, "walked " .. tostring(walked) .. ", saw " .. seen)
      assert(ctx:count("Employee", "salary == 101") == 25)
      """, on: store, folder)
    #expect(changes.updated == 25)
    // Nothing is held once the walk is over: the batches were let go.
    #expect(context.registeredCount == 0)
    #expect(
      try StoreCoordinator(store: store).newContext().count("Employee", matching: try FormatPredicate("salary == 101"))
        == 25)
  }

  @Test func aBatchedFetchReadsABatchWhenItIsReached() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    let (context, _) = try Self.run(
      """
      local list = ctx:fetch("Employee", "salary > 1000", { batch = 50, sort = { "salary" } })
      assert(#list == 225, "#list " .. #list)
      local last = 0
      for i, e in ipairs(list) do
        assert(e.salary > last, "in order at " .. i)
        last = e.salary
      end
      assert(list[1].name == "e1" and list[225].name == "e249")
      assert(list[226] == nil and list[0] == nil)
      """, on: store, folder)
    // Each object was read once by the walk, then batch 1 and batch 5 again; one batch at most
    // was held at the end (the last one reached).
    #expect(context.objectsMade == 225 + 50 + 25)
    #expect(context.registeredCount <= 50)
  }

  @Test func idsPropertiesAndListArgumentsMakeNoObjectsThatStay() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    let (context, _) = try Self.run(
      """
      local ids = ctx:fetch("Employee", "name IN %@", { args = { { "e3", "e7", "e300" } }, ids = true })
      assert(#ids == 2 and ids[1] == "Employee/p3" and ids[2] == "Employee/p7", table.concat(ids, ","))
      assert(ctx:object(ids[2]).name == "e7")
      local rows = ctx:fetch("Employee", "salary BETWEEN %@", { args = { { 1001, 1003 } }, properties = { "name", "salary", "manager" } })
      assert(#rows == 3 and rows[1].name == "e1" and rows[3].salary == 1003 and rows[1].manager == NULL, #rows)
      assert(ctx:count("Employee", "name IN %@", { args = { { "e1", "e2" } } }) == 2)
      local ok, message = pcall(function() return ctx:fetch("Employee", nil, { properties = { "nope" } }) end)
      assert(not ok and message:find("no property 'nope'"), message)
      ok, message = pcall(function() return ctx:fetch("Employee", nil, { ids = true, properties = { "name" } }) end)
      assert(not ok and message:find("one of ids and properties"), message)
      ok, message = pcall(function() return ctx:fetch("Employee", nil, { save = true }) end)
      assert(not ok and message:find("save is ctx:each's option"), message)
      ok, message = pcall(function() return ctx:fetch("Employee", nil, { batch = 10, ids = true }) end)
      assert(not ok and message:find("ids is a fetch's option without batch"), message)
      """, on: store, folder)
    #expect(context.registeredCount == 0)
  }

  /// A handler's whole run is one call (issue 55), whose budget grows with the objects it is handed
  /// (issue 72): the base, and `instructionsPerObject` for each. A walk past the fixed base runs.
  @Test func aHandlersBudgetGrowsWithTheObjectsItIsHanded() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    var limits = LuaLimits()
    limits.instructions = 200_000
    // ~2,000 instructions per object: 500,000 for the walk, past the base of 200,000.
    let busy = """
      local total = 0
      ctx:each("Employee", nil, function(e)
        for i = 1, 500 do total = total + i end
      end, { batch = 10 })
      """
    // The fixed budget alone (no grant per object) stops it, and says how the budget grows.
    limits.instructionsPerObject = 0
    #expect {
      _ = try Self.run(busy, on: store, folder, limits: limits)
    } throws: {
      "\($0)".contains("instruction limit of 200000 exceeded") && "\($0)".contains("grows with each object")
        && "\($0)".contains("raised")
    }
    // The grant for each of the 250 objects handed over is what lets it through.
    limits.instructionsPerObject = LuaLimits().instructionsPerObject
    _ = try Self.run(busy, on: store, folder, limits: limits)
  }

  /// Walks earn for two passes over an entity: a handler that starts walk after walk forever is
  /// stopped once its base and those grants are spent, naming the objects it was handed.
  @Test func walkAfterWalkEarnsForTwoPassesOnly() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    var limits = LuaLimits()
    limits.instructions = 200_000
    limits.instructionsPerObject = 1_000
    for walk in [
      "while true do ctx:each(\"Employee\", nil, function(e) end, { batch = 10 }) end",
      """
      while true do
        local list = ctx:fetch("Employee", nil, { batch = 25 })
        for i = 1, #list do local _ = list[i] end
      end
      """,
      "while true do for _, e in ipairs(ctx:fetch(\"Employee\", nil, { ids = true })) do ctx:object(e) end end",
    ] {
      let error = try #require(throws: MigrationError.self) {
        _ = try Self.run(walk, on: store, folder, limits: limits)
      }
      #expect("\(error)".contains("instruction limit of 700000 exceeded"), "\(walk): \(error)")
      #expect("\(error)".contains("for each of the 500 objects handed over"), "\(walk): \(error)")
    }
  }

  /// Without new objects, time runs out `seconds` after the last one, however big the grants: a
  /// walk after walk, a busy loop after a walk and one inside it are each stopped, by name.
  @Test func aHandlerThatStopsProgressingIsStopped() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    var limits = LuaLimits()
    limits.seconds = 0.3
    limits.instructionsPerObject = 1 << 40
    for runaway in [
      "while true do ctx:each(\"Employee\", nil, function(e) end) end",
      "ctx:each(\"Employee\", nil, function(e) end)\nwhile true do end",
      "ctx:each(\"Employee\", nil, function(e) while true do end end)",
    ] {
      let error = try #require(throws: MigrationError.self) {
        _ = try Self.run(runaway, on: store, folder, limits: limits)
      }
      #expect("\(error)".contains("time limit of 0.3 s without a new object exceeded"), "\(runaway): \(error)")
    }
    // With the default grants, a busy loop between deliveries ends on instructions first.
    limits = LuaLimits()
    limits.instructions = 200_000
    let error = try #require(throws: MigrationError.self) {
      _ = try Self.run(
        "ctx:each(\"Employee\", nil, function(e) while true do end end, { batch = 10 })", on: store, folder,
        limits: limits)
    }
    #expect("\(error)".contains("instruction limit of 300000 exceeded"), "\(error)")
  }

  /// The keys a batched fetch selects are held by the host: they count against the Lua memory limit
  /// (a stage holding batched lists of one reached 690 MB in one call under 64 MiB, issue 55).
  @Test func batchedListsCountAgainstTheMemoryLimit() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    var limits = LuaLimits()
    limits.memoryBytes = 1 << 20
    limits.instructions = 1_000_000
    let error = try #require(throws: MigrationError.self) {
      _ = try Self.run(
        "local n = 0\nfor i = 1, 1e6 do n = n + #ctx:fetch(\"Employee\", nil, { batch = 1 }) end", on: store,
        folder, limits: limits)
    }
    // The stage file's line (its body starts on the file's second line).
    #expect("\(error)".contains(":3: memory limit of 1048576 bytes exceeded"), "\(error)")
    #expect("\(error)".contains("held by migrun"), "\(error)")
    // ctx:each lets go of its keys: a walk after a walk holds one walk's keys (200 walks' would pass 1 MiB).
    limits.instructions = LuaLimits().instructions
    _ = try Self.run(
      "for i = 1, 200 do ctx:each(\"Employee\", nil, function(e) end) end", on: store, folder, limits: limits)
  }

  /// A walk that deletes as it goes, saved per batch, lets go of what it deleted (issue 72: the
  /// dedupe of 3,000,000 items, 300,000 duplicates, stopped at the 262,144 objects a stage may hold).
  @Test func aWalkLetsGoOfWhatItDeletedAndSaved() throws {
    let folder = try TemporaryDirectory()
    let store = try SQLiteStore.create(
      at: folder.url.appendingPathComponent("more.sqlite"), model: try SampleModels.companyModel())
    let context = StoreCoordinator(store: store).newContext()
    for n in 1...5000 { try context.insert("Employee", ["name": .string("e\(n)"), "salary": .double(1)]) }
    try context.save()
    var limits = LuaLimits()
    // 4,096 objects held at most.
    limits.memoryBytes = 1 << 20
    // A test of what the walk holds, not of its time: fifty saves in a debug build on a loaded
    // machine took more than the default 10 s (the full suite beside two other builds).
    limits.seconds = 600
    let (_, changes) = try Self.run(
      "ctx:each(\"Employee\", nil, function(e) ctx:delete(e) end, { batch = 100, save = true })", on: store, folder,
      limits: limits)
    #expect(changes.deleted == 5000)
  }

  @Test func anObjectLetGoOfAfterItsBatchSaysSo() throws {
    let folder = try TemporaryDirectory()
    let store = try Self.store(folder)
    #expect {
      _ = try Self.run(
        """
        local kept
        ctx:each("Employee", nil, function(e) kept = kept or e end, { batch = 10 })
        return kept.name
        """, on: store, folder)
    } throws: { "\($0)".contains("let go of") && "\($0)".contains("ctx:object(id)") }
  }
}
