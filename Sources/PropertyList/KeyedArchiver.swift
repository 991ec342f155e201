/// Builds an `NSKeyedArchiver` archive (format version 100000) object by object, the way Foundation
/// lays one out: `$objects[0]` is `$null`, every object is a dictionary of fields whose `$class`
/// points at a `{$classname, $classes}` entry (one per class), strings are objects of their own
/// (written once each), and fields refer to objects by UID.
///
/// ```swift
/// var archiver = KeyedArchiver()
/// let name = archiver.string("Mood")
/// let root = archiver.object(["MyClass", "NSObject"], ["name": name])
/// let bytes = archiver.archive(root: root).binaryEncoded()
/// ```
///
/// Objects that refer to each other (a graph with cycles) are made in two steps: ``reserve()`` a
/// slot, refer to it, then ``fill(_:classes:fields:)`` it.
package struct KeyedArchiver: Sendable {
  /// The archive's `$objects` so far.
  package private(set) var objects: [PropertyListValue] = [.string("$null")]
  private var classReferences: [String: UInt64] = [:]
  private var stringReferences: [String: UInt64] = [:]

  /// The reference to `$null` (a nil object field).
  package static let null = PropertyListValue.uid(0)

  package init() {}

  /// A string object (each distinct string is archived once); `nil` gives ``null``.
  package mutating func string(_ text: String?) -> PropertyListValue {
    guard let text else { return Self.null }
    if let known = stringReferences[text] { return .uid(known) }
    let reference = append(.string(text))
    stringReferences[text] = reference
    return .uid(reference)
  }

  /// A plain value stored as an object of its own (an `NSNumber`'s integer, real or boolean).
  package mutating func value(_ value: PropertyListValue) -> PropertyListValue { .uid(append(value)) }

  /// An object of `classes` (the class first, then its superclasses) with these fields.
  package mutating func object(_ classes: [String], _ fields: [String: PropertyListValue]) -> PropertyListValue {
    let slot = reserve()
    fill(slot, classes: classes, fields: fields)
    return .uid(slot)
  }

  /// A slot for an object that others refer to before its fields are known.
  package mutating func reserve() -> UInt64 { append(.string("$null")) }

  /// Writes the object in a slot from ``reserve()``.
  package mutating func fill(_ slot: UInt64, classes: [String], fields: [String: PropertyListValue]) {
    var entries = fields
    entries["$class"] = classReference(classes)
    objects[Int(slot)] = .dictionary(entries)
  }

  /// An `NSArray` (or another class of the array family: `NSMutableArray`, `NSSet`, …) of objects.
  package mutating func array(_ elements: [PropertyListValue], classes: [String] = ["NSArray", "NSObject"])
    -> PropertyListValue
  {
    object(classes, ["NS.objects": .array(elements)])
  }

  /// An `NSDictionary` (or `NSMutableDictionary`) whose keys and values are these objects, in this
  /// order.
  package mutating func dictionary(
    keys: [PropertyListValue], values: [PropertyListValue], classes: [String] = ["NSDictionary", "NSObject"]
  ) -> PropertyListValue {
    object(classes, ["NS.keys": .array(keys), "NS.objects": .array(values)])
  }

  /// The finished archive, with `root` as `$top.root`.
  package func archive(root: PropertyListValue) -> PropertyListValue { archive(top: ["root": root]) }

  /// The finished archive with these top-level keys (`encodeObject:forKey:` on the archiver itself:
  /// a binary store's `metadata` and `mapData`).
  package func archive(top: [String: PropertyListValue]) -> PropertyListValue {
    .dictionary([
      "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000), "$objects": .array(objects),
      "$top": .dictionary(top),
    ])
  }

  /// Copies the object graph of another archive's `$objects` reachable from `reference` into this
  /// one — every object, class entry and string once, in the order the other archive has them, none
  /// merged with this archive's — and returns the reference to its copy: an archived value embedded
  /// whole (a binary store holds a transformable's value so), and taken out again by
  /// ``extract(_:from:)`` as the same objects.
  package mutating func embed(_ reference: UInt64, from other: [PropertyListValue]) -> PropertyListValue {
    var reachable = Set<UInt64>()
    var pending = [reference]
    while let next = pending.popLast() {
      guard next != 0, Int(next) < other.count, reachable.insert(next).inserted else { continue }
      other[Int(next)].forEachUID { pending.append($0) }
    }
    let order = reachable.sorted()
    var renumbered: [UInt64: UInt64] = [0: 0]
    for old in order { renumbered[old] = append(.string("$null")) }
    for old in order {
      guard let new = renumbered[old] else { continue }
      objects[Int(new)] = other[Int(old)].mappingUIDs { renumbered[$0] ?? 0 }
    }
    return .uid(renumbered[reference] ?? 0)
  }

  /// The object graph reachable from `reference` in an archive's `$objects`, as an archive of its
  /// own whose root is that object (the inverse of ``embed(_:from:)``).
  package static func extract(_ reference: UInt64, from other: [PropertyListValue]) -> PropertyListValue {
    var archiver = KeyedArchiver()
    let root = archiver.embed(reference, from: other)
    return archiver.archive(root: root)
  }

  private mutating func append(_ value: PropertyListValue) -> UInt64 {
    objects.append(value)
    return UInt64(objects.count - 1)
  }

  private mutating func classReference(_ classes: [String]) -> PropertyListValue {
    let name = classes.first ?? "NSObject"
    if let known = classReferences[name] { return .uid(known) }
    let reference = append(
      .dictionary(["$classname": .string(name), "$classes": .array(classes.map { .string($0) })]))
    classReferences[name] = reference
    return .uid(reference)
  }
}
