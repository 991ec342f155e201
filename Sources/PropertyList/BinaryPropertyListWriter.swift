extension PropertyListValue {
  /// The value as a binary property list (`bplist00`), as Core Data writes `Z_METADATA.Z_PLIST`.
  package func binaryEncoded() -> [UInt8] {
    var writer = BinaryPropertyListWriter()
    _ = writer.flatten(self)
    return writer.encode()
  }
}

/// Writes `bplist00`: objects are flattened depth-first (dictionary keys before values), then
/// encoded with references as small as the object count allows.
struct BinaryPropertyListWriter {
  private enum Flat {
    case leaf(PropertyListValue)
    case array([Int])
    case dictionary(keys: [Int], values: [Int])
  }

  private var objects: [Flat] = []

  mutating func flatten(_ value: PropertyListValue) -> Int {
    let index = objects.count
    objects.append(.leaf(value))
    switch value {
    case .array(let elements):
      objects[index] = .array(elements.map { flatten($0) })
    case .dictionary(let entries):
      let sorted = entries.sorted { $0.key < $1.key }
      let keys = sorted.map { flatten(.string($0.key)) }
      objects[index] = .dictionary(keys: keys, values: sorted.map { flatten($0.value) })
    default:
      break
    }
    return index
  }

  func encode() -> [UInt8] {
    let referenceSize = Self.byteCount(for: UInt64(objects.count))
    var output = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(output.count)
      switch object {
      case .leaf(let value): Self.append(value, to: &output)
      case .array(let references):
        Self.appendMarker(0xA, count: references.count, to: &output)
        for reference in references { Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &output) }
      case .dictionary(let keys, let values):
        Self.appendMarker(0xD, count: keys.count, to: &output)
        for reference in keys + values { Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &output) }
      }
    }
    let tableOffset = output.count
    let offsetSize = Self.byteCount(for: UInt64(tableOffset))
    for offset in offsets { Self.appendBigEndian(UInt64(offset), size: offsetSize, to: &output) }
    output += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
    Self.appendBigEndian(UInt64(objects.count), size: 8, to: &output)
    Self.appendBigEndian(0, size: 8, to: &output)
    Self.appendBigEndian(UInt64(tableOffset), size: 8, to: &output)
    return output
  }

  // MARK: - Non public

  private static func byteCount(for value: UInt64) -> Int {
    value < 1 << 8 ? 1 : value < 1 << 16 ? 2 : value < 1 << 32 ? 4 : 8
  }

  private static func appendBigEndian(_ value: UInt64, size: Int, to output: inout [UInt8]) {
    for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
      output.append(UInt8((value >> UInt64(shift)) & 0xFF))
    }
  }

  private static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
    let size = value < 0 ? 8 : byteCount(for: UInt64(value))
    output.append(0x10 | UInt8(size.trailingZeroBitCount))
    appendBigEndian(UInt64(bitPattern: value), size: size, to: &output)
  }

  private static func appendMarker(_ type: UInt8, count: Int, to output: inout [UInt8]) {
    if count < 15 {
      output.append(type << 4 | UInt8(count))
    } else {
      output.append(type << 4 | 0x0F)
      appendInteger(Int64(count), to: &output)
    }
  }

  private static func append(_ value: PropertyListValue, to output: inout [UInt8]) {
    switch value {
    case .boolean(let flag): output.append(flag ? 0x09 : 0x08)
    case .integer(let number): appendInteger(number, to: &output)
    case .real(let number):
      output.append(0x23)
      appendBigEndian(number.bitPattern, size: 8, to: &output)
    case .date(let seconds):
      output.append(0x33)
      appendBigEndian(seconds.bitPattern, size: 8, to: &output)
    case .data(let bytes):
      appendMarker(0x4, count: bytes.count, to: &output)
      output += bytes
    case .string(let text):
      if text.utf8.allSatisfy({ $0 < 0x80 }) {
        appendMarker(0x5, count: text.utf8.count, to: &output)
        output += text.utf8
      } else {
        let units = Array(text.utf16)
        appendMarker(0x6, count: units.count, to: &output)
        for unit in units { appendBigEndian(UInt64(unit), size: 2, to: &output) }
      }
    case .uid(let reference):
      let size = byteCount(for: reference)
      output.append(0x80 | UInt8(size - 1))
      appendBigEndian(reference, size: size, to: &output)
    case .array, .dictionary:
      break  // written by `encode` from their flattened references
    }
  }
}
