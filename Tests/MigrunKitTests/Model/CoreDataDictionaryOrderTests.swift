import Testing

@testable import MigrunKit
@testable import MigrunModel

/// ``CoreDataDictionaryOrder`` against known answers worked out by hand from the decompiled
/// functions (an independent script, not this code), and the rules that decide the orders.
@Suite struct CoreDataDictionaryOrderTests {
  @Test func tigersHashReadsLongNamesByTheirEnds() {
    #expect(CoreDataDictionaryOrder.tigerHash("blocking") == 2_521_629_265)
    #expect(CoreDataDictionaryOrder.tigerHash("shows") == 3_162_372_953)
    // Over 23 units: the first 8 and the last 16 only.
    #expect(CoreDataDictionaryOrder.tigerHash("addedOrRemovedInSystemMessages") == 4_019_544_727)
    #expect(CoreDataDictionaryOrder.tigerHash("needsToNotifyOtherUserAboutSessionReset") == 693_843_688)
    #expect(
      CoreDataDictionaryOrder.tigerHash("abcdefghXXXXXXXXXXXXijklmnopqrstuvwx")
        == CoreDataDictionaryOrder.tigerHash("abcdefghYYYYYYYYYYYYijklmnopqrstuvwx"))
  }

  @Test func leopardsBucketsMixTheHash() {
    #expect(CoreDataDictionaryOrder.leopardBucket("blocking", buckets: 64) == 15)
    #expect(CoreDataDictionaryOrder.leopardBucket("blockedBy", buckets: 64) == 2)
    #expect(CoreDataDictionaryOrder.leopardBucket("locations", buckets: 64) == 41)
  }

  @Test func ordersOfAGrownLeopardTableAndATigerTable() {
    let keys = ["_ent", "_pk", "_opt", "name", "date", "items", "owner", "tags", "parent", "children"]
    let leopard = CoreDataDictionaryOrder.leopard(keys)
    #expect(leopard == ["parent", "_ent", "owner", "name", "_pk", "_opt", "children", "items", "tags", "date"])
    #expect(
      CoreDataDictionaryOrder.tiger(leopard, capacity: leopard.count)
        == ["_ent", "_pk", "tags", "_opt", "parent", "owner", "children", "name", "items", "date"])
    // A key added twice keeps its first place; room for more keys changes the bucket count.
    #expect(CoreDataDictionaryOrder.leopard(keys + ["name"]) == leopard)
    #expect(
      CoreDataDictionaryOrder.tiger(leopard, capacity: 40) != CoreDataDictionaryOrder.tiger(leopard, capacity: 10))
  }
}
