import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

extension PropertyListValue {
  /// The value as an XML property list.
  public func xmlEncoded() -> [UInt8] {
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

  static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;")
  }
}

/// Reads XML property lists (`<plist>` with dict, array, key, string, integer, real, true, false,
/// date, data). A `{CF$UID: n}` dictionary is read as a UID, as Apple's reader does.
enum XMLPropertyListReader {
  static func read(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListValue {
    let parser = XMLParser(data: Data(bytes))
    let builder = Builder()
    parser.delegate = builder
    let parsed = parser.parse()
    if let failure = builder.failure { throw failure }
    guard parsed, builder.closedPlist, let root = builder.root else {
      throw PropertyListError("not a property list (neither bplist00 nor a complete XML <plist>)")
    }
    return root
  }

  private final class Builder: NSObject, XMLParserDelegate {
    var root: PropertyListValue?
    var failure: PropertyListError?
    var closedPlist = false
    private var containers: [(isDictionary: Bool, elements: [PropertyListValue], keys: [String])] = []
    private var text = ""

    func parser(
      _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
      attributes: [String: String] = [:]
    ) {
      text = ""
      switch element {
      case "dict": containers.append((true, [], []))
      case "array": containers.append((false, [], []))
      default: break
      }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
      let content = text
      text = ""
      switch element {
      case "plist": closedPlist = true
      case "key":
        guard !containers.isEmpty else { return fail("<key> outside a <dict>", parser) }
        containers[containers.count - 1].keys.append(content)
      case "string": add(.string(content), parser)
      case "integer":
        guard let number = Int64(content.trimmingCharacters(in: .whitespacesAndNewlines)) else {
          return fail("<integer> '\(content)' is not a number", parser)
        }
        add(.integer(number), parser)
      case "real":
        guard let number = Double(content.trimmingCharacters(in: .whitespacesAndNewlines)) else {
          return fail("<real> '\(content)' is not a number", parser)
        }
        add(.real(number), parser)
      case "true": add(.boolean(true), parser)
      case "false": add(.boolean(false), parser)
      case "date":
        let trimmed = content.trimmingCharacters(in: .whitespacesAndNewlines)
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions.insert(.withFractionalSeconds)
        guard let date = ISO8601DateFormatter().date(from: trimmed) ?? fractional.date(from: trimmed) else {
          return fail("<date> '\(content)' is not an ISO-8601 date", parser)
        }
        add(.date(date.timeIntervalSinceReferenceDate), parser)
      case "data":
        guard let data = Data(base64Encoded: content, options: .ignoreUnknownCharacters) else {
          return fail("<data> is not base64", parser)
        }
        add(.data(Array(data)), parser)
      case "dict", "array":
        guard let container = containers.popLast() else { return }
        if container.isDictionary {
          guard container.keys.count == container.elements.count else {
            return fail("<dict> keys and values do not pair up", parser)
          }
          let entries = Dictionary(zip(container.keys, container.elements), uniquingKeysWith: { _, last in last })
          if entries.count == 1, case .integer(let reference)? = entries["CF$UID"], reference >= 0 {
            add(.uid(UInt64(reference)), parser)
          } else {
            add(.dictionary(entries), parser)
          }
        } else {
          add(.array(container.elements), parser)
        }
      default: break
      }
    }

    private func add(_ value: PropertyListValue, _ parser: XMLParser) {
      if containers.isEmpty {
        root = value
      } else {
        containers[containers.count - 1].elements.append(value)
      }
    }

    private func fail(_ message: String, _ parser: XMLParser) {
      failure = PropertyListError("XML property list, line \(parser.lineNumber): \(message)")
      parser.abortParsing()
    }
  }
}
