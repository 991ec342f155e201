import Foundation
import GRDB
import LuaHost
import MigrunKit
import MigrunModel
import MigrunStore

// migrun-bench: measurements for scripts/bench (never a test). Prints one JSON object.
//   migrun-bench lua-call SCRIPT [CALLS] [REPEATS]   calls/s of LuaVM.call with an 8-field row (LuaValue table)
//   migrun-bench lua-row SCRIPT [CALLS] [REPEATS]    the same through a prepared LuaRowCall
//   migrun-bench example-store OUT COUNT MODEL       the policies/examples/recipes v1 store: COUNT recipes
//                                                    with ingredients, archived info, photos, ~COUNT/20 authors
//   migrun-bench recipe-store REFERENCE OUT MODEL    a Core Data store of MODEL's first version holding
//                                                    the reference generator's rows (same data as the C runs)

func now() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func luaCall(script: String, calls: Int, repeats: Int) throws -> [String: Double] {
  let vm = try LuaVM()
  guard let policy = try vm.run(file: URL(fileURLWithPath: script)).first?.functionValue else {
    throw HostError("\(script) does not return a function")
  }
  let photo = LuaValue.bytes(Array(repeating: UInt8(ascii: "x"), count: 200))
  var rates: [Double] = []
  var sink: Int64 = 0
  for _ in 0..<repeats {
    let start = now()
    for index in 0..<calls {
      let row: LuaValue = [
        "name": "spicy lentil soup", "cookMinutes": .integer(Int64(index)), "rating": 4.5, "created": 6e8,
        "photo": photo, "author": 7, "notes": "serves four", "vegan": true,
      ]
      let result = try vm.call(policy, [row])
      sink &+= result.first?["cookMinutes"].integerValue ?? 0
    }
    rates.append(Double(calls) / (now() - start))
  }
  return ["calls_per_second": median(rates), "sink": Double(sink % 2)]
}

func luaRowCall(script: String, calls: Int, repeats: Int) throws -> [String: Double] {
  let vm = try LuaVM()
  guard let policy = try vm.run(file: URL(fileURLWithPath: script)).first?.functionValue else {
    throw HostError("\(script) does not return a function")
  }
  let keys = ["name", "cookMinutes", "rating", "created", "photo", "author", "notes", "vegan"]
  let row = try vm.prepareRowCall(policy, inputKeys: keys, outputKeys: keys)
  let photo = LuaValue.bytes(Array(repeating: UInt8(ascii: "x"), count: 200))
  var rates: [Double] = []
  var sink: Int64 = 0
  var values: [LuaValue] = ["spicy lentil soup", 0, 4.5, 6e8, photo, 7, "serves four", true]
  for _ in 0..<repeats {
    let start = now()
    for index in 0..<calls {
      values[1] = .integer(Int64(index))
      let result = try vm.call(row, values)
      sink &+= result?[1].integerValue ?? 0
    }
    rates.append(Double(calls) / (now() - start))
  }
  return ["calls_per_second": median(rates), "sink": Double(sink % 2)]
}

