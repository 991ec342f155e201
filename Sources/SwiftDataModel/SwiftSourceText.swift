import MigrunModel
import SwiftOperators
import SwiftParser
import SwiftSyntax

/// Swift source as other tools read it (`migrun port`): the same checks of size and nesting before
/// parsing as a SwiftData model's sources (``SourceDeclarations/checkShape(of:file:)``), Apple's
/// parser, operators folded by the standard precedence, all on a stack deep enough for any file
/// within the size (``DeepStack``).
///
/// ```swift
/// let result = SwiftSourceText.parse(text, file: "Policy.swift") { tree in walk(tree) }
/// ```
package enum SwiftSourceText {
  /// `body`'s result on the parsed and folded tree of `source`, or the reason the file is refused
  /// (too large, nested too deep) at its file and line.
  package static func parse<T>(_ source: String, file: String, _ body: (SourceFileSyntax) -> T) throws(ModelError)
    -> T
  {
    do {
      try SourceDeclarations.checkShape(of: source, file: file)
    } catch let error as SourceError {
      throw ModelError(.notAModel, file: error.spot.description, reason: error.reason, underlying: error)
    } catch {
      throw ModelError(.unreadable, file: file, reason: "\(error)", underlying: error)
    }
    return DeepStack.run {
      let tree = Parser.parse(source: source)
      let folded = OperatorTable.standardOperators.foldAll(tree) { _ in }.as(SourceFileSyntax.self) ?? tree
      return body(folded)
    }
  }

  /// `body` on the deep stack: walks of trees `parse` made, done after every file is parsed.
  package static func onDeepStack<T>(_ body: () -> T) -> T { DeepStack.run(body) }
}
