import Foundation
import Testing

@testable import MigrunKit

#if canImport(Glibc)
  import Glibc
#endif

/// ``CFHashOrder`` against Core Foundation: known answers (read off Core Foundation), and the same
/// orders as Core Foundation itself for random key sets — the copy of Core Foundation inside the
/// Swift toolchain's Foundation on Linux, called through its exported C functions.
@Suite struct CFHashOrderTests {
  @Test func hashesAreCoreFoundations() {
    #expect(CFHashOrder.hash("blocking") == 1_458_340_411_118_256_721)
    #expect(CFHashOrder.hash("blockedBy") == 2_272_135_459_950_294_680)
    #expect(CFHashOrder.hash("shows") == 19_476_544_093_017)
    #expect(CFHashOrder.hash("favoriteFolders") == 4_553_255_057_664_451_646)
    #expect(CFHashOrder.hash("é") == 1470)
    #expect(
      CFHashOrder.hash(
        "A string over ninety-six characters long, so that only its first, middle and last thirty-two units are hashed by Core Foundation"
      ) == 1_958_685_038_451_145_034)
  }

  @Test func ordersAreCoreFoundations() {
    #expect(CFHashOrder.order(of: ["blockedBy", "blocking"]) == ["blocking", "blockedBy"])
    #expect(
      CFHashOrder.order(of: ["a", "b", "c", "d", "e", "f", "g", "h"]) == ["g", "c", "h", "d", "e", "a", "f", "b"])
    let seven = ["name", "date", "items", "owner", "tags", "parent", "children"]
    #expect(CFHashOrder.order(of: seven) == ["owner", "tags", "parent", "children", "date", "name", "items"])
    #expect(
      CFHashOrder.order(of: seven, growing: true) == ["parent", "owner", "name", "children", "date", "tags", "items"])
  }

  /// Core Foundation's own dictionary, through the C functions Foundation on Linux exports.
  struct CoreFoundation {
    typealias Create =
      @convention(c) (
        UnsafeRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<UnsafeRawPointer?>?, Int,
        UnsafeRawPointer?, UnsafeRawPointer?
      ) -> UnsafeRawPointer?
    typealias CreateString = @convention(c) (UnsafeRawPointer?, UnsafePointer<CChar>, UInt32) -> UnsafeRawPointer?
    typealias GetKeys =
      @convention(c) (
        UnsafeRawPointer?, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<UnsafeRawPointer?>?
      ) -> Void
    let create: Create
    let createString: CreateString
    let getKeys: GetKeys
    let keyCallBacks: UnsafeRawPointer
    let valueCallBacks: UnsafeRawPointer

    init?() {
      guard let handle = dlopen(nil, RTLD_NOW),
        let create = dlsym(handle, "CFDictionaryCreate"),
        let createString = dlsym(handle, "CFStringCreateWithCString"),
        let getKeys = dlsym(handle, "CFDictionaryGetKeysAndValues"),
        let keyCallBacks = dlsym(handle, "kCFTypeDictionaryKeyCallBacks"),
        let valueCallBacks = dlsym(handle, "kCFTypeDictionaryValueCallBacks")
      else { return nil }
      self.create = unsafeBitCast(create, to: Create.self)
      self.createString = unsafeBitCast(createString, to: CreateString.self)
      self.getKeys = unsafeBitCast(getKeys, to: GetKeys.self)
      self.keyCallBacks = UnsafeRawPointer(keyCallBacks)
      self.valueCallBacks = UnsafeRawPointer(valueCallBacks)
    }

    /// The order Core Foundation's `CFDictionaryCreate` enumerates `keys` in (the test leaks them).
    func order(of keys: [String]) -> [String] {
      var strings: [UnsafeRawPointer?] = keys.map { key in key.withCString { createString(nil, $0, 0x0800_0100) } }
      let dictionary = strings.withUnsafeMutableBufferPointer { buffer in
        create(nil, buffer.baseAddress, buffer.baseAddress, keys.count, keyCallBacks, valueCallBacks)
      }
      var out = [UnsafeRawPointer?](repeating: nil, count: keys.count)
      getKeys(dictionary, &out, nil)
      return out.compactMap { pointer in strings.firstIndex(of: pointer).map { keys[$0] } }
    }
  }

  @Test func randomKeySetsGiveCoreFoundationsOrder() throws {
    // Foundation is linked (this file imports it); its Core Foundation is the reference.
    _ = NSString(string: "load Foundation")
    let reference = try #require(CoreFoundation(), "Core Foundation's C functions are not exported here")
    var generator = SystemRandomNumberGenerator()
    let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_éü")
    for _ in 0..<500 {
      var keys: Set<String> = []
      let count = Int.random(in: 1...90, using: &generator)
      while keys.count < count {
        let length = Int.random(in: 1...120, using: &generator)
        keys.insert(String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? "a" }))
      }
      let list = Array(keys)
      #expect(CFHashOrder.order(of: list) == reference.order(of: list), "\(list)")
    }
  }
}
