import MigrunModel

/// A numeric type change that Core Data's inferred mapping carries: an attribute renamed or kept
/// whose type goes from one of Integer 16/32/64, Decimal, Double, Float or Boolean to another.
///
/// Apple lists "numerical type conversion" among the changes lightweight migration infers (WWDC 2010,
/// session 118), and real stores show it (a Boolean renamed by its renaming identifier into an
/// Integer 32, `isSilenced` → `mutedStatus`, migrated by Core Data's automatic lightweight migration).
/// Core Data moves the value as an `NSNumber` through `$source.name`; how the number lands in the
/// new type is **our reading, not documented**: integers keep their value (a value the narrower
/// type cannot hold fails the step, naming the object — Core Data would wrap it silently, migrun
/// loses nothing quietly), floating values become integers by truncation toward zero (`NSNumber`'s
/// `longLongValue`), any non-zero number becomes Boolean YES (`boolValue`), and Booleans are 0 or 1.
/// Every other type change (String, Date, Binary, UUID, URI, Transformable…) is refused, as Core
/// Data's inference refuses it.
package struct AttributeConversion: Sendable, Hashable, CustomStringConvertible {
  package let from: AttributeType
  package let to: AttributeType

  static let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float, .boolean]

  /// The conversion between two numeric types, or nil when Core Data's inference refuses the change.
  package init?(from: AttributeType, to: AttributeType) {
    guard from != to, Self.numeric.contains(from), Self.numeric.contains(to) else { return nil }
    self.from = from
    self.to = to
  }

  package var description: String { "\(from.xmlName) → \(to.xmlName)" }

  /// Why a value cannot be converted.
  package struct Failure: Error, Sendable, Hashable {
    package let reason: String
  }

  /// The value in the destination type.
  package func apply(_ value: StoreValue) throws(Failure) -> StoreValue {
    let number: Double
    var integer: Int64?
    switch value {
    case .null: return .null
    case .integer(let v): (number, integer) = (Double(v), v)
    case .boolean(let flag): (number, integer) = (flag ? 1 : 0, flag ? 1 : 0)
    case .double(let v): number = v
    default: throw Failure(reason: "holds \(value), not a number")
    }
    switch to {
    case .boolean:
      return .boolean(number != 0 || (integer ?? 0) != 0)
    case .double, .float, .decimal:
      return .double(number)
    default:
      guard let range = to.integerRange else { throw Failure(reason: "cannot become \(to.xmlName)") }
      if integer == nil {
        guard number.isFinite, number >= -9.223_372_036_854_775_808e18, number < 9.223_372_036_854_775_808e18 else {
          throw Failure(reason: "\(value) does not fit \(to.xmlName)")
        }
        integer = Int64(number.rounded(.towardZero))
      }
      guard let whole = integer, range.contains(whole) else {
        throw Failure(reason: "\(value) does not fit \(to.xmlName)")
      }
      return .integer(whole)
    }
  }

  /// The SQL giving the converted value of `column`, when no value can fail the conversion (widening
  /// integers, anything to a floating type or to Boolean); nil when values must be checked one by one.
  package func sql(_ column: String) -> String? {
    switch to {
    case .boolean: return "(CASE WHEN \(column) IS NULL THEN NULL WHEN \(column) <> 0 THEN 1 ELSE 0 END)"
    case .double, .float, .decimal: return "CAST(\(column) AS REAL)"
    default:
      guard let wide = to.integerRange else { return nil }
      if from == .boolean { return column }
      guard let narrow = from.integerRange, wide.lowerBound <= narrow.lowerBound,
        narrow.upperBound <= wide.upperBound
      else { return nil }
      return column
    }
  }
}
