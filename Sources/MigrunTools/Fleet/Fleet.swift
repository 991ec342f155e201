import FileDoors
import Foundation
import MigrunKit
import MigrunStore
import PropertyList

/// Many stores in one run: finding them in folders, splitting the list between machines, running
/// them a few at a time, and reporting each.
///
/// ```swift
/// let found = Fleet.stores(in: ["devices/"])          // Core Data stores only
/// let mine = Fleet.shard(found.stores, index: 0, of: 4)
/// let outcomes = Fleet.run(mine, jobs: 8) { url in … }   // one Outcome per store, in list order
/// ```
package enum Fleet {
  /// What the arguments name: the stores (folders searched), and the arguments that are not stores.
  package struct Found: Sendable {
    package var stores: [URL] = []
    /// Arguments (not folder contents) that are not Core Data stores, with why.
    package var refused: [(path: String, reason: String)] = []
    /// A store given as an argument, by its full path: the argument as typed.
    package var given: [String: String] = [:]

    /// How a store is named in what a run prints and reports: as given when it was an argument,
    /// else (found in a folder) by its full path.
    package func name(of store: URL) -> String { given[store.standardizedFileURL.path] ?? store.path }
  }

  /// The Core Data stores among `arguments`: a file is taken as it is (a file that is not a store
  /// is refused, by name); a folder is searched, to any depth, for SQLite files with a `Z_METADATA`
  /// table — and nothing else in it is touched. Left out of a search: backups (`NAME~.EXT`),
  /// migrun's working files (`.NAME.migrun-…`), SQLite's sidecars, hidden support folders
  /// (`.NAME_SUPPORT`), and SQLite files of other kinds. A SQLite file that cannot be read is taken:
  /// its failure is reported, not hidden. Sorted by path.
  package static func stores(in arguments: [String]) -> Found {
    var found = Found()
    var seen = Set<String>()
    func add(_ url: URL) {
      if seen.insert(url.standardizedFileURL.path).inserted { found.stores.append(url) }
    }
    for argument in arguments {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) else {
        found.refused.append((argument, "no such file or folder"))
        continue
      }
      let url = URL(fileURLWithPath: argument)
      guard isFolder.boolValue else {
        add(url)
        found.given[url.standardizedFileURL.path] = argument
        continue
      }
      var inFolder: [URL] = []
      let files = FileManager.default.enumerator(
        at: url, includingPropertiesForKeys: [.isRegularFileKey, .isDirectoryKey], options: [])
      while let file = files?.nextObject() as? URL {
        let name = file.lastPathComponent
        if (try? file.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
          if name.hasPrefix("."), name.hasSuffix("_SUPPORT") { files?.skipDescendants() }
          continue
        }
        switch InputFile.kind(at: file.path) {
        case .file?: if isCandidate(file) { inFolder.append(file) }
        case .link?:
          // Not followed (it may lead out of the folder): said, never silently passed over.
          if isCandidate(file.resolvingSymlinksInPath()) {
            found.refused.append((file.path, "a symbolic link to a store; give the store itself, or the link by name"))
          }
        case let kind?:
          found.refused.append((file.path, "\(kind.words), not a regular file; not opened (it could block)"))
        case nil: break
        }
      }
      for file in inFolder.sorted(by: { $0.path < $1.path }) { add(file) }
    }
    found.stores.sort { $0.path < $1.path }
    return found
  }

  /// Whether a file met in a folder is a store of the run (see ``stores(in:)``).
  static func isCandidate(_ file: URL) -> Bool {
    let name = file.lastPathComponent
    let stem = file.deletingPathExtension().lastPathComponent
    if StoreFiles.isBackupStem(stem) || name.contains(".migrun-") { return false }
    if StoreFiles.sideFileSuffixes.contains(where: { name.hasSuffix($0) }) { return false }
    // An XML or binary store is told by its contents too.
    if let type = StoreType.of(file), type != .sqlite { return true }
    guard let header = try? InputFile.head(file, count: 16), header == Array("SQLite format 3\0".utf8) else {
      return false
    }
    do {
      _ = try SQLiteStore.metadata(at: file)
      return true
    } catch let error as StoreError {
      // Another kind of SQLite database is none of the run's business.
      return error.code != .notACoreDataStore
    } catch {
      return true
    }
  }

  /// Part `index` of `count` disjoint parts of `stores` (0 ≤ index < count): a store belongs to the
  /// part its path's FNV-1a hash falls in, so the parts cover every store exactly once and a store
  /// stays in its part whatever else is in the list — N machines listing the same folder split it
  /// with no coordinator.
  package static func shard(_ stores: [URL], index: Int, of count: Int) -> [URL] {
    guard count > 1 else { return stores }
    return stores.filter { Int(hash($0.path) % UInt64(count)) == index }
  }

  /// FNV-1a (64-bit) of the text's UTF-8 bytes: stable across runs, machines and Swift versions.
  static func hash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    return hash
  }

  /// Reads a `--shard K/N` value.
  package static func parseShard(_ text: String) -> (index: Int, count: Int)? {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count > 0, index >= 0,
      index < count
    else { return nil }
    return (index, count)
  }

  /// What became of one store.
  package struct Outcome: Sendable, Codable, Equatable {
    package enum Status: String, Sendable, Codable {
      case migrated, current, failed
      /// `status`: the store needs migrating.
      case needsMigrating = "needs-migrating"
    }

    package var path: String
    package var from: String?
    package var to: String?
    package var status: Status
    /// Objects in the store after the migration (migrated), or in it (current).
    package var objects: Int?
    package var seconds: Double
    package var error: String?

    package init(
      path: String, from: String? = nil, to: String? = nil, status: Status, objects: Int? = nil, seconds: Double = 0,
      error: String? = nil
    ) {
      self.path = path
      self.from = from
      self.to = to
      self.status = status
      self.objects = objects
      self.seconds = seconds
      self.error = error
    }
  }

  /// Runs `work` on every store, `jobs` at a time, each on a thread of its own; one store's failure
  /// is its own outcome (work reports it) and never stops the others. `done` hears each outcome as it
  /// comes (from the worker's thread). Outcomes come back in the stores' order.
  package static func run(
    _ stores: [URL], jobs: Int, work: @escaping @Sendable (URL) -> Outcome,
    done: @escaping @Sendable (Outcome) -> Void = { _ in }
  ) -> [Outcome] {
    let results = Results(count: stores.count)
    let workers = max(1, min(jobs, stores.count))
    DispatchQueue.concurrentPerform(iterations: workers) { _ in
      while let index = results.next() {
        let outcome = work(stores[index])
        results.set(index, outcome)
        done(outcome)
      }
    }
    return results.all(stores)
  }

  /// The outcomes so far and the next store to take, behind a lock.
  private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [Outcome?]
    private var taken = 0

    init(count: Int) { outcomes = Array(repeating: nil, count: count) }

    func next() -> Int? {
      lock.lock()
      defer { lock.unlock() }
      guard taken < outcomes.count else { return nil }
      taken += 1
      return taken - 1
    }

    func set(_ index: Int, _ outcome: Outcome) {
      lock.lock()
      outcomes[index] = outcome
      lock.unlock()
    }

    func all(_ stores: [URL]) -> [Outcome] {
      lock.lock()
      defer { lock.unlock() }
      return outcomes.enumerated().map { index, outcome in
        outcome ?? Outcome(path: stores[index].path, status: .failed, error: "not run")
      }
    }
  }

  /// The report of a run (`--report FILE.json`): counts by status and every store's outcome.
  package struct Report: Sendable, Codable, Equatable {
    package var migrated = 0
    package var current = 0
    package var failed = 0
    package var needsMigrating = 0
    package var stores: [Outcome] = []

    package init(_ outcomes: [Outcome] = []) {
      for outcome in outcomes { add(outcome) }
    }

    mutating func add(_ outcome: Outcome) {
      stores.append(outcome)
      switch outcome.status {
      case .migrated: migrated += 1
      case .current: current += 1
      case .failed: failed += 1
      case .needsMigrating: needsMigrating += 1
      }
    }

    /// Several runs' reports (the shards of one fleet) as one, stores sorted by path; a store in
    /// more than one report keeps its last outcome.
    package static func merged(_ reports: [Report]) -> Report {
      var latest: [String: Outcome] = [:]
      for report in reports {
        for outcome in report.stores { latest[outcome.path] = outcome }
      }
      return Report(latest.keys.sorted().compactMap { latest[$0] })
    }

    enum CodingKeys: String, CodingKey { case migrated, current, failed, needsMigrating, stores }

    package init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      self.init(try container.decode([Outcome].self, forKey: .stores))
    }

    package func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(migrated, forKey: .migrated)
      try container.encode(current, forKey: .current)
      try container.encode(failed, forKey: .failed)
      if needsMigrating > 0 { try container.encode(needsMigrating, forKey: .needsMigrating) }
      try container.encode(stores, forKey: .stores)
    }

    /// The report as JSON (keys sorted, two-space indents).
    package func json() throws -> Data {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      return try encoder.encode(self)
    }

    /// The report as JUnit XML: one test case per store (its path), failed with its error.
    package func junit(suite: String) -> String {
      func escaped(_ text: String) -> String { XMLText.escaped(text, controls: .spaces) }
      let time = stores.reduce(0) { $0 + $1.seconds }
      var xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuites>
        <testsuite name="\(escaped(suite))" tests="\(stores.count)" failures="\(failed)" time="\(String(format: "%.3f", time))">

        """
      for outcome in stores {
        let name = escaped(outcome.path)
        let time = String(format: "%.3f", outcome.seconds)
        let versions = [outcome.from, outcome.to].compactMap { $0 }.joined(separator: " → ")
        if outcome.status == .failed {
          let message = escaped(outcome.error ?? "failed")
          xml += """
            <testcase classname="\(escaped(suite))" name="\(name)" time="\(time)"><failure message="\(message)">\(message)</failure></testcase>

            """
        } else {
          xml += """
            <testcase classname="\(escaped(suite))" name="\(name)" time="\(time)"><system-out>\(escaped(outcome.status.rawValue + (versions.isEmpty ? "" : " " + versions)))</system-out></testcase>

            """
        }
      }
      xml += "</testsuite>\n</testsuites>\n"
      return xml
    }
  }
}
