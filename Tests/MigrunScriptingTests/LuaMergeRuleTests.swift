import Foundation
import MigrunContext
import MigrunKit
import MigrunScripting
import TestSupport
import Testing

/// Lua merge rules for contexts: the two-window scenario under a rule, helpers, bad rules.
@Suite struct LuaMergeRuleTests {
  static func rules(_ text: String, _ folder: TemporaryDirectory) throws -> LuaMergeRules {
    try LuaMergeRules(file: try folder.write(text, to: "rules/company.lua"), model: try SampleModels.companyModel())
  }

  @Test func aRuleDecidesTheTwoWindowConflict() throws {
    let folder = try TemporaryDirectory()
    let rules = try Self.rules(
      """
      return {
        Employee = function(c)
          assert(c.kind == "update" and c.entity == "Employee" and c.id == "Employee/p2", c.kind)
          assert(c.oldVersion == 1 and c.newVersion == 2, "versions")
          assert(c.snapshot.salary == 5000.0 and c.store.salary == 6000.0 and c.object.salary == 7000.0, "values")
          assert(c.store.department == "Department/p2" and c.snapshot.department == "Department/p1", "to-one")
          assert(table.concat(c.changed, ",") == "manager,salary", table.concat(c.changed, ","))
          local v = c:merge("storeTrump")
          v.salary = (c.object.salary + c.store.salary) / 2
          return v
        end,
      }
      """, folder)
    let (error, bob) = try CompanyScenario.twoWindows(.rule(rules), folder)
    #expect(error == nil, "\(String(describing: error))")
    #expect(bob == .init(department: "Research", manager: "Carol", salary: 6500, version: 3))
  }

  @Test func helpersPickPerProperty() throws {
    let folder = try TemporaryDirectory()
    let rules = try Self.rules(
      """
      return {
        Employee = function(c)
          local v = c:newest("salary")          -- the side with the larger salary: the context's 7000
          v.department = c.store.department     -- but the store's department
          v.salary = c:min("salary")
          return v
        end,
      }
      """, folder)
    let (error, bob) = try CompanyScenario.twoWindows(.rule(rules), folder)
    #expect(error == nil, "\(String(describing: error))")
    #expect(bob == .init(department: "Research", manager: "Carol", salary: 6000, version: 3))
  }

  @Test func anEntityWithoutARuleFailsAsUnderError() throws {
    let folder = try TemporaryDirectory()
    let rules = try Self.rules("return { Department = function(c) return c.store end }", folder)
    let (error, bob) = try CompanyScenario.twoWindows(.rule(rules), folder)
    #expect(error?.code == .conflicts)
    #expect(error?.conflicts.count == 1)
    #expect(bob == .init(department: "Research", manager: "Ada", salary: 6000, version: 2))
  }

  @Test func aBadAnswerFailsTheSaveNamingTheFileAndWritesNothing() throws {
    let folder = try TemporaryDirectory()
    let rules = try Self.rules("return { Employee = function(c) return { nickname = 'Bobby' } end }", folder)
    let (error, bob) = try CompanyScenario.twoWindows(.rule(rules), folder)
    #expect(error?.code == .mergeRule)
    #expect(
      error?.description == "object Employee/p2: rules/company.lua: entity 'Employee' has no property 'nickname'")
    #expect(bob == .init(department: "Research", manager: "Ada", salary: 6000, version: 2))
    let failing = try Self.rules("return { Employee = function(c) error('no way') end }", folder)
    let (thrown, _) = try CompanyScenario.twoWindows(.rule(failing), try TemporaryDirectory())
    #expect(thrown?.code == .mergeRule)
    #expect(thrown?.description.contains("no way") == true, "\(String(describing: thrown))")
  }

  @Test func badRuleFilesAreRefusedWhenLoaded() throws {
    let folder = try TemporaryDirectory()
    #expect(throws: ContextError.self) { try Self.rules("return { Nobody = function(c) return c.store end }", folder) }
    #expect(throws: ContextError.self) { try Self.rules("return { Employee = 3 }", folder) }
    #expect(throws: (any Error).self) { try Self.rules("return {", folder) }
  }

  @Test func aUniquenessRuleUnitesToManyMembers() throws {
    let folder = try TemporaryDirectory()
    let store = try CompanyScenario.seededStore(folder)
    let setup = StoreCoordinator(store: store).newContext()
    let apollo = try setup.insert("Project", ["title": .string("Apollo")])
    let gemini = try setup.insert("Project", ["title": .string("Gemini")])
    try CompanyScenario.employee("Bob", setup).setMembers("projects", [apollo])
    try setup.save()
    let rules = try Self.rules(
      """
      return {
        Employee = function(c)
          assert(c.kind == "uniqueness" and c.constraint[1] == "email", c.kind)
          local v = c:merge("storeTrump")
          v.projects = c:union("projects")
          v.salary = c:max("salary")
          return v
        end,
      }
      """, folder)
    let context = StoreCoordinator(store: store).newContext(mergePolicy: .rule(rules))
    let twin = try context.insert(
      "Employee", ["name": .string("Bobby"), "email": .string("bob@acme.test"), "salary": .double(5200)])
    try twin.setMembers("projects", [try context.fetch("Project", where: .equals("title", .string("Gemini")))[0]])
    try context.save()
    let fresh = StoreCoordinator(store: store).newContext()
    let bob = try CompanyScenario.employee("Bob", fresh)
    #expect(try bob.value("salary") == .double(5200))
    #expect(try bob.members("projects").map { try $0.value("title") } == [.string("Apollo"), .string("Gemini")])
    #expect(try fresh.fetch("Employee").count == 3)
    _ = gemini
  }
}
