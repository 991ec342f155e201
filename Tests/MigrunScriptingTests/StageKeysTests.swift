import MigrunModel
import Testing

@testable import MigrunScripting

/// A walk's keys are held in 8 bytes each (issue 72: 24 each put 3,000,000 past the 64 MiB limit),
/// 10 when the selection spans subentities, and give back the same objects in the same order.
@Suite struct StageKeysTests {
  @Test func oneEntitysKeysTakeEightBytesEach() {
    let ids = (1...3000).map { ObjectID(entity: "Item", primaryKey: Int64($0 * 7)) }
    let keys = StageKeys(entity: "Item", ids: ids)
    #expect(keys.count == 3000 && keys.bytes == 24_000)
    #expect(keys.ids(0..<3000) == ids)
    #expect(keys.ids(1000..<1002) == [ids[1000], ids[1001]])
  }

  @Test func subentitiesKeepEachKeysEntity() {
    let ids = [
      ObjectID(entity: "Dog", primaryKey: 4), ObjectID(entity: "Dog", primaryKey: 9),
      ObjectID(entity: "Cat", primaryKey: 2), ObjectID(entity: "Dog", primaryKey: 1),
      ObjectID(entity: "Bird", primaryKey: 5),
    ]
    let keys = StageKeys(entity: "Animal", ids: ids)
    #expect(keys.bytes == 5 * 10)
    #expect(keys.ids(0..<5) == ids)
    #expect(keys.ids(2..<4) == [ids[2], ids[3]])
    #expect(StageKeys(entity: "Animal", ids: []).ids(0..<0).isEmpty)
  }
}