/// A real Core Data store (metadata, Z_PRIMARYKEY, indexes) of the bench model's first version,
/// holding the rows `gen` wrote to `reference`, plus the 5,000 authors they point at.
func recipeStore(reference: String, output: String, model bundlePath: String) throws {
  let bundle = try ModelBundle(contentsOf: URL(fileURLWithPath: bundlePath))
  guard let first = bundle.versionNames.first else { throw HostError("\(bundlePath) has no versions") }
  let url = URL(fileURLWithPath: output)
  try? FileManager.default.removeItem(at: url)
  let store = try SQLiteStore.create(at: url, model: try bundle.model(named: first))
  guard let recipe = store.schema.layout(of: "Recipe"), let author = store.schema.layout(of: "Author") else {
    throw HostError("the bench model needs Recipe and Author")
  }
  func column(_ layout: StoreSchema.EntityLayout, _ name: String) throws -> String {
    switch layout.properties[name] {
    case .attribute(let column)?: return column.name
    case .toOne(let key, _, _)?: return key.name
    default: throw HostError("the bench model's \(layout.name) has no stored '\(name)'")
    }
  }
  try store.close()
  let queue = try DatabaseQueue(path: output)
  try queue.writeWithoutTransaction { db in
    try db.execute(sql: "ATTACH DATABASE ? AS ref", arguments: [reference])
    try db.inTransaction {
      try db.execute(
        sql: """
          WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 5000)
          INSERT INTO \(author.table) (Z_PK, Z_ENT, Z_OPT, \(try column(author, "name")))
          SELECT k, \(author.number), 1, 'author ' || k FROM n
          """)
      let columns = try ["name", "cookMinutes", "rating", "created", "photo", "author"].map { try column(recipe, $0) }
      try db.execute(
        sql: """
          INSERT INTO \(recipe.table) (Z_PK, Z_ENT, Z_OPT, \(columns.joined(separator: ", ")))
          SELECT Z_PK, \(recipe.number), Z_OPT, ZNAME, ZCOOKMINUTES, ZRATING, ZCREATED, ZPHOTO, ZAUTHOR FROM ref.ZRECIPE
          """)
      for layout in [author, recipe] {
        try db.execute(
          sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM \(layout.table)) WHERE Z_ENT = ?",
          arguments: [layout.number])
      }
      return .commit
    }
    try db.execute(sql: "DETACH DATABASE ref")
  }
}

/// A realistic, deterministic v1 store of the example recipe book.
func exampleStore(output: String, count: Int, model bundlePath: String) throws {
  var state: UInt64 = 0x9E37_79B9_7F4A_7C15
  func next() -> UInt64 {
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return state &* 0x2545_F491_4F6C_DD1D
  }
  func pick<T>(_ list: [T]) -> T { list[Int(next() % UInt64(list.count))] }
  let bundle = try ModelBundle(contentsOf: URL(fileURLWithPath: bundlePath))
  guard let first = bundle.versionNames.first else { throw HostError("\(bundlePath) has no versions") }
  let url = URL(fileURLWithPath: output)
  try? FileManager.default.removeItem(at: url)
  let store = try SQLiteStore.create(at: url, model: try bundle.model(named: first))
  let dishes = [
    "lentil soup", "chicken curry", "mushroom risotto", "beef stew", "tomato pasta", "fish tacos",
    "pumpkin pie", "pad thai", "bean chili", "apple crumble", "banana bread", "falafel wrap",
  ]
  let styles = ["spicy", "creamy", "smoky", "quick", "classic", "rustic", "lemony", "hearty"]
  let cuisines = ["thai", "italian", "mexican", "indian", "french", "levantine", "american"]
  let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "Niklaus"]
  let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Hamilton"]
  let ingredients: [(String, [String])] = [
    ("flour", ["cup", "g", "oz"]), ("butter", ["tbsp", "oz", "g"]), ("sugar", ["cup", "tsp"]),
    ("garlic", ["tsp", "g"]), ("milk", ["cup", "ml", "floz"]), ("rice", ["lb", "cup", "g"]),
    ("chicken", ["lb", "g"]), ("lentils", ["cup", "oz"]), ("salt", ["tsp", "g"]), ("tomatoes", ["oz", "lb"]),
  ]
  let authors = (0..<max(1, count / 20)).map { index -> (String, String) in
    let name = "\(firstNames[index % firstNames.count]) \(lastNames[(index / firstNames.count) % lastNames.count])"
    return (name, "\(name.lowercased().replacingOccurrences(of: " ", with: "."))\(index)@example.org")
  }
  try store.write { writer in
    var ingredientKey: Int64 = 0
    for index in 1...count {
      let id = ObjectID(entity: "Recipe", primaryKey: Int64(index))
      let info: NSDictionary = [
        "cuisine": pick(cuisines), "servings": Int(2 + next() % 6),
        "tags": [pick(styles), pick(["vegan", "weeknight", "party", "kids"])],
      ]
      let archived = try NSKeyedArchiver.archivedData(withRootObject: info, requiringSecureCoding: false)
      let author = authors[Int(next() % UInt64(authors.count))]
      var photo = [UInt8]("PHO0".utf8)
      for _ in 0..<(200 + Int(next() % 800)) { photo.append(UInt8(truncatingIfNeeded: next())) }
      try writer.insert(
        StoredObject(
          id: id,
          attributes: [
            "name": .string("\(pick(styles)) \(pick(dishes)) #\(index)"),
            "cookMinutes": .integer(Int64(5 + next() % 180)),
            "created": .date(600_000_000 + Double(next() % 150_000_000)), "photo": .data(photo),
            "info": .data(Array(archived)), "authorName": next() % 25 == 0 ? .null : .string(author.0),
            "authorEmail": .string(author.1),
          ]))
      var members: [ObjectID] = []
      for _ in 0..<(3 + Int(next() % 6)) {
        ingredientKey += 1
        let (name, units) = pick(ingredients)
        let member = ObjectID(entity: "Ingredient", primaryKey: ingredientKey)
        try writer.insert(
          StoredObject(
            id: member,
            attributes: [
              "name": .string(name), "quantity": .double(Double(1 + next() % 40) / 4), "unit": .string(pick(units)),
            ]))
        members.append(member)
      }
      try writer.setToMany(id, "ingredients", members)
    }
    try writer.reservePrimaryKeys(for: "Recipe", through: Int64(count))
    try writer.reservePrimaryKeys(for: "Ingredient", through: ingredientKey)
  }
  try store.close()
  print("generated \(output): \(count) recipes, \(authors.count) authors")
}

