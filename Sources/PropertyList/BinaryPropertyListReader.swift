/// Reads Apple's binary property list format, `bplist00`.
///
/// Layout: the 8-byte header; the objects, each a marker byte (high nibble the type, low nibble a
/// size, 0xF meaning "an integer object follows with the size"); an offset table; and a 32-byte
/// trailer holding the offset size, the reference size, the object count, the top object and the
/// offset table's position (all big-endian).
struct BinaryPropertyListReader {
  let bytes: [UInt8]
  private var offsets: [Int] = []
  private var referenceSize = 0
  /// Objects already read: each is read once, however many containers refer to it (a file whose
  /// containers point twice at the next would otherwise take time exponential in its size).
  private var cache: [Int: PropertyListValue] = [:]

  init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  mutating func read() throws(PropertyListError) -> PropertyListValue {
    guard bytes.count >= 8 + 32 else { throw PropertyListError("binary property list is truncated") }
    let trailer = bytes.count - 32
    let offsetSize = Int(bytes[trailer + 6])
    referenceSize = Int(bytes[trailer + 7])
    let objectCount = try integer(at: trailer + 8, size: 8)
    let topObject = try integer(at: trailer + 16, size: 8)
    let tableOffset = try integer(at: trailer + 24, size: 8)
    // Bounds first, so that no sum or product below can overflow whatever the trailer says.
    guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), objectCount > 0,
      objectCount <= bytes.count, tableOffset <= trailer, objectCount * offsetSize <= trailer - tableOffset
    else { throw PropertyListError("binary property list has a damaged trailer") }
    offsets = try (0..<objectCount).map { (index: Int) throws(PropertyListError) -> Int in
      try integer(at: tableOffset + index * offsetSize, size: offsetSize)
    }
    var visiting = Set<Int>()
    return try object(topObject, visiting: &visiting)
  }

  // MARK: - Non public

  private func integer(at position: Int, size: Int) throws(PropertyListError) -> Int {
    guard position >= 0, size <= 8, position <= bytes.count - size else {
      throw PropertyListError("binary property list points outside the file")
    }
    var value: UInt64 = 0
    for byte in bytes[position..<position + size] { value = value << 8 | UInt64(byte) }
    guard value <= UInt64(Int.max) else { throw PropertyListError("binary property list offset is too large") }
    return Int(value)
  }

  /// The count in a marker's low nibble, or the integer object after it; returns (count, first byte after).
  private func count(at position: Int) throws(PropertyListError) -> (Int, Int) {
    let nibble = Int(bytes[position] & 0x0F)
    guard nibble == 0x0F else { return (nibble, position + 1) }
    guard position + 1 < bytes.count, bytes[position + 1] & 0xF0 == 0x10 else {
      throw PropertyListError("binary property list has a bad length")
    }
    let size = 1 << Int(bytes[position + 1] & 0x0F)
    let count = try integer(at: position + 2, size: size)
    // Every counted element takes at least one byte of the file.
    guard count <= bytes.count else { throw PropertyListError("binary property list has a bad length") }
    return (count, position + 2 + size)
  }

  private mutating func object(_ reference: Int, visiting: inout Set<Int>) throws(PropertyListError)
    -> PropertyListValue
  {
    if let known = cache[reference] { return known }
    let value = try read(reference, visiting: &visiting)
    cache[reference] = value
    return value
  }

  private mutating func read(_ reference: Int, visiting: inout Set<Int>) throws(PropertyListError) -> PropertyListValue
  {
    guard reference >= 0, reference < offsets.count else {
      throw PropertyListError("binary property list refers to a missing object")
    }
    guard visiting.insert(reference).inserted else {
      throw PropertyListError("binary property list contains a cycle")
    }
    guard visiting.count <= PropertyListValue.maximumDepth else {
      throw PropertyListError("binary property list is nested deeper than \(PropertyListValue.maximumDepth)")
    }
    defer { visiting.remove(reference) }
    let position = offsets[reference]
    guard position < bytes.count else { throw PropertyListError("binary property list points outside the file") }
    let marker = bytes[position]
    switch marker >> 4 {
    case 0x0:
      switch marker {
      case 0x08: return .boolean(false)
      case 0x09: return .boolean(true)
      default: throw PropertyListError("binary property list has an unsupported marker 0x\(String(marker, radix: 16))")
      }
    case 0x1, 0x2, 0x3:
      return try scalar(marker, at: position)
    case 0x4:
      let (length, start) = try count(at: position)
      return .data(Array(try slice(start, length)))
    case 0x5:
      let (length, start) = try count(at: position)
      return .string(String(decoding: try slice(start, length), as: UTF8.self))
    case 0x6:
      return .string(try utf16String(at: position))
    case 0x8:
      let size = Int(marker & 0x0F) + 1
      return .uid(UInt64(try integer(at: position + 1, size: size)))
    case 0xA, 0xC:
      let (length, start) = try count(at: position)
      var elements: [PropertyListValue] = []
      for index in 0..<length {
        elements.append(
          try object(try integer(at: start + index * referenceSize, size: referenceSize), visiting: &visiting))
      }
      return .array(elements)
    case 0xD:
      return .dictionary(try dictionary(at: position, visiting: &visiting))
    default:
      throw PropertyListError("binary property list has an unsupported marker 0x\(String(marker, radix: 16))")
    }
  }

  /// An integer (0x1), real (0x2) or date (0x3) object.
  private func scalar(_ marker: UInt8, at position: Int) throws(PropertyListError) -> PropertyListValue {
    switch marker >> 4 {
    case 0x1:
      let size = 1 << Int(marker & 0x0F)
      guard size <= 16, position + 1 + size <= bytes.count else { throw PropertyListError("bad integer") }
      // 8-byte integers are signed; 16-byte ones hold a 64-bit value in their low half.
      var value: UInt64 = 0
      for byte in bytes[(position + 1 + max(0, size - 8))..<(position + 1 + size)] { value = value << 8 | UInt64(byte) }
      return .integer(Int64(bitPattern: value))
    case 0x2:
      let size = 1 << Int(marker & 0x0F)
      guard size == 4 || size == 8, position + 1 + size <= bytes.count else { throw PropertyListError("bad real") }
      var raw: UInt64 = 0
      for byte in bytes[(position + 1)..<(position + 1 + size)] { raw = raw << 8 | UInt64(byte) }
      return .real(size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
    case 0x3:
      guard marker == 0x33, position + 9 <= bytes.count else { throw PropertyListError("bad date") }
      var raw: UInt64 = 0
      for byte in bytes[(position + 1)..<(position + 9)] { raw = raw << 8 | UInt64(byte) }
      return .date(Double(bitPattern: raw))
    default:
      throw PropertyListError("binary property list has an unsupported marker 0x\(String(marker, radix: 16))")
    }
  }

  /// A UTF-16 string object (0x6), big-endian.
  private func utf16String(at position: Int) throws(PropertyListError) -> String {
    let (length, start) = try count(at: position)
    let raw = try slice(start, length * 2)
    var units: [UInt16] = []
    units.reserveCapacity(length)
    var index = raw.startIndex
    while index < raw.endIndex {
      units.append(UInt16(raw[index]) << 8 | UInt16(raw[index + 1]))
      index += 2
    }
    return String(decoding: units, as: UTF16.self)
  }

  /// A dictionary object (0xD): string keys, then values, by reference.
  private mutating func dictionary(at position: Int, visiting: inout Set<Int>) throws(PropertyListError)
    -> [String: PropertyListValue]
  {
    let (length, start) = try count(at: position)
    var entries: [String: PropertyListValue] = [:]
    for index in 0..<length {
      let key = try object(try integer(at: start + index * referenceSize, size: referenceSize), visiting: &visiting)
      guard case .string(let name) = key else { throw PropertyListError("binary property list has a non-string key") }
      let valueReference = try integer(at: start + (length + index) * referenceSize, size: referenceSize)
      entries[name] = try object(valueReference, visiting: &visiting)
    }
    return entries
  }

  private func slice(_ start: Int, _ length: Int) throws(PropertyListError) -> ArraySlice<UInt8> {
    guard length >= 0, start >= 0, start <= bytes.count, length <= bytes.count - start else {
      throw PropertyListError("binary property list points outside the file")
    }
    return bytes[start..<start + length]
  }
}
