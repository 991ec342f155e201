import Foundation
import MigrunContext
import MigrunKit
import MigrunModel
import MigrunStore
import TestSupport
import Testing

/// Every example of the library's DocC articles (Sources/MigrunKit/MigrunKit.docc), compiled and run
/// against Moody's real stores (Documentation/*Examples.swift) — each article's code blocks held to be
/// a region of a test file word for word, and its `import` lines to be that file's own, so an article
/// cannot drift from what compiles, imports included.
@Suite(.enabled(if: Fixtures.areAvailable))
struct DocumentationExamplesTests {
  static let moody = "objcio-core-data-moody"
  static let articles = Fixtures.repositoryRoot.appendingPathComponent("Sources/MigrunKit/MigrunKit.docc")
  static let tests = Fixtures.repositoryRoot.appendingPathComponent("Tests")
  /// Imports a test file has that an example's program would not.
  static let testImports: Set<String> = ["Testing", "TestSupport"]

  /// A copy of a Moody store of `version` ("Moody 5") in `folder`.
  static func moodyStore(_ version: String, in folder: TemporaryDirectory) throws -> URL {
    let copy = folder.url.appendingPathComponent("\(version).sqlite")
    try FileManager.default.copyItem(at: Fixtures.url("\(moody)/stores/\(version).moody.sqlite"), to: copy)
    return copy
  }

  static var modelURL: URL { Fixtures.url("\(moody)/models/Moody.xcdatamodeld") }

  /// A Swift file's lines, its code's common indentation removed, and the modules it imports.
  struct SourceFile {
    let path: String
    let lines: [String]
    let imports: Set<String>

    init(path: String, text: String) {
      self.path = path
      lines = text.components(separatedBy: "\n")
      imports = Set(lines.compactMap { line in line.hasPrefix("import ") ? String(line.dropFirst(7)) : nil })
    }

    /// Whether `block` (lines of code, indented as in an article) is lines of this file, in a row,
    /// indented alike.
    func holds(_ block: [String]) -> Bool {
      guard let head = block.first?.trimmingCharacters(in: .whitespaces), !head.isEmpty else { return false }
      let dedented = SourceFile.dedent(block)
      for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces) == head {
        guard index + block.count <= lines.count else { continue }
        if SourceFile.dedent(Array(lines[index..<index + block.count])) == dedented { return true }
      }
      return false
    }

    static func dedent(_ lines: [String]) -> [String] {
      let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
      return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }
    }
  }

  static func testFiles() throws -> [SourceFile] {
    guard let walk = FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil) else { return [] }
    return try walk.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.map { url in
      SourceFile(path: url.lastPathComponent, text: try String(contentsOf: url, encoding: .utf8))
    }
  }

  /// Each article's ```swift blocks: its `import` lines, then code. The Lua article's examples are
  /// LuaFromSwiftTests' (MigrunAPITests), which holds them to its code word for word; its imports are
  /// one block of their own.
  static func codeBlocks() throws -> [(article: String, imports: Set<String>, code: [String])] {
    let files = try FileManager.default.contentsOfDirectory(atPath: articles.path)
      .filter { $0.hasSuffix(".md") && $0 != "UsingLuaFromSwift.md" }
    return try files.sorted().flatMap { file in
      let text = try String(contentsOf: articles.appendingPathComponent(file), encoding: .utf8)
      return text.components(separatedBy: "```swift\n").dropFirst().map { block in
        var lines = block.components(separatedBy: "\n```")[0].components(separatedBy: "\n")
        let imports = lines.prefix { $0.hasPrefix("import ") }.map { String($0.dropFirst(7)) }
        lines.removeFirst(imports.count)
        while lines.first?.isEmpty == true { lines.removeFirst() }
        return (file, Set(imports), lines)
      }
    }
  }

  @Test func everyCodeBlockOfTheArticlesIsATestsCodeWithItsImports() throws {
    let files = try Self.testFiles()
    let blocks = try Self.codeBlocks()
    for block in blocks {
      #expect(!block.imports.isEmpty, "\(block.article): a block without import lines: \(block.code.first ?? "")")
      let holders = files.filter { $0.holds(block.code) }
      #expect(
        !holders.isEmpty,
        "\(block.article): a block that is no test's code, word for word and in a row: \(block.code.first ?? "")")
      // The file that runs it imports what the block does, and nothing else of migrun's: the block's
      // imports are the ones a program needs.
      #expect(
        holders.isEmpty || holders.contains { $0.imports.subtracting(Self.testImports) == block.imports },
        """
        \(block.article): '\(block.code.first ?? "")' imports \(block.imports.sorted()); the tests holding it \
        import \(holders.map { "\($0.path): \($0.imports.subtracting(Self.testImports).sorted())" })
        """)
    }
    #expect(blocks.count >= 13)
  }

  /// ErrorCodes.md lists every code of every error type, read from the types themselves (each
  /// `Code` is `CaseIterable`), and no code that is not there.
  @Test func theErrorCodesArticleListsEveryCode() throws {
    let text = try String(contentsOf: Self.articles.appendingPathComponent("ErrorCodes.md"), encoding: .utf8)
    let codes: [(type: String, codes: [String])] = [
      ("ModelError", ModelError.Code.allCases.map(\.rawValue)),
      ("StoreError", StoreError.Code.allCases.map(\.rawValue)),
      ("ContextError", ContextError.Code.allCases.map(\.rawValue)),
      ("MigrationError", MigrationError.Code.allCases.map(\.rawValue)),
    ]
    let sections = text.components(separatedBy: "\n### ").dropFirst()
    for (type, cases) in codes {
      let section = try #require(sections.first { $0.hasPrefix(type + "\n") }, "ErrorCodes.md: no '### \(type)'")
      let listed = section.components(separatedBy: "\n").compactMap { line -> String? in
        guard line.hasPrefix("| `.") else { return nil }
        return String(line.dropFirst(4).prefix { $0 != "`" })
      }
      #expect(
        Set(cases).subtracting(listed).isEmpty, "ErrorCodes.md, \(type): not listed \(Set(cases).subtracting(listed))")
      #expect(
        Set(listed).subtracting(cases).isEmpty, "ErrorCodes.md, \(type): no such code \(Set(listed).subtracting(cases))"
      )
      #expect(listed.count == Set(listed).count, "ErrorCodes.md, \(type): a code listed twice")
    }
  }

  static func creators(_ url: URL, _ model: ObjectModel) throws -> [Int64: String] {
    let store = try SQLiteStore(url: url, model: model)
    defer { try? store.close() }
    var creators: [Int64: String] = [:]
    for mood in try StoreCoordinator(store: store).newContext().fetch("Mood", matching: nil) {
      if case .string(let creator) = try mood.value("creatorID") { creators[mood.id.primaryKey] = creator }
    }
    return creators
  }

  static func rating(of id: ObjectID, in url: URL, _ model: ObjectModel) throws -> StoreValue {
    let store = try SQLiteStore(url: url, model: model)
    defer { try? store.close() }
    return try StoreCoordinator(store: store).newContext().object(with: id).value("rating")
  }
}