let arguments = CommandLine.arguments
let usage = """
  usage: migrun-bench lua-call|lua-row SCRIPT [CALLS] [REPEATS]
         migrun-bench example-store OUT COUNT MODEL
         migrun-bench recipe-store REFERENCE OUT MODEL
         migrun-bench hammer STORE MODEL ROUNDS POLICY
         migrun-bench snapshots COUNT FOLDER
         migrun-bench predicate-fetch COUNT FETCHES FOLDER
         migrun-bench context-fetch COUNT FOLDER objects|batches|grdb
         migrun-bench predicate-forms COUNT FOLDER FETCHES
         migrun-bench dedupe COUNT FOLDER stage|sql
         migrun-bench stage-store COUNT FOLDER
  """
do {
  switch (arguments.dropFirst().first, arguments.count) {
  case ("example-store", 5):
    try exampleStore(output: arguments[2], count: Int(arguments[3]) ?? 2000, model: arguments[4])
  case ("snapshots", 4):
    try snapshots(count: Int(arguments[2]) ?? 1_000_000, folder: arguments[3])
  case ("predicate-fetch", 5):
    try predicateFetch(count: Int(arguments[2]) ?? 100_000, fetches: Int(arguments[3]) ?? 20, folder: arguments[4])
  case ("context-fetch", 5):
    try contextFetch(count: Int(arguments[2]) ?? 1_000_000, folder: arguments[3], mode: arguments[4])
  case ("predicate-forms", 5):
    try predicateForms(count: Int(arguments[2]) ?? 1_000_000, folder: arguments[3], fetches: Int(arguments[4]) ?? 1000)
  case ("dedupe", 5):
    try dedupe(count: Int(arguments[2]) ?? 1_000_000, folder: arguments[3], mode: arguments[4])
  case ("stage-store", 4):
    try stageStore(count: Int(arguments[2]) ?? 1_000_000, folder: arguments[3])
  case ("hammer", 6):
    try hammer(store: arguments[2], model: arguments[3], rounds: Int(arguments[4]) ?? 10, policyName: arguments[5])
  case ("recipe-store", 5):
    try recipeStore(reference: arguments[2], output: arguments[3], model: arguments[4])
  case ("lua-call", 3...), ("lua-row", 3...):
    let calls = arguments.count > 3 ? Int(arguments[3]) ?? 1_000_000 : 1_000_000
    let repeats = arguments.count > 4 ? Int(arguments[4]) ?? 5 : 5
    let measure = arguments[1] == "lua-row" ? luaRowCall : luaCall
    let result = try measure(arguments[2], calls, repeats)
    print(String(format: "%.0f", result["calls_per_second"] ?? 0))
  default:
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
  }
} catch {
  FileHandle.standardError.write(Data("migrun-bench: \(error)\n".utf8))
  exit(1)
}
