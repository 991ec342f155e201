import Foundation
import FuzzTargets

#if MIGRUN_LIBFUZZER
  // Built by scripts/fuzz with `--sanitize=fuzzer -Xswiftc -DMIGRUN_LIBFUZZER`: libFuzzer supplies
  // `main` and calls this for every input; MIGRUN_FUZZ_TARGET names the parser.
  nonisolated(unsafe) private var selected: FuzzTarget?

  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    if selected == nil {
      let name = ProcessInfo.processInfo.environment["MIGRUN_FUZZ_TARGET"] ?? ""
      guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("migrun-fuzz: set MIGRUN_FUZZ_TARGET to one of \(names)\n".utf8))
        exit(2)
      }
      selected = target
    }
    let bytes = data.map { Data(bytes: $0, count: size) } ?? Data()
    selected?.run(bytes)
    return 0
  }
#else
  /// Without libFuzzer: writes seed corpora and replays inputs (a crash found by the fuzzer, or a
  /// whole corpus) through a target.
  @main struct MigrunFuzz {
    static let usage = """
      usage: migrun-fuzz targets
             migrun-fuzz seeds TARGET FOLDER FIXTURES REPOSITORY
             migrun-fuzz replay TARGET FILE|FOLDER...
      """

    static func main() {
      let arguments = Array(CommandLine.arguments.dropFirst())
      do {
        switch arguments.first {
        case "targets":
          print(FuzzTarget.allCases.map(\.rawValue).joined(separator: "\n"))
        case "seeds" where arguments.count == 5:
          let target = try target(arguments[1])
          let folder = URL(fileURLWithPath: arguments[2])
          try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
          let seeds = try Corpus.seeds(
            for: target, fixtures: URL(fileURLWithPath: arguments[3]), repository: URL(fileURLWithPath: arguments[4]))
          for (name, data) in seeds { try data.write(to: folder.appendingPathComponent("seed-" + name)) }
          print("\(target.rawValue): \(seeds.count) seeds in \(folder.path)")
        case "replay" where arguments.count >= 3:
          let target = try target(arguments[1])
          var count = 0
          for path in arguments.dropFirst(2) {
            for file in inputs(at: URL(fileURLWithPath: path)) {
              target.run(try Data(contentsOf: file))
              count += 1
            }
          }
          print("\(target.rawValue): \(count) inputs, no crash")
        default:
          FileHandle.standardError.write(Data((usage + "\n").utf8))
          exit(64)
        }
      } catch {
        FileHandle.standardError.write(Data("migrun-fuzz: \(error)\n".utf8))
        exit(1)
      }
    }

    struct UsageError: Error, CustomStringConvertible { let description: String }

    static func target(_ name: String) throws -> FuzzTarget {
      guard let target = FuzzTarget(rawValue: name) else {
        throw UsageError(description: "unknown target \(name); targets: \(FuzzTarget.allCases.map(\.rawValue))")
      }
      return target
    }

    static func inputs(at url: URL) -> [URL] {
      var directory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: url.path, isDirectory: &directory) else { return [] }
      guard directory.boolValue else { return [url] }
      let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
      return names.sorted().map { url.appendingPathComponent($0) }
    }
  }
#endif
