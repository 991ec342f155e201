import FileDoors
import Foundation

/// What a file is, by its first bytes: enough to tell a user who gave the wrong file what they gave.
enum FileKind: Sendable, Hashable, CustomStringConvertible {
  case sqlite
  case binaryPropertyList
  case xml
  case zip
  case png
  case pdf
  case json
  case text
  case binary
  case empty

  var description: String {
    switch self {
    case .sqlite: "a SQLite database"
    case .binaryPropertyList: "a binary property list"
    case .xml: "an XML file"
    case .zip: "a zip archive"
    case .png: "a PNG image"
    case .pdf: "a PDF document"
    case .json: "a JSON file"
    case .text: "a text file"
    case .binary: "a binary file"
    case .empty: "an empty file"
    }
  }

  /// The kind of the regular file at `url`, or nil for a folder or a file that cannot be read.
  static func of(_ url: URL) -> FileKind? {
    // Through the door: a FIFO given as a model is never opened to wait for a writer.
    guard InputFile.kind(at: url.path) != .folder, let head = try? InputFile.head(url, count: 512, origin: .named)
    else { return nil }
    return of(head)
  }

  static func of(_ head: [UInt8]) -> FileKind {
    func starts(_ text: String) -> Bool { head.starts(with: Array(text.utf8)) }
    if head.isEmpty { return .empty }
    if starts("SQLite format 3\u{0}") { return .sqlite }
    if starts("bplist") { return .binaryPropertyList }
    if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return .zip }
    if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return .png }
    if starts("%PDF") { return .pdf }
    let body = head.drop { [0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D].contains($0) }
    if body.first == UInt8(ascii: "<") { return .xml }
    if body.first == UInt8(ascii: "{") || body.first == UInt8(ascii: "[") { return .json }
    let printable = head.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    return printable ? .text : .binary
  }
}
