import Foundation
import MigrunModel
import MigrunStore
import PropertyList
import TestSupport
import Testing

/// Core Data's XML store type (issue 47, begun): a `.storedata` file is recognised by its contents,
/// `inspect` finds its version by the hashes in its metadata and counts its objects with every
/// value and link checked; a broken one is a clear error naming the file; other commands name the
/// type instead of "not a SQLite database".
@Suite struct XMLStoreTests {
  /// A company store in the XML form (entities uppercased, properties lowercased, ids z<n>,
  /// dates as seconds since 2001, an unset relationship without idrefs), with the model's
  /// hashes in its metadata. `tweak` edits the text before it is written.
  static func write(_ folder: TemporaryDirectory, tweak: (String) -> String = { $0 }) throws -> (
    store: URL, model: URL
  ) {
    let model = try SampleModels.companyModel()
    let modelURL = folder.url.appendingPathComponent("Company.xcdatamodel")
    try FileManager.default.createDirectory(at: modelURL, withIntermediateDirectories: true)
    try SampleModels.company.write(to: modelURL.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    let plist = String(
      decoding: StoreMetadata(model: model, uuid: "7DFA6DAB-A071-4B34-8DFB-BAC65DD66FDE").plist
        .xmlEncoded(), as: UTF8.self)
    let body = plist.split(separator: "\n").filter { !$0.hasPrefix("<?xml") && !$0.hasPrefix("<!DOCTYPE") }
      .joined(separator: "\n")
    let text = """
      <?xml version="1.0"?>
      <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

      <database>
          <databaseInfo>
              <version>134481920</version>
              <UUID>7DFA6DAB-A071-4B34-8DFB-BAC65DD66FDE</UUID>
              <nextObjectID>106</nextObjectID>
              <metadata>
      \(body)
              </metadata>
          </databaseInfo>
          <object type="DEPARTMENT" id="z104">
              <attribute name="name" type="string">Engineering &amp; Research</attribute>
              <relationship name="employees" type="0/0" destination="EMPLOYEE" idrefs="z102 z103"></relationship>
              <relationship name="company" type="0/1" destination="COMPANY"></relationship>
          </object>
          <object type="EMPLOYEE" id="z102">
              <attribute name="name" type="string">Alice</attribute>
              <attribute name="salary" type="double">5200.5</attribute>
              <attribute name="counter" type="int64">3</attribute>
              <relationship name="department" type="0/1" destination="DEPARTMENT" idrefs="z104"></relationship>
              <relationship name="reports" type="0/0" destination="EMPLOYEE" idrefs="z103"></relationship>
          </object>
          <object type="EMPLOYEE" id="z103">
              <attribute name="name" type="string">Bob</attribute>
              <attribute name="salary" type="double">4000</attribute>
              <attribute name="counter" type="int64">0</attribute>
              <relationship name="department" type="0/1" destination="DEPARTMENT" idrefs="z104"></relationship>
              <relationship name="manager" type="0/1" destination="EMPLOYEE" idrefs="z102"></relationship>
          </object>
          <object type="DESK" id="z105">
              <attribute name="number" type="int32">7</attribute>
          </object>
      </database>
      """
    let store = folder.url.appendingPathComponent("Company.storedata")
    try tweak(text).write(to: store, atomically: true, encoding: .utf8)
    return (store, modelURL)
  }

  @Test func readsEveryValueAndLinkOfItsModel() throws {
    let folder = try TemporaryDirectory()
    let (store, _) = try Self.write(folder)
    let file = try XMLStoreFile.read(Array(try Data(contentsOf: store)), file: store.lastPathComponent)
    #expect(file.uuid == "7DFA6DAB-A071-4B34-8DFB-BAC65DD66FDE" && file.nextObjectID == 106)
    let objects = try file.objects(of: try SampleModels.companyModel(), file: store.lastPathComponent)
    let alice = try #require(objects.first { $0.id == ObjectID(entity: "Employee", primaryKey: 102) })
    #expect(alice.attributes["salary"] == .double(5200.5) && alice.attributes["counter"] == .integer(3))
    #expect(alice.attributes["email"] == .null)
    #expect(alice.toOne["department"] == ObjectID(entity: "Department", primaryKey: 104))
    #expect(alice.toMany["reports"] == [ObjectID(entity: "Employee", primaryKey: 103)])
    let department = try #require(objects.first { $0.id.entity == "Department" })
    #expect(department.attributes["name"] == .string("Engineering & Research"))
    #expect(department.toMany["employees"]?.count == 2 && department.toOne["company"] == nil)
  }

  @Test func inspectFindsTheVersionAndCountsTheObjects() throws {
    let folder = try TemporaryDirectory()
    let (store, model) = try Self.write(folder)
    let before = try Data(contentsOf: store)
    let result = try MigrunProcess.run(["inspect", store.path, "--model", model.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("Type       XML (NSXMLStoreType)"))
    #expect(result.stdout.contains("Version    Company (every entity hash equal)"), "\(result.stdout)")
    #expect(result.stdout.contains("Employee") && result.stdout.contains("2"))
    let json = try MigrunProcess.run(["inspect", store.path, "--model", model.path, "--json"])
    #expect(json.stdout.contains("\"Employee\":{\"count\":2}"), "\(json.stdout)")
    #expect(try Data(contentsOf: store) == before, "the store is never written")
  }

  @Test func brokenXMLStoresAreClearErrors() throws {
    let cases: [(String, (String) -> String, String)] = [
      (
        "an idref naming no object",
        { $0.replacingOccurrences(of: "idrefs=\"z102 z103\"", with: "idrefs=\"z102 z999\"") },
        "names z999, which is no object of the store"
      ),
      (
        "an unknown entity", { $0.replacingOccurrences(of: "type=\"DESK\"", with: "type=\"CHAIR\"") },
        "of entity CHAIR, which the model does not have"
      ),
      (
        "a value of the wrong kind", { $0.replacingOccurrences(of: ">5200.5<", with: ">lots<") },
        "'lots' is not a Double value for 'salary'"
      ),
      ("a file cut short", { String($0.prefix(900)) }, "Company.storedata"),
      (
        "a to-one naming two objects",
        {
          $0.replacingOccurrences(
            of: "destination=\"EMPLOYEE\" idrefs=\"z102\"", with: "destination=\"EMPLOYEE\" idrefs=\"z102 z103\"")
        },
        "to-one relationship 'manager' names 2 objects"
      ),
      (
        "a link to an object of another entity",
        {
          $0.replacingOccurrences(
            of: "destination=\"EMPLOYEE\" idrefs=\"z102\"", with: "destination=\"EMPLOYEE\" idrefs=\"z105\"")
        },
        "names z105, a Desk, not a Employee"
      ),
      (
        "an element the DTD does not have in an object",
        { $0.replacingOccurrences(of: "<attribute name=\"number\"", with: "<note>x</note><attribute name=\"number\"") },
        "<note> inside <object> is no element of a Core Data XML store (object z105)"
      ),

    ]
    for (what, tweak, message) in cases {
      let folder = try TemporaryDirectory()
      let (store, model) = try Self.write(folder, tweak: tweak)
      let result = try MigrunProcess.run(["inspect", store.path, "--model", model.path])
      #expect(result.status == 1, "\(what): \(result.stdout)")
      #expect(result.stderr.contains(message), "\(what): \(result.stderr)")
      #expect(!result.stderr.contains("Fatal error"), "\(what)")
    }
    // databaseInfo describes the file: an element migrun does not know there is passed over, and
    // one named like an object's never taken for one.
    let folder = try TemporaryDirectory()
    let (store, model) = try Self.write(folder) {
      $0.replacingOccurrences(of: "<version>", with: "<attribute name=\"x\">1</attribute><version>")
    }
    let result = try MigrunProcess.run(["inspect", store.path, "--model", model.path])
    #expect(result.status == 0 && result.stdout.contains("Version    Company"), "\(result.stderr)")
  }

  @Test func commandsTakeItAndTheLibrarySaysItsTypeWhereSQLiteIsNeeded() throws {
    let folder = try TemporaryDirectory()
    let (store, model) = try Self.write(folder)
    let status = try MigrunProcess.run(["status", store.path, "--model", model.path])
    #expect(status.status == 0 && status.stdout.contains("no migration needed"), "\(status.stdout)\(status.stderr)")
    let error = try #require(throws: StoreError.self) { try SQLiteStore(url: store) }
    #expect(error.reason.contains("a Core Data XML (NSXMLStoreType) store, not SQLite"), "\(error)")
    // The library says it in its own words; the command line names its command.
    #expect(!error.reason.contains("migrun") && error.reason.contains("StoreType.sqlite"), "\(error)")
    let diagram = try MigrunProcess.run(["diagram", store.path, "--model", model.path, "--plan"])
    #expect(
      diagram.stderr.contains("this command takes SQLite stores (`migrun copy --type sqlite` makes one)"),
      "\(diagram.stderr)")
  }

  @Test func copyWritesEveryObjectValueAndLinkAsASQLiteStore() throws {
    let folder = try TemporaryDirectory()
    let (store, model) = try Self.write(folder)
    let before = try Data(contentsOf: store)
    let copy = folder.url.appendingPathComponent("Company.sqlite")
    let result = try MigrunProcess.run(["copy", store.path, copy.path, "--type", "sqlite", "--model", model.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("4 objects, UUID 7DFA6DAB-A071-4B34-8DFB-BAC65DD66FDE kept"), "\(result.stdout)")
    #expect(try Data(contentsOf: store) == before, "the XML store is only read")
    let sqlite = try SQLiteStore(url: copy, model: try SampleModels.companyModel())
    #expect(sqlite.metadata.uuid == "7DFA6DAB-A071-4B34-8DFB-BAC65DD66FDE")
    #expect(try sqlite.entityCounts().filter { $0.value > 0 } == ["Department": 1, "Employee": 2, "Desk": 1])
    let alice = try #require(try sqlite.object(ObjectID(entity: "Employee", primaryKey: 102)))
    #expect(alice.attributes["salary"] == .double(5200.5) && alice.attributes["name"] == .string("Alice"))
    #expect(alice.toMany["reports"] == [ObjectID(entity: "Employee", primaryKey: 103)])
    let department = try #require(try sqlite.object(ObjectID(entity: "Department", primaryKey: 104)))
    #expect(department.toMany["employees"]?.count == 2)
    #expect(try sqlite.ruleViolations(limit: 10).isEmpty)
    try sqlite.close()
    // The copy is an ordinary store: check calls it clean; a second copy onto it is refused.
    let check = try MigrunProcess.run(["check", copy.path, "--model", model.path])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    let again = try MigrunProcess.run(["copy", store.path, copy.path, "--model", model.path])
    #expect(again.status == 1 && again.stderr.contains("a file is already there"))
    // The XML store and its SQLite copy export the same JSON (the export a store of the version makes).
    let fromXML = try MigrunProcess.run(["export", store.path, "--model", model.path])
    let fromSQLite = try MigrunProcess.run(["export", copy.path, "--model", model.path])
    #expect(fromXML.status == 0 && fromSQLite.status == 0, "\(fromXML.stderr)\(fromSQLite.stderr)")
    #expect(fromXML.stdout == fromSQLite.stdout && fromXML.stdout.contains("\"Alice\""))
    let again2 = try MigrunProcess.run(["copy", copy.path, folder.url.appendingPathComponent("again.sqlite").path])
    #expect(again2.status == 1 && again2.stderr.contains("is already a SQLite store"), "\(again2.stderr)")
  }

  /// `check` of an XML store: clean as written; a next id below the largest is named.
  @Test func checkNamesANextIDBelowTheLargest() throws {
    let folder = try TemporaryDirectory()
    let (store, model) = try Self.write(folder)
    let clean = try MigrunProcess.run(["check", store.path, "--model", model.path])
    #expect(clean.status == 0 && clean.stdout.contains("clean"), "\(clean.stdout)")
    let other = try TemporaryDirectory()
    let (behind, _) = try Self.write(other) {
      $0.replacingOccurrences(of: "<nextObjectID>106</nextObjectID>", with: "<nextObjectID>50</nextObjectID>")
    }
    let check = try MigrunProcess.run(["check", behind.path, "--model", model.path])
    #expect(check.status == 1 && check.stdout.contains("primary-key-behind"), "\(check.stdout)")
  }
}
