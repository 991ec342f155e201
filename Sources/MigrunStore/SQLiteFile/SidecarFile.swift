import FileDoors
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The bytes of a file beside a store — its `-wal`, its hot `-journal` — read where they lie, a
/// piece at a time (`pread`): memory follows the pieces being read, never the file's size. A
/// 1.5 GB `-journal` read whole crashed salvage; a frame or a page record is all that is held.
///
/// ```swift
/// let wal = try SidecarFile(url: store.appendingPathExtension("-wal"))
/// let header = wal?.bytes(at: 0, count: 32)
/// ```
package final class SidecarFile: Sendable {
  private enum Storage: Sendable {
    case memory([UInt8])
    case descriptor(Int32)
  }

  private let storage: Storage
  /// The file's size in bytes, as it was when opened.
  package let count: Int

  /// Bytes held in memory (a fuzz input, a test's log).
  package init(bytes: [UInt8]) {
    storage = .memory(bytes)
    count = bytes.count
  }

  /// The file at `url`, opened for reading, never through a link and never blocked by a FIFO; nil
  /// when there is none. Anything but a plain file is an error naming it.
  package init?(url: URL) throws {
    // Through the door in (a regular file, never a link, never waited on), read a piece at a time.
    let opened: (descriptor: Int32, size: Int)?
    do {
      opened = try InputFile.openForPieces(url)
    } catch let error as InputFileError {
      throw StoreError(.io, file: url.path, reason: error.reason, underlying: error)
    }
    guard let opened else { return nil }
    storage = .descriptor(opened.descriptor)
    count = opened.size
  }

  deinit {
    if case .descriptor(let descriptor) = storage { close(descriptor) }
  }

  /// `count` bytes from `offset`; nil when the file does not hold them all.
  package func bytes(at offset: Int, count wanted: Int) -> [UInt8]? {
    guard offset >= 0, wanted >= 0, offset <= count, wanted <= count - offset else { return nil }
    switch storage {
    case .memory(let bytes): return Array(bytes[offset..<offset + wanted])
    case .descriptor(let descriptor):
      var buffer = [UInt8](repeating: 0, count: wanted)
      var done = 0
      while done < wanted {
        let read = buffer.withUnsafeMutableBytes { raw in
          pread(descriptor, raw.baseAddress.map { $0 + done }, wanted - done, off_t(offset + done))
        }
        if read < 0, errno == EINTR { continue }
        guard read > 0 else { return nil }
        done += read
      }
      return buffer
    }
  }

  /// The big-endian number of `size` bytes at `offset` (0 when the file does not hold them).
  func bigEndian(_ offset: Int, _ size: Int) -> UInt64 {
    bytes(at: offset, count: size).map { SQLiteFileImage.bigEndian($0, 0, size) } ?? 0
  }
}
