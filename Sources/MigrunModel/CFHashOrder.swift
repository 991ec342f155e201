/// The order in which Core Foundation's hashed dictionary (`CFDictionary`, and so `NSDictionary`
/// keyed by strings) enumerates its keys — the order Core Data archives an entity's properties in
/// (`Z_MODELCACHE`), and the order it hands them to its own tables when it pairs relationships
/// (``CoreDataDictionaryOrder``, `StoreSchema.Builder`).
///
/// Facts used (Core Foundation is open source; these are its published behaviour, written anew here):
/// - a string's hash (`CFStringHash`, `-[NSString hash]`) runs over its UTF-16 code units with
///   64-bit wrapping arithmetic: it starts at the length; four units at a time it becomes
///   `h * 67503105 + u0 * 16974593 + u1 * 66049 + u2 * 257 + u3`, the last units one at a time
///   `h * 257 + u`; strings over 96 units hash their first, middle and last 32 units only; the
///   result is `h + (h << (length & 31))`;
/// - the table has a prime number of buckets, the smallest of 3, 7, 13, 23, 41, 71, 127, 191, 251,
///   383, 631, 1087, … whose capacity (3, 6, 11, 19, 32, 52, 85, 118, 155, 237, 390, 672, …) holds
///   the keys; a key goes to bucket `hash % buckets`, or the next free one after it (linear probing,
///   wrapping); a table that grows is rehashed old bucket by old bucket;
/// - enumeration runs through the buckets in index order.
///
/// Checked against Core Foundation itself (the copy in the Swift toolchain's Foundation on Linux):
/// the same hashes and the same orders for thousands of random key sets (see `CFHashOrderTests`).
package enum CFHashOrder {
  static let sizes: [Int] = [0, 3, 7, 13, 23, 41, 71, 127, 191, 251, 383, 631, 1087, 1723, 2803, 4523, 7351, 11959]
  static let capacities: [Int] = [0, 3, 6, 11, 19, 32, 52, 85, 118, 155, 237, 390, 672, 1065, 1732, 2795, 4543, 7391]

  /// `CFStringHash` of `text`.
  package static func hash(_ text: String) -> UInt64 { hash(text, shiftingBy: text.utf16.count & 31) }

  /// The same hash finished as `h + (h << shift)`: Core Data's own copy shifts by the whole length
  /// (``CoreDataDictionaryOrder``).
  static func hash(_ text: String, shiftingBy shift: Int) -> UInt64 {
    let units = Array(text.utf16)
    let length = units.count
    var result = UInt64(length)
    func four(_ u: ArraySlice<UInt16>) {
      let i = u.startIndex
      result =
        result &* 67_503_105 &+ UInt64(u[i]) &* 16_974_593 &+ UInt64(u[i + 1]) &* 66049 &+ UInt64(u[i + 2]) &* 257
        &+ UInt64(u[i + 3])
    }
    if length <= 96 {
      var index = 0
      while index + 4 <= length {
        four(units[index..<index + 4])
        index += 4
      }
      while index < length {
        result = result &* 257 &+ UInt64(units[index])
        index += 1
      }
    } else {
      for start in [0, (length >> 1) - 16, length - 32] {
        var index = start
        while index < start + 32 {
          four(units[index..<index + 4])
          index += 4
        }
      }
    }
    return result &+ (result << UInt64(shift & 63))
  }

  /// The enumeration order of a dictionary made with room for all of `keys` at once
  /// (`CFDictionaryCreate`, `+[NSDictionary dictionaryWithObjects:forKeys:]`), keys added in the
  /// order given; or, with `growing`, of a mutable dictionary that started empty and grew as each
  /// key was added. Duplicate keys count once.
  package static func order(of keys: [String], growing: Bool = false) -> [String] {
    var unique: [String] = []
    var seen: Set<String> = []
    for key in keys where seen.insert(key).inserted { unique.append(key) }
    var buckets: [String?] = []
    var sizeIndex = 0
    func bucketIndex(forCapacity capacity: Int) -> Int {
      capacities.firstIndex { capacity <= $0 } ?? (capacities.count - 1)
    }
    func place(_ key: String, in table: inout [String?]) {
      let count = UInt64(table.count)
      var probe = Int(hash(key) % count)
      while table[probe] != nil { probe = (probe + 1) % table.count }
      table[probe] = key
    }
    func rehash(to index: Int) {
      var table = [String?](repeating: nil, count: sizes[index])
      for case let key? in buckets { place(key, in: &table) }
      buckets = table
      sizeIndex = index
    }
    if !growing { rehash(to: bucketIndex(forCapacity: unique.count)) }
    var used = 0
    for key in unique {
      if capacities[sizeIndex] < used + 1 { rehash(to: bucketIndex(forCapacity: used + 1)) }
      place(key, in: &buckets)
      used += 1
    }
    return buckets.compactMap { $0 }
  }
}
