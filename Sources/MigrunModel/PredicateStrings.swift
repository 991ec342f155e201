import Foundation

/// How a predicate compares strings: one home for the rules, used by the object-by-object judge
/// (the context) and by the SQL function the store registers for the same tests, so a fetch gives
/// the same answer whichever of them decides.
///
/// Without options, `==`, `!=` and ordering compare scalar by scalar, in code-point order (SQLite's
/// BINARY, which Core Data's SQL uses). `[c]` folds case, `[d]` diacritics (Foundation's folding,
/// no locale). `CONTAINS`, `BEGINSWITH`, `ENDSWITH` compare as Swift strings do (canonical
/// equivalence) — as Core Data's `NSCoreDataStringSearch`, an `NSString` search without the literal
/// flag, does; `LIKE` takes `*` and `?`; `MATCHES` is an ICU regular expression over the whole string.
package enum PredicateStrings {
  package static func fold(_ text: String, _ options: FormatPredicate.Options) -> String {
    // ASCII has no diacritics, and its case folds to lower case: the same answer as Foundation's
    // folding at a fraction of its cost (a search over a million rows folds a million strings).
    if text.utf8.allSatisfy({ $0 < 0x80 }) {
      return options.contains(.caseInsensitive) ? text.lowercased() : text
    }
    var fold: String.CompareOptions = []
    if options.contains(.caseInsensitive) { fold.insert(.caseInsensitive) }
    if options.contains(.diacriticInsensitive) { fold.insert(.diacriticInsensitive) }
    return fold.isEmpty ? text : text.folding(options: fold, locale: nil)
  }

  package static func equal(_ a: String, _ b: String, _ options: FormatPredicate.Options) -> Bool {
    // Without options scalar by scalar — "é" and "e\u{301}" differ, as they do to
    // `NSString.isEqual:` and SQLite (Swift's `==` would take them as one).
    if options.isEmpty { return a.unicodeScalars.elementsEqual(b.unicodeScalars) }
    return fold(a, options) == fold(b, options)
  }

  /// -1, 0 or 1.
  package static func order(_ x: String, _ y: String, _ options: FormatPredicate.Options) -> Int {
    if options.isEmpty {
      // In code-point order, as SQLite's BINARY collation orders UTF-8.
      let (p, q) = (x.unicodeScalars.map(\.value), y.unicodeScalars.map(\.value))
      return p == q ? 0 : p.lexicographicallyPrecedes(q) ? -1 : 1
    }
    let (p, q) = (fold(x, options), fold(y, options))
    return p == q ? 0 : p < q ? -1 : 1
  }

  /// Whether `text` `op` `pattern` holds, for the operators that take two strings; `nil` for
  /// operators that do not (`IN`, `BETWEEN`).
  package static func test(
    _ text: String, _ op: FormatPredicate.Operator, _ pattern: String, _ options: FormatPredicate.Options
  ) throws(FormatPredicateError) -> Bool? {
    switch op {
    case .equal: return equal(text, pattern, options)
    case .notEqual: return !equal(text, pattern, options)
    case .less: return order(text, pattern, options) < 0
    case .lessOrEqual: return order(text, pattern, options) <= 0
    case .greater: return order(text, pattern, options) > 0
    case .greaterOrEqual: return order(text, pattern, options) >= 0
    case .contains, .beginsWith, .endsWith, .like:
      let (subject, needle) = (fold(text, options), fold(pattern, options))
      switch op {
      case .contains: return subject.contains(needle)
      case .beginsWith: return subject.hasPrefix(needle)
      case .endsWith: return subject.hasSuffix(needle)
      default: return try like(subject, needle)
      }
    case .matches: return try matches(text, pattern, options)
    case .inList, .between: return nil
    }
  }

  /// The steps one `LIKE` may take (text × pattern at worst); beyond, the evaluation is refused.
  package static let likeCostLimit = 1e9

  /// `LIKE`: `*` any run of characters, `?` one character. Matched without recursion (a long text
  /// must not run out of stack): greedily, going back only to the last `*` — text × pattern steps at
  /// worst, which is checked first when the pattern has a `*`.
  package static func like(_ text: String, _ pattern: String) throws(FormatPredicateError) -> Bool {
    let t = Array(text)
    let p = Array(pattern)
    if p.contains("*"), Double(t.count + 1) * Double(p.count + 1) > likeCostLimit {
      throw FormatPredicateError(
        format: pattern.count > 40 ? String(pattern.prefix(40)) + "…" : pattern, offset: nil,
        reason:
          "LIKE of a \(p.count)-character pattern on a \(t.count)-character string could take ~\(t.count * p.count) steps (limit 1e9): shorten them"
      )
    }
    var i = 0
    var j = 0
    var star: Int?
    var resume = 0
    while i < t.count {
      if j < p.count, p[j] == "*" {
        star = j
        j += 1
        resume = i
      } else if j < p.count, p[j] == "?" || p[j] == t[i] {
        i += 1
        j += 1
      } else if let star {
        j = star + 1
        resume += 1
        i = resume
      } else {
        return false
      }
    }
    while j < p.count, p[j] == "*" { j += 1 }
    return j == p.count
  }

  /// How long one `MATCHES` may take. Regular expressions with nested repetition backtrack
  /// exponentially (`(a|a)*b`), and the match runs in ICU, where no script limit reaches: it is
  /// given up after this long, with an error naming the expression.
  package static let matchSeconds = 0.25

  /// `MATCHES`: an ICU regular expression that must match the whole string.
  package static func matches(_ text: String, _ pattern: String, _ options: FormatPredicate.Options)
    throws(FormatPredicateError) -> Bool
  {
    var regexOptions: NSRegularExpression.Options = []
    if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
    let expression: NSRegularExpression
    do {
      expression = try NSRegularExpression(pattern: "^(?:\(pattern))$", options: regexOptions)
    } catch {
      throw FormatPredicateError(format: pattern, offset: nil, reason: "not a regular expression MATCHES can take")
    }
    let subject = options.contains(.diacriticInsensitive) ? fold(text, [.diacriticInsensitive]) : text
    let deadline = Date().addingTimeInterval(matchSeconds)
    var found = false
    var gaveUp = false
    expression.enumerateMatches(
      in: subject, options: [.reportProgress], range: NSRange(subject.startIndex..., in: subject)
    ) { match, _, stop in
      if match != nil {
        found = true
        stop.pointee = true
      } else if Date() > deadline {
        gaveUp = true
        stop.pointee = true
      }
    }
    if gaveUp {
      throw FormatPredicateError(
        format: pattern, offset: nil,
        reason:
          "MATCHES gave up after \(matchSeconds) s on a \(subject.count)-character string: the expression backtracks too much (simplify its nested repetition)"
      )
    }
    return found
  }
}
