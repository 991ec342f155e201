import Foundation
import LuaHost

// migrun-bench: measurements for scripts/bench (never a test). Prints one JSON object.
//   migrun-bench lua-call SCRIPT [CALLS] [REPEATS]   calls/s of LuaVM.call with an 8-field row (LuaValue table)
//   migrun-bench lua-row SCRIPT [CALLS] [REPEATS]    the same through a prepared LuaRowCall

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

let arguments = CommandLine.arguments
guard arguments.count >= 3, ["lua-call", "lua-row"].contains(arguments[1]) else {
  FileHandle.standardError.write(Data("usage: migrun-bench lua-call|lua-row SCRIPT [CALLS] [REPEATS]\n".utf8))
  exit(2)
}
let calls = arguments.count > 3 ? Int(arguments[3]) ?? 1_000_000 : 1_000_000
let repeats = arguments.count > 4 ? Int(arguments[4]) ?? 5 : 5
do {
  let measure = arguments[1] == "lua-row" ? luaRowCall : luaCall
  let result = try measure(arguments[2], calls, repeats)
  print(String(format: "%.0f", result["calls_per_second"] ?? 0))
} catch {
  FileHandle.standardError.write(Data("migrun-bench: \(error)\n".utf8))
  exit(1)
}
