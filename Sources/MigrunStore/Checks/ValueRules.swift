import Foundation
import MigrunModel

/// The value rules of an attribute that Core Data validates on every save and in a migration's
/// third stage: minimum and maximum value (numbers; dates, in seconds since 2001-01-01), minimum and
/// maximum length (strings, in UTF-16 units as `NSString.length` counts; binary data, in bytes) and a
/// regular expression a string must match as a whole (`NSPredicate`'s `MATCHES`, ICU syntax). A NULL
/// value is not checked here: whether it may be NULL is the optional flag's rule.
///
/// Read from the model as Xcode writes it: `minValueString` / `maxValueString` (value or length,
/// by type), `minDateTimeInterval` / `maxDateTimeInterval` (dates) and `regularExpressionString`.
/// Compiled models (`.mom`, `Z_MODELCACHE`) keep these rules as archived validation predicates, which
/// migrun does not read yet: their attributes carry no value rules.
///
/// `@unchecked Sendable`: the one non-`Sendable` part is the compiled `NSRegularExpression`, which is
/// immutable and documented as safe to share between threads.
package struct ValueRule: @unchecked Sendable {
  package enum Kind: Sendable, Hashable {
    case minimumValue(Double)
    case maximumValue(Double)
    case minimumLength(Int)
    case maximumLength(Int)
    case pattern(String)
  }

  package let attribute: String
  /// The attribute's type (how its stored values read).
  package let type: AttributeType
  package let kind: Kind
  /// A `pattern`'s expression, compiled once (checks run per stored value); nil when it does not compile.
  private let expression: NSRegularExpression?

  init(attribute: String, type: AttributeType, kind: Kind) {
    self.attribute = attribute
    self.type = type
    self.kind = kind
    if case .pattern(let pattern) = kind {
      expression = try? NSRegularExpression(pattern: pattern)
    } else {
      expression = nil
    }
  }

  /// The rules of `attribute` (none for a transient or derived one).
  package static func rules(of attribute: Attribute) -> [ValueRule] {
    guard !attribute.isTransient, attribute.derivation == nil else { return [] }
    let rules = attribute.validation
    var kinds: [Kind] = []
    switch attribute.type {
    case .integer16, .integer32, .integer64, .decimal, .double, .float:
      if let min = rules["minValueString"].flatMap(Double.init) { kinds.append(.minimumValue(min)) }
      if let max = rules["maxValueString"].flatMap(Double.init) { kinds.append(.maximumValue(max)) }
    case .date:
      if let min = (rules["minDateTimeInterval"] ?? rules["minValueString"]).flatMap(Double.init) {
        kinds.append(.minimumValue(min))
      }
      if let max = (rules["maxDateTimeInterval"] ?? rules["maxValueString"]).flatMap(Double.init) {
        kinds.append(.maximumValue(max))
      }
    case .string, .binary:
      if let min = rules["minValueString"].flatMap(Int.init) { kinds.append(.minimumLength(min)) }
      if let max = rules["maxValueString"].flatMap(Int.init) { kinds.append(.maximumLength(max)) }
      if attribute.type == .string, let pattern = rules["regularExpressionString"], !pattern.isEmpty {
        kinds.append(.pattern(pattern))
      }
    default:
      break
    }
    return kinds.map { ValueRule(attribute: attribute.name, type: attribute.type, kind: $0) }
  }

  /// What is wrong with `value`, or nil when it keeps the rule (NULL always does).
  package func problem(_ value: StoreValue) -> String? {
    let shown = "'\(attribute)' \(value)"
    switch (kind, value) {
    case (_, .null):
      return nil
    case (.minimumValue(let min), _):
      guard let number = Self.number(value), number < min else { return nil }
      return "\(shown) is below the minimum \(Self.format(min))"
    case (.maximumValue(let max), _):
      guard let number = Self.number(value), number > max else { return nil }
      return "\(shown) is above the maximum \(Self.format(max))"
    case (.minimumLength(let min), _):
      guard let length = Self.length(value), length < min else { return nil }
      return "\(shown) is \(length) long, shorter than the minimum length \(min)"
    case (.maximumLength(let max), _):
      guard let length = Self.length(value), length > max else { return nil }
      return "\(shown) is \(length) long, longer than the maximum length \(max)"
    case (.pattern(let pattern), .string(let text)):
      guard let expression else {
        return "\(shown): the model's regular expression /\(pattern)/ does not compile"
      }
      let whole = NSRange(text.startIndex..<text.endIndex, in: text)
      let match = expression.firstMatch(in: text, options: [.anchored], range: whole)
      guard match?.range != whole else { return nil }
      return "\(shown) does not match the regular expression /\(pattern)/"
    case (.pattern, _):
      return nil
    }
  }

  static func number(_ value: StoreValue) -> Double? {
    switch value {
    case .integer(let v): Double(v)
    case .double(let v): v
    case .date(let v): v
    case .boolean(let v): v ? 1 : 0
    default: nil
    }
  }

  static func length(_ value: StoreValue) -> Int? {
    switch value {
    case .string(let text): text.utf16.count
    case .data(let bytes): bytes.count
    default: nil
    }
  }

  static func format(_ number: Double) -> String {
    number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
  }
}
