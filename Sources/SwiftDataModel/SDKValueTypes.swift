import MigrunModel
import SwiftSyntax

/// The `Codable` value types of Apple's SDKs that an app stores in a `@Model` property, and that
/// SwiftData keeps as a composite attribute (`NSCompositeAttributeDescription`) like a struct of the
/// app's own: each with its stored elements, their names and types. Where each fact comes from:
///
/// - `Color.Resolved` (SwiftUI, iOS 17): `linearRed`, `linearGreen`, `linearBlue`, `opacity`, each a
///   `Float` and, unlike an app's struct's elements, not optional (the entity description SwiftData
///   stored, `swiftdata-sdk-composites.json`, and its hash) — the columns `ZLINEARRED`, `ZLINEARGREEN`, `ZLINEARBLUE`, `ZOPACITY` of a real SwiftData
///   app's store (issue 58), and SwiftUI's interface (`public var linearRed: Swift.Float`, …, the type's
///   `Codable` conformance).
/// - `CGPoint` (`x`, `y`), `CGSize` (`width`, `height`), `CGVector` (`dx`, `dy`), each a `CGFloat`
///   (a Double), and `CGRect` (`origin`: a CGPoint, `size`: a CGSize): CoreGraphics' interface, the
///   stored properties of these `Codable` structs. No store we have holds one: that SwiftData lays
///   them out by these names (and `CGRect` as a composite nesting two), and with optional elements as
///   an app's struct's are rather than as `Color.Resolved`'s, is a guess.
/// - `CLLocationCoordinate2D` (`latitude`, `longitude`, `CLLocationDegrees`: a Double): CoreLocation's
///   interface. The SDK does not make it `Codable`; an app that declares it so stores it like this (a
///   guess, no store we have holds one).
///
/// A type the app's sources declare under one of these names is the app's own, read from its text.
enum SDKValueTypes {
  /// The elements SwiftData stores for `type`, or nil when it is none of Apple's value types known here.
  /// Each element is optional with its own name as renaming identifier, as a struct's are.
  static func elements(of type: TypeSyntax) -> [Attribute]? {
    var name = type.trimmedDescription
    for module in ["SwiftUI.", "CoreGraphics.", "CoreFoundation.", "Foundation.", "CoreLocation."]
    where name.hasPrefix(module) {
      name.removeFirst(module.count)
    }
    return known[name]
  }

  private static func element(_ name: String, _ type: AttributeType, _ elements: [Attribute] = []) -> Attribute {
    .compositeElement(name, type, elements: elements)
  }

  private static let point = [element("x", .double), element("y", .double)]
  private static let size = [element("width", .double), element("height", .double)]

  private static let known: [String: [Attribute]] = [
    // Not optional, unlike an app's own struct's elements: the entity SwiftData wrote
    // (../shared/fixtures/facts/swiftdata-sdk-composites.json, CocktailImage) gives each of the four
    // no NSIsOptional, and hashes only so.
    "Color.Resolved": ["linearRed", "linearGreen", "linearBlue", "opacity"].map {
      Attribute(name: $0, type: .float, isOptional: false, renamingIdentifier: $0)
    },
    "CGPoint": point,
    "CGSize": size,
    "CGVector": [element("dx", .double), element("dy", .double)],
    "CGRect": [element("origin", .composite, point), element("size", .composite, size)],
    "CLLocationCoordinate2D": [element("latitude", .double), element("longitude", .double)],
  ]
}

extension Attribute {
  /// An element of a composite attribute as SwiftData writes one — a struct's stored property, an enum's
  /// case or raw value, an SDK value type's field: optional, with its own name as renaming identifier
  /// (as in every SwiftData store the facts hold). The one builder of an element.
  static func compositeElement(_ name: String, _ type: AttributeType, elements: [Attribute] = []) -> Attribute {
    Attribute(name: name, type: type, isOptional: true, renamingIdentifier: name, elements: elements)
  }
}
