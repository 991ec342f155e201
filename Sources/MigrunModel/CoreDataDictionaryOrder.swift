/// The orders of the two hash tables Core Data keeps inside itself to name join tables the same way
/// on every system since Mac OS X 10.4: when it lays a model out in SQLite, the order in which it
/// meets an entity's relationships — and so which side of a many-to-many names the join table — is
/// the enumeration order of these tables, not of Foundation's dictionaries (``CFHashOrder``).
///
/// Facts used, read off the public decompilation of Core Data (iOS 26; `NSSQLEntity`'s
/// `_generateProperties` and `_generateInverseRelationshipsAndMore`, and the functions
/// `_PF_Leopard_CFDictionary…`, `PF_Tiger_CFDictionary…`, `_PF_TigerHashCFString`):
/// - **Leopard table** (Core Data's copy of Mac OS X 10.5's dictionary): starts empty and grows as keys
///   are added; with `n` keys it holds `3 << flsl(n / 3)` before it grows, in `4 << flsl((capacity -
///   1) / 3)` buckets (a power of two); a key's bucket is its string hash (``CFHashOrder/hash(_:)``,
///   finished with the whole length as shift, `h + (h << length)`) taken to 32 bits and run through
///   Bob Jenkins' 32-bit mix (its first step folded into the constant 1264676453), masked to the
///   bucket count; linear probing; growing re-adds the old buckets in order; enumeration by bucket.
/// - **Tiger table** (Mac OS X 10.4's dictionary): made with room for `n` keys — the first of Tiger's
///   capacities 4, 8, 17, 29, 47, 76, 123, 199, … that holds them, in 5, 11, 23, 41, 67, 113, 199, 317, …
///   buckets (primes); a key's bucket is Tiger's string hash modulo the bucket count; linear probing;
///   enumeration by bucket. Tiger's string hash is 32-bit: strings of up to 23 units hash as today's
///   (four units at a time, then one), longer ones hash their first 8 and last 16 units only; the
///   result is `h + (h << (length & 31))`.
///
/// The capacity and bucket tables are Core Foundation's published Tiger source (CF-368). That the
/// hashes are 32-bit is the guess the facts decide: with 64-bit arithmetic 2 of the 11 join-table
/// facts in `../shared/fixtures/facts/join-pairing.json` fail, with 32-bit none
/// (`CoreDataDictionaryOrderTests`).
package enum CoreDataDictionaryOrder {
  static let tigerCapacities = [
    4, 8, 17, 29, 47, 76, 123, 199, 322, 521, 843, 1364, 2207, 3571, 5778, 9349, 15127, 24476, 39603, 64079,
  ]
  static let tigerBuckets = [
    5, 11, 23, 41, 67, 113, 199, 317, 521, 839, 1361, 2207, 3571, 5779, 9349, 15121, 24473, 39607, 64081, 103681,
  ]

  /// Tiger's `CFStringHash` (32-bit).
  package static func tigerHash(_ text: String) -> UInt32 {
    let units = Array(text.utf16).map { UInt32($0) }
    let length = units.count
    var result = UInt32(truncatingIfNeeded: length)
    func four(_ at: Int) {
      result =
        result &* 67_503_105 &+ units[at] &* 16_974_593 &+ units[at + 1] &* 66049 &+ units[at + 2] &* 257
        &+ units[at + 3]
    }
    if length > 23 {
      for start in [0, 4, length - 16, length - 12, length - 8, length - 4] { four(start) }
    } else {
      var index = 0
      while index + 4 <= length {
        four(index)
        index += 4
      }
      while index < length {
        result = result &* 257 &+ units[index]
        index += 1
      }
    }
    return result &+ (result << UInt32(length & 31))
  }

  /// The bucket a Leopard table of `buckets` (a power of two) gives `text`.
  static func leopardBucket(_ text: String, buckets: Int) -> Int {
    let hash = UInt32(truncatingIfNeeded: CFHashOrder.hash(text, shiftingBy: text.utf16.count))
    var a = (1_264_676_453 &- hash) ^ ((hash &- 1) << 8)
    var b = (2 &- hash &- a) ^ (a >> 13)
    var c = (hash &- 1 &- a &- b) ^ (b >> 12)
    a = (a &- b &- c) ^ (c << 16)
    b = (b &- c &- a) ^ (a >> 5)
    c = (c &- a &- b) ^ (b >> 3)
    a = (a &- b &- c) ^ (c << 10)
    let mixed = (b &- c &- a) ^ (a >> 15)
    return Int(mixed) & (buckets - 1)
  }

  /// The enumeration order of a Leopard table that `keys` were added to one by one (a key added
  /// again keeps its place).
  package static func leopard(_ keys: [String]) -> [String] {
    var buckets: [String?] = []
    var capacity = 3
    var count = 0
    var present: Set<String> = []
    func place(_ key: String, in table: inout [String?]) {
      var probe = leopardBucket(key, buckets: table.count)
      while table[probe] != nil { probe = (probe + 1) % table.count }
      table[probe] = key
    }
    for key in keys where present.insert(key).inserted {
      if buckets.isEmpty || count == capacity {
        capacity = 3 << flsl(count / 3)
        var table = [String?](repeating: nil, count: 4 << flsl((capacity - 1) / 3))
        for case let old? in buckets { place(old, in: &table) }
        buckets = table
      }
      place(key, in: &buckets)
      count += 1
    }
    return buckets.compactMap { $0 }
  }

  /// The enumeration order of a Tiger table made with room for `capacity` keys and given `keys` in
  /// this order.
  package static func tiger(_ keys: [String], capacity: Int) -> [String] {
    let index = tigerCapacities.firstIndex { $0 >= max(capacity, keys.count) } ?? (tigerCapacities.count - 1)
    let count = tigerBuckets[index]
    var buckets = [String?](repeating: nil, count: count)
    var present: Set<String> = []
    for key in keys where present.insert(key).inserted {
      var probe = Int(tigerHash(key) % UInt32(count))
      while buckets[probe] != nil { probe = (probe + 1) % count }
      buckets[probe] = key
    }
    return buckets.compactMap { $0 }
  }

  /// `flsl`: the position of the highest set bit (0 for 0).
  static func flsl(_ value: Int) -> Int { value <= 0 ? 0 : Int.bitWidth - value.leadingZeroBitCount }
}
