/// Property lists built byte by byte, for inputs no writer makes (objects shared, nested, damaged).
public enum BinaryPropertyLists {
  /// A `bplist00` file of `objects` (each its marker and bytes; references 1 byte), the first the
  /// top object; 1-byte offsets, so the file stays under 256 bytes.
  public static func file(_ objects: [[UInt8]]) -> [UInt8] {
    var file: [UInt8] = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(file.count)
      file += object
    }
    let table = file.count
    for offset in offsets { file.append(UInt8(offset)) }
    file += [0, 0, 0, 0, 0, 0, 1, 1]
    file += withUnsafeBytes(of: UInt64(objects.count).bigEndian, Array.init)
    file += withUnsafeBytes(of: UInt64(0).bigEndian, Array.init)
    file += withUnsafeBytes(of: UInt64(table).bigEndian, Array.init)
    return file
  }
}
