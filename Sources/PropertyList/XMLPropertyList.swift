import Foundation

extension PropertyListValue {
  /// The value as an XML property list.
  package func xmlEncoded() -> [UInt8] {
    var text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
      <plist version="1.0">

      """
    XMLPropertyListWriter.write(self, indent: 0, to: &text)
    text += "</plist>\n"
    return Array(text.utf8)
  }
}

enum XMLPropertyListWriter {
  static func write(_ value: PropertyListValue, indent: Int, to text: inout String) {
    let pad = String(repeating: "\t", count: indent)
    switch value {
    case .string(let string): text += "\(pad)<string>\(escape(string))</string>\n"
    case .integer(let number): text += "\(pad)<integer>\(number)</integer>\n"
    case .real(let number): text += "\(pad)<real>\(number)</real>\n"
    case .boolean(let flag): text += "\(pad)<\(flag ? "true" : "false")/>\n"
    case .date(let seconds):
      let formatter = ISO8601DateFormatter()
      if seconds.rounded(.down) != seconds { formatter.formatOptions.insert(.withFractionalSeconds) }
      text += "\(pad)<date>\(formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds)))</date>\n"
    case .data(let bytes): text += "\(pad)<data>\(Data(bytes).base64EncodedString())</data>\n"
    case .uid(let reference):
      text += "\(pad)<dict>\n\(pad)\t<key>CF$UID</key>\n\(pad)\t<integer>\(reference)</integer>\n\(pad)</dict>\n"
    case .array(let elements):
      text += "\(pad)<array>\n"
      for element in elements { write(element, indent: indent + 1, to: &text) }
      text += "\(pad)</array>\n"
    case .dictionary(let entries):
      text += "\(pad)<dict>\n"
      for (key, element) in entries.sorted(by: { $0.key < $1.key }) {
        text += "\(pad)\t<key>\(escape(key))</key>\n"
        write(element, indent: indent + 1, to: &text)
      }
      text += "\(pad)</dict>\n"
    }
  }

  static func escape(_ text: String) -> String { XMLText.escaped(text) }
}

/// Reads XML property lists (`<plist>` with dict, array, key, string, integer, real, true, false,
/// date, data). A `{CF$UID: n}` dictionary is read as a UID, as Apple's reader does.
enum XMLPropertyListReader {
  static func read(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListValue {
    let builder = Builder()
    var scanner = XMLScanner(bytes)
    do {
      try scanner.scan(builder)
    } catch let failure as PropertyListError {
      throw failure
    } catch let error as XMLScanError {
      throw PropertyListError("not a property list (neither bplist00 nor a complete XML <plist>: \(error))")
    } catch {
      throw PropertyListError("XML property list: \(error)")
    }
    guard builder.closedPlist, let root = builder.root else {
      throw PropertyListError("not a property list (neither bplist00 nor a complete XML <plist>)")
    }
    return root
  }

  private final class Builder: XMLScanner.Delegate {
    var root: PropertyListValue?
    var closedPlist = false
    private var containers: [(isDictionary: Bool, elements: [PropertyListValue], keys: [String])] = []
    private var text = ""

    func startElement(_ element: String, attributes: [String: String]) throws {
      text = ""
      guard element == "dict" || element == "array" else { return }
      guard containers.count < PropertyListValue.maximumDepth else {
        throw fail("<\(element)> nested deeper than \(PropertyListValue.maximumDepth)")
      }
      containers.append((element == "dict", [], []))
    }

    func characters(_ string: String) throws { text += string }

    func endElement(_ element: String) throws {
      let content = text
      text = ""
      switch element {
      case "plist": closedPlist = true
      case "key":
        guard !containers.isEmpty else { throw fail("<key> outside a <dict>") }
        containers[containers.count - 1].keys.append(content)
      case "string": add(.string(content))
      case "integer":
        guard let number = Int64(content.trimmingCharacters(in: .whitespacesAndNewlines)) else {
          throw fail("<integer> '\(content)' is not a number")
        }
        add(.integer(number))
      case "real":
        guard let number = Double(content.trimmingCharacters(in: .whitespacesAndNewlines)) else {
          throw fail("<real> '\(content)' is not a number")
        }
        add(.real(number))
      case "true": add(.boolean(true))
      case "false": add(.boolean(false))
      case "date": add(.date(try date(content)))
      case "data":
        guard let data = Data(base64Encoded: content, options: .ignoreUnknownCharacters) else {
          throw fail("<data> is not base64")
        }
        add(.data(Array(data)))
      case "dict", "array":
        guard let container = containers.popLast() else { return }
        add(try closed(container))
      default: break
      }
    }

    /// A `<dict>` (a `CF$UID` one is a UID) or an `<array>`, as it closes.
    private func closed(_ container: (isDictionary: Bool, elements: [PropertyListValue], keys: [String])) throws
      -> PropertyListValue
    {
      guard container.isDictionary else { return .array(container.elements) }
      guard container.keys.count == container.elements.count else {
        throw fail("<dict> keys and values do not pair up")
      }
      let entries = Dictionary(zip(container.keys, container.elements), uniquingKeysWith: { _, last in last })
      if entries.count == 1, case .integer(let reference)? = entries["CF$UID"], reference >= 0 {
        return .uid(UInt64(reference))
      }
      return .dictionary(entries)
    }

    /// A `<date>`'s ISO 8601 text (with or without fractional seconds), as seconds since 2001.
    private func date(_ content: String) throws -> Double {
      let trimmed = content.trimmingCharacters(in: .whitespacesAndNewlines)
      let fractional = ISO8601DateFormatter()
      fractional.formatOptions.insert(.withFractionalSeconds)
      guard let date = ISO8601DateFormatter().date(from: trimmed) ?? fractional.date(from: trimmed) else {
        throw fail("<date> '\(content)' is not an ISO-8601 date")
      }
      return date.timeIntervalSinceReferenceDate
    }

    private func add(_ value: PropertyListValue) {
      if containers.isEmpty {
        root = value
      } else {
        containers[containers.count - 1].elements.append(value)
      }
    }

    private func fail(_ message: String) -> PropertyListError {
      PropertyListError("XML property list: \(message)")
    }
  }
}
